"""Twin of tests/spark/test_spark_log_shapes.py: logs whose offsets are not one record each.

Spark's executors read offset by offset and must step over what a consumer never returns: offsets
removed by compaction (and batches left empty), transaction markers, aborted records under
read_committed; and must notice offsets that left the log (DeleteRecords, retention): the query fails
with Spark's data-loss error, or, with failOnDataLoss=false, skips what is gone.
"""

from __future__ import annotations

import json

import pytest

from mockbroker import MockBroker
from tests.spark_twin.twin import SparkCallError, SparkTwin, needs_compaction, needs_transactions

pytestmark = [pytest.mark.interop, pytest.mark.java]


def committed_and_aborted(twin: SparkTwin, topic: str) -> None:
    """Offsets 0-1 committed, 2 COMMIT, 3-4 aborted, 5 ABORT, 6 committed, 7 COMMIT."""
    result = twin.txn(topic, [
        {"records": [{"value": "a1"}, {"value": "a2"}], "end": "commit"},
        {"records": [{"value": "b1"}, {"value": "b2"}], "end": "abort"},
        {"records": [{"value": "c1"}], "end": "commit"},
    ])
    assert [line["type"] for line in result.lines if line["type"] in ("committed", "aborted")] == [
        "committed", "aborted", "committed"], result.lines


