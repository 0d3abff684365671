"""The waits (issue #34 item 5, mockbroker/waits.py): wait_for_records / _group / _committed / _transaction,
sync and async, woken by the broker's change signal, and their message on timeout (short timeouts there; the
message is asserted, never the time taken)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker
from mockbroker.waits import WaitTimeout
from tests.rawclient import RawClient

PRODUCE, OFFSET_COMMIT, JOIN, SYNC, INIT_PID, ADD_PARTITIONS, END_TXN = 0, 8, 11, 14, 22, 24, 26
E = ErrorCode
LONG = 30.0  # generous: the condition is met long before, the wait returns then


def append(broker: MockBroker, topic: str, partition: int, n: int) -> None:
    """n records into a partition, through the Appender, as a Produce would (call on the broker's loop)."""
    p = broker.cluster.partition(topic, partition)
    assert p is not None
    batch = build_batch([(b"k", b"v%d" % i) for i in range(n)], base_timestamp=1)
    broker.appender.append_records(p, memoryview(bytearray(batch)), 9, broker.clock.now_ms())


def produce(c: RawClient, topic: str, partition: int, n: int, **batch: Any) -> Any:
    data = bytes(build_batch([(b"k", b"v%d" % i) for i in range(n)], base_timestamp=1, **batch))
    body = {"transactional_id": batch.pop("transactional_id", None), "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}]}
    return c.request(PRODUCE, 9, body)


# -- records -------------------------------------------------------------------------------------------


async def test_an_async_wait_returns_when_an_append_brings_the_count() -> None:
    async with MockBroker(port=0) as broker:
        broker.create_topic("t", partitions=2)
        waiting = asyncio.create_task(broker.wait_for_records_async("t", 5, timeout=LONG))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()  # nothing appended yet: it cannot have returned
        append(broker, "t", 0, 3)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()  # 3 of 5
        append(broker, "t", 1, 2)
        await asyncio.wait_for(waiting, LONG)
        await broker.wait_for_records_async("t", 3, partition=0, timeout=LONG)  # already true: at once


def test_a_sync_wait_follows_a_client_producing_in_another_thread(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders", partitions=3)

    def producer() -> None:
        with RawClient(mockbroker.host, mockbroker.port) as c:
            for i in range(6):
                assert produce(c, "orders", i % 3, 2).responses[0].partition_responses[0].error_code == E.NONE

    thread = threading.Thread(target=producer)
    thread.start()
    mockbroker.wait_for_records("orders", 12, timeout=LONG)
    thread.join(LONG)
    assert len(mockbroker.records("orders")) == 12


def test_wait_for_records_says_what_was_there_on_timeout(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders", partitions=2)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        produce(c, "orders", 0, 7)
    with pytest.raises(WaitTimeout) as caught:
        mockbroker.wait_for_records("orders", 10, timeout=0.2)
    assert str(caught.value) == ("wait_for_records('orders', 10): 7 records after 0.2 s; "
                                 "last offsets per partition: {0: 6}")
    assert isinstance(caught.value, AssertionError)
    with pytest.raises(WaitTimeout, match=r"wait_for_records\('nope', 1\): no such topic after 0.1 s"):
        mockbroker.wait_for_records("nope", 1, timeout=0.1)


async def test_an_async_wait_from_another_loop_hops_to_the_threaded_broker(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    waiting = asyncio.create_task(mockbroker.wait_for_records_async("t", 2, timeout=LONG))
    await asyncio.to_thread(lambda: mockbroker._call(append, mockbroker, "t", 0, 2))
    await asyncio.wait_for(waiting, LONG)


async def test_a_sync_wait_on_the_brokers_own_loop_is_refused() -> None:
    async with MockBroker(port=0) as broker:
        broker.create_topic("t")
        with pytest.raises(RuntimeError, match="_async"):
            broker.wait_for_records("t", 1, timeout=1)


def test_a_broker_not_running_is_looked_at_once() -> None:
    broker = MockBroker(port=0)
    broker.create_topic("t")
    append(broker, "t", 0, 1)
    broker.wait_for_records("t", 1)
    with pytest.raises(WaitTimeout, match="1 records.*the broker is not running"):
        broker.wait_for_records("t", 2)


# -- groups and committed offsets ----------------------------------------------------------------------


def join_body(member_id: str = "") -> dict[str, Any]:
    return {"group_id": "g", "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}


def test_wait_for_group_sees_a_parked_join_and_the_stable_group(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c1, RawClient(mockbroker.host, mockbroker.port) as c2:
        a = c1.request(JOIN, 5, join_body()).member_id
        first = c1.request(JOIN, 5, join_body(a))
        sync_a = {"group_id": "g", "generation_id": first.generation_id, "member_id": a, "protocol_type": "consumer",
                  "protocol_name": "range", "assignments": [{"member_id": a, "assignment": b""}]}
        c1.request(SYNC, 5, sync_a)
        mockbroker.wait_for_group("g", state="stable", members=1, timeout=LONG)
        b = c2.request(JOIN, 5, join_body()).member_id
        c2.send(JOIN, 5, join_body(b))  # parked until a rejoins: only the broker can tell it arrived
        mockbroker.wait_for_group("g", state="PreparingRebalance", members=2, timeout=LONG)
        with pytest.raises(WaitTimeout) as caught:
            mockbroker.wait_for_group("g", state="Stable", timeout=0.2)
        assert str(caught.value).startswith("wait_for_group('g', state='Stable', members=None): group is "
                                            "PreparingRebalance with 2 member(s) [")
    with pytest.raises(WaitTimeout, match="no such group"):
        mockbroker.wait_for_group("other", timeout=0.1)


def commit(c: RawClient, group: str, offsets: dict[tuple[str, int], int]) -> None:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": p, "committed_offset": offset})
    resp = c.request(OFFSET_COMMIT, 8, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    assert all(p.error_code == E.NONE for t in resp.topics for p in t.partitions)


def test_wait_for_committed_by_offsets_and_by_topic(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t", partitions=2)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        produce(c, "t", 0, 4)
        produce(c, "t", 1, 2)
        commit(c, "g", {("t", 0): 4})
        with pytest.raises(WaitTimeout) as caught:
            mockbroker.wait_for_committed("g", topic="t", timeout=0.2)
        assert str(caught.value) == ("wait_for_committed('g', None, topic='t'): committed {('t', 0): 4} after 0.2 s; "
                                     "short of {('t', 0): 4, ('t', 1): 2}: {('t', 1): None}")
        done = threading.Thread(target=commit, args=(c, "g", {("t", 1): 2}))
        done.start()
        mockbroker.wait_for_committed("g", topic="t", timeout=LONG)
        mockbroker.wait_for_committed("g", {("t", 0): 3, ("t", 1): 2}, timeout=LONG)
        done.join(LONG)
    with pytest.raises(ValueError, match="topic="):
        mockbroker.wait_for_committed("g")


# -- transactions --------------------------------------------------------------------------------------


def test_wait_for_transaction_follows_a_commit(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    with RawClient(mockbroker.host, mockbroker.port) as c:
        init = c.request(INIT_PID, 4, {"transactional_id": "tx", "transaction_timeout_ms": 60000})
        pid, epoch = init.producer_id, init.producer_epoch
        mockbroker.wait_for_transaction("tx", "Empty", timeout=LONG)
        added = c.request(ADD_PARTITIONS, 3, {"v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": pid,
                                              "v3_and_below_producer_epoch": epoch,
                                              "v3_and_below_topics": [{"name": "t", "partitions": [0]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.NONE
        mockbroker.wait_for_transaction("tx", "ongoing", timeout=LONG)
        with pytest.raises(WaitTimeout) as caught:
            mockbroker.wait_for_transaction("tx", timeout=0.2)
        assert str(caught.value) == (f"wait_for_transaction('tx', state='CompleteCommit'): state Ongoing (producer "
                                     f"id {pid}, epoch {epoch}, partitions [('t', 0)]) after 0.2 s")
        ended = c.request(END_TXN, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                       "committed": True})
        assert ended.error_code == E.NONE
        mockbroker.wait_for_transaction("tx", "CompleteCommit", timeout=LONG)
    with pytest.raises(WaitTimeout, match="no such transactional id"):
        mockbroker.wait_for_transaction("nope", timeout=0.1)
