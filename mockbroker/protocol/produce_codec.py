"""The usual Produce request and response (v3-v12) read and written straight, for the broker's hot path.

A producer's request at linger.ms 0 is one topic, one partition, one batch, and its answer one partition
without error details: the general codec (messages.py, compiled per struct by struct_compiler.py) reads and
writes them through a chain of per-field functions. These two functions do the same work inline:

- `decode_produce_request(version, reader)`: the request's Msg, exactly what `decode_request` gives (same keys in
  the same order, records as a view of the frame, topic_id the zero UUID before v13); None, with the reader left
  where it was, for anything not plainly well formed (a null or oversized length, a tagged field on the wire, a
  cut-off body, v13's topic ids): the general codec then reads it, with its errors.
- `encode_produce_response(version, msg, writer)`: writes exactly the bytes `encode_response` writes when the
  answer has only the fields the Produce handler sets, no record errors, no error message, no leader hint and
  no node endpoints; False, with nothing written, otherwise (or for a value that does not pack: struct's
  checks are the general codec's, an IntEnum error code packs as its number): the general codec then writes
  it, with its errors.

tests/protocol/test_produce_codec.py checks both against the general codec, byte for byte and field for field.
"""

from __future__ import annotations

import struct
from typing import Any

from .messages import Msg
from .primitives import ZERO_UUID, Reader, Writer

FIRST, LAST = 3, 12  # the versions served here (v0-v2 carry message sets; v13 names topics by id)
FLEXIBLE_FROM = 9

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT = struct.Struct(">hi")
_ACKS_TIMEOUT_COUNT = struct.Struct(">hii")
_INDEX_SIZE = struct.Struct(">ii")


def _uvarint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    """(value, position after) of an unsigned varint of at most 5 bytes; value -1 if it is cut off or longer."""
    result = shift = 0
    while pos < end and shift < 35:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    return -1, pos


def decode_produce_request(version: int, r: Reader) -> Msg | None:
    """A Produce request body of the usual shape, read from r's position (see the module's doc); else None."""
    if not FIRST <= version <= LAST:
        return None
    m = _decode_flexible(r) if version >= FLEXIBLE_FROM else _decode_classic(r)
    return m


def _decode_classic(r: Reader) -> Msg | None:
    buf, pos, end = r.buf, r.pos, r.end
    if pos + 2 > end:
        return None
    (n,) = _I16.unpack_from(buf, pos)
    pos += 2
    transactional_id = None
    if n >= 0:
        if pos + n > end:
            return None
        transactional_id = str(buf[pos : pos + n], "utf-8", "replace")
        pos += n
    elif n != -1:
        return None
    if pos + 10 > end:
        return None
    acks, timeout_ms, topic_count = _ACKS_TIMEOUT_COUNT.unpack_from(buf, pos)
    pos += 10
    if topic_count < 0 or topic_count > end - pos:
        return None
    topics = []
    for _ in range(topic_count):
        if pos + 2 > end:
            return None
        (n,) = _I16.unpack_from(buf, pos)
        pos += 2
        if n < 0 or pos + n + 4 > end:
            return None
        name = str(buf[pos : pos + n], "utf-8", "replace")
        pos += n
        (part_count,) = _I32.unpack_from(buf, pos)
        pos += 4
        if part_count < 0 or part_count > end - pos:
            return None
        parts = []
        for _ in range(part_count):
            if pos + 8 > end:
                return None
            index, size = _INDEX_SIZE.unpack_from(buf, pos)
            pos += 8
            records = None
            if size >= 0:
                if pos + size > end:
                    return None
                records = buf[pos : pos + size]
                pos += size
            elif size != -1:
                return None
            parts.append(Msg(index=index, records=records))
        topics.append(Msg(name=name, partition_data=parts, topic_id=ZERO_UUID))
    r.pos = pos
    return Msg(transactional_id=transactional_id, acks=acks, timeout_ms=timeout_ms, topic_data=topics)