@needs_transactions()
def test_read_committed_batch_read_skips_aborted_records_and_markers(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("payments")
    committed_and_aborted(twin, "payments")

    committed = twin.read(subscribe="payments", **{"kafka.isolation.level": "read_committed"})
    uncommitted = twin.read(subscribe="payments")

    assert [(r.offset, r.value) for r in committed.rows] == [(0, b"a1"), (1, b"a2"), (6, b"c1")]
    assert [(r.offset, r.value) for r in uncommitted.rows] == [(0, b"a1"), (1, b"a2"), (3, b"b1"), (4, b"b2"),
                                                               (6, b"c1")]
    # The isolation level reaches both the executors' consumers and the driver's listOffsets.
    assert committed.of_type("configs")[0]["executor"]["isolation.level"] == "read_committed"
    assert committed.of_type("range_read")[0]["resolved_until"] == 8


@needs_transactions()
def test_read_committed_stream_stops_at_an_open_transaction(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ledger")
    committed_and_aborted(twin, "ledger")
    stream = twin.stream(subscribe="ledger", startingOffsets="earliest", **{"kafka.isolation.level": "read_committed"})
    assert [r.value for r in stream.trigger().rows] == [b"a1", b"a2", b"c1"]

    # An open transaction: the latest offset read_committed sees is its first offset (the LSO).
    twin.txn_open("ledger", [{"value": "d1"}, {"value": "d2"}], transactional_id="ledger-open")
    assert mockbroker.offsets("ledger")["last_stable_offset"] == 8
    held = stream.trigger()
    assert held.of_type("no_batch")
    assert [c for c in held.calls("listOffsets") if c["spec"] == "latest"][0]["isolation_level"] == "read_committed"

    twin.txn_finish("ledger-open", "commit")
    moved = stream.trigger()
    assert [(r.offset, r.value) for r in moved.rows] == [(8, b"d1"), (9, b"d2")]
    assert moved.of_type("batch")[0]["end"] == {"ledger": {"0": 11}}  # past the COMMIT marker at 10


@needs_transactions()
def test_read_committed_stream_steps_over_a_batch_of_aborted_records(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("refunds")
    stream = twin.stream(subscribe="refunds", startingOffsets="earliest", **{"kafka.isolation.level": "read_committed"})
    twin.txn("refunds", [{"records": [{"value": "x1"}, {"value": "x2"}], "end": "abort"}])

    # A range holding only aborted records and their marker: the poll gives no record but a position
    # past the marker, so Spark's reader ends the range empty instead of failing with a timeout.
    aborted_only = stream.trigger()
    twin.txn("refunds", [{"records": [{"value": "y1"}], "end": "commit"}])
    after = stream.trigger()

    assert aborted_only.rows == [] and aborted_only.of_type("batch")[0]["end"] == {"refunds": {"0": 3}}
    assert aborted_only.of_type("range_read")[0]["polls"] == 1
    assert [(r.offset, r.value) for r in after.rows] == [(3, b"y1")]


def compacted_log(twin: SparkTwin, mockbroker: MockBroker, topic: str) -> None:
    """Each produce() is a new idempotent producer, so the cleaner keeps each one's last batch, even
    emptied: 0 k1=a (P1, emptied), 1 k2=a + 2 k1=b (P2, 1 removed), 3 k2=b (P3), 4 k3=a (P4, emptied),
    5 k3=tombstone (P5)."""
    mockbroker.create_topic(topic, config={"cleanup.policy": "compact"})
    twin.produce(topic, [{"key": "k1", "value": "a"}])
    twin.produce(topic, [{"key": "k2", "value": "a"}, {"key": "k1", "value": "b"}], **{"linger.ms": 50})
    twin.produce(topic, [{"key": "k2", "value": "b"}])
    twin.produce(topic, [{"key": "k3", "value": "a"}])
    twin.produce(topic, [{"key": "k3", "value": None}])
    mockbroker.compact(topic)
    assert [r.offset for r in mockbroker.records(topic)] == [2, 3, 5]
    assert [b.record_count for b in mockbroker.batches(topic)].count(0) >= 1, "the cleaner keeps empty batches"


@needs_compaction()
def test_compacted_topic_reads_over_offset_gaps_and_empty_batches(twin: SparkTwin, mockbroker: MockBroker) -> None:
    compacted_log(twin, mockbroker, "profiles")

    batch = twin.read(subscribe="profiles")
    stream = twin.stream(subscribe="profiles", startingOffsets="earliest")
    streamed = stream.trigger()
    # A range that holds nothing visible ends without a record (and without waiting for one).
    nothing = twin.read(subscribe="profiles", endingOffsets=json.dumps({"profiles": {"0": 2}}))
    # A range starting inside a gap starts at the next record.
    from_gap = twin.read(subscribe="profiles", startingOffsets=json.dumps({"profiles": {"0": 1}}))

    expected = [(2, b"k1", b"b"), (3, b"k2", b"b"), (5, b"k3", None)]
    assert [(r.offset, r.key, r.value) for r in batch.rows] == expected
    assert [(r.offset, r.key, r.value) for r in streamed.rows] == expected
    assert nothing.rows == []
    assert [r.offset for r in from_gap.rows] == [2, 3, 5]
    assert all(line["data_loss"] == 0 for line in batch.of_type("range_read") + from_gap.of_type("range_read"))


def deleted_below_log_start(twin: SparkTwin, mockbroker: MockBroker, topic: str, **options: str):  # noqa: ANN201
    """A stream reads 0-4; then 5-9 arrive and DeleteRecords moves the log start to 8."""
    mockbroker.create_topic(topic)
    twin.produce(topic, [{"value": f"v{i}"} for i in range(5)])
    stream = twin.stream(subscribe=topic, startingOffsets="earliest", **options)
    assert len(stream.trigger().rows) == 5
    twin.produce(topic, [{"value": f"v{i}"} for i in range(5, 10)])
    [deleted] = twin.admin({"op": "deleteRecords", "topic": topic, "offsets": {"0": 8}})
    assert deleted["partitions"][0]["low_watermark"] == 8
    return stream


def test_deleted_records_fail_the_query_with_failOnDataLoss(twin: SparkTwin, mockbroker: MockBroker) -> None:
    stream = deleted_below_log_start(twin, mockbroker, "retained")

    with pytest.raises(SparkCallError) as failure:
        stream.trigger()

    assert failure.value.condition == "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"
    assert "Could not read records in offset [5, 10) for topic partition retained-0" in str(failure.value)
    assert failure.value.end.get("cause") == "OffsetOutOfRangeException"


def test_deleted_records_are_skipped_without_failOnDataLoss(twin: SparkTwin, mockbroker: MockBroker) -> None:
    stream = deleted_below_log_start(twin, mockbroker, "lossy", failOnDataLoss="false")

    batch = stream.trigger()

    assert [(r.offset, r.value) for r in batch.rows] == [(8, b"v8"), (9, b"v9")]
    [read] = batch.of_type("range_read")
    assert read["skipped"] == ["[5, 8)"] and read["offset_out_of_range"] == 3


def test_batch_read_from_below_the_log_start(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("trimmed")
    twin.produce("trimmed", [{"value": f"v{i}"} for i in range(6)])
    twin.admin({"op": "deleteRecords", "topic": "trimmed", "offsets": {"0": 4}})
    from_two = json.dumps({"trimmed": {"0": 2}})

    with pytest.raises(SparkCallError) as failure:
        twin.read(subscribe="trimmed", startingOffsets=from_two)
    assert failure.value.condition == "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"
    skipped = twin.read(subscribe="trimmed", startingOffsets=from_two, failOnDataLoss="false")
    assert [r.offset for r in skipped.rows] == [4, 5]
    # "earliest" is the log start offset: nothing is lost.
    assert [r.offset for r in twin.read(subscribe="trimmed").rows] == [4, 5]
