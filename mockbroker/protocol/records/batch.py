"""A v2 record batch (magic 2, Kafka 0.11+) as a view over its bytes, the way the broker uses it.

The broker keeps the batches producers send as bytes. On produce it reads the 61-byte header,
validates (length, magic, CRC-32C over attributes..end, counts), walks every record without building it
(record.check_records), assigns the base offset and the partition leader epoch in place (both lie before
the CRC'd range, so no recompute) and stores the bytes; records are decoded only where the broker must
(compaction, inspection), one at a time (iter_records).

Layout (Kafka's DefaultRecordBatch; offsets in bytes from the start of the batch):

    0  baseOffset            int64
    8  batchLength           int32   bytes after this field: size = 12 + batchLength
   12  partitionLeaderEpoch  int32
   16  magic                 int8    2
   17  crc                   uint32  CRC-32C of bytes 21..end
   21  attributes            int16   bits 0-2 codec, 3 timestamp type (1 = LogAppendTime),
                                     4 transactional, 5 control, 6 delete horizon set (KIP-534)
   23  lastOffsetDelta       int32
   27  baseTimestamp         int64   the delete horizon when attribute bit 6 is set
   35  maxTimestamp          int64
   43  producerId            int64
   51  producerEpoch         int16
   53  baseSequence          int32
   57  recordsCount          int32
   61  records               the records, compressed as a whole when the codec is not NONE

Record (varints are zigzag, as protobuf): length varint, attributes int8, timestampDelta varlong,
offsetDelta varint, keyLength varint (-1 null), key, valueLength varint (-1 null), value,
headerCount varint, headers [keyLength varint, key utf-8, valueLength varint (-1 null), value].
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import NamedTuple

from ..errors import DecodeError
from . import compression
from .record import CorruptRecordError, InvalidRecordError, Record, decode_records, iter_records, wrap_int64

__all__ = [
    "ATTRIBUTES",
    "BASE_OFFSET",
    "BASE_SEQUENCE",
    "BASE_TIMESTAMP",
    "BATCH_LENGTH",
    "CRC",
    "HEADER",
    "LAST_OFFSET_DELTA",
    "LOG_OVERHEAD",
    "MAGIC",
    "MAX_TIMESTAMP",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "PARTITION_LEADER_EPOCH",
    "PRODUCER_EPOCH",
    "PRODUCER_ID",
    "RECORDS",
    "RECORDS_COUNT",
    "RECORD_BATCH_OVERHEAD",
    "Codec",
    "ControlRecord",
    "ControlType",
    "CorruptRecordError",
    "InvalidRecordError",
    "Record",
    "RecordBatch",
    "crc32c",
    "decode_records",
    "wrap_int64",
    "iter_batches",
    "magic_of",
]


class Codec(IntEnum):
    """Compression codec: attributes bits 0-2."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class ControlType(IntEnum):
    """Type of a control record (the int16 in its key). KRaft's types (2..) are not listed."""

    ABORT = 0
    COMMIT = 1


# -- header layout ------------------------------------------------------------------------------

BASE_OFFSET = 0
BATCH_LENGTH = 8
PARTITION_LEADER_EPOCH = 12
MAGIC = 16
CRC = 17
ATTRIBUTES = 21
LAST_OFFSET_DELTA = 23
BASE_TIMESTAMP = 27
MAX_TIMESTAMP = 35
PRODUCER_ID = 43
PRODUCER_EPOCH = 51
BASE_SEQUENCE = 53
RECORDS_COUNT = 57
RECORDS = 61

RECORD_BATCH_OVERHEAD = 61
"""Size of the batch header; a batch is never smaller."""
LOG_OVERHEAD = 12
"""baseOffset + batchLength: the bytes before the part batchLength counts."""

