"""Building v2 record batches: from records, control (transaction marker) batches, and the log
cleaner's rewrite of a batch that keeps only some of its records.

Byte layout as Kafka's MemoryRecordsBuilder writes it: the 61-byte header stays uncompressed (with the
record count) and only the records section is compressed; the CRC-32C covers attributes..end.
Record attributes are always 0 (Kafka defines none).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import EncodeError
from ..primitives import encode_varint
from . import compression
from .batch import (
    CONTROL_MASK,
    CRC,
    DELETE_HORIZON_MASK,
    HEADER,
    INT32_MAX,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORDS,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    Codec,
    ControlType,
    Record,
    RecordBatch,
    crc32c,
    wrap_int64,
)

__all__ = [
    "RecordInput",
    "build_batch",
    "build_control_batch",
    "encode_record",
    "rebuild_batch",
]

_CONTROL_KEY = struct.Struct(">hh")  # version 0, type
_END_TXN_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch
_U32 = struct.Struct(">I")
INT32_MIN = -(2**31)

Header = tuple[str, bytes | None]


@dataclass
class RecordInput:
    """A record to put in a batch. `timestamp` None: the batch's base timestamp (or now);
    `offset_delta` None: the record's index in the batch."""

    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[Header] = ()
    timestamp: int | None = None
    offset_delta: int | None = None


def _as_input(item: RecordInput | tuple) -> RecordInput:  # type: ignore[type-arg]
    if isinstance(item, RecordInput):
        return item
    if not isinstance(item, tuple) or not 2 <= len(item) <= 4:
        raise TypeError(
            f"a record is a RecordInput or a (key, value[, headers[, timestamp]]) tuple, not {item!r}"
        )
    return RecordInput(*item)


def _varint(value: int) -> bytes:
    return encode_varint(value)


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | bytearray | memoryview | None,
    value: bytes | bytearray | memoryview | None,
    headers: Sequence[Header] = (),
) -> bytearray:
    """One record in the v2 format, length prefix included (Kafka's DefaultRecord.writeTo)."""
    body = bytearray(b"\x00")  # attributes: unused, always 0
    body += _varint(timestamp_delta)
    body += _varint(offset_delta)
    if key is None:
        body += b"\x01"  # varint -1
    else:
        body += _varint(len(key))
        body += key
    if value is None:
        body += b"\x01"
    else:
        body += _varint(len(value))
        body += value
    body += _varint(len(headers))
    for header_key, header_value in headers:
        if header_key is None:
            raise ValueError("a record header key cannot be null")
        encoded_key = header_key.encode("utf-8")
        body += _varint(len(encoded_key))
        body += encoded_key
        if header_value is None:
            body += b"\x01"
        else:
            body += _varint(len(header_value))
            body += header_value
    return bytearray(_varint(len(body))) + body


