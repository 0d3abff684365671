"""Real clients through leader moves and a node stop/start on a 3-node cluster (tests/interop/cluster_chaos.py):
an idempotent acks=all producer writes continuously to a topic with replication factor 3 and
min.insync.replicas 2 while leaders move every ~200 ms and node 3 stops and starts again; then every
acknowledged record is in the log exactly once and in order per partition."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.state.cluster.internal_topics import partition_for
from tests.interop import clients
from tests.interop.clients import (
    java_argv,
    kafkajs_argv,
    of_type,
    parse_json_lines,
    require_java,
    require_kafkajs,
    require_kcat,
)
from tests.interop.cluster_chaos import Chaos, check_exactly_once_in_order, make_topic, produce_through_chaos

pytestmark = [pytest.mark.interop, pytest.mark.mockbroker(brokers=3)]

PARTITIONS = 3
PRODUCE = 0


def test_confluent_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker) -> None:
    topic = "chaos-ck"
    make_topic(mockbroker, topic, PARTITIONS)
    acked = produce_through_chaos(mockbroker, topic, PARTITIONS, Chaos(mockbroker, topic, PARTITIONS))
    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)


def run_harness_through_chaos(broker: MockBroker, topic: str, argv: list[str], env: dict[str, str] | None,
                              args: dict[str, Any], tmp_path: Path) -> dict[int, list[bytes]]:
    """Run a harness's `produce` (sync sends of zero-padded indexes) while the chaos runs; check that every
    record was acknowledged; the acknowledged values by partition."""
    out_path, err_path = tmp_path / "stdout", tmp_path / "stderr"
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out_file, stderr=err_file, env=env)
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(args).encode())
        proc.stdin.close()
        chaos = Chaos(broker, topic, PARTITIONS)
        chaos.start()
        chaos.finish()
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    lines = parse_json_lines(out_path.read_bytes())
    err = err_path.read_text(errors="replace")
    n = len(args["records"])
    assert of_type(lines, "done") == [{"type": "done", "sent": n, "failed": 0}], (lines[-5:], err[-2000:])
    acked: dict[int, list[bytes]] = {}
    for line in of_type(lines, "sent"):
        acked.setdefault(line["partition"], []).append(b"%06d" % line["index"])
    return acked


def records_for(n: int) -> list[dict[str, Any]]:
    return [{"partition": i % PARTITIONS, "value": f"{i:06d}"} for i in range(n)]


@pytest.mark.java
def test_java_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker,
                                                                         tmp_path: Path) -> None:
    require_java()
    topic = "chaos-java"
    make_topic(mockbroker, topic, PARTITIONS)
    # Sync sends, one Produce request each (thousands a second): enough to outlast the chaos.
    args = {"bootstrap": mockbroker.bootstrap_servers, "topic": topic, "records": records_for(40_000),
            "sync": True, "timeout_ms": 60_000, "deadline_ms": 290_000,
            "config": {"acks": "all", "enable.idempotence": "true", "retry.backoff.ms": "20",
                       "reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200", "linger.ms": "0"}}
    acked = run_harness_through_chaos(mockbroker, topic, java_argv("produce"), None, args, tmp_path)
    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)


def test_kafkajs_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker,
                                                                            tmp_path: Path) -> None:
    require_kafkajs()
    topic = "chaos-kafkajs"
    make_topic(mockbroker, topic, PARTITIONS)
    argv, env = kafkajs_argv("produce")
    args = {"bootstrap": mockbroker.bootstrap_servers, "topic": topic, "records": records_for(20_000),
            "sync": True, "timeout_ms": 60_000, "deadline_ms": 290_000,
            "producer": {"idempotent": True, "maxInFlightRequests": 1,
                         "retry": {"initialRetryTime": 50, "retries": 10}}}
    acked = run_harness_through_chaos(mockbroker, topic, argv, env, args, tmp_path)
    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)


def test_aiokafka_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaProducer

    topic = "chaos-aio"
    make_topic(mockbroker, topic, PARTITIONS)
    acked: dict[int, list[bytes]] = {}
    chaos = Chaos(mockbroker, topic, PARTITIONS)

    async def run() -> int:
        producer = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, enable_idempotence=True,
                                    acks="all", retry_backoff_ms=20, request_timeout_ms=10_000,
                                    metadata_max_age_ms=1000, linger_ms=2)
        await producer.start()
        sent = 0
        try:
            chaos.start()
            while chaos.is_alive() and sent < 100_000:  # bounded: the chaos run takes ~5 s
                values = [b"%06d" % (sent + k) for k in range(30)]
                futures = [await producer.send(topic, v, partition=(sent + k) % PARTITIONS)
                           for k, v in enumerate(values)]
                sent += len(values)
                for value, meta in zip(values, await asyncio.gather(*futures), strict=True):
                    acked.setdefault(meta.partition, []).append(value)
        finally:
            await producer.stop()
        return sent

    sent = asyncio.run(run())
    chaos.finish()
    assert sum(len(v) for v in acked.values()) == sent
    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)


def test_kafka_python_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker) -> None:
    from kafka import KafkaProducer

    topic = "chaos-kp"
    make_topic(mockbroker, topic, PARTITIONS)
    producer = KafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers.split(","), enable_idempotence=True,
                             acks="all", retry_backoff_ms=20, reconnect_backoff_ms=20,
                             reconnect_backoff_max_ms=200, metadata_max_age_ms=1000, linger_ms=2,
                             request_timeout_ms=10_000)
    acked: dict[int, list[bytes]] = {}
    chaos = Chaos(mockbroker, topic, PARTITIONS)
    chaos.start()
    sent = 0
    try:
        while chaos.is_alive() and sent < 100_000:  # bounded: the chaos run takes ~5 s
            futures = [(b"%06d" % (sent + k), producer.send(topic, b"%06d" % (sent + k),
                                                              partition=(sent + k) % PARTITIONS))
                       for k in range(30)]
            sent += len(futures)
            for value, fut in futures:
                meta = fut.get(timeout=60)
                acked.setdefault(meta.partition, []).append(value)
    finally:
        producer.close(timeout=10)
    chaos.finish()
    assert sum(len(v) for v in acked.values()) == sent
    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)


def test_readme_leader_move_example(mockbroker: MockBroker) -> None:
    """The README's Clusters example, as written there."""
    from confluent_kafka import Producer

    mockbroker.create_topic("orders", 1, replication_factor=3, config={"min.insync.replicas": "2"})
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True})
    producer.produce("orders", b"before")
    producer.flush(30)
    old = mockbroker.partition_state("orders", 0)
    new_leader = next(n for n in old.isr if n != old.leader)
    mockbroker.move_leader("orders", 0, new_leader)
    mockbroker.stop_node(old.leader)
    producer.produce("orders", b"after")
    assert producer.flush(30) == 0
    assert [r.value for r in mockbroker.records("orders")] == [b"before", b"after"]
    mockbroker.start_node(old.leader)
    assert mockbroker.partition_state("orders", 0).isr == old.replicas


