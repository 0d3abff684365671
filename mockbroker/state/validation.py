"""Validation of the record batches a client appends, with the error codes Kafka's broker gives.

Rules (Kafka's LogValidator and ReplicaManager), checked in this order:
- a batch larger than max.message.bytes: MESSAGE_TOO_LARGE;
- a truncated batch, bad magic, bad CRC, bad lengths: CORRUPT_MESSAGE;
- base offset != 0, record count <= 0 or not last offset delta + 1, a control batch from a client, a
  producer id with a negative base sequence, a transactional batch with no producer id: INVALID_RECORD;
- CreateTime records older than message.timestamp.before.max.ms or newer than
  message.timestamp.after.max.ms: INVALID_TIMESTAMP, with record_errors naming each record;
- a keyless record on a compacted topic: INVALID_RECORD with record_errors.

Hot path: only the 61-byte header and the CRC (C speed) are read. Records are decoded only when a rule
needs them: a compacted topic (keys), a configured before.max.ms, or a header whose max timestamp is
past the after.max.ms bound (to name the offending records).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.configs import LONG_MAX, TopicConfig
from protocol.errors import DecodeError
from protocol.records.batch import RECORD_BATCH_OVERHEAD, Codec, RecordBatch


@dataclass
class RecordError:
    batch_index: int
    message: str | None


class BatchRejected(KafkaError):
    """A KafkaError that also names records (Produce v8+ record_errors)."""

    def __init__(self, code: ErrorCode, message: str | None, record_errors: list[RecordError] | None = None):
        super().__init__(code, message)
        self.record_errors: list[RecordError] = record_errors or []


@dataclass
class ValidatedBatches:
    batches: list[RecordBatch] = field(default_factory=list)


def split_batches(data: memoryview, topic_partition: str) -> list[RecordBatch]:
    """Every v2 batch in a Produce records field; CORRUPT_MESSAGE if anything is left over or broken."""
    out = []
    pos = 0
    n = len(data)
    while pos < n:
        if n - pos < 61:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE,
                             f"Record batch in {topic_partition} is truncated ({n - pos} bytes left)")
        try:
            batch = RecordBatch(data, pos)
        except DecodeError as exc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
        out.append(batch)
        pos += batch.size
    return out


def validate_batch(batch: RecordBatch, config: TopicConfig, now_ms: int, topic_partition: str) -> None:
    if batch.size > config.max_message_bytes:
        raise KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size in the append to {topic_partition} is {batch.size} bytes which exceeds "
            f"the maximum configured value of {config.max_message_bytes}.",
        )
    try:
        batch.validate()
    except DecodeError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if batch.base_offset != 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"The baseOffset of the record batch in the append to {topic_partition} should be 0, but it is "
            f"{batch.base_offset}",
        )
    count = batch.record_count
    if batch.last_offset_delta < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range in {topic_partition}")
    if count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD,
                         f"Invalid reported count for record batch: {count} in {topic_partition}")
    if count != batch.last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [0, {batch.last_offset_delta}] and count of records {count} in "
            f"{topic_partition}",
        )
    if batch.is_control:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Invalid sequence number {batch.base_sequence} in record batch with producerId {batch.producer_id}",
        )
    if batch.is_transactional and batch.producer_id < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Transactional batch without a producer id")
    if batch.codec == Codec.LZ4:
        _check_lz4_frame(batch, topic_partition)
    _validate_records(batch, config, now_ms, topic_partition)


LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"  # 0x184D2204, little-endian


def _check_lz4_frame(batch: RecordBatch, topic_partition: str) -> None:
    """The LZ4 frame descriptor, as Kafka's reader checks it when the broker decompresses to validate:
    Kafka reads only frames of independent blocks (lz4js, KafkaJS's usual codec, writes dependent ones).
    Kafka's failure there is a plain KafkaException, answered as UNKNOWN_SERVER_ERROR."""
    data = batch.buffer
    start = RECORD_BATCH_OVERHEAD
    if len(data) < start + 5 or bytes(data[start : start + 4]) != LZ4_FRAME_MAGIC:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                         f"Stream unsupported (invalid magic bytes) in the lz4 batch appended to {topic_partition}")
    flg = data[start + 4]
    if flg & 0x03:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "Reserved bits of the lz4 frame descriptor must be 0")
    if not flg & 0x20:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                         "Dependent block stream is unsupported (BLOCK_INDEPENDENCE must be set)")
    if flg >> 6 != 1:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Version {flg >> 6} is unsupported")


def _validate_records(batch: RecordBatch, config: TopicConfig, now_ms: int, topic_partition: str) -> None:
    check_time = not config.log_append_time and batch.timestamp_type == 0
    before = int(config.get("message.timestamp.before.max.ms")) if check_time else LONG_MAX
    after = int(config.get("message.timestamp.after.max.ms")) if check_time else LONG_MAX
    need_time_scan = check_time and (before != LONG_MAX or (after != LONG_MAX and batch.max_timestamp > now_ms + after))
    compacted = config.compacted
    if not (need_time_scan or compacted):
        return
    try:
        records = batch.records()
    except DecodeError as exc:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    time_errors: list[RecordError] = []
    key_errors: list[RecordError] = []
    for i, rec in enumerate(records):
        if rec.offset_delta != i:
            raise KafkaError(ErrorCode.INVALID_RECORD,
                             f"Inner record offset delta {rec.offset_delta} should be {i} in {topic_partition}")
        if compacted and rec.key is None:
            key_errors.append(RecordError(i, f"Compacted topic cannot accept message without key in topic "
                                             f"partition {topic_partition}."))
        if need_time_scan and (
            (before != LONG_MAX and rec.timestamp < now_ms - before)
            or (after != LONG_MAX and rec.timestamp > now_ms + after)
        ):
            time_errors.append(RecordError(i, f"Timestamp {rec.timestamp} of message with offset "
                                              f"{rec.offset} is out of range. The timestamp should be within "
                                              f"[{now_ms - before if before != LONG_MAX else 'unbounded'}, "
                                              f"{now_ms + after}]"))
    if key_errors:
        raise BatchRejected(ErrorCode.INVALID_RECORD, "One or more records have been rejected", key_errors)
    if time_errors:
        raise BatchRejected(
            ErrorCode.INVALID_TIMESTAMP,
            "One or more records have been rejected due to invalid timestamp",
            time_errors,
        )
