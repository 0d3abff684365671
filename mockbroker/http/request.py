"""What a JSON endpoint of the control API sees of a request, and how it says no.

`Request` holds an HTTP request already parsed by aiohttp (method, path, query, headers, body) plus
the path parameters of its route; its helpers read query parameters and JSON bodies and raise
`HttpError` (status, error kind, message) for anything the caller got wrong. `encoded` and `jsonable`
turn broker objects (bytes, dataclasses, enums, sets) into JSON. No I/O here.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import math
from typing import Any

from mockbroker import bounded_json

DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
# How deep a request body's arrays and objects may nest (the deepest body of the API, an ACL or a produce
# with headers, nests 3 levels); deeper is refused before it is parsed.
MAX_BODY_DEPTH = 32


class HttpError(Exception):
    """A 4xx/5xx answer: {"error": error, "message": message} with `status` (and extra headers)."""

    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers or {}


@dataclasses.dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = dataclasses.field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        """The body as a JSON object ({} when empty)."""
        if not self.body.strip():
            return {}
        try:
            value = bounded_json.loads(self.body, max_depth=MAX_BODY_DEPTH)
        except bounded_json.JsonLimitError as exc:
            raise HttpError(400, "bad_json", f"the body is not JSON within bounds: {exc}") from None
        if not isinstance(value, dict):
            raise HttpError(400, "bad_json", "the body must be a JSON object")
        return value

    def arg(self, name: str) -> str | None:
        values = self.query.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise HttpError(400, "bad_query", f"query parameter {name} given {len(values)} times")
        return values[0]

    def int_arg(self, name: str, default: int | None = None, *, lo: int | None = None,
                hi: int | None = None) -> int | None:
        raw = self.arg(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise HttpError(400, "bad_query", f"query parameter {name}={raw!r} is not an integer") from None
        check_range(name, value, lo, hi, "bad_query")
        return value

    def bool_arg(self, name: str) -> bool:
        raw = (self.arg(name) or "").lower()
        if raw in ("", "0", "false", "no"):
            return False
        if raw in ("1", "true", "yes"):
            return True
        raise HttpError(400, "bad_query", f"query parameter {name}={raw!r} is not true or false")

    def choice_arg(self, name: str, choices: tuple[str, ...]) -> str:
        """One of `choices` (the first when absent)."""
        raw = self.arg(name)
        if raw is None or raw == "":
            return choices[0]
        if raw not in choices:
            raise HttpError(400, "bad_query", f"query parameter {name}={raw!r} is not one of {', '.join(choices)}")
        return raw


def _shown(value: int | float) -> str:
    """A number for an error message (an integer of hundreds of digits by its length)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    return str(value)


def check_range(name: str, value: int | float, lo: int | float | None, hi: int | float | None, kind: str) -> None:
    if lo is not None and value < lo:
        raise HttpError(400, kind, f"{name} must be >= {lo}, got {_shown(value)}")
    if hi is not None and value > hi:
        raise HttpError(400, kind, f"{name} must be <= {hi}, got {_shown(value)}")


# -- JSON body fields ------------------------------------------------------------------------------------


def field(body: dict[str, Any], name: str, types: tuple[type, ...], what: str, *, required: bool = False) -> Any:
    if name not in body or body[name] is None:
        if required:
            raise HttpError(400, "missing_field", f"field {name!r} is required ({what})")
        return None
    value = body[name]
    if isinstance(value, bool) and bool not in types:
        raise HttpError(400, "bad_field", f"field {name!r} must be {what}, got {json.dumps(value)}")
    if not isinstance(value, types):
        raise HttpError(400, "bad_field", f"field {name!r} must be {what}, got {json.dumps(value)}")
    return value


def int_field(body: dict[str, Any], name: str, *, required: bool = False, lo: int | None = None,
              hi: int | None = None) -> int | None:
    value = field(body, name, (int,), "an integer", required=required)
    if value is not None:
        check_range(name, value, lo, hi, "bad_field")
    return value


def number_field(body: dict[str, Any], name: str, what: str, *, lo: float, hi: float,
                 required: bool = False) -> int | float | None:
    """An int or float field within [lo, hi] (finite: a JSON integer of 400 digits is refused as out of
    range too, never turned into an infinite float)."""
    value = field(body, name, (int, float), what, required=required)
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value) or value < lo:
        raise HttpError(400, "bad_field", f"{name} must be a finite number >= {lo}, got {_shown(value)}")
    if value > hi:
        raise HttpError(400, "bad_field", f"{name} must be a finite number <= {hi} ({what}), got {_shown(value)}")
    return value


def reject_unknown_fields(body: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(body) - allowed)
    if extra:
        raise HttpError(400, "unknown_field", f"unknown field(s) {', '.join(extra)}; expected {', '.join(sorted(allowed))}")


# -- JSON out --------------------------------------------------------------------------------------------


def encoded(data: bytes | None) -> tuple[str | None, str | None]:
    """(text, encoding): UTF-8 text when the bytes decode, else base64; (None, None) for null."""
    if data is None:
        return None, None
    try:
        return bytes(data).decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(bytes(data)).decode("ascii"), "base64"


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of what a broker feature returns (dataclasses, enums, bytes, sets, objects)."""
    if depth > 8:
        return repr(value)
    if isinstance(value, enum.Enum):
        return value.name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return encoded(bytes(value))[0]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v, depth + 1) for v in value), key=repr)
    if isinstance(value, (list, tuple)) or hasattr(value, "__iter__") and not hasattr(value, "__dict__"):
        return [jsonable(v, depth + 1) for v in value]
    if hasattr(value, "__dict__"):
        return {k: jsonable(v, depth + 1) for k, v in vars(value).items()
                if not k.startswith("_") and not callable(v)}
    return repr(value)


def with_api_name(value: Any) -> dict[str, Any]:
    """Something with an `api_key` (a received request, a fault rule) as JSON, with the API's name (None
    for a key we do not know)."""
    from mockbroker.protocol.messages import api_name

    item: dict[str, Any] = jsonable(value)
    try:
        item["api_name"] = api_name(value.api_key)
    except Exception:
        item["api_name"] = None
    return item
