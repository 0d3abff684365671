"""The includeHeaders option and Spark's Kafka sink (batch and streaming), checked with broker.records.

Twin: tests/spark_twin/test_spark_twin_headers_sink.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import kafka_rows, produce, read_stream, run_available_now

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]


def test_include_headers_reads_headers_in_order_with_null_values(spark: SparkSession, mockbroker: MockBroker,
                                                                 spark_options: Options) -> None:
    mockbroker.create_topic("traced")
    produce(mockbroker, "traced", [
        {"value": "with", "headers": [("trace", b"t-1"), ("empty", None)]},
        {"value": "without"},
        {"value": "repeated", "headers": [("dup", b"1"), ("dup", b"2")]},
        {"value": "binary", "headers": [("raw", b"\x00\xff")]},
    ])

    with_headers = kafka_rows(spark.read.format("kafka").options(**spark_options(subscribe="traced",
                                                                                 includeHeaders=True)).load())
    plain = spark.read.format("kafka").options(**spark_options(subscribe="traced")).load()

    assert [r.headers for r in with_headers] == [
        (("trace", b"t-1"), ("empty", None)),
        None,  # no headers: a null column, not an empty array
        (("dup", b"1"), ("dup", b"2")),
        (("raw", b"\x00\xff"),),
    ]
    assert "headers" not in plain.columns


def test_sink_writes_keys_values_headers_and_partitions(spark: SparkSession, mockbroker: MockBroker,
                                                        spark_options: Options) -> None:
    mockbroker.create_topic("out", partitions=2)
    df = spark.createDataFrame(
        [("k1", "v1", [("h", bytearray(b"x")), ("n", None)], None), (None, "v2", None, None),
         ("k3", "v3", None, 1)],
        "key string, value string, headers array<struct<key: string, value: binary>>, partition int")

    df.write.format("kafka").options(**spark_options(topic="out")).save()

    by_value = {r.value: (r.key, tuple(r.headers)) for r in mockbroker.records("out")}
    assert by_value == {b"v1": (b"k1", (("h", b"x"), ("n", None))), b"v2": (None, ()), b"v3": (b"k3", ())}
    assert [r.value for r in mockbroker.records("out", partition=1) if r.key == b"k3"] == [b"v3"]
    # Spark sets no producer configs of its own: Kafka's defaults make the producer idempotent.
    assert all(b.producer_id >= 0 and b.base_sequence >= 0 for p in (0, 1) for b in mockbroker.batches("out", p))


def test_sink_takes_the_topic_from_each_row(spark: SparkSession, mockbroker: MockBroker,
                                            spark_options: Options) -> None:
    mockbroker.create_topic("a")
    mockbroker.create_topic("b")
    df = spark.createDataFrame([("a", "1"), ("b", "2"), ("a", "3")], "topic string, value string").coalesce(1)

    df.write.format("kafka").options(**spark_options()).save()

    assert [r.value for r in mockbroker.records("a")] == [b"1", b"3"]
    assert [r.value for r in mockbroker.records("b")] == [b"2"]


def test_streaming_sink_copies_a_topic_with_keys_values_and_headers(spark: SparkSession, mockbroker: MockBroker,
                                                                    spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("source", partitions=2)
    mockbroker.create_topic("copy")
    produce(mockbroker, "source", [{"partition": i % 2, "key": f"k{i}", "value": f"v{i}", "headers": [("i", str(i))]}
                                   for i in range(4)])

    stream = read_stream(spark, spark_options(subscribe="source", startingOffsets="earliest", includeHeaders=True))
    out = stream.selectExpr("key", "upper(cast(value AS string)) AS value", "headers")
    run_available_now(out.writeStream.format("kafka").options(**spark_options(topic="copy"))
                      .option("checkpointLocation", str(tmp_path / "checkpoint")))

    copied = sorted((r.key, r.value, tuple(r.headers)) for r in mockbroker.records("copy"))
    assert copied == [(f"k{i}".encode(), f"V{i}".encode(), (("i", str(i).encode()),)) for i in range(4)]