@pytest.mark.mockbroker(brokers=3, config={"group.initial.rebalance.delay.ms": 0})
def test_confluent_consumer_group_follows_the_coordinator_when_its_node_stops(mockbroker: MockBroker) -> None:
    """The group's coordinator is the leader of its __consumer_offsets partition; when that node stops the
    partition's leadership, and the coordinator with its state, move to another node, and the group's
    consumer finds the new one, keeps its offsets and reads on."""
    from confluent_kafka import Consumer, Producer

    topic = "chaos-group"
    make_topic(mockbroker, topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True})

    def produce(values: range) -> None:
        for i in values:
            producer.produce(topic, b"%06d" % i, partition=i % PARTITIONS)
        assert producer.flush(30) == 0

    consumer = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": "g-chaos",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200})
    seen: list[bytes] = []

    def consume_until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(seen) < count:
            assert time.monotonic() < deadline, f"read {len(seen)} of {count}"
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                seen.append(msg.value())
                consumer.commit(msg, asynchronous=False)

    try:
        consumer.subscribe([topic])
        produce(range(30))
        consume_until(30)
        before = mockbroker.committed("g-chaos")
        assert sum(before.values()) == 30
        coordinator = mockbroker.partition_state("__consumer_offsets", partition_for("g-chaos", 50)).leader
        mockbroker.stop_node(coordinator)
        moved = mockbroker.partition_state("__consumer_offsets", partition_for("g-chaos", 50)).leader
        assert moved not in (coordinator, -1)
        produce(range(30, 60))
        consume_until(60)
    finally:
        consumer.close()
    assert sorted(seen) == [b"%06d" % i for i in range(60)]
    assert sum(mockbroker.committed("g-chaos").values()) == 60