def _finish(
    records_section: bytes | bytearray,
    *,
    base_offset: int,
    codec: int,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    partition_leader_epoch: int,
    count: int,
) -> bytearray:
    """Header + (compressed) records, with the CRC."""
    if codec != Codec.NONE:
        records_section = compression.compress(codec, records_section)
    out = bytearray(RECORDS + len(records_section))
    try:
        HEADER.pack_into(
            out,
            0,
            base_offset,
            len(out) - LOG_OVERHEAD,
            partition_leader_epoch,
            2,  # magic
            0,  # crc, below
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
    except struct.error as exc:
        raise EncodeError(f"a batch header field is out of range: {exc}") from None
    out[RECORDS:] = records_section
    _U32.pack_into(out, CRC, crc32c(memoryview(out)[CRC + 4 :]))
    return out


def _attributes(
    codec: int, timestamp_type: int, is_transactional: bool, is_control: bool, delete_horizon: bool
) -> int:
    attributes = int(Codec(codec))
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    if delete_horizon:
        attributes |= DELETE_HORIZON_MASK
    return attributes


def build_batch(
    records: Sequence[RecordInput | tuple],  # type: ignore[type-arg]
    *,
    base_offset: int = 0,
    codec: int = Codec.NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    timestamp_type: int = 0,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytearray:
    """A v2 batch holding `records` (RecordInput or (key, value[, headers[, timestamp]]) tuples).

    Defaults follow Kafka's MemoryRecordsBuilder: base timestamp = the first record's timestamp (the
    delete horizon when `delete_horizon_ms` is given, which also sets attributes bit 6), max timestamp
    = the largest record timestamp, last offset delta = the last record's offset delta. A record
    without a timestamp gets `base_timestamp`, or now. An empty batch needs `last_offset_delta`
    (compaction keeps such batches with a record count of 0).
    """
    inputs = [_as_input(r) for r in records]
    if not inputs and last_offset_delta is None:
        raise ValueError("an empty batch needs last_offset_delta")
    default_ts = base_timestamp if base_timestamp is not None else int(time.time() * 1000)
    timestamps = [r.timestamp if r.timestamp is not None else default_ts for r in inputs]
    deltas = [r.offset_delta if r.offset_delta is not None else i for i, r in enumerate(inputs)]
    if delete_horizon_ms is not None:
        base_ts = delete_horizon_ms
    elif base_timestamp is not None:
        base_ts = base_timestamp
    else:
        base_ts = timestamps[0] if timestamps else NO_TIMESTAMP
    if max_timestamp is None:
        max_timestamp = max(timestamps) if timestamps else NO_TIMESTAMP
    if last_offset_delta is None:
        last_offset_delta = deltas[-1]
    if any(not INT32_MIN <= d <= INT32_MAX for d in deltas):
        raise EncodeError("record offset deltas must fit an int32")
    section = bytearray()
    for r, ts, delta in zip(inputs, timestamps, deltas, strict=True):
        section += encode_record(delta, wrap_int64(ts - base_ts), r.key, r.value, r.headers)
    return _finish(
        section,
        base_offset=base_offset,
        codec=codec,
        attributes=_attributes(
            codec, timestamp_type, is_transactional, is_control, delete_horizon_ms is not None
        ),
        last_offset_delta=last_offset_delta,
        base_timestamp=base_ts,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=partition_leader_epoch,
        count=len(inputs),
    )


def control_key(control_type: int) -> bytes:
    """Key of a control record: int16 version 0, int16 type."""
    return _CONTROL_KEY.pack(0, control_type)


def end_txn_marker_value(coordinator_epoch: int) -> bytes:
    """Value of a transaction marker: int16 version 0, int32 coordinator epoch."""
    return _END_TXN_VALUE.pack(0, coordinator_epoch)


def build_control_batch(
    control_type: ControlType | int,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp_ms: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytearray:
    """A transaction marker batch, as Kafka's MemoryRecords.withEndTransactionMarker writes it:
    transactional + control, CreateTime, no compression, base sequence -1, one record at offset
    delta 0 with timestamp delta 0, no headers."""
    return build_batch(
        [
            RecordInput(
                control_key(control_type), end_txn_marker_value(coordinator_epoch), (), timestamp_ms, 0
            )
        ],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
        base_timestamp=timestamp_ms,
    )


def rebuild_batch(
    batch: RecordBatch, keep: Sequence[Record], *, delete_horizon_ms: int | None = None
) -> bytearray:
    """The log cleaner's rewrite of `batch` keeping only `keep` (records decoded from it).

    As Kafka's MemoryRecords.filterTo: same base offset and last offset delta (so the producer's
    last sequence survives), producer id/epoch, base sequence, partition leader epoch, timestamp
    type, transactional and control flags. Each record keeps its offset (delta from the base offset)
    and timestamp; the base timestamp becomes the first kept record's timestamp, or the delete
    horizon (`delete_horizon_ms`, else the batch's own horizon if it has one). LogAppendTime
    batches keep their append time. The codec is kept.

    With nothing kept, the result is Kafka's empty batch (DefaultRecordBatch.writeEmptyHeader):
    61 bytes, record count 0, no compression, base timestamp -1, max timestamp kept, no delete
    horizon.
    """
    codec = batch.codec
    timestamp_type = batch.timestamp_type
    common = {
        "base_offset": batch.base_offset,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "base_sequence": batch.base_sequence,
        "partition_leader_epoch": batch.partition_leader_epoch,
        "last_offset_delta": batch.last_offset_delta,
    }
    if not keep:
        return _finish(
            b"",
            codec=Codec.NONE,
            attributes=_attributes(
                Codec.NONE, timestamp_type, batch.is_transactional, batch.is_control, False
            ),
            base_timestamp=NO_TIMESTAMP,
            max_timestamp=batch.max_timestamp,
            count=0,
            **common,
        )
    if delete_horizon_ms is None:
        delete_horizon_ms = batch.delete_horizon_ms
    base_offset = batch.base_offset
    if timestamp_type == LOG_APPEND_TIME:
        max_timestamp = batch.max_timestamp
    else:
        max_timestamp = max(r.timestamp for r in keep)
    return build_batch(
        [RecordInput(r.key, r.value, r.headers, r.timestamp, r.offset - base_offset) for r in keep],
        codec=codec,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control,
        timestamp_type=timestamp_type,
        max_timestamp=max_timestamp,
        delete_horizon_ms=delete_horizon_ms,
        **common,  # type: ignore[arg-type]
    )
