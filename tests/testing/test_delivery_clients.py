"""mockbroker.testing.delivery against the broker with real clients: each kind of defect made to happen
(a consumer starting too late, a re-read without a commit, a non-idempotent retry stored twice, a consumer
seeking back, a read_uncommitted consumer of an aborted transaction, a commit past what was read), and
clean runs of confluent-kafka, aiokafka and kafka-python that pass."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.testing.delivery import Acked, Acks, Read, aborted_ranges, check_delivery

pytestmark = pytest.mark.interop

PRODUCE = 0


def produce(broker: MockBroker, topic: str, values: list[bytes], *, key: bytes | None = None, partition: int = 0,
            **config: Any) -> list[Acked]:
    from confluent_kafka import Producer

    acks = Acks()
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, **config})
    for v in values:
        p.produce(topic, v, key=key, partition=partition, on_delivery=acks)
        p.flush(30)
    assert p.flush(30) == 0 and acks.failed == []
    return acks.acked


def consume(broker: MockBroker, count: int, *, assign: list[tuple[str, int, int]] | None = None,
            subscribe: str | None = None, commit: bool = False, **config: Any) -> list[Read]:
    """Read `count` records (bounded: 30 s) from the assigned (topic, partition, offset)s or a subscription;
    with commit=True each record's next offset is committed synchronously once it was read."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", **config})
    got: list[Read] = []
    try:
        if assign is not None:
            c.assign([TopicPartition(t, p, o) for t, p, o in assign])
        else:
            c.subscribe([subscribe])
        deadline = time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None or m.error() is not None:
                continue
            got.append(Read.of(m))
            if commit:
                c.commit(m, asynchronous=False)
    finally:
        c.close()
    assert len(got) == count, f"read {len(got)} of {count}"
    return got


@pytest.fixture(autouse=True)
def _confluent() -> None:
    pytest.importorskip("confluent_kafka")


