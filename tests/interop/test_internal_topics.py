"""Real clients and the internal topics (issue #21 item 1) and coordinators placed by partition (issue #12
item 5): kcat lists and reads __consumer_offsets, a Java consumer with exclude.internal.topics=false and a
pattern is assigned it, and a consumer group (aiokafka) and a transactional Java producer carry on across
a coordinator move on a 3-node cluster."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.coordinator_records import OffsetCommitKey, decode_offsets_key
from mockbroker.state.cluster.internal_topics import partition_for
from tests.interop.clients import java_argv, of_type, parse_json_lines, require_java, run_java, run_kcat

pytestmark = pytest.mark.interop

FIND_COORDINATOR, END_TXN = 10, 26


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.01)
    return value


def commit_with_confluent(broker: MockBroker, group: str, topic: str, offset: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def test_kcat_lists_and_reads_consumer_offsets(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kcat-src")
    commit_with_confluent(mockbroker, "kcat-offsets", "kcat-src", 7)
    listed = run_kcat(["-b", mockbroker.bootstrap_servers, "-L", "-J"], timeout=30)
    topics = {t["topic"]: t for t in parse_json_lines(listed.stdout)[0]["topics"]}
    assert set(topics) == {"__consumer_offsets", "kcat-src"}
    assert len(topics["__consumer_offsets"]["partitions"]) == 50
    partition = partition_for("kcat-offsets", 50)
    read = run_kcat(["-b", mockbroker.bootstrap_servers, "-C", "-t", "__consumer_offsets", "-p", str(partition),
                     "-o", "beginning", "-e", "-J"], timeout=30)
    # kcat -J escapes the key's bytes (all below 0x80 here) as \u00XX: latin-1 gives them back.
    keys = [decode_offsets_key(m["key"].encode("latin-1")) for m in parse_json_lines(read.stdout)]
    assert OffsetCommitKey("kcat-offsets", "kcat-src", 0) in keys


@pytest.mark.mockbroker(config={"group.initial.rebalance.delay.ms": 0})
def test_java_pattern_consumer_with_internal_topics_not_excluded_is_assigned_consumer_offsets(
        mockbroker: MockBroker) -> None:
    require_java()
    mockbroker.create_topic("pattern-src")
    commit_with_confluent(mockbroker, "java-offsets", "pattern-src", 3)
    config = {"group.id": "pattern-reader", "auto.offset.reset": "earliest"}
    lines = run_java("consume", {"bootstrap": mockbroker.bootstrap_servers, "pattern": "__consumer_offsets|pattern-.*",
                                 "until_end": True, "timeout_ms": 40_000,
                                 "config": {**config, "exclude.internal.topics": "false"}}, timeout=60)
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end", lines
    assigned = {(a["topic"], a["partition"]) for a in done["assignment"]}
    assert {("__consumer_offsets", p) for p in range(50)} | {("pattern-src", 0)} == assigned
    records = of_type(lines, "record")
    assert {r["topic"] for r in records} == {"__consumer_offsets"}
    keys = [decode_offsets_key(base64.b64decode(r["key_b64"])) for r in records]
    assert OffsetCommitKey("java-offsets", "pattern-src", 0) in keys
    # With the default exclude.internal.topics=true the same pattern leaves it out.
    lines = run_java("consume", {"bootstrap": mockbroker.bootstrap_servers, "pattern": "__consumer_offsets|pattern-.*",
                                 "until_end": True, "timeout_ms": 40_000, "config": {**config, "group.id": "other"}},
                     timeout=60)
    [done] = of_type(lines, "done")
    assert {(a["topic"], a["partition"]) for a in done["assignment"]} == {("pattern-src", 0)}


@pytest.mark.mockbroker(brokers=3, config={"group.initial.rebalance.delay.ms": 0})
def test_aiokafka_group_carries_on_across_a_coordinator_move(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic, group = "moving-group", "g-move"
    mockbroker.create_topic(topic, 3, replication_factor=3)
    seen: list[bytes] = []

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers)
        consumer = AIOKafkaConsumer(topic, group_id=group, bootstrap_servers=mockbroker.bootstrap_servers,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    retry_backoff_ms=50)
        await producer.start()
        await consumer.start()
        try:
            async def produce(values: range) -> None:
                for i in values:
                    await producer.send_and_wait(topic, b"%04d" % i, partition=i % 3)

            async def consume_until(count: int) -> None:
                deadline = time.monotonic() + 60
                while len(seen) < count:
                    assert time.monotonic() < deadline, f"read {len(seen)} of {count}"
                    batches = await consumer.getmany(timeout_ms=200)
                    for records in batches.values():
                        seen.extend(r.value for r in records)
                    if batches:
                        await consumer.commit()

            await produce(range(30))
            await consume_until(30)
            coordinator = mockbroker.partition_state("__consumer_offsets", partition_for(group, 50)).leader
            finds = len(mockbroker.received(FIND_COORDINATOR))
            target = next(n for n in (1, 2, 3) if n != coordinator)
            mockbroker.move_coordinator(target, group=group)
            await produce(range(30, 60))
            await consume_until(60)
            # The consumer learnt of the move (NOT_COORDINATOR) and looked the coordinator up again.
            assert len(mockbroker.received(FIND_COORDINATOR)) > finds
        finally:
            await consumer.stop()
            await producer.stop()

    asyncio.run(run())
    assert sorted(seen) == [b"%04d" % i for i in range(60)]
    assert sum(mockbroker.committed(group).values()) == 60


@pytest.mark.mockbroker(brokers=3)
def test_java_transactional_producer_commits_across_a_coordinator_move(mockbroker: MockBroker,
                                                                       tmp_path: Path) -> None:
    require_java()
    topic, txid, count = "txn-moving", "java-moving-txn", 40
    mockbroker.create_topic(topic, 1, replication_factor=3)
    transactions = [{"records": [{"key": f"k{i}", "value": f"v{i}"}]} for i in range(count)]
    args = {"bootstrap": mockbroker.bootstrap_servers, "topic": topic, "transactional_id": txid,
            "transactions": transactions, "deadline_ms": 80_000}
    out_path, err_path = tmp_path / "stdout", tmp_path / "stderr"
    moved: dict[str, int] = {}

    def move_after_first_commit() -> None:
        wait_until(lambda: len(mockbroker.received(END_TXN)) >= 1, 60, "the first EndTxn")
        moved["end_txns"] = len(mockbroker.received(END_TXN))
        moved["finds"] = len(mockbroker.received(FIND_COORDINATOR))
        coordinator = mockbroker.partition_state("__transaction_state", partition_for(txid, 50)).leader
        moved["to"] = next(n for n in (1, 2, 3) if n != coordinator)
        mockbroker.move_coordinator(moved["to"], transactional_id=txid)

    mover = threading.Thread(target=move_after_first_commit, daemon=True)
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        proc = subprocess.Popen(java_argv("txn"), stdin=subprocess.PIPE, stdout=out_file, stderr=err_file)
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(args).encode())
        proc.stdin.close()
        mover.start()
        assert proc.wait(timeout=90) == 0, err_path.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    mover.join(timeout=10)
    lines = parse_json_lines(out_path.read_bytes())
    assert of_type(lines, "txn_error") == [], lines
    assert [line["txn"] for line in of_type(lines, "committed")] == list(range(count))
    assert "to" in moved, "the coordinator was not moved"
    # Transactions were still ending after the move, and the producer found the new coordinator.
    assert len(mockbroker.received(END_TXN)) > moved["end_txns"]
    assert len(mockbroker.received(FIND_COORDINATOR)) > moved["finds"]
    assert [r.value for r in mockbroker.records(topic)] == [f"v{i}".encode() for i in range(count)]
    [info] = [t for t in mockbroker.transactions() if t.transactional_id == txid]
    assert info.state == "CompleteCommit"


@pytest.mark.mockbroker(config={"group.initial.rebalance.delay.ms": 0})
def test_aiokafka_pattern_consumer_with_exclude_internal_topics_false_is_assigned_consumer_offsets(
        mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaConsumer

    mockbroker.create_topic("aio-pattern-src")
    commit_with_confluent(mockbroker, "aio-offsets", "aio-pattern-src", 4)

    async def assignment(exclude: bool) -> set[tuple[str, int]]:
        consumer = AIOKafkaConsumer(bootstrap_servers=mockbroker.bootstrap_servers, group_id=f"aio-{exclude}",
                                    exclude_internal_topics=exclude, auto_offset_reset="earliest",
                                    metadata_max_age_ms=500)
        await consumer.start()
        try:
            consumer.subscribe(pattern="__consumer_offsets|aio-pattern-.*")
            deadline = time.monotonic() + 30
            while not consumer.assignment():
                assert time.monotonic() < deadline, "no assignment"
                await consumer.getmany(timeout_ms=100)
            return {(tp.topic, tp.partition) for tp in consumer.assignment()}
        finally:
            await consumer.stop()

    assert asyncio.run(assignment(False)) == {("__consumer_offsets", p) for p in range(50)} | {("aio-pattern-src", 0)}
    assert asyncio.run(assignment(True)) == {("aio-pattern-src", 0)}
