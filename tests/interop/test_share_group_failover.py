"""Share groups on a 3-node cluster when a node stops, with confluent-kafka's ShareConsumer: a share partition
lives on its partition's leader, so when the leader stops the new leader starts from the share state with
nothing acquired (Kafka loads it from __share_group_state): the records held through the old leader are
available again at once, not at their lock's end, and are delivered again with the delivery count up; the
consumer carries on with the new leader. Stopping the share group's coordinator moves the group to the next
coordinator with its members, and consumption goes on."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import AcknowledgeType, Message, Producer

from mockbroker.server import MockBroker
from tests.interop.clients import of_type, run_java
from tests.interop.test_share_groups import (
    TOPIC,
    Delivery,
    close_all,
    poll_all,
    settled,
    share_consumer,
    wait_for,
)

pytestmark = pytest.mark.interop
# A lock far longer than the tests' bounds: records come back because the leader moved, not because it ran out.
CONFIG = {"share.auto.offset.reset": "earliest", "group.share.record.lock.duration.ms": 600_000}
REPLICAS = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]


def cluster_with_topic(factory: Callable[..., MockBroker]) -> MockBroker:
    broker = factory(brokers=3, config=dict(CONFIG))
    broker.create_topic(TOPIC, assignments=REPLICAS)
    return broker


def produce(broker: MockBroker, start: int, count: int) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
    for i in range(start, start + count):
        p.produce(TOPIC, value=f"v{i}".encode(), partition=i % 3)
    assert p.flush(30) == 0


def states(broker: MockBroker, group: str, partition: int) -> list[tuple[int, str, int]]:
    records = broker.share_groups()[group]["partitions"][f"{TOPIC}-{partition}"]["records"]
    return [(r["offset"], r["state"], r["delivery_count"]) for r in records]


def test_records_held_through_a_stopped_leader_come_back_at_once_and_the_consumer_carries_on(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = cluster_with_topic(mockbroker_factory)
    produce(broker, 0, 9)
    consumer = share_consumer(broker, "sg-move", explicit=True)
    held: list[Message] = []
    deliveries: list[Delivery] = []
    try:
        deadline = time.monotonic() + 60
        while not held and time.monotonic() < deadline:  # one poll's records (one partition), not acknowledged
            for m in consumer.poll(0.3) or []:
                assert m.error() is None, m.error()
                held.append(m)
                deliveries.append(("m", m.partition(), m.offset(), m.delivery_count()))
        [moved] = {m.partition() for m in held}
        assert [(o, state) for o, state, _ in states(broker, "sg-move", moved)] == [(m.offset(), "ACQUIRED") for m in held]
        old_leader = broker.partition_state(TOPIC, moved).leader
        broker.stop_node(old_leader)
        assert broker.partition_state(TOPIC, moved).leader not in (old_leader, -1)
        assert states(broker, "sg-move", moved) == [(m.offset(), "AVAILABLE", 1) for m in held]  # at once
        for m in held:
            consumer.acknowledge(m, AcknowledgeType.ACCEPT)
        consumer.commit_sync()  # fails for them: the records are not held any more
        members = {"m": consumer}
        wait_for(lambda: settled(broker, "sg-move", {p: 3 for p in range(3)}),
                 lambda: poll_all(members, deliveries, lambda m: AcknowledgeType.ACCEPT), timeout=60)
    finally:
        consumer.close()
    again = sorted((p, o, n) for _, p, o, n in deliveries if n == 2)
    assert again == sorted((moved, m.offset(), 2) for m in held)  # only the records held came again
    assert sorted((p, o) for _, p, o, n in deliveries if n == 1) == [(p, o) for p in range(3) for o in range(3)]


def test_stopping_the_share_coordinator_moves_the_group_and_consumption_goes_on(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = cluster_with_topic(mockbroker_factory)
    produce(broker, 0, 9)
    members = {"m": share_consumer(broker, "sg-coord")}
    deliveries: list[Delivery] = []
    try:
        wait_for(lambda: settled(broker, "sg-coord", {p: 3 for p in range(3)}), lambda: poll_all(members, deliveries))
        [member_id] = broker.share_groups()["sg-coord"]["members"]
        coordinator = broker.node.group_coordinator_id("sg-coord")
        broker.stop_node(coordinator)
        assert broker.node.group_coordinator_id("sg-coord") != coordinator
        produce(broker, 9, 9)
        wait_for(lambda: settled(broker, "sg-coord", {p: 6 for p in range(3)}), lambda: poll_all(members, deliveries),
                 timeout=60)
        assert list(broker.share_groups()["sg-coord"]["members"]) == [member_id]  # the same member carried on
    finally:
        close_all(members)
    assert sorted((p, o) for _, p, o, _ in deliveries) == [(p, o) for p in range(3) for o in range(6)]


@pytest.mark.java
def test_java_share_group_carries_on_after_its_partitions_leader_stops(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    """Java's KafkaShareConsumer acknowledges every record, a leader stops (its partition moves to another
    node with a new leader epoch), and the group's next run gets exactly the records written since: the
    share partitions' state follows the leader move."""
    broker = cluster_with_topic(mockbroker_factory)
    produce(broker, 0, 6)

    def consume() -> list[tuple[int, int, int]]:
        run = run_java("share-consume", {"bootstrap": broker.bootstrap_servers, "topic": TOPIC, "group_id": "jfail",
                                         "idle_ms": 3000, "stop_after_ms": 40000}, timeout=90)
        return sorted((r["partition"], r["offset"], r["delivery_count"]) for r in of_type(run, "record"))

    assert consume() == [(p, o, 1) for p in range(3) for o in range(2)]
    broker.stop_node(1)  # the leader of partition 0
    produce(broker, 6, 6)
    assert consume() == [(p, o, 1) for p in range(3) for o in range(2, 4)]