def _decode_flexible(r: Reader) -> Msg | None:
    buf, pos, end = r.buf, r.pos, r.end
    n, pos = _uvarint(buf, pos, end)
    if n < 0:
        return None
    n -= 1
    transactional_id = None
    if n >= 0:
        if pos + n > end:
            return None
        transactional_id = str(buf[pos : pos + n], "utf-8", "replace")
        pos += n
    if pos + 6 > end:
        return None
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, pos)
    pos += 6
    topic_count, pos = _uvarint(buf, pos, end)
    topic_count -= 1
    if topic_count < 0 or topic_count > end - pos:
        return None
    topics = []
    for _ in range(topic_count):
        n, pos = _uvarint(buf, pos, end)
        n -= 1
        if n < 0 or pos + n > end:
            return None
        name = str(buf[pos : pos + n], "utf-8", "replace")
        pos += n
        part_count, pos = _uvarint(buf, pos, end)
        part_count -= 1
        if part_count < 0 or part_count > end - pos:
            return None
        parts = []
        for _ in range(part_count):
            if pos + 4 > end:
                return None
            (index,) = _I32.unpack_from(buf, pos)
            size, pos = _uvarint(buf, pos + 4, end)
            if size < 0:
                return None
            size -= 1
            records = None
            if size >= 0:
                if pos + size > end:
                    return None
                records = buf[pos : pos + size]
                pos += size
            if pos >= end or buf[pos] != 0:  # a tagged field (or none of the byte): the general codec's
                return None
            pos += 1
            parts.append(Msg(index=index, records=records))
        if pos >= end or buf[pos] != 0:
            return None
        pos += 1
        topics.append(Msg(name=name, partition_data=parts, topic_id=ZERO_UUID))
    if pos >= end or buf[pos] != 0:
        return None
    r.pos = pos + 1
    return Msg(transactional_id=transactional_id, acks=acks, timeout_ms=timeout_ms, topic_data=topics)


# -- the response ---------------------------------------------------------------------------------------

_RESPONSE_KEYS = frozenset({"responses", "throttle_time_ms"})
_TOPIC_KEYS = frozenset({"name", "topic_id", "partition_responses"})
_PARTITION_KEYS = frozenset({"index", "error_code", "base_offset", "log_append_time_ms", "log_start_offset",
                             "record_errors", "error_message"})
_V3 = struct.Struct(">ihqq")  # index, error_code, base_offset, log_append_time_ms
_V5 = struct.Struct(">ihqqq")  # and log_start_offset
_V8 = struct.Struct(">ihqqqi")  # and an empty record_errors (int32 0); error_message null follows (int16 -1)
_V9 = struct.Struct(">ihqqqB")  # flexible: record_errors empty (uvarint 1); null message (0), no tag (0) follow


def _uvarint_bytes(v: int) -> bytes:
    if v < 0x80:
        return _SMALL[v]
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]


def encode_produce_response(version: int, msg: Any, w: Writer) -> bool:
    """Write a Produce response of the usual shape (see the module's doc) to w; False, nothing written, else."""
    if not FIRST <= version <= LAST or not _RESPONSE_KEYS.issuperset(msg):
        return False
    try:
        return _encode(version, msg, w)
    except (struct.error, TypeError, AttributeError, UnicodeError):
        return False


def _encode(version: int, msg: Any, w: Writer) -> bool:
    flexible = version >= FLEXIBLE_FROM
    responses = msg.get("responses", [])
    throttle = msg.get("throttle_time_ms", 0)
    if type(responses) is not list:
        return False
    out = bytearray(_uvarint_bytes(len(responses) + 1) if flexible else _I32.pack(len(responses)))
    for topic in responses:
        if not isinstance(topic, dict) or not _TOPIC_KEYS.issuperset(topic):
            return False
        name = topic.get("name", "")
        parts = topic.get("partition_responses", [])
        if type(name) is not str or type(parts) is not list:
            return False
        encoded = name.encode()
        if flexible:
            out += _uvarint_bytes(len(encoded) + 1)
            out += encoded
            out += _uvarint_bytes(len(parts) + 1)
        else:
            if len(encoded) > 0x7FFF:
                return False
            out += _I16.pack(len(encoded))
            out += encoded
            out += _I32.pack(len(parts))
        for p in parts:
            if not isinstance(p, dict) or not _PARTITION_KEYS.issuperset(p):
                return False
            if p.get("record_errors") or p.get("error_message") is not None:
                return False
            index, code = p.get("index", 0), p.get("error_code", 0)
            base, append_time = p.get("base_offset", 0), p.get("log_append_time_ms", -1)
            start = p.get("log_start_offset", -1)
            if flexible:
                out += _V9.pack(index, code, base, append_time, start, 1)
                out += b"\x00\x00"
            elif version >= 8:
                out += _V8.pack(index, code, base, append_time, start, 0)
                out += b"\xff\xff"
            elif version >= 5:
                out += _V5.pack(index, code, base, append_time, start)
            else:
                out += _V3.pack(index, code, base, append_time)
        if flexible:
            out.append(0)
    out += _I32.pack(throttle)
    if flexible:
        out.append(0)
    w.raw(out)
    return True