HEADER = struct.Struct(
    ">"
    "q"  # baseOffset => Int64, assigned by the broker
    "i"  # batchLength => Int32, bytes after this field
    "i"  # partitionLeaderEpoch => Int32, assigned by the broker (not in the CRC)
    "b"  # magic => Int8, 2
    "I"  # crc => Uint32, CRC-32C of attributes..end
    "h"  # attributes => Int16
    "i"  # lastOffsetDelta => Int32, also the last sequence delta
    "q"  # baseTimestamp => Int64, or the delete horizon (attributes bit 6)
    "q"  # maxTimestamp => Int64, the log append time for LogAppendTime batches
    "q"  # producerId => Int64, -1 without idempotence
    "h"  # producerEpoch => Int16
    "i"  # baseSequence => Int32, -1 without idempotence
    "i"  # recordsCount => Int32
)
assert HEADER.size == RECORD_BATCH_OVERHEAD

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

CREATE_TIME = 0
LOG_APPEND_TIME = 1
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1

MIN_RECORD_SIZE = 7
"""Smallest encoded record: length, attributes, timestamp delta, offset delta, key, value, headers."""

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_CONTROL_KEY = struct.Struct(">hh")  # version, type
_END_TXN_VALUE = struct.Struct(">hi")  # version, coordinator epoch


_crc32c_impl: Callable[[bytes | bytearray | memoryview], int] | None = None


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli), unsigned. The crc32c package is imported on first use, not with this module:
    its import costs about 15 ms of the broker's start-up (it reads its own version with
    importlib.metadata), and a broker with no batches yet computes no CRC."""
    global _crc32c_impl
    if _crc32c_impl is None:
        from crc32c import crc32c as loaded

        _crc32c_impl = loaded
    return _crc32c_impl(data)


# -- records ------------------------------------------------------------------------------------


class ControlRecord(NamedTuple):
    """The content of a control batch's record: key (version, type) and value (version, epoch)."""

    type: ControlType | int
    version: int
    coordinator_epoch: int


# -- the batch ----------------------------------------------------------------------------------


def last_sequence_of(base_sequence: int, last_offset_delta: int) -> int:
    """A batch's last sequence: base_sequence + last_offset_delta, wrapping past Int32.MaxValue to 0; -1
    (NO_SEQUENCE) for a batch without sequences."""
    if base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    if base_sequence > INT32_MAX - last_offset_delta:
        return last_offset_delta - (INT32_MAX - base_sequence) - 1
    return base_sequence + last_offset_delta


def _view(data: bytes | bytearray | memoryview) -> memoryview:
    view = data if isinstance(data, memoryview) else memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


