"""Twin of tests/spark/test_spark_headers_sink.py: the includeHeaders option and Spark's Kafka sink.

The source turns a record's headers into array<struct<key: string, value: binary>> (null when the
record has none); the sink sends each row with a cached, otherwise default (so idempotent) producer:
key, value, headers, and the partition column when there is one.
"""

from __future__ import annotations

import pytest

from mockbroker import MockBroker
from tests.spark_twin.twin import SparkCallError, SparkTwin

pytestmark = [pytest.mark.interop, pytest.mark.java]


def test_include_headers_reads_headers_in_order_with_null_values(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("traced")
    twin.produce("traced", [
        {"value": "with", "headers": [{"key": "trace", "value": "t-1"}, {"key": "empty", "value": None}]},
        {"value": "without"},
        {"value": "repeated", "headers": [{"key": "dup", "value": "1"}, {"key": "dup", "value": "2"}]},
        {"value": "binary", "headers": [{"key": "raw", "value_b64": "AP8="}]},
    ])

    with_headers = twin.read(subscribe="traced", includeHeaders="true").rows
    without = twin.read(subscribe="traced").rows

    assert [r.headers for r in with_headers] == [
        (("trace", b"t-1"), ("empty", None)),
        None,  # no headers: a null column, not an empty array
        (("dup", b"1"), ("dup", b"2")),
        (("raw", b"\x00\xff"),),
    ]
    assert all(r.headers is None for r in without)


def test_sink_writes_keys_values_headers_and_partitions(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("out", partitions=2)

    twin.write([
        {"key": "k1", "value": "v1", "headers": [{"key": "h", "value": "x"}, {"key": "n", "value": None}]},
        {"value": "v2"},
        {"key": "k3", "value": "v3", "partition": 1},
    ], topic="out")

    by_value = {r.value: (r.key, tuple(r.headers)) for r in mockbroker.records("out")}
    assert by_value == {b"v1": (b"k1", (("h", b"x"), ("n", None))), b"v2": (None, ()), b"v3": (b"k3", ())}
    assert [r.value for r in mockbroker.records("out", partition=1) if r.key == b"k3"] == [b"v3"]
    # Spark sets no producer configs of its own: Kafka's defaults make the producer idempotent.
    assert all(b.producer_id >= 0 and b.base_sequence >= 0 for p in (0, 1) for b in mockbroker.batches("out", p))


def test_sink_reuses_its_cached_producer_and_takes_the_topic_from_rows(twin: SparkTwin,
                                                                       mockbroker: MockBroker) -> None:
    mockbroker.create_topic("a")
    mockbroker.create_topic("b")

    twin.write([{"topic": "a", "value": "1"}, {"topic": "b", "value": "2"}])
    twin.write([{"topic": "a", "value": "3"}])

    assert [r.value for r in mockbroker.records("a")] == [b"1", b"3"]
    assert [r.value for r in mockbroker.records("b")] == [b"2"]
    assert len({b.producer_id for b in mockbroker.batches("a")}) == 1, "one producer from the cache"
    with pytest.raises(SparkCallError) as failure:
        twin.write([{"value": "nowhere"}])
    assert failure.value.condition == "KAFKA_NULL_TOPIC_IN_DATA"


def test_sink_output_reads_back_through_the_source(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("roundtrip")
    twin.write([{"key": f"k{i}", "value": f"v{i}", "headers": [{"key": "i", "value": str(i)}]} for i in range(3)],
               topic="roundtrip")

    rows = twin.read(subscribe="roundtrip", includeHeaders="true").rows

    assert [(r.key, r.value, r.headers) for r in rows] == [
        (f"k{i}".encode(), f"v{i}".encode(), (("i", str(i).encode()),)) for i in range(3)]
