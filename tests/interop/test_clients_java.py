"""The Java client (kafka-clients 4.3.0, through tests/interop/harness/java) against mockbroker: produce and
consume with every codec, seek into a batch, offsetsForTimes, and the AdminClient calls Spark's Kafka
source makes (listTopics, describeTopics, listOffsets earliest / latest / max_timestamp / by timestamp).

Each harness run is a JVM start (about a second on 2 cores), so the work is batched into few runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mockbroker import MockBroker
from tests.interop.clients import of_type, require_java, run_java
from tests.interop.workload import (
    BASE_TS,
    CODECS,
    PARTITIONS,
    Rec,
    Target,
    assert_log,
    assert_same_records,
    dataset,
    from_json,
    offset_for_time,
    to_json,
    with_offsets,
)

pytestmark = [pytest.mark.interop, pytest.mark.java]

TIMEOUT_MS = 15_000


def produce(bootstrap: str, topic: str, recs: list[Rec], codec: str, **config: Any) -> list[tuple[int, int]]:
    """One producer run (all records in flight, then flush); (partition, offset) of each record."""
    lines = run_java("produce", {"bootstrap": bootstrap, "topic": topic, "records": [to_json(r) for r in recs],
                                 "config": {"compression.type": codec, "linger.ms": 20, **config},
                                 "timeout_ms": TIMEOUT_MS})
    assert of_type(lines, "send_error") == [], lines
    assert of_type(lines, "done") == [{"type": "done", "sent": len(recs), "failed": 0}]
    return [(s["partition"], s["offset"]) for s in sorted(of_type(lines, "sent"), key=lambda s: s["index"])]


def consume(bootstrap: str, **args: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One consumer run (assign + seek, until the end offsets): its record lines and its done line."""
    lines = run_java("consume", {"bootstrap": bootstrap, "until_end": True, "timeout_ms": TIMEOUT_MS, **args})
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end", lines
    return lines, done


def test_java_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"java-{codec}") for codec in CODECS}
    sent = {codec: dataset(codec) for codec in CODECS}
    # One producer per codec (compression.type is per producer): JVMs side by side to save wall time.
    with ThreadPoolExecutor(max_workers=2) as pool:
        offsets = dict(zip(CODECS, pool.map(lambda c: produce(target.bootstrap, topics[c], sent[c], c), CODECS),
                           strict=True))
    for codec in CODECS:
        assert offsets[codec] == [(r.partition, r.offset) for r in with_offsets(sent[codec])]

    lines, done = consume(target.bootstrap, topics=list(topics.values()), seek="beginning")
    records = of_type(lines, "record")
    assert {r["timestamp_type"] for r in records} == {"CreateTime"}
    assert {r["leader_epoch"] for r in records} == {0}  # the partition leader epoch the broker stamped
    for codec, topic in topics.items():
        assert_same_records([from_json(r) for r in records if r["topic"] == topic], sent[codec])
    assert {(p["topic"], p["offset"]) for p in done["positions"]} == {(t, 4) for t in topics.values()}
    if target.broker is not None:
        for codec, topic in topics.items():
            assert_log(target.broker, topic, sent[codec], codec)


def test_java_consumer_seeks_into_the_middle_of_a_batch(mockbroker: MockBroker) -> None:
    """Partition 0: one zstd batch of 6 records, seek to offset 4: the broker returns the whole batch, the
    client skips 0-3. Partition 1 (2 records): seek to 100, out of range: the client resets to the earliest.
    The consumer's fetch sizes are smaller than a batch (a fetch still returns one whole batch, KIP-74).
    The same producer run also writes to an unknown topic, which is auto-created."""
    mockbroker.create_topic("java-seek", 2)
    recs = [Rec(partition, None, b"k%d" % i, b"v%d " % i * 20, (), BASE_TS + i)
            for partition, n in [(0, 6), (1, 2)] for i in range(n)]
    lines = run_java("produce", {"bootstrap": mockbroker.bootstrap_servers, "records": [
        *(to_json(r, topic="java-seek") for r in recs), {"topic": "java-auto", "key": "a", "value": "auto"}],
        "config": {"compression.type": "zstd", "linger.ms": 1000}, "timeout_ms": TIMEOUT_MS})
    assert of_type(lines, "done") == [{"type": "done", "sent": 9, "failed": 0}], lines
    [batch] = mockbroker.batches("java-seek", 0)
    assert (batch.base_offset, batch.record_count, batch.codec.name, batch.size > 64) == (0, 6, "ZSTD", True)
    assert mockbroker.topics() == ["java-auto", "java-seek"]
    assert [(r.partition, r.offset, r.value) for r in mockbroker.records("java-auto")] == [(0, 0, b"auto")]

    lines, done = consume(mockbroker.bootstrap_servers, topic="java-seek", seek={"0": 4, "1": 100},
                          config={"max.partition.fetch.bytes": 64, "fetch.max.bytes": 64})
    assert sorted((r["partition"], r["offset"], r["key"]) for r in of_type(lines, "record")) == [
        (0, 4, "k4"), (0, 5, "k5"), (1, 0, "k0"), (1, 1, "k1")]
    assert done["positions"] == [{"topic": "java-seek", "partition": 0, "offset": 6},
                                 {"topic": "java-seek", "partition": 1, "offset": 2}]


