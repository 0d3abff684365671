"""Twin of tests/spark/test_spark_streaming.py: spark.readStream.format("kafka") across micro-batches.

Each trigger asks the Admin for the latest offsets, plans one range per partition that moved (new
partitions from their earliest offset) and reads them with consumers kept between batches.
"""

from __future__ import annotations

import json

import pytest

from mockbroker import MockBroker
from tests.spark_twin.twin import SparkTwin

pytestmark = [pytest.mark.interop, pytest.mark.java]


def values(n: int, start: int = 0, prefix: str = "v") -> list[dict[str, str]]:
    return [{"value": f"{prefix}{i}"} for i in range(start, start + n)]


def test_available_now_reads_what_was_there_when_it_started(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("backlog", partitions=2)
    twin.produce("backlog", [{"partition": i % 2, "value": f"v{i}"} for i in range(6)])

    stream = twin.stream(subscribe="backlog", startingOffsets="earliest")
    stream.available_now()

    assert sorted((r.value or b"") for r in stream.rows) == [f"v{i}".encode() for i in range(6)]
    assert len(stream.batches) == 1
    # Started again later, AvailableNow picks up only what came since (the committed offsets).
    twin.produce("backlog", [{"partition": 0, "value": "late"}])
    stream.available_now()
    assert [r.value for r in stream.batches[-1].rows] == [b"late"]


def test_stream_starting_at_latest_skips_the_backlog(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("fresh")
    twin.produce("fresh", values(3))

    stream = twin.stream(subscribe="fresh")  # streaming queries start at "latest" by default
    assert stream.initial_offsets == {"fresh": {"0": 3}}
    first = stream.trigger()  # the first batch always runs, here with nothing in it
    assert first.rows == []
    twin.produce("fresh", values(2, start=3))
    assert [r.value for r in stream.trigger().rows] == [b"v3", b"v4"]


def test_processing_time_triggers_read_each_record_once_across_batches(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ticks", partitions=2)
    stream = twin.stream(subscribe="ticks", startingOffsets="earliest")

    for chunk in range(3):
        twin.produce("ticks", [{"partition": i % 2, "value": f"c{chunk}-{i}"} for i in range(4)])
        batch = stream.trigger()
        assert sorted((r.value or b"") for r in batch.rows) == sorted(f"c{chunk}-{i}".encode() for i in range(4))
    assert stream.trigger().of_type("no_batch"), "no new data: no batch"

    offsets = [b.of_type("batch")[0] for b in stream.batches]
    assert [o["batch_id"] for o in offsets] == [0, 1, 2]
    assert offsets[-1]["end"] == {"ticks": {"0": 6, "1": 6}}
    # Consumers are kept between batches: one consumer group id for the query's executors.
    group_ids = {line["group_id"] for b in stream.batches for line in b.of_type("range_read")}
    assert len(group_ids) == 1 and next(iter(group_ids)).startswith("spark-kafka-source-")


def test_triggers_while_a_producer_writes_see_every_record_exactly_once(twin: SparkTwin,
                                                                        mockbroker: MockBroker) -> None:
    mockbroker.create_topic("live")
    stream = twin.stream(subscribe="live", startingOffsets="earliest")
    twin.call("produce_background", bootstrap=mockbroker.bootstrap_servers, topic="live", count=40, pause_ms=5)

    for _ in range(200):  # bounded: triggers until the producer is done and everything is read
        stream.trigger()
        done = twin.call("join_background", timeout_ms=0).of_type("background_done")[0]
        if done["finished"] and len(stream.rows) >= done["sent"]:
            break
    else:
        raise AssertionError("the stream did not catch up with the producer")
    assert done["errors"] == 0
    assert [r.value for r in stream.rows] == [f"v{i}".encode() for i in range(40)]
    assert [r.offset for r in stream.rows] == list(range(40))


def test_partitions_added_while_running_are_read_from_their_start(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("growing", partitions=1)
    stream = twin.stream(subscribe="growing", startingOffsets="earliest")
    twin.produce("growing", [{"partition": 0, "value": "p0"}])
    assert [r.value for r in stream.trigger().rows] == [b"p0"]

    twin.admin({"op": "createPartitions", "topic": "growing", "count": 3})
    twin.produce("growing", [{"partition": 1, "value": "p1"}, {"partition": 2, "value": "p2"}])
    batch = stream.trigger()

    assert [(r.partition, r.value) for r in batch.rows] == [(1, b"p1"), (2, b"p2")]
    assert batch.of_type("partitions_added")[0]["offsets"] == {"growing": {"1": 0, "2": 0}}


def test_topics_matching_a_pattern_are_picked_up_while_running(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders-eu")
    mockbroker.create_topic("audit")
    twin.produce("orders-eu", [{"value": "eu"}])
    twin.produce("audit", [{"value": "not me"}])
    stream = twin.stream(subscribePattern="orders-.*", startingOffsets="earliest")
    assert [r.value for r in stream.trigger().rows] == [b"eu"]

    mockbroker.create_topic("orders-us", partitions=2)
    twin.produce("orders-us", [{"partition": 1, "value": "us"}])
    batch = stream.trigger()

    assert [(r.topic, r.partition, r.value) for r in batch.rows] == [("orders-us", 1, b"us")]
    assert batch.calls("listTopics")[0]["matched"] == ["orders-eu", "orders-us"]


def test_stream_from_json_offsets_and_by_timestamp(twin: SparkTwin, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("resume", partitions=2)
    twin.produce("resume", [{"partition": p, "value": f"{p}-{i}", "timestamp": 5000 + i}
                            for p in range(2) for i in range(4)])

    from_offsets = twin.stream(subscribe="resume", startingOffsets=json.dumps({"resume": {"0": 2, "1": -2}}))
    assert from_offsets.initial_offsets == {"resume": {"0": 2, "1": 0}}
    assert [(r.partition, r.offset) for r in from_offsets.trigger().rows] == [(0, 2), (0, 3), (1, 0), (1, 1),
                                                                              (1, 2), (1, 3)]

    by_time = twin.stream(subscribe="resume", startingTimestamp=5003)
    assert by_time.initial_offsets == {"resume": {"0": 3, "1": 3}}
    assert [(r.partition, r.offset) for r in by_time.trigger().rows] == [(0, 3), (1, 3)]
