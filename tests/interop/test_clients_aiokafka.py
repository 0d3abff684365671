"""aiokafka (0.14) against mockbroker: produce and consume with every codec, seek into a batch, offsets by time."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

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


async def produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> list[Any]:
    """Send every record (all in flight at once, so they share batches), then wait for all."""
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec,
                         linger_ms=20, request_timeout_ms=10_000)
    await p.start()
    try:
        futures = [await p.send(topic, r.value, key=r.key, partition=r.partition, timestamp_ms=r.timestamp,
                                headers=list(r.headers)) for r in recs]
        return list(await asyncio.wait_for(asyncio.gather(*futures), TIMEOUT))
    finally:
        await p.stop()


def consumer(bootstrap: str) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                            request_timeout_ms=10_000)


async def read(c: AIOKafkaConsumer, count: int) -> list[Rec]:
    """Poll until `count` records arrived (or TIMEOUT)."""
    out: list[Rec] = []
    deadline = time.monotonic() + TIMEOUT
    while len(out) < count and time.monotonic() < deadline:
        for tp_records in (await c.getmany(timeout_ms=200)).values():
            out += [Rec(m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp) for m in tp_records]
    return out


def test_aiokafka_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"aio-{codec}") for codec in CODECS}
    sent = {codec: dataset(codec) for codec in CODECS}

    async def run() -> dict[str, list[Rec]]:
        for codec, topic in topics.items():
            metadata = await produce(target.bootstrap, topic, sent[codec], codec)
            assert [(m.partition, m.offset) for m in metadata] == [(r.partition, r.offset)
                                                                  for r in with_offsets(sent[codec])]
        got = {}
        c = consumer(target.bootstrap)
        await c.start()
        try:
            for codec, topic in topics.items():
                c.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
                await c.seek_to_beginning()
                got[codec] = await read(c, len(sent[codec]))
        finally:
            await c.stop()
        return got

    got = asyncio.run(run())
    for codec, topic in topics.items():
        assert_same_records(got[codec], sent[codec])
        if target.broker is not None:
            assert_log(target.broker, topic, sent[codec], codec)


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_aiokafka_consumer_seeks_into_the_middle_of_a_batch(mockbroker: MockBroker, codec: str) -> None:
    """Partition 0: one batch of 6 records, seek to offset 4: the broker returns the whole batch, the client
    skips 0-3. Partition 1 (2 records): seek to 100, out of range: the client resets to the earliest."""
    mockbroker.create_topic("aio-seek", 2)
    tp0, tp1 = TopicPartition("aio-seek", 0), TopicPartition("aio-seek", 1)

    async def run() -> list[Rec]:
        p = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers,
                             compression_type=None if codec == "none" else codec)
        await p.start()
        try:
            for partition, n in [(0, 6), (1, 2)]:
                batch = p.create_batch()
                for i in range(n):
                    batch.append(key=b"k%d" % i, value=b"v%d " % i * 20, timestamp=BASE_TS + i, headers=[])
                await (await p.send_batch(batch, "aio-seek", partition=partition))
        finally:
            await p.stop()
        c = consumer(mockbroker.bootstrap_servers)
        await c.start()
        try:
            c.assign([tp0, tp1])
            c.seek(tp0, 4)
            c.seek(tp1, 100)
            got = await read(c, 4)
            assert (await c.position(tp0), await c.position(tp1)) == (6, 2)
            return got
        finally:
            await c.stop()

    got = asyncio.run(run())
    [batch] = mockbroker.batches("aio-seek")
    assert (batch.base_offset, batch.record_count, batch.codec.name.lower()) == (0, 6, codec)
    assert sorted((r.partition, r.offset, r.key) for r in got) == [(0, 4, b"k4"), (0, 5, b"k5"), (1, 0, b"k0"),
                                                                   (1, 1, b"k1")]


def test_aiokafka_reads_batches_larger_than_its_fetch_sizes_and_auto_creates_topics(mockbroker: MockBroker) -> None:
    """A fetch returns at least one whole batch even when it is larger than the fetch limits (KIP-74); a
    producer's first send to an unknown topic creates it (auto.create.topics.enable, 1 partition)."""
    sent = [Rec(0, None, b"k%d" % i, b"%04d" % i * 100, (), BASE_TS + i) for i in range(12)]

    async def run() -> list[Rec]:
        await produce(mockbroker.bootstrap_servers, "aio-auto", sent, "none")
        c = AIOKafkaConsumer(bootstrap_servers=mockbroker.bootstrap_servers, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_bytes=100, max_partition_fetch_bytes=100)
        await c.start()
        try:
            c.assign([TopicPartition("aio-auto", 0)])
            return await read(c, len(sent))
        finally:
            await c.stop()

    got = asyncio.run(run())
    assert mockbroker.topics() == ["aio-auto"]
    assert all(b.size > 100 for b in mockbroker.batches("aio-auto"))
    assert_same_records(got, sent)


def test_aiokafka_offsets_for_times_finds_explicit_timestamps(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("aio-times", PARTITIONS)
    sent = dataset("times")
    last = max(r.timestamp or 0 for r in sent)
    queries = [0, BASE_TS, BASE_TS + 4500, BASE_TS + 9000, last, last + 1]

    async def run() -> dict[int, dict[int, tuple[int, int] | None]]:
        await produce(mockbroker.bootstrap_servers, "aio-times", sent, "lz4")
        c = consumer(mockbroker.bootstrap_servers)
        await c.start()
        try:
            tps = [TopicPartition("aio-times", p) for p in range(PARTITIONS)]
            out = {}
            for ts in queries:
                found = await c.offsets_for_times({tp: ts for tp in tps})
                out[ts] = {tp.partition: None if found[tp] is None else (found[tp].offset, found[tp].timestamp)
                           for tp in tps}
            assert await c.beginning_offsets(tps) == {tp: 0 for tp in tps}
            assert await c.end_offsets(tps) == {tp: 4 for tp in tps}
            return out
        finally:
            await c.stop()

    found = asyncio.run(run())
    for ts in queries:
        assert found[ts] == {p: offset_for_time(sent, p, ts) for p in range(PARTITIONS)}, ts
    assert found[last + 1] == {0: None, 1: None, 2: None}
