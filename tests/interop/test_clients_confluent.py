"""confluent-kafka (librdkafka) against mockbroker: produce and consume with every codec, seek into a batch,
offsets by time."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, cast

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from mockbroker import MockBroker
from tests.interop.workload import (
    BASE_TS,
    CODECS,
    PARTITIONS,
    Rec,
    Target,
    assert_log,
    assert_same_records,
    dataset,
    librdkafka_lz4_off_reason,
    offset_for_time,
    with_offsets,
)

pytestmark = pytest.mark.interop

TIMEOUT = 15.0
LZ4_OFF_REASON = librdkafka_lz4_off_reason()


def produce(bootstrap: str, topic: str, recs: list[Rec], codec: str, **config: Any) -> list[tuple[int, int]]:
    """Send every record, flush; (partition, offset) of each, in send order (delivery errors fail)."""
    p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20, **config})
    reports: dict[int, tuple[int, int]] = {}
    errors: list[Any] = []

    def on_delivery(i: int) -> Any:
        return lambda err, msg: errors.append((i, err)) if err else reports.__setitem__(i, (msg.partition(),
                                                                                           msg.offset()))

    for i, r in enumerate(recs):
        p.produce(topic, r.value, r.key, partition=r.partition, timestamp=r.timestamp or 0,
                  headers=list(r.headers), on_delivery=on_delivery(i))
    assert p.flush(TIMEOUT) == 0
    assert errors == []
    return [reports[i] for i in range(len(recs))]


def consumer(bootstrap: str) -> Consumer:
    # group.id is required by the Consumer even when it only assigns; nothing here commits.
    return Consumer({"bootstrap.servers": bootstrap, "group.id": "confluent-interop", "enable.auto.commit": False,
                     "auto.offset.reset": "earliest"})


def read(c: Consumer, count: int) -> dict[str, list[Rec]]:
    """Poll until `count` records arrived (or TIMEOUT), by topic; a consumer error fails."""
    out: dict[str, list[Rec]] = defaultdict(list)
    deadline = time.monotonic() + TIMEOUT
    while sum(map(len, out.values())) < count and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        error = m.error()
        if error is not None:
            # end of a partition, or its offset reset after OFFSET_OUT_OF_RANGE (auto.offset.reset)
            assert error.code() in (KafkaError._PARTITION_EOF, KafkaError._AUTO_OFFSET_RESET), error
            continue
        headers = cast(list[tuple[str, bytes | None]], m.headers() or [])
        out[cast(str, m.topic())].append(Rec(cast(int, m.partition()), m.offset(), m.key(), m.value(),
                                             tuple(headers), m.timestamp()[1]))
    return out


def test_confluent_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"ck-{codec}") for codec in CODECS}
    sent = {codec: dataset(codec) for codec in CODECS}
    for codec, topic in topics.items():
        assert produce(target.bootstrap, topic, sent[codec], codec) == [(r.partition, r.offset)
                                                                       for r in with_offsets(sent[codec])]
    c = consumer(target.bootstrap)
    try:
        c.assign([TopicPartition(topic, p, 0) for topic in topics.values() for p in range(PARTITIONS)])
        got = read(c, sum(map(len, sent.values())))
    finally:
        c.close()
    for codec, topic in topics.items():
        assert_same_records(got[topic], sent[codec])
    if target.broker is not None:
        for codec, topic in topics.items():
            # lz4: see test_confluent_lz4_batches_are_stored_lz4_compressed
            assert_log(target.broker, topic, sent[codec], None if codec == "lz4" and LZ4_OFF_REASON else codec)


@pytest.mark.xfail(LZ4_OFF_REASON is not None, reason=LZ4_OFF_REASON or "", strict=True)
def test_confluent_lz4_batches_are_stored_lz4_compressed(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ck-lz4", PARTITIONS)
    sent = dataset("lz4")
    produce(mockbroker.bootstrap_servers, "ck-lz4", sent, "lz4")
    assert_log(mockbroker, "ck-lz4", sent, "lz4")


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_confluent_consumer_seeks_into_the_middle_of_a_batch(mockbroker: MockBroker, codec: str) -> None:
    """Partition 0: one batch of 6 records, seek to offset 4: the broker returns the whole batch, the client
    skips 0-3. Partition 1 (2 records): start at 100, out of range: the client resets to the earliest."""
    mockbroker.create_topic("ck-seek", 2)
    recs = [Rec(partition, None, b"k%d" % i, b"v%d " % i * 20, (), BASE_TS + i)
            for partition, n in [(0, 6), (1, 2)] for i in range(n)]
    assert produce(mockbroker.bootstrap_servers, "ck-seek", recs, codec, **{"linger.ms": 500}) == [
        *((0, i) for i in range(6)), (1, 0), (1, 1)]
    [batch] = mockbroker.batches("ck-seek")
    assert (batch.base_offset, batch.record_count, batch.codec.name.lower()) == (0, 6, codec)

    c = consumer(mockbroker.bootstrap_servers)
    try:
        c.assign([TopicPartition("ck-seek", 0, 0), TopicPartition("ck-seek", 1, 100)])
        c.seek(TopicPartition("ck-seek", 0, 4))
        got = read(c, 4)["ck-seek"]
        positions = c.position([TopicPartition("ck-seek", 0), TopicPartition("ck-seek", 1)])
        assert [tp.offset for tp in positions] == [6, 2]
    finally:
        c.close()
    assert sorted((r.partition, r.offset, r.key) for r in got) == [(0, 4, b"k4"), (0, 5, b"k5"), (1, 0, b"k0"),
                                                                   (1, 1, b"k1")]


def test_confluent_reads_batches_larger_than_its_fetch_sizes_and_auto_creates_topics(mockbroker: MockBroker) -> None:
    """A fetch returns at least one whole batch even when it is larger than the fetch limits (KIP-74); a
    producer's first send to an unknown topic creates it (auto.create.topics.enable, 1 partition)."""
    sent = [Rec(0, None, b"k%d" % i, b"%04d" % i * 100, (), BASE_TS + i) for i in range(12)]
    produce(mockbroker.bootstrap_servers, "ck-auto", sent, "none")
    assert mockbroker.topics() == ["ck-auto"]
    assert all(b.size > 1000 for b in mockbroker.batches("ck-auto"))
    c = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": "confluent-interop",
                  "enable.auto.commit": False, "max.partition.fetch.bytes": 100,
                  # librdkafka's floor for fetch.max.bytes is message.max.bytes, whose floor is 1000
                  "fetch.max.bytes": 1000, "message.max.bytes": 1000})
    try:
        c.assign([TopicPartition("ck-auto", 0, 0)])
        assert_same_records(read(c, len(sent))["ck-auto"], sent)
    finally:
        c.close()


def test_confluent_offsets_for_times_finds_explicit_timestamps(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ck-times", PARTITIONS)
    sent = dataset("times")
    produce(mockbroker.bootstrap_servers, "ck-times", sent, "gzip")
    last = max(r.timestamp or 0 for r in sent)
    c = consumer(mockbroker.bootstrap_servers)
    try:
        for ts in [0, BASE_TS, BASE_TS + 4500, BASE_TS + 9000, last, last + 1]:
            found = c.offsets_for_times([TopicPartition("ck-times", p, ts) for p in range(PARTITIONS)], TIMEOUT)
            assert all(tp.error is None for tp in found), found
            # librdkafka answers the offset only (-1: no such record, i.e. the end)
            got = {tp.partition: tp.offset for tp in found}
            expected = {p: (offset_for_time(sent, p, ts) or (-1, -1))[0] for p in range(PARTITIONS)}
            assert got == expected, ts
        for p in range(PARTITIONS):
            assert c.get_watermark_offsets(TopicPartition("ck-times", p), TIMEOUT) == (0, 4)
    finally:
        c.close()
