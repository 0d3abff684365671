"""What data engineers tune on Spark's Kafka source: restarts, rate limits, read parallelism, time bounds.

Every wait is a bounded loop on what arrived (tests/spark/helpers.py), never on time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import BatchCollector, kafka_rows, produce, read_stream, run_available_now, wait_for

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]


def file_sink_values(spark: SparkSession, path: Path) -> list[str]:
    """The values a file sink has committed (Spark reads its _spark_metadata log: no half-written files)."""
    if not (path / "_spark_metadata").is_dir():
        return []
    return [r["value"] for r in spark.read.schema("value STRING").json(str(path)).collect()]


def test_a_processing_time_query_restarted_from_its_checkpoint_loses_and_repeats_nothing(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("orders", partitions=2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start() -> object:
        stream = read_stream(spark, spark_options(subscribe="orders", startingOffsets="earliest"))
        return (stream.selectExpr("CAST(value AS STRING) AS value").writeStream.format("json")
                .option("path", str(out)).option("checkpointLocation", str(checkpoint))
                .trigger(processingTime="200 milliseconds").start())

    query = start()
    produce(mockbroker, "orders", [{"partition": i % 2, "value": f"first-{i}"} for i in range(10)])
    wait_for(lambda: len(file_sink_values(spark, out)) >= 10, "the first 10 records in the file sink", query=query)
    query.stop()  # type: ignore[attr-defined]

    produce(mockbroker, "orders", [{"partition": i % 2, "value": f"second-{i}"} for i in range(10)])
    query = start()  # same checkpoint, same sink: it goes on where it stopped
    wait_for(lambda: len(file_sink_values(spark, out)) >= 20, "all 20 records in the file sink", query=query)
    query.stop()  # type: ignore[attr-defined]

    values = file_sink_values(spark, out)
    expected = [f"first-{i}" for i in range(10)] + [f"second-{i}" for i in range(10)]
    assert sorted(values) == sorted(expected), "each record exactly once across the restart"


def test_max_offsets_per_trigger_caps_every_micro_batch(spark: SparkSession, mockbroker: MockBroker,
                                                         spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("capped")
    produce(mockbroker, "capped", [{"value": f"v{i}"} for i in range(10)])
    collector = BatchCollector()

    stream = read_stream(spark, spark_options(subscribe="capped", startingOffsets="earliest", maxOffsetsPerTrigger=3))
    run_available_now(stream.writeStream.foreachBatch(collector).option("checkpointLocation", str(tmp_path / "c")))

    sizes = [len(rows) for _batch, rows in sorted(collector.batches.items()) if rows]
    assert sizes == [3, 3, 3, 1]
    assert [r.offset for r in collector.rows] == list(range(10))


def test_min_offsets_per_trigger_waits_at_most_max_trigger_delay(spark: SparkSession, mockbroker: MockBroker,
                                                                 spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("trickle")
    collector = BatchCollector()
    stream = read_stream(spark, spark_options(subscribe="trickle", startingOffsets="earliest",
                                              minOffsetsPerTrigger=5, maxTriggerDelay="2s"))
    query = (stream.writeStream.foreachBatch(collector).trigger(processingTime="100 milliseconds")
             .option("checkpointLocation", str(tmp_path / "c")).start())

    # 3 records in one produce request (one append): fewer than minOffsetsPerTrigger, so only the
    # maxTriggerDelay rule can ever start a batch for them.
    produce(mockbroker, "trickle", [{"value": f"a{i}"} for i in range(3)], **{"linger.ms": 200})
    wait_for(lambda: len(collector.rows) == 3, "the 3 records, after maxTriggerDelay", query=query)
    produce(mockbroker, "trickle", [{"value": f"b{i}"} for i in range(5)], **{"linger.ms": 200})
    wait_for(lambda: len(collector.rows) == 8, "the next 5 records", query=query)
    query.stop()

    sizes = [len(rows) for _batch, rows in sorted(collector.batches.items()) if rows]
    assert sizes == [3, 5]


def test_min_partitions_splits_one_kafka_partition_into_several_tasks(spark: SparkSession, mockbroker: MockBroker,
                                                                       spark_options: Options) -> None:
    mockbroker.create_topic("wide")
    produce(mockbroker, "wide", [{"value": f"v{i}"} for i in range(100)])

    df = (spark.read.format("kafka")
          .options(**spark_options(subscribe="wide", startingOffsets="earliest", endingOffsets="latest",
                                   minPartitions=4)).load())

    assert df.rdd.getNumPartitions() == 4
    assert [r.offset for r in kafka_rows(df)] == list(range(100))


def test_batch_read_between_a_starting_and_an_ending_timestamp(spark: SparkSession, mockbroker: MockBroker,
                                                               spark_options: Options) -> None:
    mockbroker.create_topic("window", partitions=2)
    produce(mockbroker, "window", [{"partition": p, "value": f"{p}-{i}", "timestamp": 10_000 + 1000 * i}
                                   for p in range(2) for i in range(6)])

    df = (spark.read.format("kafka")
          .options(**spark_options(subscribe="window", startingTimestamp=12_000, endingTimestamp=14_000)).load())

    # from the first record at or after 12 000 ms up to (not including) the first at or after 14 000 ms
    assert [(r.partition, r.offset) for r in kafka_rows(df)] == [(0, 2), (0, 3), (1, 2), (1, 3)]


def test_assign_reads_only_the_named_partitions_of_several_topics(spark: SparkSession, mockbroker: MockBroker,
                                                                  spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("left", partitions=2)
    mockbroker.create_topic("right", partitions=2)
    for topic in ("left", "right"):
        produce(mockbroker, topic, [{"partition": p, "value": f"{topic}-{p}"} for p in range(2)])
    collector = BatchCollector()

    stream = read_stream(spark, spark_options(assign=json.dumps({"left": [1], "right": [0]}),
                                              startingOffsets="earliest"))
    run_available_now(stream.writeStream.foreachBatch(collector).option("checkpointLocation", str(tmp_path / "c")))

    assert [(r.topic, r.partition, r.value) for r in collector.rows] == [("left", 1, b"left-1"),
                                                                          ("right", 0, b"right-0")]


def test_read_committed_running_query_holds_at_an_open_transaction_until_it_commits(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    from tests.spark.helpers import transaction, transactional_producer

    mockbroker.create_topic("payments")
    produce(mockbroker, "payments", [{"value": "before"}])  # offset 0
    collector = BatchCollector()
    stream = read_stream(spark, spark_options(subscribe="payments", startingOffsets="earliest",
                                              **{"kafka.isolation.level": "read_committed"}))
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "100")  # idle progress, for the wait below
    try:
        query = (stream.writeStream.foreachBatch(collector).trigger(processingTime="100 milliseconds")
                 .option("checkpointLocation", str(tmp_path / "c")).start())
    finally:
        spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")  # read when the query starts
    wait_for(lambda: len(collector.rows) == 1, "the record before the transaction", query=query)

    txn = transactional_producer(mockbroker, "payments-txn")
    transaction(txn, "payments", ["t1", "t2"], None)  # offsets 1-2, left open after the query started
    produce(mockbroker, "payments", [{"value": "after"}])  # offset 3: behind the open transaction
    assert mockbroker.offsets("payments")["last_stable_offset"] == 1

    def latest_seen() -> dict[str, dict[str, int]] | None:
        """The newest offsets the query's source has looked up, from its latest progress report."""
        progress = query.lastProgress
        latest = progress["sources"][0].get("latestOffset") if progress else None
        return json.loads(latest) if latest else None

    start_reports = len(query.recentProgress)
    wait_for(lambda: len(query.recentProgress) > start_reports + 3, "more progress reports", query=query)
    assert latest_seen() == {"payments": {"0": 1}}, "the source never looks past the open transaction"
    assert [r.value for r in collector.rows] == [b"before"]

    txn.commit_transaction(30)
    wait_for(lambda: len(collector.rows) == 4, "the committed transaction and the record after it", query=query)
    query.stop()
    assert [(r.offset, r.value) for r in collector.rows] == [(0, b"before"), (1, b"t1"), (2, b"t2"), (3, b"after")]
