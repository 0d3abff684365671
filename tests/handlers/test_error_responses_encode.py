"""Every error response the fault injection and the authorization layer build (each API's error_response, registered in mockbroker/dispatch.py)
encodes at every served version of its API (the encoder refuses a key its struct has at no version) and
carries the code: built from a request with one entry in every array, so the per-entry builders run too."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker import dispatch
from mockbroker.protocol._generated.specs import MESSAGES
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg, decode_request, decode_response, encode_request, encode_response

CODE = ErrorCode.UNKNOWN_SERVER_ERROR
PRIMITIVE_ITEM = {"string": "x", "uuid": uuid.UUID(int=1)}


def _filled(fields: tuple[Any, ...]) -> Msg:
    """A request body with non-default strings and ids, and one entry in every array."""
    m = Msg()
    for name, ftype, _versions, _nullable, _tagged, _tag, default, _never_flex, sub in fields:
        if sub:
            m[name] = [_filled(sub)] if ftype.startswith("[]") else _filled(sub)
        elif ftype.startswith("[]"):
            m[name] = [PRIMITIVE_ITEM.get(ftype[2:], 0)]
        else:
            m[name] = PRIMITIVE_ITEM.get(ftype, default)
    return m


def _codes(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "error_code"] + [c for v in value.values() for c in _codes(v)]
    if isinstance(value, list):
        return [c for v in value for c in _codes(v)]
    return []


def _cases() -> list[tuple[int, int]]:
    dispatch.load_handlers()
    return [(key, v) for key, spec in sorted(dispatch.REGISTRY.items())
            for v in range(spec.min_version, spec.max_version + 1) if dispatch.carries_error(key, v)]


@pytest.mark.parametrize(("api_key", "version"), _cases())
def test_error_response_encodes_and_carries_the_code(api_key: int, version: int) -> None:
    fields = next(seg[3] for seg in MESSAGES[api_key][1] if seg[0] <= version <= seg[1])
    request = decode_request(api_key, version, encode_request(api_key, version, _filled(fields)).getvalue())
    wire = encode_response(api_key, version, dispatch.error_response(api_key, version, request, CODE)).getvalue()
    assert CODE in _codes(decode_response(api_key, version, wire))