def test_confluent_acks_all_waits_out_not_enough_replicas_until_a_node_returns(mockbroker: MockBroker) -> None:
    """With two of three replicas stopped the ISR is below min.insync.replicas: the broker refuses the
    append (NOT_ENOUGH_REPLICAS, retriable), librdkafka retries, and delivers once a node is back."""
    from confluent_kafka import Producer

    mockbroker.create_topic("nem", 1, config={"min.insync.replicas": "2"}, assignments=[[1, 2, 3]])
    mockbroker.stop_node(2)
    mockbroker.stop_node(3)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True,
                         "acks": "all", "retry.backoff.ms": 20, "retry.backoff.max.ms": 50,
                         "message.timeout.ms": 60_000})
    producer.produce("nem", b"held")
    deadline = time.monotonic() + 60
    while len(mockbroker.received(PRODUCE)) < 3:  # refused and retried
        assert time.monotonic() < deadline, "the producer did not retry"
        producer.poll(0.05)
    assert mockbroker.records("nem") == []
    assert len(producer) == 1, "the record was given up or delivered while the ISR was too small"
    mockbroker.start_node(2)
    assert producer.flush(60) == 0
    assert [r.value for r in mockbroker.records("nem")] == [b"held"]


def test_kcat_idempotent_producer_through_leader_moves_and_a_node_restart(mockbroker: MockBroker,
                                                                         tmp_path: Path) -> None:
    """kcat -P (librdkafka 2.0) reading lines from a pipe the test feeds while the chaos runs; one partition,
    so every line delivered is in the log once, in the order written."""
    require_kcat()
    topic = "chaos-kcat"
    make_topic(mockbroker, topic, 1)
    exe = clients._deps().kcat_path()  # where run_kcat finds it
    assert exe is not None
    argv = [exe, "-b", mockbroker.bootstrap_servers, "-P", "-t", topic, "-p", "0",
            "-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=2", "-X", "retry.backoff.ms=20",
            "-X", "reconnect.backoff.ms=20", "-X", "reconnect.backoff.max.ms=200", "-X", "message.timeout.ms=60000"]
    err_path = tmp_path / "kcat.stderr"
    with err_path.open("wb") as err_file:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err_file)
    assert proc.stdin is not None
    chaos = Chaos(mockbroker, topic, 1)
    chaos.start()
    sent = 0
    try:
        while chaos.is_alive() and sent < 200_000:  # bounded: the chaos run takes ~5 s
            proc.stdin.write(b"".join(b"%06d\n" % (sent + k) for k in range(20)))
            proc.stdin.flush()
            sent += 20
            time.sleep(0.002)
        proc.stdin.close()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    chaos.finish()
    err = err_path.read_bytes()
    assert proc.returncode == 0 and b"delivery failed" not in err.lower(), err.decode(errors="replace")[-2000:]
    acked = {0: [b"%06d" % i for i in range(sent)]}
    check_exactly_once_in_order(mockbroker, topic, 1, acked)
    assert len(mockbroker.records(topic)) == sent
