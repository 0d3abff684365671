"""One record of a v2 batch: the decoded Record and decode_records, which reads a whole (uncompressed)
records section as Kafka's DefaultRecord.readFrom does, and check_records, which walks one without
building anything (the broker's validation on produce). batch.py re-exports these names.

check_records is the C walker (_walk.c, built at install where a compiler is) when it loads, else
check_records_python, the reference it follows; MOCKBROKER_PURE_PYTHON=1 picks the Python one."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from ..errors import DecodeError, ErrorCode

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def wrap_int64(value: int) -> int:
    """`value` modulo 2**64 as a signed int64: Java's long arithmetic, where sums overflow."""
    return ((value + 2**63) % 2**64) - 2**63


class CorruptRecordError(DecodeError):
    """A batch whose bytes are damaged: length, magic, CRC, codec. Kafka's CorruptRecordException."""

    error_code: ErrorCode = ErrorCode.CORRUPT_MESSAGE


class InvalidRecordError(CorruptRecordError):
    """A batch whose fields or records contradict each other (counts, offset deltas, a record's
    structure). Kafka's InvalidRecordException."""

    error_code: ErrorCode = ErrorCode.INVALID_RECORD


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

    Offsets and timestamps are base + delta in int64 arithmetic that wraps, as in Java. Follows Kafka's
    DefaultRecord.readFrom: a negative key/value/header-value length is null, a negative header count or
    header key length is an error, each record must use exactly the length it declares. Header keys that
    are not valid UTF-8 are decoded with U+FFFD, as Java does.
    """
    return list(iter_records(data, count, base_offset=base_offset, base_timestamp=base_timestamp,
                             log_append_time=log_append_time))


def iter_records(
    data: bytes,
    count: int,
    *,
    start: int = 0,
    base_offset: int = 0,
    base_timestamp: int = 0,
    log_append_time: int | None = None,
) -> Iterator[Record]:
    """decode_records one record at a time, from the record at index `start` (the ones before it are
    hopped over by their length prefixes, not decoded): a reader that stops early decodes only what it
    takes. Bytes left after the last record are an error only once the last record was taken."""
    if not isinstance(data, bytes):
        data = bytes(data)
    end_all = len(data)
    pos = 0
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    for index in range(min(max(start, 0), count)):
        if pos >= end_all:
            raise DecodeError(f"batch declares {count} records but holds only {index}")
        length, pos = _varint(data, pos, end_all, 32, "length")
        if length < 0 or length > end_all - pos:
            raise DecodeError(f"record {index} declares {length} bytes but only {end_all - pos} remain")
        pos += length
    for index in range(max(start, 0), count):
        if pos >= end_all:
            raise DecodeError(f"batch declares {count} records but holds only {index}")
        length, pos = _varint(data, pos, end_all, 32, "length")
        if length < 0 or length > end_all - pos:
            raise DecodeError(
                f"record {index} declares {length} bytes but only {end_all - pos} remain at offset {pos}"
            )
        record_start = pos
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
                f"record {index} declares {length} bytes but its fields use {pos - record_start} (invalid record size)"
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
        yield Record(
            offset=offset,
            timestamp=timestamp,
            key=key,
            value=value,
            headers=headers,
            attributes=attributes,
            offset_delta=offset_delta,
            timestamp_delta=timestamp_delta,
        )
    if pos != end_all:
        raise DecodeError(f"{end_all - pos} bytes left after the {count} records the batch declares")


# -- the structural walk ------------------------------------------------------------------------

MIN_RECORD_BODY = 6
"""Smallest record body: attributes, timestamp delta, offset delta, key length, value length, header count."""


def _slow_varint(data: bytes | memoryview, pos: int, bits: int) -> tuple[int, int]:
    """The raw (not yet zigzag-decoded) value of a varint (bits=32, at most 5 bytes) or varlong (bits=64,
    10 bytes) starting at data[pos]; IndexError past the end of data (the caller's to report)."""
    result = 0
    shift = 0
    while shift < bits:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >> bits:
                raise InvalidRecordError(f"Found invalid record structure: varint out of range at offset {pos}")
            return result, pos
        shift += 7
    raise InvalidRecordError(f"Found invalid record structure: varint too long at offset {pos}")


class RecordsChecked(NamedTuple):
    """What check_records found besides the structure: the records that break a per-record rule, and the
    largest timestamp delta (None without records), from which the broker sets the batch's max timestamp."""

    errors: list[tuple[int, int | None]]
    max_timestamp_delta: int | None


def check_records_python(
    data: bytes | memoryview,
    count: int,
    *,
    keys_required: bool = False,
    timestamp_deltas: tuple[int, int] | None = None,
) -> RecordsChecked:
    """Walk exactly `count` records filling all of `data` (an uncompressed records section) without
    building them, checking what Kafka's DefaultRecord.readFrom and the batch's record iterator check:
    well-formed varints in range, a record body of exactly its declared length, key, value and headers
    inside it, a header count that is not negative, no bytes after the last record; and each offset delta
    equal to the record's index. Any of these raises InvalidRecordError (Kafka's InvalidRecordException).

    The work is one pass over the varints (values and keys are skipped, not copied), and it stops at
    the first error; at most `count` records are walked.

    Returns, as `errors`, the records that break a per-record rule (Kafka's RecordError), in order and
    one per record: (index, None) for a record without a key when `keys_required` (a compacted topic),
    else (index, timestamp delta) for a timestamp delta outside `timestamp_deltas` (low, high,
    inclusive); and the largest timestamp delta.
    """
    found: list[tuple[int, int | None]] = []
    max_delta: int | None = None
    end_all = len(data)
    pos = 0
    check_time = timestamp_deltas is not None
    low, high = timestamp_deltas if timestamp_deltas is not None else (0, 0)
    # The hot path of Produce: each varint is read raw with one- and two-byte fast paths (a raw varint is
    # 2n for n >= 0, 2|n| - 1 for n < 0) and zigzag-decoded only where its value is needed.
    try:
        for index in range(count):
            # length: not negative (raw even), inside the data, at least the smallest body
            b = data[pos]
            if b < 0x80:
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    pos += 2
                else:
                    b, pos = _slow_varint(data, pos, 32)
            length = b >> 1
            end = pos + length
            if b & 1 or end > end_all or length < MIN_RECORD_BODY:
                _bad_length((b >> 1) ^ -(b & 1), end_all - pos, index)
            # attributes (not checked, as Kafka), timestamp delta
            b = data[pos + 1]
            if b < 0x80:
                pos += 2
            else:
                c = data[pos + 2]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    pos += 3
                else:
                    b, pos = _slow_varint(data, pos + 1, 64)
            ts_delta = (b >> 1) ^ -(b & 1)
            if max_delta is None or ts_delta > max_delta:
                max_delta = ts_delta
            # offset delta: the index (raw 2 * index)
            b = data[pos]
            if b < 0x80:
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    pos += 2
                else:
                    b, pos = _slow_varint(data, pos, 32)
            if b != index << 1:
                raise InvalidRecordError(f"Inner record offset delta {(b >> 1) ^ -(b & 1)} should be {index}")
            # key: a negative length (raw odd) is null, as Kafka's Utils.readBytes reads it
            key = data[pos]
            if key < 0x80:
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    key = (key & 0x7F) | (c << 7)
                    pos += 2
                else:
                    key, pos = _slow_varint(data, pos, 32)
            if not key & 1:
                pos += key >> 1
                if pos > end:
                    raise InvalidRecordError(f"Found invalid record structure: record {index} key runs past the record")
            # value
            b = data[pos]
            if b < 0x80:
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    b = (b & 0x7F) | (c << 7)
                    pos += 2
                else:
                    b, pos = _slow_varint(data, pos, 32)
            if not b & 1:
                pos += b >> 1
                if pos > end:
                    raise InvalidRecordError(
                        f"Found invalid record structure: record {index} value runs past the record"
                    )
            # headers: none (one zero byte) is the usual case
            if data[pos]:
                b, pos = _slow_varint(data, pos, 32)
                pos = _skip_headers(data, pos, end, (b >> 1) ^ -(b & 1))
            else:
                pos += 1
            if pos != end:
                raise InvalidRecordError(
                    f"Invalid record size: expected to read {length} bytes in record payload, but instead read "
                    f"{length + pos - end}"
                )
            if keys_required and key & 1:
                found.append((index, None))
            elif check_time and not low <= ts_delta <= high:
                found.append((index, ts_delta))
    except IndexError:
        raise InvalidRecordError("Incorrect declared batch size, premature EOF reached") from None
    if pos != end_all:
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file")
    return RecordsChecked(found, max_delta)


def _bad_length(length: int, remaining: int, index: int) -> None:
    """The error of a record length that is negative, past the data or below the smallest record body."""
    if length > remaining:
        raise InvalidRecordError(
            f"Invalid record size: expected {length} bytes in record payload, but instead the buffer has only "
            f"{remaining} remaining bytes."
        )
    raise InvalidRecordError(f"Found invalid record structure: record {index} declares {length} bytes")


def _skip_headers(data: bytes | memoryview, pos: int, end: int, header_count: int) -> int:
    """Past `header_count` headers starting at data[pos], inside a record ending at `end`."""
    if header_count < 0:
        raise InvalidRecordError(f"Found invalid number of record headers {header_count}")
    if header_count > end - pos:
        raise InvalidRecordError(
            f"Found invalid number of record headers. {header_count} is larger than the remaining size of the buffer"
        )
    for _ in range(header_count):
        raw, pos = _slow_varint(data, pos, 32)
        key_len = (raw >> 1) ^ -(raw & 1)
        if key_len < 0:
            raise InvalidRecordError(f"Invalid negative header key size {key_len}")
        pos += key_len
        raw, pos = _slow_varint(data, pos, 32)
        value_len = (raw >> 1) ^ -(raw & 1)
        if value_len > 0:
            pos += value_len
        if pos > end:
            raise InvalidRecordError("Found invalid record structure: a header runs past the record")
    return pos


# -- the C walker -------------------------------------------------------------------------------------------

PURE_PYTHON_ENV = "MOCKBROKER_PURE_PYTHON"


def _load_c_walker() -> Callable[[bytes | memoryview, int, bool, tuple[int, int] | None],
                                 tuple[list[tuple[int, int | None]], int | None] | str] | None:
    """_walk.check_records, or None where the extension was not built (no compiler at install)."""
    try:
        from . import _walk
    except ImportError:
        return None
    return _walk.check_records


_c_walk = _load_c_walker()


def _check_records_c(
    data: bytes | memoryview,
    count: int,
    *,
    keys_required: bool = False,
    timestamp_deltas: tuple[int, int] | None = None,
) -> RecordsChecked:
    """check_records_python in C: the same findings, the same InvalidRecordError (message included)."""
    assert _c_walk is not None
    result = _c_walk(data, count, keys_required, timestamp_deltas)
    if isinstance(result, str):
        raise InvalidRecordError(result)
    return RecordsChecked(*result)


check_records_c = _check_records_c if _c_walk is not None else None
"""The C walker, None where it was not built (whatever the environment says: the tests run both)."""

check_records = (
    check_records_python if check_records_c is None or os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")
    else check_records_c
)
"""The walker Produce uses: the C one where it was built, unless MOCKBROKER_PURE_PYTHON is set (not 0)."""
WALKER = "python" if check_records is check_records_python else "c"
