"""The log changes under a stopped or running Spark query: compaction between micro-batches, retention
deleting what the query had not read yet, and the sink's producer settings (codecs, acks).

Compaction and retention run when the test says so (broker.compact, broker.enforce_retention on the
broker clock), so nothing here waits for a background thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import BatchCollector, produce, read_stream, run_available_now, wait_for

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]
HOUR_MS = 3_600_000


def available_now(spark: SparkSession, options: dict[str, str], checkpoint: Path) -> BatchCollector:
    collector = BatchCollector()
    run_available_now(read_stream(spark, options).writeStream.foreachBatch(collector)
                      .option("checkpointLocation", str(checkpoint)))
    return collector


def test_a_topic_compacted_between_two_micro_batches_is_read_on_from_the_checkpoint(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("accounts", config={"cleanup.policy": "compact"})
    options = spark_options(subscribe="accounts", startingOffsets="earliest")
    produce(mockbroker, "accounts", [{"key": "k1", "value": "a"}, {"key": "k2", "value": "a"}])
    first = available_now(spark, options, tmp_path / "c")

    produce(mockbroker, "accounts", [{"key": "k1", "value": "b"}, {"key": "k1", "value": "c"},
                                     {"key": "k2", "value": "b"}])
    mockbroker.compact("accounts")
    assert [r.offset for r in mockbroker.records("accounts")] == [3, 4]  # offset 2 (k1=b) is gone
    second = available_now(spark, options, tmp_path / "c")

    assert [(r.offset, r.key, r.value) for r in first.rows] == [(0, b"k1", b"a"), (1, b"k2", b"a")]
    assert [(r.offset, r.key, r.value) for r in second.rows] == [(3, b"k1", b"c"), (4, b"k2", b"b")]


def aged_out_while_stopped(spark: SparkSession, broker: MockBroker, options: dict[str, str],
                           checkpoint: Path) -> None:
    """A query reads offsets 0-4 and stops; 5-9 (an hour old) and 10-11 (new) arrive, each in a segment of
    its own; retention (retention.ms 10 minutes, on the broker clock) deletes the segments up to offset 9."""
    broker.create_topic("aging", config={"retention.ms": "600000", "segment.ms": "1000"})
    now = broker.clock.now_ms()
    produce(broker, "aging", [{"value": f"v{i}", "timestamp": now - HOUR_MS} for i in range(5)])
    assert len(available_now(spark, options, checkpoint).rows) == 5
    broker.clock.advance(2)  # past segment.ms: the next append rolls a new segment
    produce(broker, "aging", [{"value": f"v{i}", "timestamp": now - HOUR_MS} for i in range(5, 10)])
    broker.clock.advance(2)
    produce(broker, "aging", [{"value": f"v{i}", "timestamp": broker.clock.now_ms()} for i in range(10, 12)])
    broker.enforce_retention("aging")
    assert broker.offsets("aging")["log_start_offset"] == 10


def test_retention_deleting_unread_records_fails_the_query_with_failOnDataLoss(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    from pyspark.errors import StreamingQueryException

    options = spark_options(subscribe="aging", startingOffsets="earliest")
    aged_out_while_stopped(spark, mockbroker, options, tmp_path / "c")

    with pytest.raises(StreamingQueryException) as failure:
        available_now(spark, options, tmp_path / "c")

    message = str(failure.value)  # Spark's KAFKA_DATA_LOSS
    assert "Some data may have been lost" in message and "failOnDataLoss" in message, message


def test_retention_deleting_unread_records_is_skipped_without_failOnDataLoss(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options, tmp_path: Path) -> None:
    options = spark_options(subscribe="aging", startingOffsets="earliest", failOnDataLoss="false")
    aged_out_while_stopped(spark, mockbroker, options, tmp_path / "c")

    after = available_now(spark, options, tmp_path / "c")

    assert [(r.offset, r.value) for r in after.rows] == [(10, b"v10"), (11, b"v11")]


@pytest.mark.parametrize(("codec", "stored"), [("gzip", "GZIP"), ("snappy", "SNAPPY"), ("lz4", "LZ4"),
                                               ("zstd", "ZSTD"), ("none", "NONE")])
def test_the_sink_writes_with_the_producer_codec_it_is_given(spark: SparkSession, mockbroker: MockBroker,
                                                             spark_options: Options, codec: str,
                                                             stored: str) -> None:
    topic = f"packed-{codec}"
    mockbroker.create_topic(topic)
    rows = [(f"k{i}", f"value-{i}" * 20) for i in range(20)]
    df = spark.createDataFrame(rows, "key STRING, value STRING")

    df.write.format("kafka").options(**spark_options(topic=topic, **{"kafka.compression.type": codec,
                                                                     "kafka.acks": "all"})).save()

    assert sorted((r.key, r.value) for r in mockbroker.records(topic)) == sorted(
        (k.encode(), v.encode()) for k, v in rows)
    assert {b.codec.name for b in mockbroker.batches(topic)} == {stored}


@pytest.mark.parametrize("acks", ["1", "0"])
def test_the_sink_writes_with_the_acks_it_is_given(spark: SparkSession, mockbroker: MockBroker,
                                                   spark_options: Options, acks: str) -> None:
    topic = f"acked-{acks}"
    mockbroker.create_topic(topic)
    df = spark.createDataFrame([(f"v{i}",) for i in range(10)], "value STRING")

    # acks 0 and 1 need idempotence off (Kafka's producer refuses acks != all with it)
    df.write.format("kafka").options(**spark_options(topic=topic, **{
        "kafka.acks": acks, "kafka.enable.idempotence": "false"})).save()

    # acks 0: the write returns once the requests are sent, before the broker has appended them
    wait_for(lambda: len(mockbroker.records(topic)) >= 10, "the 10 records in the log", timeout=60)
    assert sorted(r.value for r in mockbroker.records(topic)) == sorted(f"v{i}".encode() for i in range(10))