# -- offsets by time: one topic with explicit timestamps, read by the consumer and the AdminClient ------


TIMES = dataset("times")
LAST_TS = max(r.timestamp or 0 for r in TIMES)


@pytest.fixture(scope="module")
def times_broker() -> Iterator[MockBroker]:
    """A broker holding TIMES in topic "java-times" (written once by the Java producer, for two tests)."""
    require_java()
    with MockBroker(port=0).run_in_thread() as broker:
        broker.create_topic("java-times", PARTITIONS)
        produce(broker.bootstrap_servers, "java-times", TIMES, "snappy")
        yield broker


def test_java_consumer_offsets_for_times_seeks_to_explicit_timestamps(times_broker: MockBroker) -> None:
    query = BASE_TS + 4500
    lines, _ = consume(times_broker.bootstrap_servers, topic="java-times", seek={"timestamp": query})
    found = {f["partition"]: (f["offset"], f["timestamp"]) for f in of_type(lines, "offset_for_time")}
    assert found == {p: offset_for_time(TIMES, p, query) for p in range(PARTITIONS)}
    # The consumer read each partition from there on.
    expected = [r for r in with_offsets(TIMES) if r.timestamp is not None and r.timestamp >= query]
    got = [from_json(r) for r in of_type(lines, "record")]
    assert sorted(got, key=lambda r: (r.partition, r.offset)) == sorted(expected, key=lambda r: (r.partition,
                                                                                                r.offset))


def test_java_admin_lists_topics_describes_them_and_lists_offsets(times_broker: MockBroker) -> None:
    """What Spark's Kafka source asks the AdminClient for: topics, their partitions, offsets of every kind."""
    queries = [0, BASE_TS, BASE_TS + 4500, LAST_TS, LAST_TS + 1]
    ops: list[dict[str, Any]] = [
        {"op": "listTopics"},
        {"op": "describeTopics", "topics": ["java-times"]},
        {"op": "listOffsets", "topic": "java-times", "spec": "earliest"},
        {"op": "listOffsets", "topic": "java-times", "spec": "latest"},
        {"op": "listOffsets", "topic": "java-times", "spec": "latest", "isolation_level": "read_committed"},
        {"op": "listOffsets", "topic": "java-times", "spec": "max_timestamp"},
        *({"op": "listOffsets", "topic": "java-times", "spec": {"timestamp": ts}} for ts in queries),
    ]
    lines = run_java("admin", {"bootstrap": times_broker.bootstrap_servers, "ops": ops, "timeout_ms": TIMEOUT_MS})
    assert of_type(lines, "error") == [], lines
    listed, described, earliest, latest, latest_committed, max_ts, *by_time = of_type(lines, "result")

    assert listed["names"] == ["java-times"]
    [topic] = described["topics"]
    assert topic["name"] == "java-times" and topic["internal"] is False
    assert topic["topic_id"] == listed["topics"][0]["topic_id"] != "AAAAAAAAAAAAAAAAAAAAAA"
    assert topic["partitions"] == [{"partition": p, "leader": 1, "replicas": [1], "isr": [1], "elr": []}
                                   for p in range(PARTITIONS)]

    def answers(result: dict[str, Any]) -> dict[int, tuple[int, int]]:
        assert all("error" not in o for o in result["offsets"]), result
        return {o["partition"]: (o["offset"], o["timestamp"]) for o in result["offsets"]}

    per_partition = len(TIMES) // PARTITIONS
    assert answers(earliest) == {p: (0, -1) for p in range(PARTITIONS)}
    assert answers(latest) == {p: (per_partition, -1) for p in range(PARTITIONS)}
    assert answers(latest_committed) == {p: (per_partition, -1) for p in range(PARTITIONS)}
    last = {r.partition: r for r in with_offsets(TIMES)}  # the last record of each partition: its max timestamp
    assert answers(max_ts) == {p: (last[p].offset, last[p].timestamp) for p in range(PARTITIONS)}
    for ts, result in zip(queries, by_time, strict=True):
        # Kafka's answer for "no record at or after ts": offset -1, timestamp -1 (the client shows it as such)
        assert answers(result) == {p: offset_for_time(TIMES, p, ts) or (-1, -1) for p in range(PARTITIONS)}, ts
