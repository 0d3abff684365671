"""Appending a client's records to a partition: legacy conversion, validation, producer checks, offsets.

One call per partition of a Produce request. A request's records field holds one v2 batch (v3+), or
a magic 0/1 message set (Produce v0-v2), which is converted to one v2 batch first, as Kafka's broker
up-converts. All batches are validated before any is appended, so a rejected request is never partly
appended.

Producer state (idempotence) is checked against the partition's ProducerStateTable: a duplicate of
one of the producer's last five batches is answered with the offset first assigned to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.errors import DecodeError
from protocol.records.batch import magic_of
from protocol.records.legacy import convert_to_v2

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import Partition
from mockbroker.state.validation import split_batches, validate_batch


@dataclass
class AppendResult:
    base_offset: int
    log_append_time_ms: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int


class Appender:

    def append_records(
        self,
        partition: Partition,
        records: memoryview | None,
        version: int,
        now_ms: int,
        transactional_id: str | None = None,
    ) -> AppendResult:
        log = partition.log
        tp = f"{partition.topic.name}-{partition.index}"
        config = partition.topic.config
        if records is None or len(records) == 0:
            return AppendResult(-1, -1, log.log_start_offset)
        if len(records) < 17:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Records in the append to {tp} are truncated")
        magic = magic_of(records)
        if magic < 2:
            if version >= 3:
                raise KafkaError(
                    ErrorCode.INVALID_RECORD,
                    f"Produce requests with version {version} are only allowed to contain record batches "
                    "with magic version 2",
                )
            try:
                records = memoryview(convert_to_v2(records))
            except DecodeError as exc:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
        elif magic != 2:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Unknown magic {magic} in the append to {tp}")
        batches = split_batches(records, tp)
        if version >= 3 and len(batches) != 1:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                f"Produce requests with version {version} are only allowed to contain exactly one record batch",
            )
        for batch in batches:
            validate_batch(batch, config, now_ms, tp)
        for batch in batches:
            duplicate = log.producers.check(batch)
            if duplicate is not None:
                append_time = duplicate.timestamp if config.log_append_time else -1
                return AppendResult(duplicate.first_offset, append_time, log.log_start_offset)
        log_append_time = config.log_append_time
        first = -1
        for batch in batches:
            stored = log.append(batch, now_ms, log_append_time=log_append_time)
            if first < 0:
                first = stored.base_offset
        return AppendResult(first, now_ms if log_append_time else -1, log.log_start_offset)