def test_a_clean_confluent_run_with_a_group_is_ok(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("clean", 2)
    acked = produce(mockbroker, "clean", [b"a%d" % i for i in range(5)], key=b"a", partition=0)
    acked += produce(mockbroker, "clean", [b"b%d" % i for i in range(5)], key=b"b", partition=1)
    read = consume(mockbroker, 10, subscribe="clean", commit=True)
    report = check_delivery(acked, read, broker=mockbroker, group="g", only_acked=True, distinct_values=True)
    assert report.ok, report
    assert mockbroker.committed("g") == {("clean", 0): 5, ("clean", 1): 5}
    assert str(report).startswith("delivery ok: 0 lost, 0 duplicated, 0 reordered, 0 aborted read, "
                                  "0 committed ahead, 0 unacknowledged (10 acknowledged, 10 read)")


def test_a_consumer_starting_past_acknowledged_records_loses_them(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("late", 1)
    acked = produce(mockbroker, "late", [b"v%d" % i for i in range(8)])
    read = consume(mockbroker, 5, assign=[("late", 0, 3)])
    report = check_delivery(acked, read)
    assert [(a.offset, a.value) for a in report.lost] == [(0, b"v0"), (1, b"v1"), (2, b"v2")]
    text = str(report)
    assert "delivery check failed: 3 lost, 0 duplicated" in text
    assert "lost: acknowledged, never read (3):\n  late[0]@0 key=None value=b'v0'\n  late[0]@1" in text


def test_a_group_reading_again_without_a_commit_duplicates(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("again", 1)
    acked = produce(mockbroker, "again", [b"v%d" % i for i in range(4)])
    read = consume(mockbroker, 4, subscribe="again")  # no commit: the next member starts over
    read += consume(mockbroker, 4, subscribe="again", commit=True)
    report = check_delivery(acked, read, broker=mockbroker, group="g")
    assert [(d.how, d.offsets, d.count) for d in report.duplicated] == [("read", [(0, o)], 2) for o in range(4)]
    assert report.lost == [] and report.reordered == [] and report.committed_ahead == []
    assert "duplicated (4):\n  again[0]@0 key=None value=b'v0' read 2 times" in str(report)


def test_a_retry_of_a_non_idempotent_producer_is_stored_twice(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("twice", 1)
    mockbroker.inject(PRODUCE, drop="after", count=1, topic="twice")  # appended, then the connection closes
    acked = produce(mockbroker, "twice", [b"once"], key=b"k", **{"enable.idempotence": False, "retries": 5,
                                                                  "retry.backoff.ms": 20})
    assert mockbroker.faults.rules == []
    log = [Read.of(r) for r in mockbroker.records("twice")]
    report = check_delivery(acked, log)
    [dup] = report.duplicated
    assert (dup.how, dup.key, dup.value, dup.offsets, dup.acked) == ("stored", b"k", b"once", [(0, 0), (0, 1)], 1)
    assert "twice key=b'k' value=b'once' stored at [0]@0, [0]@1 (2 times, acknowledged 1)" in str(report)
    # the same run with an idempotent producer stores it once
    mockbroker.create_topic("once", 1)
    mockbroker.inject(PRODUCE, drop="after", count=1, topic="once")
    acked = produce(mockbroker, "once", [b"once"], key=b"k", **{"enable.idempotence": True, "retry.backoff.ms": 20})
    assert check_delivery(acked, [Read.of(r) for r in mockbroker.records("once")], distinct_values=True).ok


def test_a_consumer_seeking_back_reads_out_of_order(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("seek", 1)
    acked = produce(mockbroker, "seek", [b"v%d" % i for i in range(6)])
    read = consume(mockbroker, 3, assign=[("seek", 0, 3)]) + consume(mockbroker, 3, assign=[("seek", 0, 0)])
    report = check_delivery(acked, read)
    assert [(r.how, r.offset, r.after) for r in report.reordered] == [("read", 0, 5), ("read", 1, 5), ("read", 2, 5)]
    assert report.lost == [] and report.duplicated == []
    assert "reordered (3):\n  read: seek[0]@0 key=None value=b'v0' read after @5" in str(report)


def test_a_key_read_across_partitions_against_its_send_order(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("moved", 2)
    acked = produce(mockbroker, "moved", [b"first"], key=b"k", partition=0)
    acked += produce(mockbroker, "moved", [b"second"], key=b"k", partition=1)
    read = consume(mockbroker, 1, assign=[("moved", 1, 0)]) + consume(mockbroker, 1, assign=[("moved", 0, 0)])
    report = check_delivery(acked, read)
    assert [(r.how, r.partition, r.value) for r in report.reordered] == [("key", 0, b"first")]
    assert "key: moved[0]@0 key=b'k' value=b'first' read after [1]@0, which was sent later" in str(report)


def transactions(broker: MockBroker, topic: str) -> tuple[list[Acked], list[Acked]]:
    """Three transactions of a confluent-kafka transactional producer: 3 records committed, 3 aborted,
    2 committed; (the committed acks, the aborted acks)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "tx", "linger.ms": 0})
    p.init_transactions(30)
    committed, aborted = Acks(), Acks()
    for values, end in ([b"c0", b"c1", b"c2"], "commit"), ([b"a0", b"a1", b"a2"], "abort"), ([b"c3", b"c4"], "commit"):
        acks = committed if end == "commit" else aborted
        p.begin_transaction()
        for v in values:
            p.produce(topic, v, partition=0, on_delivery=acks)
        assert p.flush(30) == 0
        (p.commit_transaction if end == "commit" else p.abort_transaction)(30)
    assert committed.failed == [] and aborted.failed == []
    return committed.acked, aborted.acked


def test_records_of_an_aborted_transaction_read_are_reported(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("txn", 1)
    committed, aborted = transactions(mockbroker, "txn")
    # data 0-2, commit marker 3, aborted data 4-6, abort marker 7, data 8-9, commit marker 10
    assert aborted_ranges(mockbroker, "txn", 0) == [(4, 6)]
    assert [a.offset for a in aborted] == [4, 5, 6]

    uncommitted = consume(mockbroker, 8, assign=[("txn", 0, 0)], **{"isolation.level": "read_uncommitted"})
    report = check_delivery(committed, uncommitted, broker=mockbroker)
    assert [(r.offset, r.value) for r in report.aborted_read] == [(4, b"a0"), (5, b"a1"), (6, b"a2")]
    assert report.lost == [] and not report.ok
    text = str(report)
    assert "0 lost, 0 duplicated, 0 reordered, 3 aborted read, 0 committed ahead (5 acknowledged, 8 read)" in text
    assert "aborted read: records of aborted or open transactions read (3):\n  txn[0]@4 key=None value=b'a0'" in text
    assert check_delivery(committed, uncommitted, broker=mockbroker, isolation="read_uncommitted").ok

    read = consume(mockbroker, 5, subscribe="txn", commit=True, **{"isolation.level": "read_committed"})
    assert check_delivery(committed, read, broker=mockbroker, group="g", only_acked=True).ok
    # A position past the markers and the aborted records (what a consumer commits once it has fetched
    # past them) is not ahead of anything: no consumer sees those offsets.
    assert check_delivery(committed, read, broker=mockbroker, committed={("txn", 0): 11}).ok
    first = read[:3]  # c0-c2 processed: committing 8 skips only the marker and the aborted records, 9 skips c3
    assert check_delivery(committed[:3], first, broker=mockbroker, committed={("txn", 0): 8}).ok
    [ahead] = check_delivery(committed[:3], first, broker=mockbroker, committed={("txn", 0): 9}).committed_ahead
    assert (ahead.committed, ahead.unprocessed) == (9, [8])


def test_an_offset_committed_past_what_was_processed(mockbroker: MockBroker) -> None:
    from confluent_kafka import Consumer, TopicPartition

    mockbroker.create_topic("ahead", 1)
    acked = produce(mockbroker, "ahead", [b"v%d" % i for i in range(6)])
    read = consume(mockbroker, 3, subscribe="ahead")
    c = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": "g"})
    try:  # the bug: committing the end offset before the rest was processed
        c.commit(offsets=[TopicPartition("ahead", 0, 6)], asynchronous=False)
    finally:
        c.close()
    report = check_delivery(acked, read, broker=mockbroker, group="g")
    [ahead] = report.committed_ahead
    assert (ahead.group, ahead.topic, ahead.partition, ahead.committed, ahead.processed_up_to,
            ahead.unprocessed) == ("g", "ahead", 0, 6, 2, [3, 4, 5])
    assert "committed ahead: committed past unprocessed records (1):\n  group 'g' ahead[0] committed 6, " \
           "processed up to 2, 3 never processed: 3, 4, 5" in str(report)
    assert [a.offset for a in report.lost] == [3, 4, 5]


def test_aiokafka_acks_and_records_through_the_adapters(mockbroker: MockBroker) -> None:
    pytest.importorskip("aiokafka")
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    mockbroker.create_topic("aio", 2)

    async def run() -> tuple[list[Acked], list[Read]]:
        p = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers)
        await p.start()
        try:
            acked = []
            for i in range(6):
                key, value = b"k%d" % (i % 2), b"v%d" % i
                acked.append(Acked.from_metadata(await p.send_and_wait("aio", value, key=key, partition=i % 2),
                                                 key, value))
        finally:
            await p.stop()
        c = AIOKafkaConsumer("aio", bootstrap_servers=mockbroker.bootstrap_servers, auto_offset_reset="earliest")
        await c.start()
        read: list[Read] = []
        try:
            for _ in range(100):  # bounded
                for records in (await c.getmany(timeout_ms=200)).values():
                    read += [Read.of(r) for r in records]
                if len(read) >= 6:
                    break
        finally:
            await c.stop()
        return acked, read

    acked, read = asyncio.run(run())
    assert [(a.partition, a.offset, a.key) for a in acked[:2]] == [(0, 0, b"k0"), (1, 0, b"k1")]
    assert sorted((r.partition, r.offset, r.value) for r in read)[:2] == [(0, 0, b"v0"), (0, 1, b"v2")]
    check_delivery(acked, read, only_acked=True, distinct_values=True).assert_ok()
    assert [a.offset for a in check_delivery(acked, read[1:]).lost] == [read[0].offset]


def test_kafka_python_futures_and_records_through_the_adapters(mockbroker: MockBroker) -> None:
    pytest.importorskip("kafka")
    from kafka import KafkaConsumer, KafkaProducer

    mockbroker.create_topic("kp", 1)
    p = KafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers)
    sent = [(b"k", b"v%d" % i) for i in range(5)]
    futures = [p.send("kp", value, key=key) for key, value in sent]
    acked = [Acked.from_metadata(f.get(30), key, value) for f, (key, value) in zip(futures, sent, strict=True)]
    p.close()
    c = KafkaConsumer("kp", bootstrap_servers=mockbroker.bootstrap_servers, auto_offset_reset="earliest",
                      consumer_timeout_ms=10_000)
    read = []
    for rec in c:
        read.append(Read.of(rec))
        if len(read) == 5:
            break
    c.close()
    assert [(a.offset, a.value) for a in acked] == [(i, b"v%d" % i) for i in range(5)]
    check_delivery(acked, read, only_acked=True, distinct_values=True).assert_ok()
    assert [d.offsets for d in check_delivery(acked, read + read[:1]).duplicated] == [[(0, 0)]]
