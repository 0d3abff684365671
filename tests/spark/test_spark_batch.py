"""spark.read.format("kafka") with its offset options, against mockbroker.

Twin: tests/spark_twin/test_spark_twin_batch.py (the same calls through kafka-clients alone).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import kafka_rows, produce
from tests.spark_twin.twin import Row

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial]

Options = Callable[..., dict[str, str]]


def fill(broker: MockBroker, topic: str, partitions: int, per_partition: int, base_ts: int = 1_000_000) -> None:
    """Records "p{p}-{i}" keyed "k{i}", timestamps base_ts + 1000 * i, in every partition."""
    produce(broker, topic, [{"partition": p, "key": f"k{i}", "value": f"p{p}-{i}", "timestamp": base_ts + 1000 * i}
                            for p in range(partitions) for i in range(per_partition)])


def read(spark: SparkSession, options: dict[str, str]) -> list[Row]:
    return kafka_rows(spark.read.format("kafka").options(**options).load())


def test_batch_read_from_earliest_to_latest_returns_every_record(spark: SparkSession, mockbroker: MockBroker,
                                                                 spark_options: Options) -> None:
    mockbroker.create_topic("events", partitions=2)
    fill(mockbroker, "events", 2, 3)

    rows = read(spark, spark_options(subscribe="events", startingOffsets="earliest", endingOffsets="latest"))

    assert rows == sorted(Row("events", p, i, f"k{i}".encode(), f"p{p}-{i}".encode(), 1_000_000 + 1000 * i, 0)
                          for p in range(2) for i in range(3))


def test_batch_read_between_json_offsets(spark: SparkSession, mockbroker: MockBroker, spark_options: Options) -> None:
    mockbroker.create_topic("ranges", partitions=2)
    fill(mockbroker, "ranges", 2, 5)

    rows = read(spark, spark_options(subscribe="ranges",
                                     startingOffsets=json.dumps({"ranges": {"0": 1, "1": -2}}),
                                     endingOffsets=json.dumps({"ranges": {"0": 3, "1": -1}})))

    assert [(r.partition, r.offset) for r in rows] == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4)]


def test_batch_read_of_assigned_partitions(spark: SparkSession, mockbroker: MockBroker, spark_options: Options) -> None:
    mockbroker.create_topic("assigned", partitions=3)
    fill(mockbroker, "assigned", 3, 2)

    rows = read(spark, spark_options(assign=json.dumps({"assigned": [2]})))

    assert [(r.partition, r.offset) for r in rows] == [(2, 0), (2, 1)]


def test_batch_read_by_timestamp(spark: SparkSession, mockbroker: MockBroker, spark_options: Options) -> None:
    mockbroker.create_topic("timed", partitions=2)
    fill(mockbroker, "timed", 2, 5)  # timestamps 1_000_000 ... 1_004_000

    by_partition = read(spark, spark_options(
        subscribe="timed",
        startingOffsetsByTimestamp=json.dumps({"timed": {"0": 1_002_500, "1": 1_000_000}}),
        endingOffsetsByTimestamp=json.dumps({"timed": {"0": 1_004_000, "1": 1_001_000}})))
    global_start = read(spark, spark_options(subscribe="timed", startingTimestamp=1_003_000))

    assert [(r.partition, r.offset) for r in by_partition] == [(0, 3), (1, 0)]
    assert [(r.partition, r.offset) for r in global_start] == [(0, 3), (0, 4), (1, 3), (1, 4)]


def test_batch_read_by_timestamp_past_the_last_record(spark: SparkSession, mockbroker: MockBroker,
                                                      spark_options: Options) -> None:
    mockbroker.create_topic("late")
    fill(mockbroker, "late", 1, 3)
    after_all = json.dumps({"late": {"0": 9_999_999}})

    with pytest.raises(Exception, match="No offset matched"):
        read(spark, spark_options(subscribe="late", startingOffsetsByTimestamp=after_all))
    assert read(spark, spark_options(subscribe="late", startingOffsetsByTimestamp=after_all,
                                     startingOffsetsByTimestampStrategy="latest")) == []
    assert [r.offset for r in read(spark, spark_options(subscribe="late", endingOffsetsByTimestamp=after_all))] == [
        0, 1, 2]
