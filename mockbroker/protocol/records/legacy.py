"""Magic 0 and 1 message sets (Kafka before 0.11), and conversion to and from v2 batches.

Log entry = offset int64, message size int32, then the message:

    crc        uint32  CRC-32 (IEEE, zlib.crc32) of magic..end of the message
    magic      int8    0 or 1
    attributes int8    bits 0-2 codec (none, gzip, snappy, lz4), bit 3 timestamp type (v1 only)
    timestamp  int64   v1 only
    key        int32 length (-1 null) + bytes
    value      int32 length (-1 null) + bytes

A compressed message set is one wrapper message whose value is the compressed inner message set.
Inner offsets are absolute in v0; in v1 they are relative (0..n-1) and the wrapper carries the
absolute offset of the last inner message. A v1 wrapper marked LogAppendTime gives its timestamp to
every inner message. There is no zstd (magic 2 only) and only one level of compression.

LZ4 quirk (KIP-57): Kafka 0.8/0.9 wrote the LZ4 frame header checksum over the wrong bytes; magic 0
sets keep that broken checksum (we write it for magic 0, as Kafka and kafka-python do) and we read
either form for both magics.

Up-conversion (`convert_to_v2`) is what Kafka's broker does with Produce v0-v2 requests: one v2 batch,
same codec, producer id -1, v0 timestamps become -1. Down-conversion (`convert_from_v2`) is what it
does for Fetch v0-v3: offsets kept, control batches dropped, a compressed batch becomes one wrapper.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import CompressionError, DecodeError, EncodeError, LimitExceeded
from . import compression
from .batch import (
    LOG_APPEND_TIME,
    NO_TIMESTAMP,
    Codec,
    CorruptRecordError,
    InvalidRecordError,
    RecordBatch,
)
from .builder import RecordInput, build_batch

__all__ = [
    "LegacyMessage",
    "build_message_set",
    "convert_from_v2",
    "convert_to_v2",
    "parse_message_set",
]

_ENTRY = struct.Struct(">qi")  # offset, message size
_MESSAGE_V0 = struct.Struct(">Ibb")  # crc, magic, attributes
_MESSAGE_V1 = struct.Struct(">Ibbq")  # crc, magic, attributes, timestamp
_I32 = struct.Struct(">i")
LOG_OVERHEAD = 12
MESSAGE_OVERHEAD = {0: 14, 1: 22}  # crc + magic + attributes [+ timestamp] + key length + value length
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


@dataclass(slots=True)
class LegacyMessage:
    """One message of a v0/v1 set. `timestamp` and `timestamp_type` are None for magic 0."""

    offset: int
    magic: int
    attributes: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    timestamp_type: int | None = None

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK


# -- reading ------------------------------------------------------------------------------------


def _read_bytes(view: memoryview, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    if end - pos < 4:
        raise DecodeError(f"message {what} length runs past the message at offset {pos}")
    (n,) = _I32.unpack_from(view, pos)
    pos += 4
    if n < 0:  # null; Kafka's LegacyRecord reads any negative length as null
        return None, pos
    if n > end - pos:
        raise DecodeError(f"message {what} of {n} bytes runs past the message at offset {pos}")
    return bytes(view[pos : pos + n]), pos + n


def _count_entries(view: memoryview, max_messages: int) -> None:
    """LimitExceeded if `view` holds more than `max_messages` entries, found by hopping from size to size
    (no message read), so a set of millions of messages is refused before any is parsed."""
    pos = 0
    end_all = len(view)
    n = 0
    while end_all - pos >= LOG_OVERHEAD:
        n += 1
        if n > max_messages:
            raise LimitExceeded(f"message set holds more than {max_messages} messages")
        size = _I32.unpack_from(view, pos + 8)[0]
        if size < MESSAGE_OVERHEAD[0]:
            return  # the parse reports it
        pos += LOG_OVERHEAD + size


def _read_shallow(view: memoryview, *, allow_partial: bool, max_messages: int | None = None) -> list[LegacyMessage]:
    """The log entries of `view` as they are (wrappers not expanded), CRCs checked; LimitExceeded past
    `max_messages` entries, before any is read."""
    if max_messages is not None:
        _count_entries(view, max_messages)
    out: list[LegacyMessage] = []
    pos = 0
    end_all = len(view)
    while pos < end_all:
        if end_all - pos < LOG_OVERHEAD:
            if allow_partial:
                break
            raise DecodeError(f"{end_all - pos} trailing bytes at offset {pos} are not a whole message")
        offset, size = _ENTRY.unpack_from(view, pos)
        if size < MESSAGE_OVERHEAD[0]:
            raise CorruptRecordError(f"message at offset {pos} has size {size}, below the minimum 14")
        if size > end_all - pos - LOG_OVERHEAD:
            if allow_partial:
                break
            raise DecodeError(f"message at offset {pos} of {size} bytes runs past the data")
        start = pos + LOG_OVERHEAD
        end = start + size
        crc, magic, attributes = _MESSAGE_V0.unpack_from(view, start)
        if magic not in (0, 1):
            raise CorruptRecordError(f"message at offset {pos} has magic {magic}, expected 0 or 1")
        if size < MESSAGE_OVERHEAD[magic]:
            raise CorruptRecordError(
                f"message at offset {pos} has size {size}, below the minimum for magic {magic}"
            )
        computed = zlib.crc32(view[start + 4 : end])
        if computed != crc:
            raise CorruptRecordError(
                f"message at offset {pos} is corrupt (stored crc = {crc}, computed crc = {computed})"
            )
        timestamp: int | None = None
        timestamp_type: int | None = None
        body = start + 6
        if magic == 1:
            timestamp = _MESSAGE_V1.unpack_from(view, start)[3]
            timestamp_type = 1 if attributes & TIMESTAMP_TYPE_MASK else 0
            body += 8
        key, body = _read_bytes(view, body, end, "key")
        value, body = _read_bytes(view, body, end, "value")
        if body != end:
            raise CorruptRecordError(f"message at offset {pos} has {end - body} bytes after its value")
        out.append(LegacyMessage(offset, magic, attributes, timestamp, key, value, timestamp_type))
        pos = end
    return out


def _decompress(message: LegacyMessage, max_size: int) -> bytes:
    codec = message.codec
    if codec > Codec.LZ4:
        raise CorruptRecordError(
            f"message at offset {message.offset} has invalid codec {codec} for magic {message.magic}"
        )
    if message.value is None:
        raise CorruptRecordError(f"compressed message at offset {message.offset} has a null value")
    data: bytes = message.value
    if codec == Codec.LZ4:
        try:
            data = compression.lz4_fix_header_checksum(data)
        except DecodeError as exc:
            raise CompressionError(str(exc)) from None
    return compression.decompress(codec, data, max_size=max_size)


def _expand(wrapper: LegacyMessage, max_size: int, max_messages: int | None) -> list[LegacyMessage]:
    inner = _read_shallow(memoryview(_decompress(wrapper, max_size)), allow_partial=False, max_messages=max_messages)
    if not inner:
        raise CorruptRecordError(f"compressed message at offset {wrapper.offset} holds no messages")
    base = 0
    if wrapper.magic == 1:
        # Inner offsets are relative: the wrapper's offset is the last inner message's. A producer's
        # wrapper has offset 0 (kafka-python) and then the relative offsets are kept, as kafka-python does.
        base = wrapper.offset - inner[-1].offset
        if base < 0:
            base = 0
    for message in inner:
        # As LogValidator's record checks: INVALID_RECORD (Kafka names the record in record_errors).
        if message.codec != Codec.NONE:
            raise InvalidRecordError(
                f"compressed message at offset {wrapper.offset} holds a compressed message"
            )
        if message.magic != wrapper.magic:
            raise InvalidRecordError(
                f"message of magic {message.magic} inside a wrapper of magic {wrapper.magic} at offset {wrapper.offset}"
            )
        message.offset += base
        if wrapper.timestamp_type == LOG_APPEND_TIME:
            message.timestamp = wrapper.timestamp
            message.timestamp_type = LOG_APPEND_TIME
    return inner


def _parse(
    data: bytes | bytearray | memoryview, *, allow_partial: bool, max_size: int, max_messages: int | None = None
) -> tuple[list[LegacyMessage], Codec]:
    view = memoryview(data).cast("B")
    out: list[LegacyMessage] = []
    codec = Codec.NONE
    for message in _read_shallow(view, allow_partial=allow_partial, max_messages=max_messages):
        if message.codec == Codec.NONE:
            out.append(message)
            continue
        if codec == Codec.NONE and message.codec <= Codec.LZ4:
            codec = Codec(message.codec)
        left = None if max_messages is None else max_messages - len(out)
        out.extend(_expand(message, max_size, left))
    return out, codec


def parse_message_set(
    data: bytes | bytearray | memoryview,
    *,
    allow_partial: bool = False,
    max_size: int = compression.DEFAULT_MAX_SIZE,
) -> list[LegacyMessage]:
    """Every message of a v0/v1 set, wrappers expanded into their inner messages (absolute offsets).

    CRCs are checked; any malformed entry raises DecodeError (CorruptRecordError for damaged ones). A
    trailing entry cut short raises too, unless `allow_partial`.
    """
    return _parse(data, allow_partial=allow_partial, max_size=max_size)[0]


# -- writing ------------------------------------------------------------------------------------


def _encode_message(
    offset: int, magic: int, attributes: int, timestamp: int | None, key: bytes | None, value: bytes | None
) -> bytes:
    body = bytearray()
    try:
        body += struct.pack(">bb", magic, attributes)
        if magic == 1:
            body += struct.pack(">q", NO_TIMESTAMP if timestamp is None else timestamp)
        for field in (key, value):
            if field is None:
                body += _I32.pack(-1)
            else:
                body += _I32.pack(len(field))
                body += field
        entry = _ENTRY.pack(offset, len(body) + 4)
    except struct.error as exc:
        raise EncodeError(f"a message field is out of range: {exc}") from None
    return entry + struct.pack(">I", zlib.crc32(body)) + bytes(body)


def _as_message(item: LegacyMessage | tuple, offset: int, magic: int, now: int) -> LegacyMessage:  # type: ignore[type-arg]
    if isinstance(item, LegacyMessage):
        return item
    if not isinstance(item, tuple) or not 2 <= len(item) <= 3:
        raise TypeError(f"a message is a LegacyMessage or a (key, value[, timestamp]) tuple, not {item!r}")
    timestamp = item[2] if len(item) == 3 and item[2] is not None else now
    return LegacyMessage(offset, magic, 0, timestamp, item[0], item[1])


def build_message_set(
    messages: Sequence[LegacyMessage | tuple],  # type: ignore[type-arg]
    *,
    magic: int,
    codec: int = Codec.NONE,
    base_offset: int = 0,
    timestamp_type: int = 0,
) -> bytes:
    """A v0/v1 message set. LegacyMessage items keep their offsets; (key, value[, timestamp]) tuples
    get base_offset + index (and now as timestamp when it is missing). With a codec, one wrapper
    message whose offset is the last message's, as Kafka's MemoryRecordsBuilder writes it: inner
    offsets relative to the first message in v1, absolute in v0; the v1 wrapper timestamp is the
    largest inner timestamp. `timestamp_type` 1 sets the LogAppendTime bit (v1)."""
    if magic not in (0, 1):
        raise EncodeError(f"legacy message sets have magic 0 or 1, not {magic}")
    if codec not in (Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4):
        raise EncodeError(f"codec {codec} cannot be used with magic {magic}")
    now = int(time.time() * 1000)
    items = [_as_message(m, base_offset + i, magic, now) for i, m in enumerate(messages)]
    ts_bit = TIMESTAMP_TYPE_MASK if magic == 1 and timestamp_type == LOG_APPEND_TIME else 0
    timestamps = [m.timestamp if magic == 1 else None for m in items]
    if codec == Codec.NONE:
        return b"".join(
            _encode_message(m.offset, magic, ts_bit, ts, m.key, m.value)
            for m, ts in zip(items, timestamps, strict=True)
        )
    if not items:
        raise EncodeError("a compressed message set needs at least one message")
    first = items[0].offset
    inner = b"".join(
        _encode_message(m.offset - first if magic == 1 else m.offset, magic, ts_bit, ts, m.key, m.value)
        for m, ts in zip(items, timestamps, strict=True)
    )
    compressed = compression.compress(codec, inner)
    if codec == Codec.LZ4 and magic == 0:
        compressed = compression.lz4_break_header_checksum(compressed)
    wrapper_ts: int | None = None
    if magic == 1:
        wrapper_ts = max((NO_TIMESTAMP if ts is None else ts) for ts in timestamps)
    return _encode_message(items[-1].offset, magic, ts_bit | int(codec), wrapper_ts, None, compressed)


# -- conversion ---------------------------------------------------------------------------------


def convert_to_v2(
    data: bytes | bytearray | memoryview,
    *,
    base_offset: int | None = None,
    codec: int | None = None,
    partition_leader_epoch: int = -1,
    max_size: int = compression.DEFAULT_MAX_SIZE,
    max_messages: int | None = None,
) -> bytearray:
    """A whole v0/v1 message set as one v2 batch (Kafka's up-conversion of Produce v0-v2).

    `base_offset` None keeps the set's offsets (base = the first message's); an int assigns
    base_offset + index, as the broker does on produce. The codec is the set's (the first wrapper's)
    unless `codec` is given. Producer id/epoch and base sequence are -1; timestamps come from v1
    messages and are -1 for v0; a set marked LogAppendTime gives a LogAppendTime batch. More than
    `max_messages` messages (wrappers expanded) raise LimitExceeded before they are parsed.
    """
    messages, source_codec = _parse(data, allow_partial=False, max_size=max_size, max_messages=max_messages)
    if not messages:
        raise DecodeError("the message set holds no messages")
    first = messages[0].offset
    if base_offset is None:
        deltas = [m.offset - first for m in messages]
        if any(b <= a for a, b in zip(deltas, deltas[1:], strict=False)) or deltas[-1] > 2**31 - 1:
            raise DecodeError("message set offsets are not increasing within an int32 range")
        base_offset = first
    else:
        deltas = list(range(len(messages)))
    timestamps = [NO_TIMESTAMP if m.timestamp is None else m.timestamp for m in messages]
    timestamp_type = LOG_APPEND_TIME if any(m.timestamp_type == LOG_APPEND_TIME for m in messages) else 0
    return build_batch(
        [
            RecordInput(m.key, m.value, (), ts, delta)
            for m, ts, delta in zip(messages, timestamps, deltas, strict=True)
        ],
        base_offset=base_offset,
        codec=source_codec if codec is None else codec,
        partition_leader_epoch=partition_leader_epoch,
        timestamp_type=timestamp_type,
        base_timestamp=timestamps[0],
        max_timestamp=max(timestamps),
    )


def convert_from_v2(
    batches: Iterable[RecordBatch], magic: int, *, first_offset: int = 0, max_records: int | None = None
) -> bytes:
    """v2 batches as a v0/v1 message set (Kafka's down-conversion for Fetch v0-v3).

    Offsets are kept; headers are dropped; control batches are skipped, as are empty ones. An
    uncompressed batch becomes one message per record, leaving out records before `first_offset`
    (the fetch offset, as Kafka does); a compressed batch becomes one wrapper with the same codec.
    zstd cannot be expressed in magic 0/1: EncodeError (Kafka's UNSUPPORTED_COMPRESSION_TYPE).
    With `max_records`, the conversion stops before a batch that would take the records converted past
    it (the first batch is always converted): the work of one call stays bounded, the reader asks again.
    """
    if magic not in (0, 1):
        raise EncodeError(f"legacy message sets have magic 0 or 1, not {magic}")
    out = bytearray()
    converted = 0
    for batch in batches:
        if batch.is_control:
            continue
        if max_records is not None and converted and converted + batch.record_count > max_records:
            break
        converted += max(batch.record_count, 0)
        codec = batch.codec
        if codec == Codec.ZSTD:
            raise EncodeError("zstd batches cannot be down-converted to magic 0/1")
        records = batch.records()
        if codec == Codec.NONE:
            records = [r for r in records if r.offset >= first_offset]
        if not records:
            continue
        timestamp_type = batch.timestamp_type
        messages = [
            LegacyMessage(
                offset=r.offset,
                magic=magic,
                attributes=0,
                timestamp=r.timestamp if magic == 1 else None,
                key=r.key,
                value=r.value,
                timestamp_type=timestamp_type if magic == 1 else None,
            )
            for r in records
        ]
        out += build_message_set(messages, magic=magic, codec=codec, timestamp_type=timestamp_type)
    return bytes(out)
