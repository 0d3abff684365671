"""Share groups with confluent-kafka's ShareConsumer, the scenarios issue 31 names beyond the main file
(tests/interop/test_share_groups.py): a member that leaves hands the records it holds back to the group
(another member gets them, delivery count up, no lock timeout needed), and the `mockbroker` command serves
share groups to confluent-kafka's ShareConsumer and Java's KafkaShareConsumer as the fixture does (judged by what the consumers read: the command has no log to inspect)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from mockbroker.server import MockBroker
from tests.interop.clients import of_type, run_java
from tests.interop.test_share_groups import produce, wait_for

pytestmark = pytest.mark.interop

Delivery = tuple[int, int, int]  # partition, offset, delivery count


def share_consumer(bootstrap: str, group: str, topic: str, explicit: bool = False) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    c.subscribe([topic])
    return c


def poll_into(consumer: ShareConsumer, deliveries: list[Delivery]) -> None:
    for m in consumer.poll(0.2) or []:
        assert m.error() is None, m.error()
        deliveries.append((m.partition(), m.offset(), m.delivery_count()))


def test_a_member_that_leaves_hands_its_acquired_records_to_the_others(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    # Locks of an hour: the records can only come back through the leave, never through a lock timeout.
    broker = mockbroker_factory(config={"share.auto.offset.reset": "earliest",
                                        "group.share.max.record.lock.duration.ms": 3_600_000,
                                        "group.share.record.lock.duration.ms": 3_600_000})
    broker.create_topic("handed", 1)
    produce(broker, 3, 1, topic="handed")
    holder = share_consumer(broker.bootstrap_servers, "sg-leave", "handed", explicit=True)
    held: list[Delivery] = []
    closed = False
    try:
        wait_for(lambda: held, lambda: poll_into(holder, held), timeout=60.0)  # polled once: its records stay acquired
        records = broker.share_groups()["sg-leave"]["partitions"]["handed-0"]["records"]
        assert [(r["state"], r["delivery_count"]) for r in records] == [("ACQUIRED", 1)] * 3
        holder.close()  # leaves the group without acknowledging
        closed = True
        other = share_consumer(broker.bootstrap_servers, "sg-leave", "handed")
        later: list[Delivery] = []
        try:
            wait_for(lambda: len(later) >= 3, lambda: poll_into(other, later), timeout=60.0)  # no clock moved: no lock expired
        finally:
            other.close()
    finally:
        if not closed:
            holder.close()
    assert sorted(later) == [(0, 0, 2), (0, 1, 2), (0, 2, 2)]


def a_topic_and_group_on_the_command(bootstrap: str, records: int) -> tuple[str, str]:
    """A fresh topic of 2 partitions holding `records` records and a share group reading it from the start,
    made over the wire (the command's broker is shared by the session: fresh names each time)."""
    topic, group = f"queue-{uuid.uuid4().hex[:8]}", f"sg-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    produce(bootstrap, records, 2, topic=topic)
    return topic, group


def test_the_command_serves_share_groups_each_record_once(cli_broker: str) -> None:
    topic, group = a_topic_and_group_on_the_command(cli_broker, 20)
    members = [share_consumer(cli_broker, group, topic) for _ in range(2)]
    deliveries: list[Delivery] = []
    try:
        def poll_each() -> None:
            for member in members:
                poll_into(member, deliveries)
        wait_for(lambda: len(deliveries) >= 20, poll_each, timeout=60.0)
        for _ in range(3):  # a few more rounds: nothing is delivered twice
            poll_each()
    finally:
        for member in members:
            member.close()
    assert sorted((p, o) for p, o, _ in deliveries) == sorted((i % 2, i // 2) for i in range(20))
    assert {n for *_, n in deliveries} == {1}


@pytest.mark.java
def test_the_command_serves_javas_share_consumer_each_record_once(cli_broker: str) -> None:
    topic, group = a_topic_and_group_on_the_command(cli_broker, 20)
    run = run_java("share-consume", {"bootstrap": cli_broker, "topic": topic, "group_id": group, "idle_ms": 3000,
                                     "stop_after_ms": 40000}, timeout=90)
    records = of_type(run, "record")
    assert sorted((r["partition"], r["offset"]) for r in records) == sorted((i % 2, i // 2) for i in range(20))
    assert {r["delivery_count"] for r in records} == {1}
