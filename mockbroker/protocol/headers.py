"""Request and response headers, and which header version each (api_key, version) uses.

Request header v0: api_key, api_version, correlation_id. v1 adds client_id (nullable string, never
compact). v2 (flexible request versions) adds tagged fields. Response header v0: correlation_id; v1
(flexible response versions) adds tagged fields.

Quirks:
- ApiVersions responses always use response header v0, whatever the request version, so that a
  client that does not yet know the broker's versions can read the answer (KIP-511).
- ControlledShutdown v0 used request header v0 (no client id).
- A request header whose version we do not know is parsed with the newest rule for that key (an
  ApiVersions request from a newer client still has to be answered).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .errors import DecodeError, UnsupportedVersion
from .messages import is_flexible
from .primitives import Reader, Writer

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7


@dataclass
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None
    header_version: int = 1
    tagged_fields: list[tuple[int, bytes]] = field(default_factory=list)


def request_header_version(api_key: int, api_version: int) -> int:
    if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
        return 0
    return 2 if is_flexible(api_key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if is_flexible(api_key, api_version) else 0


def peek_api_key_version(frame: bytes | bytearray | memoryview) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) from the start of a request frame, without the rest."""
    r = Reader(frame)
    r.context = "request header"
    return r.int16(), r.int16(), r.int32()


_FIXED = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id's length (header v1+)
# Header versions of the (api_key, api_version) pairs seen, for versions up to this (a client cannot grow it).
_VERSIONS: dict[tuple[int, int], int] = {}
_CACHED_UP_TO = 127


def decode_request_header(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, Reader]:
    """Parse the header of a request frame; returns it and a Reader positioned at the body.

    Raises UnsupportedVersion for an API key the schemas do not know (the broker closes the
    connection, as Kafka does), DecodeError for a truncated header.
    """
    r = Reader(frame)
    buf = r.buf
    if r.end < 10:
        return _decode_request_header(r)
    api_key, api_version, correlation_id, n = _FIXED.unpack_from(buf, 0)
    hv = _VERSIONS.get((api_key, api_version))
    if hv is None:
        try:
            hv = request_header_version(api_key, api_version)
        except KeyError:
            raise UnsupportedVersion(f"unknown API key {api_key}") from None
        if 0 <= api_version <= _CACHED_UP_TO:
            _VERSIONS[(api_key, api_version)] = hv
    # The usual header: v1 or v2 with a client id (or none) in the frame, v2 with no tagged field (one byte 0).
    pos = 10 + (n if n > 0 else 0)
    if hv == 0 or n < -1 or pos + (hv == 2) > r.end or (hv == 2 and buf[pos] != 0):
        return _decode_request_header(r)  # the field by field path, whose errors name the field
    client_id = None if n == -1 else str(buf[10:pos], "utf-8", "replace")
    r.pos = pos + 1 if hv == 2 else pos
    return RequestHeader(api_key, api_version, correlation_id, client_id, hv, []), r


def _decode_request_header(r: Reader) -> tuple[RequestHeader, Reader]:
    r.context = "request header"
    api_key = r.int16()
    api_version = r.int16()
    correlation_id = r.int32()
    try:
        hv = request_header_version(api_key, api_version)
    except KeyError:
        raise UnsupportedVersion(f"unknown API key {api_key}") from None
    header = RequestHeader(api_key, api_version, correlation_id, header_version=hv)
    if hv >= 1:
        r.context = "client_id"
        header.client_id = r.nullable_string()
    if hv >= 2:
        r.context = "request header tagged fields"
        header.tagged_fields = [(t, bytes(d)) for t, d in r.tagged_fields()]
    r.context = ""
    return header, r


def encode_request_header(header: RequestHeader, w: Writer | None = None) -> Writer:
    w = Writer() if w is None else w
    hv = request_header_version(header.api_key, header.api_version)
    w.int16(header.api_key)
    w.int16(header.api_version)
    w.int32(header.correlation_id)
    if hv >= 1:
        w.nullable_string(header.client_id)
    if hv >= 2:
        w.uvarint(len(header.tagged_fields))
        for tag, data in header.tagged_fields:
            w.uvarint(tag)
            w.uvarint(len(data))
            w.raw(data)
    return w


def encode_response_header(correlation_id: int, header_version: int, w: Writer | None = None) -> Writer:
    w = Writer() if w is None else w
    w.int32(correlation_id)
    if header_version >= 1:
        w.uvarint(0)
    return w


def decode_response_header(data: bytes | bytearray | memoryview, header_version: int) -> tuple[int, Reader]:
    """(correlation_id, Reader at the body) of a response frame."""
    r = Reader(data)
    r.context = "response header"
    correlation_id = r.int32()
    if header_version >= 1:
        r.tagged_fields()
    r.context = ""
    return correlation_id, r


__all__ = [
    "RequestHeader",
    "DecodeError",
    "request_header_version",
    "response_header_version",
    "peek_api_key_version",
    "decode_request_header",
    "encode_request_header",
    "encode_response_header",
    "decode_response_header",
]
