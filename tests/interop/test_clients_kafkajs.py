"""KafkaJS (through tests/interop/harness/node) against mockbroker: produce with every codec, consume, seek
into a batch, offsets by time (admin and consumer), metadata.

KafkaJS sends no null header values (the harness refuses them, KafkaJS would throw) and consumes only
within a consumer group: the consumer tests skip while the broker's ApiVersions lacks JoinGroup.
Its snappy is raw snappy (not the xerial framing of Java and librdkafka), its lz4 and zstd come from
the pure-JS codecs the harness plugs in.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker import MockBroker, dispatch
from tests.interop.clients import of_type, run_kafkajs
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

# No 3 s wait for more members before a new group's first rebalance (the CLI broker is started so too).
pytestmark = [pytest.mark.interop, pytest.mark.mockbroker(config={"group.initial.rebalance.delay.ms": 0})]

JOIN_GROUP = 11
TIMEOUT_MS = 15_000


def require_groups() -> None:
    if JOIN_GROUP not in {key for key, _, _ in dispatch.supported_versions()}:
        pytest.skip("KafkaJS consumes only in a consumer group, and the broker does not serve JoinGroup "
                    "(key 11) yet")


def produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> None:
    """One sendBatch of every record (one batch per partition)."""
    lines = run_kafkajs("produce", {"bootstrap": bootstrap, "topic": topic, "records": [to_json(r) for r in recs],
                                    "compression": codec, "timeout_ms": TIMEOUT_MS})
    assert of_type(lines, "send_error") == [], lines
    assert of_type(lines, "done") == [{"type": "done", "sent": len(recs), "failed": 0}], lines
    batches = of_type(lines, "sent_batch")
    assert sorted((b["partition"], b["base_offset"], b["error_code"]) for b in batches) == [
        (p, 0, 0) for p in sorted({r.partition for r in recs})]


def consume(bootstrap: str, **args: Any) -> list[Rec]:
    """One consumer run (its own group), until the end offsets; the records read, topic by topic."""
    lines = run_kafkajs("consume", {"bootstrap": bootstrap, "until_end": True, "timeout_ms": TIMEOUT_MS, **args})
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end", lines
    return [from_json(r) for r in of_type(lines, "record")]


def test_kafkajs_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"kafkajs-{codec}") for codec in CODECS}
    sent = {codec: dataset(codec, null_header_values=False) for codec in CODECS}
    for codec, topic in topics.items():
        produce(target.bootstrap, topic, sent[codec], codec)
    if target.broker is not None:
        for codec, topic in topics.items():
            assert_log(target.broker, topic, sent[codec], codec)

    require_groups()
    lines = run_kafkajs("consume", {"bootstrap": target.bootstrap, "topics": list(topics.values()),
                                    "until_end": True, "timeout_ms": TIMEOUT_MS})
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end", lines
    records = of_type(lines, "record")
    for codec, topic in topics.items():
        assert_same_records([from_json(r) for r in records if r["topic"] == topic], sent[codec])


def test_kafkajs_consumer_seeks_into_the_middle_of_a_batch(mockbroker: MockBroker) -> None:
    """One gzip batch of 6 records; seek to offset 4: the broker returns the whole batch, the client skips 0-3."""
    require_groups()
    mockbroker.create_topic("kafkajs-seek", 1)
    produce(mockbroker.bootstrap_servers, "kafkajs-seek",
            [Rec(0, None, b"k%d" % i, b"v%d " % i * 20, (), BASE_TS + i) for i in range(6)], "gzip")
    [batch] = mockbroker.batches("kafkajs-seek")
    assert (batch.base_offset, batch.record_count, batch.codec.name) == (0, 6, "GZIP")
    got = consume(mockbroker.bootstrap_servers, topic="kafkajs-seek", seek={"0": 4})
    assert [(r.offset, r.key) for r in got] == [(4, b"k4"), (5, b"k5")]


def test_kafkajs_admin_offsets_by_time_and_metadata(mockbroker: MockBroker) -> None:
    """Admin calls need no group: fetchTopicOffsetsByTimestamp, fetchTopicOffsets, fetchTopicMetadata, listTopics."""
    mockbroker.create_topic("kafkajs-times", PARTITIONS)
    sent = dataset("times", null_header_values=False)
    produce(mockbroker.bootstrap_servers, "kafkajs-times", sent, "zstd")
    last = max(r.timestamp or 0 for r in sent)
    queries = [0, BASE_TS + 4500, last, last + 1]
    ops = [{"op": "listTopics"}, {"op": "fetchTopicMetadata", "topics": ["kafkajs-times"]},
           {"op": "fetchTopicOffsets", "topic": "kafkajs-times"},
           *({"op": "fetchTopicOffsetsByTimestamp", "topic": "kafkajs-times", "timestamp": ts} for ts in queries)]
    lines = run_kafkajs("admin", {"bootstrap": mockbroker.bootstrap_servers, "ops": ops, "timeout_ms": TIMEOUT_MS})
    assert of_type(lines, "error") == [], lines
    listed, metadata, offsets, *by_time = of_type(lines, "result")

    assert listed["names"] == ["kafkajs-times"]
    assert metadata["topics"] == [{"name": "kafkajs-times", "partitions": [
        {"partition": p, "leader": 1, "replicas": [1], "isr": [1], "error_code": 0} for p in range(PARTITIONS)]}]
    assert offsets["offsets"] == [{"partition": p, "low": 0, "high": 4, "offset": 4} for p in range(PARTITIONS)]
    for ts, result in zip(queries, by_time, strict=True):
        # KafkaJS turns "no record at or after ts" (offset -1) into the high watermark
        expected = [{"partition": p, "offset": (offset_for_time(sent, p, ts) or (4, -1))[0]} for p in range(PARTITIONS)]
        assert result["offsets"] == expected, ts


def test_kafkajs_consumer_seeks_by_timestamp(mockbroker: MockBroker) -> None:
    require_groups()
    mockbroker.create_topic("kafkajs-tseek", PARTITIONS)
    sent = dataset("tseek", null_header_values=False)
    produce(mockbroker.bootstrap_servers, "kafkajs-tseek", sent, "lz4")
    query = BASE_TS + 4500
    got = consume(mockbroker.bootstrap_servers, topic="kafkajs-tseek", seek={"timestamp": query})
    expected = [r for r in with_offsets(sent) if (r.timestamp or 0) >= query]
    assert sorted(got) == sorted(expected)
