"""Appending a client's records to a partition: legacy conversion, validation, producer checks, offsets.

One call per partition of a Produce request. A request's records field holds one v2 batch (v3+), or
a magic 0/1 message set (Produce v0-v2), which is converted to one v2 batch first, as Kafka's broker
up-converts. All batches are validated before any is appended, so a rejected request is never partly
appended.

Producer state (idempotence) is checked against the partition's ProducerStateTable: a duplicate of
one of the producer's last five batches is answered with the offset first assigned to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.errors import CompressionError, DecodeError, LimitExceeded
from mockbroker.protocol.records.batch import InvalidRecordError, RecordBatch
from mockbroker.protocol.records.legacy import convert_to_v2
from mockbroker.state.cluster.cluster import Partition
from mockbroker.state.log.validation import (
    RejectedBeforeAppend,
    batch_spans,
    split_batches,
    validate_batch,
)


@dataclass(slots=True)
class AppendResult:
    base_offset: int
    log_append_time_ms: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int


class Appender:
    # Checks a transactional batch with the transaction coordinator before it is appended (KIP-890:
    # TxnCoordinator.check_produce, set by MockBroker); raises the partition's error.
    txn_check: Callable[[Partition, RecordBatch, str | None, int], None] | None = None
    # Told after records were appended: the cluster's change signal (state/changes.py; set by BrokerNode).
    appended: Callable[[], None] | None = None

    def __init__(self) -> None:
        # What this node appended, by topic (Kafka's BytesInPerSec and MessagesInPerSec; the /metrics scrape reads them).
        self.bytes_in: dict[str, int] = {}
        self.records_in: dict[str, int] = {}

    def append_records(
        self,
        partition: Partition,
        records: memoryview | None,
        version: int,
        now_ms: int,
        transactional_id: str | None = None,
        spans: list[tuple[int, int, int]] | None = None,
        tp: str | None = None,
    ) -> AppendResult:
        """`spans` and `tp`: the records' batch_spans and the "topic-partition" name, when the caller has them
        already (the Produce handler's check_produce_records found the spans); found here otherwise."""
        log = partition.log
        if tp is None:
            tp = f"{partition.topic.name}-{partition.index}"
        config = partition.topic.config
        # The v3+ request-level checks (validation.check_produce_records) are the caller's: the Produce
        # handler runs them before the acks check, in Kafka's order. What reaches here with no whole entry
        # is a v0-v2 request: nothing to append.
        if records is None:
            return AppendResult(-1, -1, log.log_start_offset)
        if spans is None:
            spans = batch_spans(records, tp)
        if not spans:
            return AppendResult(-1, -1, log.log_start_offset)
        if spans[0][2] < 2:
            # Bounded as v2 batches are: more messages than mockbroker.max.records.per.batch (a wrapper's inner
            # ones counted) is refused before they are parsed.
            try:
                records = memoryview(convert_to_v2(records, max_messages=config.log_settings().max_records_per_batch))
            except LimitExceeded as exc:
                raise RejectedBeforeAppend(ErrorCode.MESSAGE_TOO_LARGE, f"{exc} in {tp}") from None
            except InvalidRecordError as exc:
                raise KafkaError(ErrorCode.INVALID_RECORD, f"{exc} in topic partition {tp}") from None
            except CompressionError as exc:  # as a v2 batch's payload: Kafka's KafkaException
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Failed to decompress record stream: {exc}") from None
            except DecodeError as exc:
                raise RejectedBeforeAppend(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
            spans = batch_spans(records, tp)
        batches = split_batches(records, spans, tp)
        if self.txn_check is not None:
            for batch in batches:
                if batch.is_transactional:  # the check's own first test, without the call for every other batch
                    self.txn_check(partition, batch, transactional_id, version)
        for batch in batches:
            validate_batch(batch, config, now_ms, tp)
        for batch in batches:
            duplicate = log.producers.check(batch)
            if duplicate is not None:
                # As Kafka's UnifiedLog: the duplicate's max timestamp is answered as its log append time,
                # whatever the topic's timestamp type.
                return AppendResult(duplicate.first_offset, duplicate.timestamp, log.log_start_offset)
        log_append_time = config.log_settings().log_append_time
        first = -1
        size = count = 0
        for batch in batches:
            stored = log.append(batch, now_ms, log_append_time=log_append_time)
            if first < 0:
                first = stored.base_offset
            size += stored.size
            count += stored.record_count
        name = partition.topic.name
        self.bytes_in[name] = self.bytes_in.get(name, 0) + size
        self.records_in[name] = self.records_in.get(name, 0) + count
        if self.appended is not None:
            self.appended()
        return AppendResult(first, now_ms if log_append_time else -1, log.log_start_offset)