class RecordBatch:
    """One v2 batch inside a bytes-like buffer. Holds a memoryview of exactly the batch's bytes.

    The header fields are read from the buffer on each access, so in-place edits show at once.
    The constructor checks only what is needed to delimit the batch (61 bytes, batchLength inside
    the buffer, magic 2); call `validate()` for the CRC and the field checks.
    """

    __slots__ = ("_buf",)

    def __init__(self, buf: bytes | bytearray | memoryview, offset: int = 0) -> None:
        view = _view(buf)
        available = len(view) - offset
        if offset < 0 or available < RECORD_BATCH_OVERHEAD:
            raise DecodeError(
                f"record batch at offset {offset} needs {RECORD_BATCH_OVERHEAD} bytes, {max(available, 0)} remain"
            )
        (length,) = _I32.unpack_from(view, offset + BATCH_LENGTH)
        if length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
            raise CorruptRecordError(
                f"record batch size {length + LOG_OVERHEAD} is smaller than the minimum {RECORD_BATCH_OVERHEAD}"
            )
        if length > available - LOG_OVERHEAD:
            raise DecodeError(
                f"record batch of {length + LOG_OVERHEAD} bytes at offset {offset} runs past the "
                f"{available} bytes available"
            )
        (magic,) = _I8.unpack_from(view, offset + MAGIC)
        if magic in (0, 1):
            raise DecodeError(f"magic {magic} is a legacy message set, not a v2 batch (see legacy.py)")
        if magic != 2:
            raise CorruptRecordError(f"record batch has magic {magic}, expected 2")
        self._buf = view[offset : offset + LOG_OVERHEAD + length]

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset_delta={self.last_offset_delta}, "
            f"count={self.record_count}, codec={self.codec_id}, producer_id={self.producer_id}, "
            f"producer_epoch={self.producer_epoch}, base_sequence={self.base_sequence}, "
            f"transactional={self.is_transactional}, control={self.is_control}, size={self.size})"
        )

    # -- header fields --------------------------------------------------------------------------
    @property
    def buffer(self) -> memoryview:
        """The bytes of this batch (a view into the buffer it was read from, not a copy)."""
        return self._buf

    @property
    def base_offset(self) -> int:
        return int(_I64.unpack_from(self._buf, BASE_OFFSET)[0])

    @property
    def batch_length(self) -> int:
        return int(_I32.unpack_from(self._buf, BATCH_LENGTH)[0])

    @property
    def size(self) -> int:
        """Total bytes of the batch: LOG_OVERHEAD + batch_length."""
        return len(self._buf)

    @property
    def partition_leader_epoch(self) -> int:
        return int(_I32.unpack_from(self._buf, PARTITION_LEADER_EPOCH)[0])

    @property
    def magic(self) -> int:
        return int(_I8.unpack_from(self._buf, MAGIC)[0])

    @property
    def crc(self) -> int:
        return int(_U32.unpack_from(self._buf, CRC)[0])

    @property
    def attributes(self) -> int:
        return int(_I16.unpack_from(self._buf, ATTRIBUTES)[0])

    @property
    def codec_id(self) -> int:
        """Attributes bits 0-2 as a plain int (may be 5-7 in a corrupt batch)."""
        return self.attributes & CODEC_MASK

    @property
    def codec(self) -> Codec:
        """The compression codec; CorruptRecordError for the unused ids 5-7."""
        codec_id = self.codec_id
        if codec_id > Codec.ZSTD:
            raise CorruptRecordError(f"record batch has unknown compression codec {codec_id}")
        return Codec(codec_id)

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime."""
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        """KIP-534: base_timestamp holds the delete horizon set by the log cleaner."""
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset_delta(self) -> int:
        return int(_I32.unpack_from(self._buf, LAST_OFFSET_DELTA)[0])

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def base_timestamp(self) -> int:
        return int(_I64.unpack_from(self._buf, BASE_TIMESTAMP)[0])

    @property
    def max_timestamp(self) -> int:
        return int(_I64.unpack_from(self._buf, MAX_TIMESTAMP)[0])

    @property
    def producer_id(self) -> int:
        return int(_I64.unpack_from(self._buf, PRODUCER_ID)[0])

    @property
    def producer_epoch(self) -> int:
        return int(_I16.unpack_from(self._buf, PRODUCER_EPOCH)[0])

    @property
    def base_sequence(self) -> int:
        return int(_I32.unpack_from(self._buf, BASE_SEQUENCE)[0])

    @property
    def last_sequence(self) -> int:
        """base_sequence + last_offset_delta, wrapping past Int32.MaxValue to 0; -1 without one."""
        return last_sequence_of(self.base_sequence, self.last_offset_delta)

    @property
    def record_count(self) -> int:
        return int(_I32.unpack_from(self._buf, RECORDS_COUNT)[0])

    def header(self) -> tuple[int, ...]:
        """All 13 header fields at once, in HEADER's order (one unpack; for hot paths)."""
        return HEADER.unpack_from(self._buf, 0)  # type: ignore[no-any-return]

    # -- checks ---------------------------------------------------------------------------------
    def compute_crc(self) -> int:
        """CRC-32C of attributes..end, i.e. what the crc field should hold."""
        return crc32c(self._buf[ATTRIBUTES:])

    def validate(self, *, producer_batch: bool = False) -> None:
        """Check the batch as the broker does on produce; raise CorruptRecordError or a subclass.

        Structure (CorruptRecordError, Kafka's CORRUPT_MESSAGE): size, magic, CRC, codec id. Consistency
        (InvalidRecordError, Kafka's INVALID_RECORD): negative record count or last offset delta,
        more records than offsets, an uncompressed records section too small for the declared count.
        With `producer_batch=True` also Kafka's rules for batches that come from a producer
        (LogValidator): at least one record and exactly last_offset_delta + 1.
        """
        (
            _base_offset,
            length,
            _epoch,
            magic,
            crc,
            attributes,
            last_offset_delta,
            _base_ts,
            _max_ts,
            _pid,
            _pepoch,
            _base_seq,
            count,
        ) = HEADER.unpack_from(self._buf, 0)
        if length + LOG_OVERHEAD != len(self._buf) or length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
            raise CorruptRecordError(
                f"record batch length {length} does not match its {len(self._buf)} bytes"
            )
        if magic != 2:
            raise CorruptRecordError(f"record batch has magic {magic}, expected 2")
        computed = self.compute_crc()
        if computed != crc:
            raise CorruptRecordError(
                f"record batch is corrupt (stored crc = {crc}, computed crc = {computed})"
            )
        codec_id = attributes & CODEC_MASK
        if codec_id > Codec.ZSTD:
            raise CorruptRecordError(f"record batch has unknown compression codec {codec_id}")
        if count < 0:
            raise InvalidRecordError(f"record batch has negative record count {count}")
        if last_offset_delta < 0:
            raise InvalidRecordError(f"record batch has negative last offset delta {last_offset_delta}")
        if count > last_offset_delta + 1:
            raise InvalidRecordError(
                f"record batch holds {count} records but its offset range has only {last_offset_delta + 1}"
            )
        if codec_id == Codec.NONE and count * MIN_RECORD_SIZE > len(self._buf) - RECORDS:
            raise InvalidRecordError(
                f"record batch declares {count} records in {len(self._buf) - RECORDS} bytes of records"
            )
        if producer_batch:
            if count == 0:
                raise InvalidRecordError("record batch from a producer has no records")
            if count != last_offset_delta + 1:
                raise InvalidRecordError(
                    f"inconsistent batch offset range ({last_offset_delta + 1}) and record count ({count})"
                )

    def is_valid(self) -> bool:
        try:
            self.validate()
        except CorruptRecordError:
            return False
        return True

    # -- records --------------------------------------------------------------------------------
    def records_section(self, *, max_size: int = compression.DEFAULT_MAX_SIZE) -> bytes:
        """The records bytes, decompressed when the codec is not NONE."""
        raw = self._buf[RECORDS:]
        codec = self.codec
        if codec == Codec.NONE:
            return bytes(raw)
        return compression.decompress(codec, raw, max_size=max_size)

    def records(self, *, max_size: int = compression.DEFAULT_MAX_SIZE) -> list[Record]:
        """Decode every record (decompressing first); DecodeError on any malformed record.

        Does not check the CRC (call validate() first where that matters)."""
        count = self.record_count
        if count < 0:
            raise DecodeError(f"record batch has negative record count {count}")
        data = self.records_section(max_size=max_size)
        return decode_records(
            data,
            count,
            base_offset=self.base_offset,
            base_timestamp=self.base_timestamp,
            log_append_time=self.max_timestamp if self.timestamp_type == LOG_APPEND_TIME else None,
        )

    def iter_records(self, start: int = 0, *, max_size: int = compression.DEFAULT_MAX_SIZE) -> Iterator[Record]:
        """The records from index `start` on, decoded one at a time as they are taken (the payload is
        decompressed first, whole; the records before `start` are hopped over, not decoded)."""
        count = self.record_count
        if count < 0:
            raise DecodeError(f"record batch has negative record count {count}")
        return iter_records(
            self.records_section(max_size=max_size),
            count,
            start=start,
            base_offset=self.base_offset,
            base_timestamp=self.base_timestamp,
            log_append_time=self.max_timestamp if self.timestamp_type == LOG_APPEND_TIME else None,
        )

    def __iter__(self) -> Iterator[Record]:
        return self.iter_records()

    def control_record(self) -> ControlRecord:
        """The marker of a control batch, decoded as Kafka's ControlRecordType / EndTransactionMarker."""
        if not self.is_control:
            raise DecodeError("not a control batch")
        records = self.records()
        if len(records) != 1:
            raise DecodeError(f"control batch holds {len(records)} records, expected 1")
        key, value = records[0].key, records[0].value
        if key is None or len(key) < _CONTROL_KEY.size:
            raise DecodeError(f"control record key has {0 if key is None else len(key)} bytes, expected 4")
        version, type_id = _CONTROL_KEY.unpack_from(key)
        if version < 0:
            raise DecodeError(f"control record key has invalid version {version}")
        control_type: ControlType | int = type_id
        coordinator_epoch = -1
        if type_id in (ControlType.ABORT, ControlType.COMMIT):
            control_type = ControlType(type_id)
            if value is None or len(value) < _END_TXN_VALUE.size:
                size = 0 if value is None else len(value)
                raise DecodeError(f"end transaction marker value has {size} bytes, expected at least 6")
            value_version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value)
            if value_version < 0:
                raise DecodeError(f"end transaction marker has invalid version {value_version}")
        return ControlRecord(control_type, version, coordinator_epoch)

    # -- in-place edits (the buffer must be writable) -------------------------------------------
    def _writable(self) -> memoryview:
        if self._buf.readonly:
            raise TypeError("record batch buffer is read-only; build it over a bytearray to edit it")
        return self._buf

    def set_base_offset(self, offset: int) -> None:
        """Assign the base offset (outside the CRC: no recompute)."""
        _I64.pack_into(self._writable(), BASE_OFFSET, offset)

    def set_partition_leader_epoch(self, epoch: int) -> None:
        """Assign the partition leader epoch (outside the CRC: no recompute)."""
        _I32.pack_into(self._writable(), PARTITION_LEADER_EPOCH, epoch)

    def set_log_append_time(self, timestamp_ms: int) -> None:
        """Mark the batch LogAppendTime with this time (as the broker does for such topics)."""
        self.set_max_timestamp(LOG_APPEND_TIME, timestamp_ms)

    def set_max_timestamp(self, timestamp_type: int, timestamp_ms: int) -> None:
        """Set the timestamp type bit and maxTimestamp, then the CRC (Kafka's setMaxTimestamp)."""
        buf = self._writable()
        if self.timestamp_type == timestamp_type and self.max_timestamp == timestamp_ms:
            return
        attributes = self.attributes & ~TIMESTAMP_TYPE_MASK
        if timestamp_type == LOG_APPEND_TIME:
            attributes |= TIMESTAMP_TYPE_MASK
        _I16.pack_into(buf, ATTRIBUTES, attributes)
        _I64.pack_into(buf, MAX_TIMESTAMP, timestamp_ms)
        self.update_crc()

    def update_crc(self) -> None:
        """Recompute and store the CRC after editing bytes inside attributes..end."""
        _U32.pack_into(self._writable(), CRC, self.compute_crc())


