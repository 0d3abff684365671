"""The example of docs/spark.md ("In a test"), run as written there (with records produced)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import produce

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial]


def test_counts_per_key(spark: SparkSession, mockbroker: MockBroker) -> None:
    from mockbroker.testing.spark import spark_kafka_options, spark_session

    mockbroker.create_topic("events", partitions=2)
    mockbroker.create_topic("counts")
    produce(mockbroker, "events", [{"key": "a", "value": "1"}, {"key": "b", "value": "2"},
                                   {"key": "a", "value": "3", "partition": 1}])

    assert spark_session() is spark  # getOrCreate: the session of the test run
    counts = (spark.read.format("kafka")
              .options(**spark_kafka_options(mockbroker, subscribe="events", startingOffsets="earliest"))
              .load()
              .groupBy("key").count()
              .selectExpr("key", "CAST(count AS STRING) AS value"))
    counts.write.format("kafka").options(**spark_kafka_options(mockbroker, topic="counts")).save()

    assert {r.key: r.value for r in mockbroker.records("counts")} == {b"a": b"2", b"b": b"1"}
