"""Real clients against replication on a 3-node cluster: KIP-320 truncation detection after an unclean
election cut the log back (the Java consumer and librdkafka re-read from where the log diverged instead
of skipping the new leader's records), and KIP-392 follower fetching (a Java consumer with client.rack
reads from the follower in its rack)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker import MockBroker
from tests.interop.clients import java_argv, require_java, run_java

pytestmark = [pytest.mark.interop, pytest.mark.mockbroker(brokers=3, racks=["a", "b", "c"])]
FETCH = 1


def wait_for(check: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    assert check()


def diverge(broker: MockBroker, topic: str) -> None:
    """Four records in epoch 0 with node 2 out of the ISR after the first two."""
    from confluent_kafka import Producer

    broker.create_topic(topic, assignments=[[1, 2]], config={"unclean.leader.election.enable": "true"})
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "1", "linger.ms": 0})
    for value in (b"a", b"b"):
        producer.produce(topic, value, partition=0)
        assert producer.flush(30) == 0
    broker.set_isr(topic, 0, [1])
    for value in (b"c", b"d"):
        producer.produce(topic, value, partition=0)
        assert producer.flush(30) == 0


def unclean_failover_and_write(broker: MockBroker, topic: str) -> None:
    """Node 1 stops: node 2 (behind) leads at epoch 1 with offsets 0-1 only; three new records go to 2-4."""
    from confluent_kafka import Producer

    broker.stop_node(1)
    state = broker.partition_state(topic, 0)
    assert (state.leader, state.leader_epoch) == (2, 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "1", "linger.ms": 0})
    for value in (b"e", b"f", b"g"):
        producer.produce(topic, value, partition=0)
        assert producer.flush(30) == 0
    assert [(r.offset, r.value) for r in broker.records(topic)] == [(0, b"a"), (1, b"b"), (2, b"e"), (3, b"f"),
                                                                   (4, b"g")]


@pytest.mark.java
def test_the_java_consumer_detects_the_truncation_and_reads_the_new_leaders_records(mockbroker: MockBroker) -> None:
    require_java()
    topic = "diverge-java"
    diverge(mockbroker, topic)
    args = {"bootstrap": mockbroker.bootstrap_servers, "topic": topic, "partitions": [0], "seek": "beginning",
            "max_records": 7, "timeout_ms": 60_000, "deadline_ms": 90_000, "log_level": "INFO",
            "config": {"metadata.max.age.ms": 1000, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 200}}
    proc = subprocess.Popen(java_argv("consume"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(args).encode())
    proc.stdin.close()
    records: list[dict[str, Any]] = []
    try:
        for raw in proc.stdout:
            line = json.loads(raw)
            if line["type"] == "record":
                records.append(line)
                if len(records) == 4:  # a-d read in epoch 0: now the unclean failover
                    unclean_failover_and_write(mockbroker, topic)
            if line["type"] in ("done", "fatal"):
                break
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
        stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    got = [(r["offset"], r["value"], r["leader_epoch"]) for r in records]
    # Without KIP-320 the consumer would go on at offset 4 and miss e and f.
    assert got == [(0, "a", 0), (1, "b", 0), (2, "c", 0), (3, "d", 0), (2, "e", 1), (3, "f", 1), (4, "g", 1)], stderr
    assert "Truncation detected" in stderr


def test_librdkafka_detects_the_truncation_and_reads_the_new_leaders_records(mockbroker: MockBroker) -> None:
    from confluent_kafka import Consumer, TopicPartition

    topic = "diverge-rdkafka"
    diverge(mockbroker, topic)
    consumer = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": "g-diverge",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "topic.metadata.refresh.interval.ms": 1000, "reconnect.backoff.ms": 50,
                         "reconnect.backoff.max.ms": 200})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[tuple[int, bytes, int | None]] = []
    errors: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < 7 and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                errors.append(str(msg.error()))
                continue
            got.append((msg.offset(), msg.value(), msg.leader_epoch()))
            if len(got) == 4:
                unclean_failover_and_write(mockbroker, topic)
    finally:
        consumer.close()
    assert got == [(0, b"a", 0), (1, b"b", 0), (2, b"c", 0), (3, b"d", 0), (2, b"e", 1), (3, b"f", 1),
                   (4, b"g", 1)], errors


@pytest.mark.java
def test_a_java_consumer_with_client_rack_fetches_from_the_follower_in_its_rack() -> None:
    require_java()
    from confluent_kafka import Producer

    config = {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
    with MockBroker(brokers=3, racks=["a", "b", "c"], config=config).run_in_thread() as broker:
        broker.create_topic("racked", assignments=[[1, 2, 3]])
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        for i in range(20):
            producer.produce("racked", b"%d" % i, partition=0)
        assert producer.flush(30) == 0
        args = {"bootstrap": broker.bootstrap_servers, "topic": "racked", "partitions": [0],
                "seek": "beginning", "max_records": 20, "timeout_ms": 30_000,
                "config": {"client.rack": "c", "max.poll.records": 5, "fetch.max.bytes": 200,
                           "max.partition.fetch.bytes": 100}}
        lines = run_java("consume", args, timeout=60)
        values = [line["value"] for line in lines if line["type"] == "record"]
        assert values == [str(i) for i in range(20)]
        fetched_from = {r.node_id for r in broker.received(FETCH)}
        assert 3 in fetched_from, fetched_from  # the follower in rack c served fetches
