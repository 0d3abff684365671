"""Transactions with real clients: consume-transform-produce loops where every other transaction is aborted,
read back by read_committed and read_uncommitted consumers of three clients; a zombie producer fenced by a
new instance with the same transactional id; a transaction left open past its timeout, aborted on the
broker clock.

Clients: the Java client 4.3 (tests/interop/harness, with transaction version 2 as Kafka 4.3 finalizes it,
and with version 1), librdkafka (confluent-kafka) and aiokafka. What each consumer reads is compared per
partition, in order, with exactly the records of the committed transactions.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.records.batch import ControlType
from tests.interop.clients import of_type, run_java

pytestmark = pytest.mark.interop

N = 6  # input records, one transaction each: even ones committed, odd ones aborted
PollResult = dict[int, list[bytes]]


# -- readers --------------------------------------------------------------------------------------------------


def by_partition(pairs: list[tuple[int, bytes]]) -> PollResult:
    out: PollResult = defaultdict(list)
    for partition, value in pairs:
        out[partition].append(value)
    return dict(out)


def read_java(bootstrap: str, topic: str, committed: bool) -> PollResult:
    lines = run_java("consume", {"bootstrap": bootstrap, "topic": topic, "until_end": True, "config": {
        "isolation.level": "read_committed" if committed else "read_uncommitted"}}, timeout=60)
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end", done
    return by_partition([(r["partition"], r["value"].encode()) for r in of_type(lines, "record")])


def read_confluent(bootstrap: str, topic: str, partitions: int, committed: bool) -> PollResult:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "isolation.level": "read_committed" if committed else "read_uncommitted",
                  "enable.partition.eof": True, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    pairs: list[tuple[int, bytes]] = []
    at_end: set[int] = set()
    try:
        for _ in range(240):  # bounded: 60 s at most
            m = c.poll(0.25)
            if m is None:
                continue
            error, partition, value = m.error(), m.partition(), m.value()
            assert partition is not None
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                at_end.add(partition)
                if len(at_end) == partitions:
                    break
                continue
            assert value is not None
            at_end.discard(partition)
            pairs.append((partition, value))
    finally:
        c.close()
    assert len(at_end) == partitions, "librdkafka never reached the end of every partition"
    return by_partition(pairs)


def read_aiokafka(bootstrap: str, topic: str, partitions: int, committed: bool) -> PollResult:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> PollResult:
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             isolation_level="read_committed" if committed else "read_uncommitted")
        await c.start()
        pairs: list[tuple[int, bytes]] = []
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            ends = await c.end_offsets(tps)  # the last stable offset for read_committed
            for _ in range(200):  # bounded
                if all([await c.position(tp) >= ends[tp] for tp in tps]):
                    break
                got = await c.getmany(timeout_ms=250)
                for tp, msgs in got.items():
                    pairs += [(tp.partition, m.value) for m in msgs]
            assert all([await c.position(tp) >= ends[tp] for tp in tps])
        finally:
            await c.stop()
        return by_partition(pairs)

    return asyncio.run(run())


def assert_readers_see(broker: MockBroker, topic: str, partitions: int, committed: PollResult,
                       everything: PollResult) -> None:
    """read_committed consumers of the three clients see exactly the committed records, in order; the
    read_uncommitted ones see every record, aborted ones included."""
    bootstrap = broker.bootstrap_servers
    assert read_java(bootstrap, topic, True) == committed
    assert read_confluent(bootstrap, topic, partitions, True) == committed
    assert read_aiokafka(bootstrap, topic, partitions, True) == committed
    assert read_java(bootstrap, topic, False) == everything
    assert read_confluent(bootstrap, topic, partitions, False) == everything
    assert read_aiokafka(bootstrap, topic, partitions, False) == everything
    for p in range(partitions):
        offsets = broker.offsets(topic, p)
        assert offsets["last_stable_offset"] == offsets["high_watermark"]


def produce_input(broker: MockBroker, topic: str) -> list[bytes]:
    from confluent_kafka import Producer

    values = [b"in-%d" % i for i in range(N)]
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0
    return values


def expected(values: list[bytes], partitions: int) -> tuple[PollResult, PollResult]:
    """(committed, everything) as the loops write them: record i to partition i % partitions, upper-cased."""
    committed = by_partition([(i % partitions, v.upper()) for i, v in enumerate(values) if i % 2 == 0])
    everything = by_partition([(i % partitions, v.upper()) for i, v in enumerate(values)])
    return committed, everything


def versions_used(broker: MockBroker, api_key: int) -> set[int]:
    """The versions of api_key the Java client sent (librdkafka, which wrote the input, left out)."""
    return {r.api_version for r in broker.received(api_key) if not (r.client_id or "").startswith("rdkafka")}


# -- consume-transform-produce --------------------------------------------------------------------------------


@pytest.mark.parametrize("tv", [2, 1])
def test_java_consume_transform_produce_every_other_transaction_aborted(
        mockbroker_factory: Callable[..., MockBroker], tv: int) -> None:
    broker = mockbroker_factory(config={"transaction.version": tv})
    broker.create_topic("in", 1)
    broker.create_topic("out", 2)
    produce_input(broker, "in")
    consumed = of_type(run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": "in",
                                            "until_end": True, "config": {"isolation.level": "read_committed"}}),
                       "record")
    values = [r["value"].encode() for r in consumed]
    transactions = [
        {"records": [{"topic": "out", "partition": i % 2, "key": "k", "value": v.upper().decode()}],
         "end": "commit" if i % 2 == 0 else "abort",
         "send_offsets": {"group_id": "ctp-java", "offsets": [{"topic": "in", "partition": 0,
                                                               "offset": r["offset"] + 1}]}}
        for i, (r, v) in enumerate(zip(consumed, values, strict=True))
    ]
    lines = run_java("txn", {"bootstrap": broker.bootstrap_servers, "transactional_id": "ctp-java",
                             "transactions": transactions}, timeout=90)
    assert of_type(lines, "txn_error") == []
    assert [line["txn"] for line in of_type(lines, "committed")] == [0, 2, 4]
    assert [line["txn"] for line in of_type(lines, "aborted")] == [1, 3, 5]
    # The offsets of the committed transactions only: the last committed one read offset 4.
    assert broker.committed("ctp-java") == {("in", 0): 5}
    resumed = run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": "in", "seek": "committed",
                                   "until_end": True, "config": {"group.id": "ctp-java",
                                                                 "isolation.level": "read_committed"}})
    assert [r["offset"] for r in of_type(resumed, "record")] == [5]
    if tv == 2:
        # KIP-890 part 2: partitions and offsets added by Produce v12+ / TxnOffsetCommit v5, epoch bumped on
        # every EndTxn v5 (the markers carry the bumped epoch).
        assert min(versions_used(broker, 0)) >= 12 and versions_used(broker, 26) == {5}
        assert versions_used(broker, 28) == {5} and versions_used(broker, 24) == set() == versions_used(broker, 25)
        [info] = [t for t in broker.transactions() if t.transactional_id == "ctp-java"]
        assert info.producer_epoch == N
    else:
        assert max(versions_used(broker, 0)) <= 11 and max(versions_used(broker, 26)) <= 4
        assert versions_used(broker, 24) and versions_used(broker, 25)
    markers = [b.control_type for p in (0, 1) for b in broker.batches("out", p) if b.is_control]
    assert (markers.count(ControlType.ABORT), markers.count(ControlType.COMMIT)) == (3, 3)
    committed, everything = expected(values, 2)
    assert_readers_see(broker, "out", 2, committed, everything)


def test_confluent_consume_transform_produce_every_other_transaction_aborted(mockbroker: MockBroker) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    mockbroker.create_topic("in", 1)
    mockbroker.create_topic("out", 2)
    values = produce_input(mockbroker, "in")
    c = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": "ctp-ck",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "isolation.level": "read_committed"})
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "transactional.id": "ctp-ck", "linger.ms": 0})
    try:
        c.subscribe(["in"])
        p.init_transactions(30)
        done = 0
        deadline = time.monotonic() + 90
        while done < N and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            value, offset = m.value(), m.offset()
            assert not m.error() and value is not None and offset is not None, m.error()
            p.begin_transaction()
            p.produce("out", value.upper(), partition=done % 2)
            assert p.flush(30) == 0  # the records land before an abort (librdkafka purges unsent ones)
            p.send_offsets_to_transaction([TopicPartition("in", 0, offset + 1)], c.consumer_group_metadata(), 30)
            if done % 2 == 0:
                p.commit_transaction(30)
            else:
                p.abort_transaction(30)
            done += 1
        assert done == N
    finally:
        c.close()
    assert mockbroker.committed("ctp-ck") == {("in", 0): 5}
    committed, everything = expected(values, 2)
    assert_readers_see(mockbroker, "out", 2, committed, everything)


def test_aiokafka_consume_transform_produce_every_other_transaction_aborted(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    mockbroker.create_topic("in", 1)
    mockbroker.create_topic("out", 2)
    values = produce_input(mockbroker, "in")

    async def run() -> None:
        c = AIOKafkaConsumer("in", bootstrap_servers=mockbroker.bootstrap_servers, group_id="ctp-aio",
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             isolation_level="read_committed")
        p = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, transactional_id="ctp-aio")
        await c.start()
        await p.start()
        try:
            done = 0
            for _ in range(200):  # bounded
                if done == N:
                    break
                got = await c.getmany(timeout_ms=500, max_records=1)
                for msgs in got.values():
                    for m in msgs:
                        await p.begin_transaction()
                        await p.send_and_wait("out", m.value.upper(), partition=done % 2)
                        await p.send_offsets_to_transaction({TopicPartition("in", 0): m.offset + 1}, "ctp-aio")
                        if done % 2 == 0:
                            await p.commit_transaction()
                        else:
                            await p.abort_transaction()
                        done += 1
            assert done == N
        finally:
            await p.stop()
            await c.stop()

    asyncio.run(run())
    assert mockbroker.committed("ctp-aio") == {("in", 0): 5}
    committed, everything = expected(values, 2)
    assert_readers_see(mockbroker, "out", 2, committed, everything)


# -- fencing --------------------------------------------------------------------------------------------------


def test_confluent_zombie_is_fenced_by_a_new_instance(mockbroker: MockBroker) -> None:
    from confluent_kafka import KafkaException, Producer

    mockbroker.create_topic("z", 1)
    config = {"bootstrap.servers": mockbroker.bootstrap_servers, "transactional.id": "zombie-ck", "linger.ms": 0}
    zombie = Producer(config)
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce("z", b"from the zombie")
    assert zombie.flush(30) == 0
    fresh = Producer(config)
    fresh.init_transactions(30)  # aborts the zombie's transaction and bumps the epoch
    fresh.begin_transaction()
    fresh.produce("z", b"from the new instance")
    fresh.commit_transaction(30)
    with pytest.raises(KafkaException) as info:
        zombie.commit_transaction(30)
    assert info.value.args[0].fatal()
    assert read_confluent(mockbroker.bootstrap_servers, "z", 1, True) == {0: [b"from the new instance"]}
    assert read_aiokafka(mockbroker.bootstrap_servers, "z", 1, True) == {0: [b"from the new instance"]}
    assert [b.control_type for b in mockbroker.batches("z") if b.is_control] == [ControlType.ABORT,
                                                                                 ControlType.COMMIT]


def test_aiokafka_zombie_is_fenced_by_a_new_instance(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaError

    mockbroker.create_topic("za", 1)

    async def run() -> None:
        zombie = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, transactional_id="zombie-aio")
        fresh = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, transactional_id="zombie-aio")
        await zombie.start()
        try:
            await zombie.begin_transaction()
            await zombie.send_and_wait("za", b"from the zombie")
            await fresh.start()
            async with fresh.transaction():
                await fresh.send_and_wait("za", b"from the new instance")
            with pytest.raises(KafkaError):
                await zombie.commit_transaction()
        finally:
            await fresh.stop()
            await zombie.stop()

    asyncio.run(run())
    assert read_aiokafka(mockbroker.bootstrap_servers, "za", 1, True) == {0: [b"from the new instance"]}


def test_java_open_transaction_is_aborted_when_a_new_instance_starts(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("zj", 1)
    args: dict[str, Any] = {"bootstrap": mockbroker.bootstrap_servers, "transactional_id": "zombie-java"}
    first = run_java("txn", {**args, "transactions": [
        {"records": [{"topic": "zj", "value": "committed-1"}]},
        {"records": [{"topic": "zj", "value": "left-open"}], "end": "open"}]})
    assert of_type(first, "left_open") and mockbroker.transactions()[0].state == "Ongoing"
    second = run_java("txn", {**args, "transactions": [{"records": [{"topic": "zj", "value": "committed-2"}]}]})
    assert of_type(second, "committed") and of_type(second, "txn_error") == []
    assert [b.control_type for b in mockbroker.batches("zj") if b.is_control] == [
        ControlType.COMMIT, ControlType.ABORT, ControlType.COMMIT]
    assert read_java(mockbroker.bootstrap_servers, "zj", True) == {0: [b"committed-1", b"committed-2"]}


# -- timeout --------------------------------------------------------------------------------------------------


def test_transaction_left_open_past_its_timeout_is_aborted_on_the_broker_clock(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("to", 2)
    lines = run_java("txn", {"bootstrap": mockbroker.bootstrap_servers, "transactional_id": "timeout-java",
                             "config": {"transaction.timeout.ms": "10000"}, "transactions": [
                                 {"records": [{"topic": "to", "partition": 0, "value": "kept"}]},
                                 {"records": [{"topic": "to", "partition": p, "value": f"stuck-{p}"}
                                              for p in (0, 1)], "end": "open"}]})
    assert of_type(lines, "committed") and of_type(lines, "left_open")
    [info] = mockbroker.transactions()
    assert (info.state, info.timeout_ms, info.partitions) == ("Ongoing", 10_000, [("to", 0), ("to", 1)])
    assert mockbroker.offsets("to", 0)["last_stable_offset"] == 2  # stuck at the open transaction
    epoch = info.producer_epoch
    mockbroker.clock.advance(11)
    [info] = mockbroker.transactions()
    assert (info.state, info.producer_epoch) == ("CompleteAbort", epoch + 2)
    assert_readers_see(mockbroker, "to", 2, {0: [b"kept"]},
                       {0: [b"kept", b"stuck-0"], 1: [b"stuck-1"]})
