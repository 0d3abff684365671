"""Logs whose offsets are not one record each, read by Spark: transactions under read_committed,
compacted topics (offset gaps, empty batches), records deleted below the log start (failOnDataLoss).

Twin: tests/spark_twin/test_spark_twin_log_shapes.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import (
    BatchCollector,
    delete_records,
    kafka_rows,
    produce,
    read_stream,
    run_available_now,
    transaction,
    transactional_producer,
)
from tests.spark_twin.twin import needs_compaction, needs_transactions

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]
READ_COMMITTED = {"kafka.isolation.level": "read_committed"}


def committed_and_aborted(broker: MockBroker, topic: str, transactional_id: str) -> None:
    """Offsets 0-1 committed, 2 COMMIT, 3-4 aborted, 5 ABORT, 6 committed, 7 COMMIT."""
    producer = transactional_producer(broker, transactional_id)
    transaction(producer, topic, ["a1", "a2"], "commit")
    transaction(producer, topic, ["b1", "b2"], "abort")
    transaction(producer, topic, ["c1"], "commit")
    assert broker.offsets(topic)["last_stable_offset"] == 8


@needs_transactions()
def test_read_committed_batch_read_skips_aborted_records_and_markers(spark: SparkSession, mockbroker: MockBroker,
                                                                     spark_options: Options) -> None:
    mockbroker.create_topic("payments")
    committed_and_aborted(mockbroker, "payments", "payments-txn")

    committed = kafka_rows(spark.read.format("kafka").options(**spark_options(subscribe="payments",
                                                                               **READ_COMMITTED)).load())
    uncommitted = kafka_rows(spark.read.format("kafka").options(**spark_options(subscribe="payments")).load())

    assert [(r.offset, r.value) for r in committed] == [(0, b"a1"), (1, b"a2"), (6, b"c1")]
    assert [(r.offset, r.value) for r in uncommitted] == [(0, b"a1"), (1, b"a2"), (3, b"b1"), (4, b"b2"),
                                                          (6, b"c1")]


@needs_transactions()
def test_read_committed_stream_stops_at_an_open_transaction(spark: SparkSession, mockbroker: MockBroker,
                                                            spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("ledger")
    committed_and_aborted(mockbroker, "ledger", "ledger-txn")
    open_txn = transactional_producer(mockbroker, "ledger-open")
    transaction(open_txn, "ledger", ["d1", "d2"], None)  # left open: the LSO stays at 8
    before, after = BatchCollector(), BatchCollector()

    def query(collector: BatchCollector) -> None:
        stream = read_stream(spark, spark_options(subscribe="ledger", startingOffsets="earliest", **READ_COMMITTED))
        run_available_now(stream.writeStream.foreachBatch(collector)
                          .option("checkpointLocation", str(tmp_path / "checkpoint")))

    query(before)
    open_txn.commit_transaction(30)
    query(after)

    assert [(r.offset, r.value) for r in before.rows] == [(0, b"a1"), (1, b"a2"), (6, b"c1")]
    assert [(r.offset, r.value) for r in after.rows] == [(8, b"d1"), (9, b"d2")]


@needs_transactions()
def test_read_committed_stream_steps_over_a_batch_of_aborted_records(spark: SparkSession, mockbroker: MockBroker,
                                                                     spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("refunds")
    producer = transactional_producer(mockbroker, "refunds-txn")
    collected = BatchCollector()

    def query() -> None:
        stream = read_stream(spark, spark_options(subscribe="refunds", startingOffsets="earliest", **READ_COMMITTED))
        run_available_now(stream.writeStream.foreachBatch(collected)
                          .option("checkpointLocation", str(tmp_path / "checkpoint")))

    transaction(producer, "refunds", ["x1", "x2"], "abort")
    query()  # a batch over [0, 3): two aborted records and the ABORT marker, nothing visible
    transaction(producer, "refunds", ["y1"], "commit")
    query()

    assert [(r.offset, r.value) for r in collected.rows] == [(3, b"y1")]


def compacted_log(broker: MockBroker, topic: str) -> None:
    """Each producer is new and idempotent, so the cleaner keeps each one's last batch, even emptied:
    0 k1=a (emptied), 1 k2=a + 2 k1=b (1 removed), 3 k2=b, 4 k3=a (emptied), 5 k3=tombstone."""
    broker.create_topic(topic, config={"cleanup.policy": "compact"})
    idempotent = {"enable.idempotence": True}
    produce(broker, topic, [{"key": "k1", "value": "a"}], **idempotent)
    produce(broker, topic, [{"key": "k2", "value": "a"}, {"key": "k1", "value": "b"}], **idempotent, **{
        "linger.ms": 50})
    produce(broker, topic, [{"key": "k2", "value": "b"}], **idempotent)
    produce(broker, topic, [{"key": "k3", "value": "a"}], **idempotent)
    produce(broker, topic, [{"key": "k3", "value": None}], **idempotent)
    broker.compact(topic)
    assert [r.offset for r in broker.records(topic)] == [2, 3, 5]
    assert [b.record_count for b in broker.batches(topic)].count(0) >= 1, "the cleaner keeps empty batches"


@needs_compaction()
def test_compacted_topic_reads_over_offset_gaps_and_empty_batches(spark: SparkSession, mockbroker: MockBroker,
                                                                  spark_options: Options, tmp_path: Path) -> None:
    compacted_log(mockbroker, "profiles")
    streamed = BatchCollector()

    def batch(**options: str) -> list[tuple[int, bytes | None, bytes | None]]:
        df = spark.read.format("kafka").options(**spark_options(subscribe="profiles", **options)).load()
        return [(r.offset, r.key, r.value) for r in kafka_rows(df)]

    run_available_now(read_stream(spark, spark_options(subscribe="profiles", startingOffsets="earliest"))
                      .writeStream.foreachBatch(streamed).option("checkpointLocation", str(tmp_path / "c")))

    expected = [(2, b"k1", b"b"), (3, b"k2", b"b"), (5, b"k3", None)]
    assert batch() == expected
    assert [(r.offset, r.key, r.value) for r in streamed.rows] == expected
    assert batch(endingOffsets=json.dumps({"profiles": {"0": 2}})) == []
    assert [o for o, _, _ in batch(startingOffsets=json.dumps({"profiles": {"0": 1}}))] == [2, 3, 5]


def read_then_delete(spark: SparkSession, broker: MockBroker, spark_options: Options, checkpoint: Path,
                     **options: str) -> Callable[[BatchCollector], None]:
    """A query reads 0-4; then 5-9 arrive and DeleteRecords moves the log start to 8. Returns a function
    running the query again (AvailableNow, same checkpoint) into a collector."""
    topic = "retained"
    broker.create_topic(topic)
    produce(broker, topic, [{"value": f"v{i}"} for i in range(5)])

    def run(collector: BatchCollector) -> None:
        stream = read_stream(spark, spark_options(subscribe=topic, startingOffsets="earliest", **options))
        run_available_now(stream.writeStream.foreachBatch(collector).option("checkpointLocation", str(checkpoint)))

    first = BatchCollector()
    run(first)
    assert len(first.rows) == 5
    produce(broker, topic, [{"value": f"v{i}"} for i in range(5, 10)])
    assert delete_records(broker, topic, 0, 8) == 8
    return run


def test_deleted_records_fail_the_query_with_failOnDataLoss(spark: SparkSession, mockbroker: MockBroker,
                                                            spark_options: Options, tmp_path: Path) -> None:
    from pyspark.errors import StreamingQueryException

    run = read_then_delete(spark, mockbroker, spark_options, tmp_path / "checkpoint")

    with pytest.raises(StreamingQueryException) as failure:
        run(BatchCollector())

    message = str(failure.value)  # Spark's KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE
    assert "Some data may have been lost" in message and "failOnDataLoss" in message, message
    assert "Could not read records in offset [5, 10) for topic partition retained-0" in message, message


def test_deleted_records_are_skipped_without_failOnDataLoss(spark: SparkSession, mockbroker: MockBroker,
                                                            spark_options: Options, tmp_path: Path) -> None:
    run = read_then_delete(spark, mockbroker, spark_options, tmp_path / "checkpoint", failOnDataLoss="false")
    after = BatchCollector()

    run(after)

    assert [(r.offset, r.value) for r in after.rows] == [(8, b"v8"), (9, b"v9")]


def test_batch_read_from_below_the_log_start(spark: SparkSession, mockbroker: MockBroker,
                                             spark_options: Options) -> None:
    mockbroker.create_topic("trimmed")
    produce(mockbroker, "trimmed", [{"value": f"v{i}"} for i in range(6)])
    assert delete_records(mockbroker, "trimmed", 0, 4) == 4
    from_two = json.dumps({"trimmed": {"0": 2}})

    def offsets(**options: str) -> list[int]:
        df = spark.read.format("kafka").options(**spark_options(subscribe="trimmed", **options)).load()
        return [r.offset for r in kafka_rows(df)]

    with pytest.raises(Exception, match=r"Could not read records in offset \[2, 6\) for topic partition trimmed-0"):
        offsets(startingOffsets=from_two)
    assert offsets(startingOffsets=from_two, failOnDataLoss="false") == [4, 5]
    assert offsets() == [4, 5]  # "earliest" is the log start offset: nothing is lost
