"""kafka-python (3.0) against mockbroker: produce and consume with every codec, seek into a batch, offsets by time."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

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
    offset_for_time,
    with_offsets,
)

pytestmark = pytest.mark.interop

TIMEOUT = 15.0


def producer(bootstrap: str, codec: str, **kwargs: object) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec,
                         request_timeout_ms=10_000, **kwargs)


def produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> list[tuple[int, int]]:
    """Send every record, then wait for all; (partition, offset) of each."""
    p = producer(bootstrap, codec, linger_ms=20)
    try:
        futures = [p.send(topic, r.value, key=r.key, partition=r.partition, timestamp_ms=r.timestamp,
                          headers=list(r.headers)) for r in recs]
        p.flush(TIMEOUT)
        return [(m.partition, m.offset) for m in (f.get(TIMEOUT) for f in futures)]
    finally:
        p.close(TIMEOUT)


def consumer(bootstrap: str) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                         request_timeout_ms=10_000)


def read(c: KafkaConsumer, count: int) -> list[Rec]:
    """Poll until `count` records arrived (or TIMEOUT)."""
    out: list[Rec] = []
    deadline = time.monotonic() + TIMEOUT
    while len(out) < count and time.monotonic() < deadline:
        for tp_records in c.poll(timeout_ms=200).values():
            out += [Rec(m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp) for m in tp_records]
    return out


def test_kafka_python_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"kp-{codec}") for codec in CODECS}
    # kafka-python sends no null header values ("All headers items must be (str, bytes) tuples").
    sent = {codec: dataset(codec, null_header_values=False) for codec in CODECS}
    for codec, topic in topics.items():
        assert produce(target.bootstrap, topic, sent[codec], codec) == [(r.partition, r.offset)
                                                                       for r in with_offsets(sent[codec])]
    c = consumer(target.bootstrap)
    try:
        for codec, topic in topics.items():
            c.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
            c.seek_to_beginning()
            got = read(c, len(sent[codec]))
            assert_same_records(got, sent[codec])
    finally:
        c.close()
    if target.broker is not None:
        for codec, topic in topics.items():
            assert_log(target.broker, topic, sent[codec], codec)


@pytest.mark.parametrize("codec", ["none", "snappy"])
def test_kafka_python_consumer_seeks_into_the_middle_of_a_batch(mockbroker: MockBroker, codec: str) -> None:
    """Partition 0: one batch of 6 records, seek to offset 4: the broker returns the whole batch, the client
    skips 0-3. Partition 1 (2 records): seek to 100, out of range: the client resets to the earliest."""
    mockbroker.create_topic("kp-seek", 2)
    tp0, tp1 = TopicPartition("kp-seek", 0), TopicPartition("kp-seek", 1)
    p = producer(mockbroker.bootstrap_servers, codec, linger_ms=500)
    futures = [p.send("kp-seek", b"v%d " % i * 20, key=b"k%d" % i, partition=partition, timestamp_ms=BASE_TS + i)
               for partition, n in [(0, 6), (1, 2)] for i in range(n)]
    p.flush(TIMEOUT)
    assert [(f.get(TIMEOUT).partition, f.get(TIMEOUT).offset) for f in futures] == [
        *((0, i) for i in range(6)), (1, 0), (1, 1)]
    p.close(TIMEOUT)
    [batch] = mockbroker.batches("kp-seek")
    assert (batch.base_offset, batch.record_count, batch.codec.name.lower()) == (0, 6, codec)

    c = consumer(mockbroker.bootstrap_servers)
    try:
        c.assign([tp0, tp1])
        c.seek(tp0, 4)
        c.seek(tp1, 100)
        got = read(c, 4)
        assert (c.position(tp0), c.position(tp1)) == (6, 2)
    finally:
        c.close()
    assert sorted((r.partition, r.offset, r.key) for r in got) == [(0, 4, b"k4"), (0, 5, b"k5"), (1, 0, b"k0"),
                                                                   (1, 1, b"k1")]


def test_kafka_python_reads_batches_larger_than_its_fetch_sizes_and_auto_creates_topics(
        mockbroker: MockBroker) -> None:
    """A fetch returns at least one whole batch even when it is larger than the fetch limits (KIP-74); a
    producer's first send to an unknown topic creates it (auto.create.topics.enable, 1 partition)."""
    sent = [Rec(0, None, b"k%d" % i, b"%04d" % i * 100, (), BASE_TS + i) for i in range(12)]
    produce(mockbroker.bootstrap_servers, "kp-auto", sent, "none")
    assert mockbroker.topics() == ["kp-auto"]
    assert all(b.size > 100 for b in mockbroker.batches("kp-auto"))
    c = KafkaConsumer(bootstrap_servers=mockbroker.bootstrap_servers, enable_auto_commit=False,
                      auto_offset_reset="earliest", fetch_max_bytes=100, max_partition_fetch_bytes=100)
    try:
        c.assign([TopicPartition("kp-auto", 0)])
        assert_same_records(read(c, len(sent)), sent)
    finally:
        c.close()


def test_kafka_python_offsets_for_times_finds_explicit_timestamps(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kp-times", PARTITIONS)
    sent = dataset("times", null_header_values=False)
    produce(mockbroker.bootstrap_servers, "kp-times", sent, "zstd")
    last = max(r.timestamp or 0 for r in sent)
    tps = [TopicPartition("kp-times", p) for p in range(PARTITIONS)]
    c = consumer(mockbroker.bootstrap_servers)
    try:
        for ts in [0, BASE_TS, BASE_TS + 4500, BASE_TS + 9000, last, last + 1]:
            found = c.offsets_for_times({tp: ts for tp in tps})
            got = {tp.partition: None if found[tp] is None else (found[tp].offset, found[tp].timestamp) for tp in tps}
            assert got == {p: offset_for_time(sent, p, ts) for p in range(PARTITIONS)}, ts
        assert c.beginning_offsets(tps) == {tp: 0 for tp in tps}
        assert c.end_offsets(tps) == {tp: 4 for tp in tps}
    finally:
        c.close()
