"""A message given as JSON, turned into the Msg the encoder takes, through the API's schema.

JSON has no UUIDs, bytes or error names, so each field is read by its type in Kafka's schema (the union of
the field's types over every version of the message): a uuid field takes its text form ("null" or None:
the zero UUID), a bytes or records field base64 text, an int field named error_code (or ending in it) an
error name ("NOT_LEADER_OR_FOLLOWER") as well as a number; structs and arrays of structs are read
field by field. Names the schema does not know are left as they are, for the encoder to refuse
(EncodeError naming them). Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any

from ._generated.specs import MESSAGES
from .errors import EncodeError, ErrorCode
from .messages import RESPONSE, Msg

Fields = dict[str, tuple[str, list[tuple[Any, ...]]]]  # name -> (type, the sub-struct's field specs, all versions)


def _fields(variants: list[tuple[Any, ...]]) -> Fields:
    """name -> (type, every version's field specs of its struct) over the variants of one struct."""
    out: Fields = {}
    for fields in variants:
        for spec in fields:
            name, ftype, sub = spec[0], spec[1], spec[8]
            known = out.setdefault(name, (ftype, []))
            if sub:
                known[1].append(sub)
    return out


def _value(name: str, ftype: str, subs: list[tuple[Any, ...]], value: Any, path: str) -> Any:
    if value is None:
        return uuid.UUID(int=0) if ftype == "uuid" else None
    if ftype.startswith("[]"):
        if not isinstance(value, list):
            raise EncodeError(f"{path}: expected a list")
        return [_value(name, ftype[2:], subs, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if ftype == "struct":
        if not isinstance(value, dict):
            raise EncodeError(f"{path}: expected an object")
        return _struct(_fields(subs), value, path)
    if ftype == "uuid":
        try:
            return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
        except ValueError:
            raise EncodeError(f"{path}: not a UUID: {value!r}") from None
    if ftype in ("bytes", "records") and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise EncodeError(f"{path}: not base64: {value!r}") from None
    if ftype.startswith("int") and name.endswith("error_code") and isinstance(value, str):
        try:
            return int(ErrorCode[value])
        except KeyError:
            raise EncodeError(f"{path}: unknown error name {value!r}") from None
    return value


def _struct(fields: Fields, data: dict[str, Any], path: str) -> Msg:
    out = Msg()
    for name, value in data.items():
        known = fields.get(name)
        out[name] = value if known is None else _value(name, known[0], known[1], value, f"{path}.{name}")
    return out


def response_from_json(api_key: int, data: dict[str, Any]) -> Msg:
    """The response of api_key given as JSON, as a Msg any version's encoder takes (EncodeError when a
    value does not fit its field's type)."""
    entry = MESSAGES.get(api_key)
    if entry is None:
        raise EncodeError(f"unknown API key {api_key}")
    if not isinstance(data, dict):
        raise EncodeError("a response is a JSON object of its fields")
    return _struct(_fields([seg[3] for seg in entry[RESPONSE]]), data, f"{entry[0]}Response")
