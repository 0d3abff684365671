"""Twin of tests/spark/test_spark_batch.py: spark.read.format("kafka") with its offset options.

Batch reads resolve their starting and ending offsets on the driver (an Admin: describeTopics,
listOffsets) and read each partition on an executor (a consumer: assign, seek, poll), resolving
"earliest"/"latest" there against seekToBeginning/seekToEnd.
"""

from __future__ import annotations

import json

import pytest

from mockbroker import MockBroker
from tests.spark_twin.twin import Row, SparkCallError, SparkTwin

pytestmark = [pytest.mark.interop, pytest.mark.java]


def fill(twin: SparkTwin, topic: str, partitions: int, per_partition: int, *, base_ts: int = 1_000_000) -> None:
    """Records "p{p}-{i}" keyed "k{i}", timestamps base_ts + 1000 * i, in every partition."""
    records = [{"partition": p, "key": f"k{i}", "value": f"p{p}-{i}", "timestamp": base_ts + 1000 * i}
               for p in range(partitions) for i in range(per_partition)]
    twin.produce(topic, records)


def test_batch_read_from_earliest_to_latest_returns_every_record(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("events", partitions=2)
    fill(twin, "events", 2, 3)

    result = twin.read(subscribe="events", startingOffsets="earliest", endingOffsets="latest")

    assert result.rows == sorted(
        Row("events", p, i, f"k{i}".encode(), f"p{p}-{i}".encode(), 1_000_000 + 1000 * i, 0)
        for p in range(2) for i in range(3))
    # The driver leaves earliest/latest to the executors (-2/-1), which resolve them themselves.
    assert [(r["from"], r["until"]) for r in result.of_type("plan")[0]["ranges"]] == [(-2, -1), (-2, -1)]
    assert {(r["resolved_from"], r["resolved_until"]) for r in result.of_type("range_read")} == {(0, 3)}
    # The calls and configs Spark makes: an Admin describes the topic, consumers never join a group.
    assert result.calls("describeTopics")
    executor = result.of_type("configs")[0]["executor"]
    assert executor["auto.offset.reset"] == "none"
    assert executor["enable.auto.commit"] == "false"
    assert executor["group.id"].startswith("spark-kafka-relation-") and executor["group.id"].endswith("-executor")
    assert executor["key.deserializer"] == "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    driver = result.of_type("configs")[0]["driver"]
    assert (driver["max.poll.records"], driver["auto.offset.reset"]) == ("1", "earliest")


def test_batch_read_defaults_to_earliest_and_latest(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("defaults")
    fill(twin, "defaults", 1, 4)

    assert [r.offset for r in twin.read(subscribe="defaults").rows] == [0, 1, 2, 3]


def test_batch_read_between_json_offsets(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ranges", partitions=2)
    fill(twin, "ranges", 2, 5)

    result = twin.read(subscribe="ranges",
                       startingOffsets=json.dumps({"ranges": {"0": 1, "1": -2}}),
                       endingOffsets=json.dumps({"ranges": {"0": 3, "1": -1}}))

    assert [(r.partition, r.offset) for r in result.rows] == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4)]


def test_batch_read_of_assigned_partitions(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("assigned", partitions=3)
    fill(twin, "assigned", 3, 2)

    result = twin.read(assign=json.dumps({"assigned": [2]}))

    assert [(r.partition, r.offset) for r in result.rows] == [(2, 0), (2, 1)]


def test_batch_read_starting_by_timestamp(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("timed", partitions=2)
    fill(twin, "timed", 2, 5)  # timestamps 1_000_000, 1_001_000, ... 1_004_000

    result = twin.read(subscribe="timed",
                       startingOffsetsByTimestamp=json.dumps({"timed": {"0": 1_002_500, "1": 1_000_000}}),
                       endingOffsetsByTimestamp=json.dumps({"timed": {"0": 1_004_000, "1": 1_001_000}}))

    # Start: the first offset whose timestamp is >= the given one; end: the same, exclusive.
    assert [(r.partition, r.offset) for r in result.rows] == [(0, 3), (1, 0)]
    spec_calls = result.calls("listOffsets")
    assert [c["spec"] for c in spec_calls] == ["timestamp", "timestamp"]


def test_batch_read_from_a_global_starting_timestamp(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("global-ts", partitions=2)
    fill(twin, "global-ts", 2, 4)

    result = twin.read(subscribe="global-ts", startingTimestamp=1_002_000)

    assert [(r.partition, r.offset) for r in result.rows] == [(0, 2), (0, 3), (1, 2), (1, 3)]


def test_batch_read_by_timestamp_past_the_last_record(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("late", partitions=1)
    fill(twin, "late", 1, 3)
    after_all = json.dumps({"late": {"0": 9_999_999}})

    # No offset for the timestamp: a starting offset fails (the default strategy "error")...
    with pytest.raises(SparkCallError, match="No offset matched") as failure:
        twin.read(subscribe="late", startingOffsetsByTimestamp=after_all)
    # Spark's offset reader retries every failure (fetchOffset.numRetries, 3) before giving up.
    assert len([line for line in failure.value.lines if line["type"] == "retry"]) == 3
    # ...or starts at the latest offset with startingOffsetsByTimestampStrategy=latest; an ending one is latest.
    assert twin.read(subscribe="late", startingOffsetsByTimestamp=after_all,
                     startingOffsetsByTimestampStrategy="latest").rows == []
    assert [r.offset for r in twin.read(subscribe="late", endingOffsetsByTimestamp=after_all).rows] == [0, 1, 2]


def test_batch_read_rejects_what_spark_rejects(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("strict")
    with pytest.raises(SparkCallError, match="starting offset can't be latest"):
        twin.read(subscribe="strict", startingOffsets="latest")
    with pytest.raises(SparkCallError, match="auto.offset.reset"):
        twin.read(subscribe="strict", **{"kafka.auto.offset.reset": "earliest"})
