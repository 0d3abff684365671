"""spark.readStream.format("kafka") across micro-batches, against mockbroker.

Twin: tests/spark_twin/test_spark_twin_streaming.py. Queries collect their micro-batches with
foreachBatch; waits are bounded loops on what arrived, never on time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import (
    BatchCollector,
    create_partitions,
    produce,
    read_stream,
    run_available_now,
    wait_for,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]


def test_available_now_reads_the_backlog_then_resumes_from_its_checkpoint(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("backlog", partitions=2)
    produce(mockbroker, "backlog", [{"partition": i % 2, "value": f"v{i}"} for i in range(6)])
    first, second = BatchCollector(), BatchCollector()

    def query(collector: BatchCollector) -> None:
        stream = read_stream(spark, spark_options(subscribe="backlog", startingOffsets="earliest"))
        run_available_now(stream.writeStream.foreachBatch(collector)
                          .option("checkpointLocation", str(tmp_path / "checkpoint")))

    query(first)
    produce(mockbroker, "backlog", [{"partition": 0, "value": "late"}])
    query(second)  # the same checkpoint: it goes on where the first run stopped

    assert sorted((r.value or b"") for r in first.rows) == [f"v{i}".encode() for i in range(6)]
    assert [r.value for r in second.rows] == [b"late"]


def test_processing_time_triggers_read_each_record_once_while_a_producer_writes(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("ticks", partitions=2)
    collector = BatchCollector()
    stream = read_stream(spark, spark_options(subscribe="ticks", startingOffsets="earliest"))
    query = (stream.writeStream.foreachBatch(collector).trigger(processingTime="200 milliseconds")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())

    expected: list[bytes] = []
    for chunk in range(3):  # each chunk is read before the next is written: at least three batches
        values = [f"c{chunk}-{i}" for i in range(4)]
        produce(mockbroker, "ticks", [{"partition": i % 2, "value": v} for i, v in enumerate(values)])
        expected += [v.encode() for v in values]
        total = len(expected)
        wait_for(lambda: len(collector.rows) >= total, f"chunk {chunk}", query=query)  # noqa: B023
    query.stop()

    assert sorted((r.value or b"") for r in collector.rows) == sorted(expected)
    assert len({(r.partition, r.offset) for r in collector.rows}) == len(expected), "no record twice"
    assert collector.nonempty_batches() >= 3


def test_partitions_added_while_running_are_read_from_their_start(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("growing", partitions=1)
    collector = BatchCollector()
    stream = read_stream(spark, spark_options(subscribe="growing", startingOffsets="earliest"))
    query = (stream.writeStream.foreachBatch(collector).trigger(processingTime="200 milliseconds")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    produce(mockbroker, "growing", [{"partition": 0, "value": "p0"}])
    wait_for(lambda: len(collector.rows) == 1, "the first record", query=query)

    create_partitions(mockbroker, "growing", 3)
    produce(mockbroker, "growing", [{"partition": 1, "value": "p1"}, {"partition": 2, "value": "p2"}])
    wait_for(lambda: len(collector.rows) == 3, "the records of the new partitions", query=query)
    query.stop()

    assert [(r.partition, r.offset, r.value) for r in collector.rows] == [(0, 0, b"p0"), (1, 0, b"p1"),
                                                                          (2, 0, b"p2")]


def test_topics_matching_a_pattern_are_picked_up_while_running(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("orders-eu")
    mockbroker.create_topic("audit")
    produce(mockbroker, "orders-eu", [{"value": "eu"}])
    produce(mockbroker, "audit", [{"value": "not me"}])
    collector = BatchCollector()
    stream = read_stream(spark, spark_options(subscribePattern="orders-.*", startingOffsets="earliest"))
    query = (stream.writeStream.foreachBatch(collector).trigger(processingTime="200 milliseconds")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    wait_for(lambda: len(collector.rows) == 1, "the first topic's record", query=query)

    mockbroker.create_topic("orders-us", partitions=2)
    produce(mockbroker, "orders-us", [{"partition": 1, "value": "us"}])
    wait_for(lambda: len(collector.rows) == 2, "the new topic's record", query=query)
    query.stop()

    assert [(r.topic, r.partition, r.value) for r in collector.rows] == [("orders-eu", 0, b"eu"),
                                                                         ("orders-us", 1, b"us")]


def test_stream_from_json_offsets_and_by_timestamp(spark: SparkSession, mockbroker: MockBroker,
                                                   spark_options: Options, tmp_path: Path) -> None:
    import json

    mockbroker.create_topic("resume", partitions=2)
    produce(mockbroker, "resume", [{"partition": p, "value": f"{p}-{i}", "timestamp": 5000 + i}
                                   for p in range(2) for i in range(4)])
    from_offsets, by_time = BatchCollector(), BatchCollector()

    run_available_now(read_stream(spark, spark_options(
        subscribe="resume", startingOffsets=json.dumps({"resume": {"0": 2, "1": -2}})))
        .writeStream.foreachBatch(from_offsets).option("checkpointLocation", str(tmp_path / "a")))
    run_available_now(read_stream(spark, spark_options(subscribe="resume", startingTimestamp=5003))
                      .writeStream.foreachBatch(by_time).option("checkpointLocation", str(tmp_path / "b")))

    assert [(r.partition, r.offset) for r in from_offsets.rows] == [(0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
    assert [(r.partition, r.offset) for r in by_time.rows] == [(0, 3), (1, 3)]