# -- blobs of batches ---------------------------------------------------------------------------


def iter_batches(
    data: bytes | bytearray | memoryview, *, allow_partial: bool = False
) -> Iterator[RecordBatch]:
    """Split a records blob (concatenated v2 batches) into RecordBatch views, in order.

    A trailing batch cut short raises DecodeError, or ends the iteration with `allow_partial`
    (a Fetch response may end with a partial batch). A batch length below the minimum is always a
    CorruptRecordError. CRCs are not checked here.
    """
    view = _view(data)
    pos = 0
    end = len(view)
    while pos < end:
        remaining = end - pos
        if remaining < LOG_OVERHEAD:
            if allow_partial:
                return
            raise DecodeError(f"{remaining} trailing bytes at offset {pos} are not a whole batch")
        (length,) = _I32.unpack_from(view, pos + BATCH_LENGTH)
        if length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
            raise CorruptRecordError(
                f"record batch at offset {pos} has size {length + LOG_OVERHEAD}, below the minimum "
                f"{RECORD_BATCH_OVERHEAD}"
            )
        if length > remaining - LOG_OVERHEAD:
            if allow_partial:
                return
            raise DecodeError(
                f"record batch at offset {pos} needs {length + LOG_OVERHEAD} bytes, {remaining} remain"
            )
        batch = RecordBatch(view, pos)
        pos += batch.size
        yield batch


def magic_of(data: bytes | bytearray | memoryview, offset: int = 0) -> int:
    """The magic byte of the batch or legacy log entry at `offset` (byte 16 in all three formats)."""
    view = _view(data)
    if offset < 0 or len(view) - offset <= MAGIC:
        raise DecodeError(f"need {MAGIC + 1} bytes at offset {offset} to read the magic byte")
    return int(_I8.unpack_from(view, offset + MAGIC)[0])
