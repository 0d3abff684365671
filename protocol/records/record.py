"""One record of a v2 batch: the decoded Record and decode_records, which reads a whole (uncompressed)
records section as Kafka's DefaultRecord.readFrom does. batch.py re-exports these names."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DecodeError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def wrap_int64(value: int) -> int:
    """`value` modulo 2**64 as a signed int64: Java's long arithmetic, where sums overflow."""
    return ((value + 2**63) % 2**64) - 2**63


@dataclass(slots=True)
class Record:
    """One decoded record. `timestamp` is the effective one: the batch's maxTimestamp for
    LogAppendTime batches, baseTimestamp + timestamp_delta otherwise (as Kafka's clients read it)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    attributes: int = 0
    offset_delta: int = 0
    timestamp_delta: int = 0


def _varint(buf: bytes, pos: int, end: int, bits: int, what: str) -> tuple[int, int]:
    """A zigzag varint (bits=32, at most 5 bytes) or varlong (bits=64, 10 bytes) in buf[pos:end]."""
    result = 0
    shift = 0
    while shift < bits:
        if pos >= end:
            raise DecodeError(f"record {what} runs past the end of the record at offset {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >> bits:
                raise DecodeError(f"record {what} varint is out of range at offset {pos}")
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
    raise DecodeError(f"record {what} varint is too long at offset {pos}")


def decode_records(
    data: bytes,
    count: int,
    *,
    base_offset: int = 0,
    base_timestamp: int = 0,
    log_append_time: int | None = None,
) -> list[Record]:
    """Decode exactly `count` records filling all of `data` (an uncompressed records section).

    Offsets and timestamps are base + delta in int64 arithmetic that wraps, as in Java. Follows Kafka's DefaultRecord.readFrom: a negative key/value/header-value length is null, a
    negative header count or header key length is an error, each record must use exactly the
    length it declares. Header keys that are not valid UTF-8 are decoded with U+FFFD, as Java does.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    records: list[Record] = []
    end_all = len(data)
    pos = 0
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    for index in range(count):
        if pos >= end_all:
            raise DecodeError(f"batch declares {count} records but holds only {index}")
        length, pos = _varint(data, pos, end_all, 32, "length")
        if length < 0 or length > end_all - pos:
            raise DecodeError(
                f"record {index} declares {length} bytes but only {end_all - pos} remain at offset {pos}"
            )
        start = pos
        end = pos + length
        if pos >= end:
            raise DecodeError(f"record {index} is empty at offset {pos}")
        attributes = data[pos]
        if attributes >= 0x80:
            attributes -= 0x100
        pos += 1
        timestamp_delta, pos = _varint(data, pos, end, 64, "timestamp delta")
        offset_delta, pos = _varint(data, pos, end, 32, "offset delta")
        key_len, pos = _varint(data, pos, end, 32, "key length")
        key: bytes | None = None
        if key_len >= 0:
            if key_len > end - pos:
                raise DecodeError(f"record {index} key of {key_len} bytes runs past the record")
            key = data[pos : pos + key_len]
            pos += key_len
        value_len, pos = _varint(data, pos, end, 32, "value length")
        value: bytes | None = None
        if value_len >= 0:
            if value_len > end - pos:
                raise DecodeError(f"record {index} value of {value_len} bytes runs past the record")
            value = data[pos : pos + value_len]
            pos += value_len
        header_count, pos = _varint(data, pos, end, 32, "header count")
        if header_count < 0:
            raise DecodeError(f"record {index} has invalid header count {header_count}")
        headers: list[tuple[str, bytes | None]] = []
        for _ in range(header_count):
            hkey_len, pos = _varint(data, pos, end, 32, "header key length")
            if hkey_len < 0 or hkey_len > end - pos:
                raise DecodeError(f"record {index} has invalid header key length {hkey_len}")
            hkey = data[pos : pos + hkey_len].decode("utf-8", "replace")
            pos += hkey_len
            hvalue_len, pos = _varint(data, pos, end, 32, "header value length")
            hvalue: bytes | None = None
            if hvalue_len >= 0:
                if hvalue_len > end - pos:
                    raise DecodeError(
                        f"record {index} header value of {hvalue_len} bytes runs past the record"
                    )
                hvalue = data[pos : pos + hvalue_len]
                pos += hvalue_len
            headers.append((hkey, hvalue))
        if pos != end:
            raise DecodeError(
                f"record {index} declares {length} bytes but its fields use {pos - start} (invalid record size)"
            )
        offset = base_offset + offset_delta
        if not INT64_MIN <= offset <= INT64_MAX:
            offset = wrap_int64(offset)
        if log_append_time is not None:
            timestamp = log_append_time
        else:
            timestamp = base_timestamp + timestamp_delta
            if not INT64_MIN <= timestamp <= INT64_MAX:
                timestamp = wrap_int64(timestamp)
        records.append(
            Record(
                offset=offset,
                timestamp=timestamp,
                key=key,
                value=value,
                headers=headers,
                attributes=attributes,
                offset_delta=offset_delta,
                timestamp_delta=timestamp_delta,
            )
        )
    if pos != end_all:
        raise DecodeError(f"{end_all - pos} bytes left after the {count} records the batch declares")
    return records
