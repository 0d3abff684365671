"""Validation of the record batches a client appends, with the error codes Kafka's broker gives.

Splitting a records field, as Kafka's batch iterator does: it stops at bytes that do not hold a whole
batch (Kafka trims them off), and a size below 14 bytes or a magic byte other than 0-2 is CORRUPT_MESSAGE.

ProduceRequest.validateRecords (v3+, before the acks check, see `check_produce_records`): no whole
batch, a magic other than 2 or more than one batch: INVALID_RECORD; zstd before v7:
UNSUPPORTED_COMPRESSION_TYPE.

Rules per batch (Kafka's UnifiedLog.analyzeAndValidateRecords and LogValidator), in this order:
- base offset != 0: INVALID_RECORD;
- a batch larger than max.message.bytes: MESSAGE_TOO_LARGE;
- a batch shorter than its header, bad CRC: CORRUPT_MESSAGE;
- record count <= 0 or not last offset delta + 1, a control batch from a client, a producer id with a
  negative base sequence, a transactional batch with no producer id: INVALID_RECORD;
- an lz4 frame Kafka's reader refuses: UNKNOWN_SERVER_ERROR (Kafka's KafkaException);
- more records than mockbroker.max.records.per.batch, or a payload decompressing to more than 256 MiB:
  MESSAGE_TOO_LARGE (not Kafka's: the bounds that keep one batch from holding the event loop);
- a compressed payload its codec cannot read: UNKNOWN_SERVER_ERROR ("Failed to decompress record
  stream", a KafkaException in Kafka);
- every record, walked without building it (protocol.records.record.check_records): a count that does
  not match the records, an offset delta other than the record's index, a malformed or out-of-range
  varint, a key, value or header outside its record, a negative header count: INVALID_RECORD (Kafka's
  InvalidRecordException, no record_errors);
- CreateTime records (with a timestamp) older than message.timestamp.before.max.ms or newer than
  message.timestamp.after.max.ms: INVALID_TIMESTAMP, with record_errors naming each record (a batch the
  producer marked LogAppendTime: its max timestamp is every record's);
- a keyless record on a compacted topic: INVALID_RECORD with record_errors (INVALID_TIMESTAMP when
  another record of the batch has a timestamp error; a record gets its key error first).
An accepted batch on a CreateTime topic gets its records' largest timestamp as max timestamp and the
CreateTime type (LogValidator's setMaxTimestamp), the CRC recomputed only when that changes the header.

Errors Kafka answers without log append info (log start offset -1 in the response) are raised as
`RejectedBeforeAppend`: the request-level checks, CORRUPT_MESSAGE and MESSAGE_TOO_LARGE.

Cost: the header, the CRC (C speed), then one pass over each record's varints (keys and values skipped,
nothing built); the walk stops at the first structural error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.errors import DecodeError, LimitExceeded
from mockbroker.protocol.records import compression
from mockbroker.protocol.records.batch import (
    ATTRIBUTES,
    CODEC_MASK,
    CONTROL_MASK,
    CREATE_TIME,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    Codec,
    InvalidRecordError,
    RecordBatch,
    wrap_int64,
)
from mockbroker.protocol.records.record import INT64_MAX, INT64_MIN, check_records
from mockbroker.state.configs import LONG_MAX, LogSettings, TopicConfig


@dataclass
class RecordError:
    batch_index: int
    message: str | None


class BatchRejected(KafkaError):
    """A KafkaError that also names records (Produce v8+ record_errors)."""

    def __init__(self, code: ErrorCode, message: str | None, record_errors: list[RecordError] | None = None):
        super().__init__(code, message)
        self.record_errors: list[RecordError] = record_errors or []


class RejectedBeforeAppend(KafkaError):
    """An error Kafka answers with no log append info (log start offset -1): ProduceRequest.validateRecords'
    checks, and the corrupt or too large batches ReplicaManager answers with UNKNOWN_LOG_APPEND_INFO."""


MIN_ENTRY_SIZE = 14  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: the smallest size any log entry can declare
HEADER_SIZE_UP_TO_MAGIC = 17
_SIZE = struct.Struct(">i")  # a log entry's size field, at offset 8


def batch_spans(data: memoryview | bytes, topic_partition: str) -> list[tuple[int, int, int]]:
    """(position, size, magic) of each whole log entry (v2 batch or legacy message) in a records field, as
    Kafka's ByteBufferLogInputStream iterates them: it stops at bytes that do not hold a whole entry;
    a declared size below 14 or a magic byte other than 0-2 is CORRUPT_MESSAGE."""
    out = []
    pos = 0
    n = len(data)
    while n - pos >= LOG_OVERHEAD:
        size = _SIZE.unpack_from(data, pos + 8)[0]
        if size < MIN_ENTRY_SIZE:
            raise RejectedBeforeAppend(ErrorCode.CORRUPT_MESSAGE, f"Record size {size} is less than the minimum "
                                       f"record overhead ({MIN_ENTRY_SIZE}) in {topic_partition}")
        if n - pos < HEADER_SIZE_UP_TO_MAGIC:
            break
        magic = data[pos + 16]
        if magic > 127:  # a signed byte
            magic -= 256
        if not 0 <= magic <= 2:
            raise RejectedBeforeAppend(ErrorCode.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
        if n - pos < LOG_OVERHEAD + size:
            break
        out.append((pos, LOG_OVERHEAD + size, magic))
        pos += LOG_OVERHEAD + size
    return out


def check_produce_records(data: memoryview | None, version: int,
                          topic_partition: str) -> list[tuple[int, int, int]] | None:
    """Kafka's ProduceRequest.validateRecords, run on a v3+ request's records before anything else (the
    acks check included): exactly one whole batch, of magic 2, not zstd before v7. Returns the batch_spans
    it found (for the appender, which would otherwise find them again); None before v3."""
    if version < 3:
        return None
    spans = batch_spans(data if data is not None else b"", topic_partition)
    if not spans:
        raise RejectedBeforeAppend(ErrorCode.INVALID_RECORD, f"Produce requests with version {version} must "
                                   "have at least one record batch per partition")
    pos, size, magic = spans[0]
    assert data is not None
    if magic != 2:
        raise RejectedBeforeAppend(ErrorCode.INVALID_RECORD, f"Produce requests with version {version} are only "
                                   "allowed to contain record batches with magic version 2")
    if version < 7 and size > ATTRIBUTES + 1 and data[pos + ATTRIBUTES + 1] & 0x07 == Codec.ZSTD:
        raise RejectedBeforeAppend(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"Produce requests with version "
                                   f"{version} are not allowed to use ZStandard compression")
    if len(spans) > 1:
        raise RejectedBeforeAppend(ErrorCode.INVALID_RECORD, f"Produce requests with version {version} are only "
                                   "allowed to contain exactly one record batch per partition")
    return spans


def split_batches(data: memoryview, spans: list[tuple[int, int, int]], topic_partition: str) -> list[RecordBatch]:
    """Every whole v2 batch in a Produce records field, at the spans batch_spans found (bytes after the last
    whole one are left out, as Kafka trims them); CORRUPT_MESSAGE for a broken one, INVALID_RECORD for a
    legacy entry among them."""
    out = []
    for pos, _size, magic in spans:
        if magic != 2:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Batch magic {magic} is not the same as the first batch's "
                             f"magic byte 2 in topic partition {topic_partition}")
        try:
            out.append(RecordBatch(data, pos))
        except DecodeError as exc:
            raise RejectedBeforeAppend(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    return out


def validate_batch(batch: RecordBatch, config: TopicConfig, now_ms: int, topic_partition: str) -> None:
    (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta, base_ts, max_ts, producer_id,
     _producer_epoch, base_sequence, count) = batch.header()  # one unpack: every produced batch comes here
    if base_offset != 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"The baseOffset of the record batch in the append to {topic_partition} should be 0, but it is "
            f"{base_offset}",
        )
    size = batch.size
    settings = config.log_settings()
    if size > settings.max_message_bytes:
        raise RejectedBeforeAppend(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size in the append to {topic_partition} is {size} bytes which exceeds "
            f"the maximum configured value of {settings.max_message_bytes}.",
        )
    try:
        batch.validate()
    except InvalidRecordError as exc:  # counts that contradict the offset range: LogValidator's checks
        raise KafkaError(ErrorCode.INVALID_RECORD, str(exc)) from None
    except DecodeError as exc:
        raise RejectedBeforeAppend(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if last_offset_delta < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range in {topic_partition}")
    if count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD,
                         f"Invalid reported count for record batch: {count} in {topic_partition}")
    if count != last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [0, {last_offset_delta}] and count of records {count} in "
            f"{topic_partition}",
        )
    if attributes & CONTROL_MASK:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records")
    if producer_id >= 0 and base_sequence < 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Invalid sequence number {base_sequence} in record batch with producerId {producer_id}",
        )
    if attributes & TRANSACTIONAL_MASK and producer_id < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Transactional batch without a producer id")
    if attributes & CODEC_MASK == Codec.LZ4:
        _check_lz4_frame(batch, topic_partition)
    _validate_records(batch, settings, now_ms, topic_partition, attributes, base_ts, max_ts, count)


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


MAX_RECORDS_PER_BATCH = "mockbroker.max.records.per.batch"
MAX_DECOMPRESSED_BYTES = compression.DEFAULT_MAX_SIZE  # 256 MiB: the most one batch may decompress to


def _records_section(batch: RecordBatch, codec: int, topic_partition: str) -> bytes | memoryview:
    """The batch's records, decompressed (at most MAX_DECOMPRESSED_BYTES; uncompressed ones not copied). As Kafka's record
    iterator: a payload its codec cannot read is a KafkaException there (UNKNOWN_SERVER_ERROR); past the
    bound, MESSAGE_TOO_LARGE (not Kafka's, which has no bound). `codec`: the batch's codec id, checked
    by batch.validate."""
    if codec == Codec.NONE:
        return batch.buffer[RECORD_BATCH_OVERHEAD:]
    try:
        return compression.decompress(codec, batch.buffer[RECORD_BATCH_OVERHEAD:], max_size=MAX_DECOMPRESSED_BYTES)
    except LimitExceeded as exc:
        raise RejectedBeforeAppend(ErrorCode.MESSAGE_TOO_LARGE, f"{exc} in {topic_partition}") from None
    except DecodeError as exc:  # CompressionError, or the codec's own checks
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                         f"Failed to decompress record stream in {topic_partition}: {exc}") from None


def _java_timestamp_invalid(timestamp: int, now_ms: int, before: int, after: int) -> bool:
    """LogValidator.recordHasInvalidTimestamp, in Java's long arithmetic (differences wrap)."""
    diff = wrap_int64(now_ms - timestamp)
    return diff > before or wrap_int64(-diff) > after


def _validate_records(batch: RecordBatch, config: LogSettings, now_ms: int, topic_partition: str, attributes: int,
                      base_ts: int, max_ts: int, count: int) -> None:
    """Every record of the batch, as LogValidator reads them: the structure (INVALID_RECORD, no record
    errors), then per record a missing key on a compacted topic and a timestamp out of bounds
    (RecordValidationException: record_errors). Bounded: more records than mockbroker.max.records.per.batch
    is MESSAGE_TOO_LARGE before anything is decompressed or read. `attributes` to `count`: the batch's
    header fields, as validate_batch read them."""
    limit = config.max_records_per_batch
    if count > limit:
        raise RejectedBeforeAppend(ErrorCode.MESSAGE_TOO_LARGE,
                                   f"The record batch in the append to {topic_partition} declares {count} records, "
                                   f"more than {MAX_RECORDS_PER_BATCH}={limit}")
    data = _records_section(batch, attributes & CODEC_MASK, topic_partition)
    compacted = config.compacted
    topic_append_time = config.log_append_time
    client_append_time = bool(attributes & TIMESTAMP_TYPE_MASK)  # the producer marked it LogAppendTime
    before = config.timestamp_before_ms
    after = config.timestamp_after_ms
    deltas: tuple[int, int] | None = None
    if not topic_append_time and not client_append_time and (before != LONG_MAX or after != LONG_MAX):
        low = now_ms - before - base_ts if before != LONG_MAX else INT64_MIN - 2**64
        high = now_ms + after - base_ts if after != LONG_MAX else INT64_MAX + 2**64
        deltas = (low, high)
    try:
        found, max_delta = check_records(data, count, keys_required=compacted, timestamp_deltas=deltas)
    except InvalidRecordError as exc:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"{exc} in topic partition {topic_partition}") from None
    if not found and not client_append_time:  # every record passed (the usual batch)
        if not topic_append_time and max_delta is not None:
            records_max = max(NO_TIMESTAMP, wrap_int64(base_ts + max_delta))
            if max_ts != records_max:  # _set_max_timestamp's case, inline for the usual batch
                batch.set_max_timestamp(CREATE_TIME, records_max)
        return
    errors: list[RecordError] = []
    any_time_error = False
    keyless = f"Compacted topic cannot accept message without key in topic partition {topic_partition}."
    for index, ts_delta in found:
        if ts_delta is None:
            errors.append(RecordError(index, keyless))
            continue
        timestamp = wrap_int64(base_ts + ts_delta)
        if timestamp == NO_TIMESTAMP or not _java_timestamp_invalid(timestamp, now_ms, before, after):
            continue
        any_time_error = True
        errors.append(RecordError(index, _timestamp_message(timestamp, index, now_ms, before, after)))
    if client_append_time:
        # The producer marked its batch LogAppendTime: each record's timestamp is the batch's max timestamp.
        # LogValidator.validateTimestamp checks it against the bounds on a CreateTime topic; on a LogAppendTime
        # topic, or without a timestamp, the timestamp type itself is an error for every record.
        if topic_append_time or max_ts == NO_TIMESTAMP:
            message: str | None = (f"Invalid timestamp type in message with timestamp {max_ts}. Producer should not "
                                   "set timestamp type to LogAppendTime.")
        elif _java_timestamp_invalid(max_ts, now_ms, before, after):
            message = None  # per record: the offset is in the message
        else:
            message = ""
        if message != "":
            without_key = {e.batch_index for e in errors}
            any_time_error = True
            errors = [RecordError(i, keyless) if i in without_key else
                      RecordError(i, message if message is not None else
                                  _timestamp_message(max_ts, i, now_ms, before, after))
                      for i in range(count)]
    if not errors:
        if not topic_append_time and max_delta is not None:
            _set_max_timestamp(batch, client_append_time, max(NO_TIMESTAMP, wrap_int64(base_ts + max_delta)))
        return
    # Kafka's LogValidator.processRecordErrors: INVALID_TIMESTAMP if any record has a timestamp error, else
    # INVALID_RECORD; record_errors list every record either way.
    if any_time_error:
        raise BatchRejected(ErrorCode.INVALID_TIMESTAMP,
                            "One or more records have been rejected due to invalid timestamp", errors)
    shown = ", ".join(f"RecordError(batchIndex={e.batch_index}, message='{e.message}')" for e in errors[:3])
    raise BatchRejected(ErrorCode.INVALID_RECORD,
                        f"One or more records have been rejected due to {len(errors)} record errors in total, and "
                        f"only showing the first three errors at most: [{shown}]", errors)


def _set_max_timestamp(batch: RecordBatch, client_append_time: bool, max_timestamp: int) -> None:
    """As LogValidator on a CreateTime topic: the batch's max timestamp is its records' largest (a producer's
    wrong header value is corrected) and its timestamp type CreateTime; the CRC is recomputed only then."""
    if client_append_time:
        max_timestamp = batch.max_timestamp  # every record's timestamp was the batch's max timestamp
    if client_append_time or batch.max_timestamp != max_timestamp:
        batch.set_max_timestamp(CREATE_TIME, max_timestamp)


def _timestamp_message(timestamp: int, offset: int, now_ms: int, before: int, after: int) -> str:
    # The bounds as Java's long arithmetic prints them (now + Long.MAX_VALUE wraps).
    return (f"Timestamp {timestamp} of message with offset {offset} is out of range. The timestamp should be "
            f"within [{wrap_int64(now_ms - before)}, {wrap_int64(now_ms + after)}]")
