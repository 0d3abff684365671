"""Sequences from aiokafka's own integration suite (tests/test_consumer.py of aio-libs/aiokafka 0.14), run
against mockbroker with the settings of the Kafka that suite runs against.

aiokafka's suite starts Kafka in docker from the distribution's config/server.properties plus overrides
(docker/scripts/start-kafka.sh, tests/conftest.py): group.initial.rebalance.delay.ms=0 (server.properties
sets it for development and testing), num.partitions=2 (NUM_PARTITIONS), auto.create.topics.enable=true.
Its timing windows assume that first setting: with Kafka's built-in 3 s a new group's first rebalance
outlasts the suite's 2 s wait for the first record, and an idle member (max_poll_interval_ms=3000) is idle
past its limit before its first assignment, so it never rejoins — on Kafka as here.

The suite's fixed sleeps (0.3 s, then assert) are bounded waits here: the tests pin what happens and in
which order, never how fast.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import pytest
from aiokafka import AIOKafkaClient, AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.structs import TopicPartition

from mockbroker import MockBroker
from mockbroker.clock import Clock

pytestmark = pytest.mark.interop

# The suite's Kafka: server.properties (group.initial.rebalance.delay.ms=0) + NUM_PARTITIONS=2 + auto-create.
SUITE_CONFIG = {"group.initial.rebalance.delay.ms": 0, "num.partitions": 2, "auto.create.topics.enable": True}
WAIT_S = 30.0
LEAVE_GROUP, JOIN_GROUP = 13, 11


@pytest.fixture
def broker(mockbroker_factory: Callable[..., MockBroker]) -> MockBroker:
    return mockbroker_factory(config=dict(SUITE_CONFIG))


async def eventually(predicate: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll `predicate` on the test's loop until it is truthy (bounded); fail with `what` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.05)


def run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(coro(), 120))


def partitions(topic: str) -> set[TopicPartition]:
    return {TopicPartition(topic, 0), TopicPartition(topic, 1)}  # num.partitions=2


async def follow_pattern_over_auto_created_topics(broker: MockBroker, group_id: str | None, prefix: str) -> None:
    """test_consumer_subscribe_pattern_with_autocreate / _autocreate_no_group_id: a pattern subscription
    sees no topic, then each topic a producer's Metadata request auto-creates, and reads from the first."""
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, metadata_max_age_ms=200,
                                group_id=group_id, fetch_max_wait_ms=50, auto_offset_reset="earliest")
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    await consumer.start()
    try:
        consumer.subscribe(pattern=f"^{prefix}.*$")
        consume_task = asyncio.ensure_future(consumer.getone())
        await asyncio.sleep(0.3)
        assert not consume_task.done()
        assert consumer.subscription() == set()
        assert not [t for t in broker.topics() if t.startswith(prefix)]

        await producer.start()
        first, second = f"{prefix}1", f"{prefix}2"
        await producer.client._wait_on_metadata(first)  # auto-creates it
        await eventually(lambda: consumer.subscription() == {first}, f"the subscription to follow {first}")
        await eventually(lambda: consumer.assignment() == partitions(first), f"{first}'s partitions to be assigned")
        assert not consume_task.done()

        await producer.client._wait_on_metadata(second)
        await eventually(lambda: consumer.subscription() == {first, second}, f"the subscription to follow {second}")
        await eventually(lambda: consumer.assignment() == partitions(first) | partitions(second),
                         f"{second}'s partitions to be assigned too")
        assert not consume_task.done()

        await producer.send_and_wait(first, b"test msg")
        record = await asyncio.wait_for(consume_task, WAIT_S)
        assert (record.topic, record.value) == (first, b"test msg")
    finally:
        await producer.stop()
        await consumer.stop()


def test_pattern_subscription_in_a_group_follows_auto_created_topics(broker: MockBroker) -> None:
    run(lambda: follow_pattern_over_auto_created_topics(broker, "some_group", "some-autocreate-pattern-"))
    [group] = [g for g in broker.groups() if g.group_id == "some_group"]
    assert group.state == "Empty"  # the consumer left when it stopped


def test_pattern_subscription_without_a_group_follows_auto_created_topics(broker: MockBroker) -> None:
    run(lambda: follow_pattern_over_auto_created_topics(broker, None, "no-group-pattern-"))
    assert broker.groups() == []


def shared_exactly(members: list[AIOKafkaConsumer], want: set[TopicPartition]) -> bool:
    """The members' assignments are disjoint and together `want`."""
    first, second = (m.assignment() for m in members)
    return bool(first | second == want and not first & second)


class Listener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.revoked: list[set[TopicPartition]] = []
        self.assigned: list[set[TopicPartition]] = []
        self.assignment_ready = asyncio.Event()

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.revoked.append(set(revoked))
        self.assignment_ready.clear()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.assigned.append(set(assigned))
        self.assignment_ready.set()


def test_two_pattern_members_rebalance_onto_each_auto_created_topic(broker: MockBroker) -> None:
    """test_consumer_rebalance_on_new_topic: two members of one group with the same pattern; each topic a
    client auto-creates is assigned between them after a rebalance."""
    prefix = "another-autocreate-pattern-"

    async def scenario() -> None:
        client = AIOKafkaClient(bootstrap_servers=broker.bootstrap_servers, client_id="test_autocreate")
        await client.bootstrap()
        members = [AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, metadata_max_age_ms=200,
                                    group_id="test-autocreate-rebalance", heartbeat_interval_ms=100)
                   for _ in range(2)]
        listeners = [Listener(), Listener()]
        try:
            for member, listener in zip(members, listeners, strict=True):
                member.subscribe(pattern=f"^{prefix}.*$", listener=listener)
                await member.start()
            await asyncio.sleep(0.5)
            assert [m.assignment() for m in members] == [set(), set()]
            expected: set[TopicPartition] = set()
            for topic in (f"{prefix}1", f"{prefix}2"):
                await client._wait_on_metadata(topic)
                expected |= partitions(topic)
                await eventually(partial(shared_exactly, members, set(expected)),
                                 f"{topic}'s partitions to be shared between the members")
                await eventually(lambda: all(listener.assignment_ready.is_set() for listener in listeners),
                                 "both members' assignment callbacks")
            assert members[0].assignment() and members[1].assignment()
        finally:
            for member in members:
                await member.stop()
            await client.close()

    run(scenario)


def test_member_idle_past_max_poll_interval_leaves_and_rejoins_when_it_polls_again(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    """test_max_poll_interval_ms: of two members, the one with max_poll_interval_ms=3000 stops polling; it
    leaves the group (LeaveGroup), the other takes its partition over and reads all 20 records; when the
    first polls again it rejoins and both partitions are shared again. The broker clock is frozen, so no
    session or rebalance timeout can remove the idle member: only its LeaveGroup does."""
    broker = mockbroker_factory(config=dict(SUITE_CONFIG), clock=Clock(frozen=True))
    topic = "topic-max-poll-interval"
    group = "group-max-poll-interval"

    async def send(partition: int, values: range) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        await producer.start()
        try:
            for v in values:
                await producer.send_and_wait(topic, str(v).encode(), partition=partition)
        finally:
            await producer.stop()

    async def member(**kwargs: Any) -> AIOKafkaConsumer:
        c = AIOKafkaConsumer(topic, group_id=group, bootstrap_servers=broker.bootstrap_servers,
                             enable_auto_commit=True, auto_offset_reset="earliest", **kwargs)
        await c.start()
        await c.seek_to_committed()
        return c

    def left(client_id: str) -> bool:
        return any(r.client_id == client_id for r in broker.received(LEAVE_GROUP))

    async def scenario() -> None:
        await send(0, range(10))
        await send(1, range(10, 20))
        stuck = await member(max_poll_interval_ms=3000, client_id="c1", heartbeat_interval_ms=100)
        other = await member(heartbeat_interval_ms=100, client_id="c2")
        try:
            stuck_listener, other_listener = Listener(), Listener()
            stuck.subscribe([topic], listener=stuck_listener)
            other.subscribe([topic], listener=other_listener)
            for _ in range(5):
                await asyncio.wait_for(stuck_listener.assignment_ready.wait(), WAIT_S)
                await asyncio.wait_for(other_listener.assignment_ready.wait(), WAIT_S)
                if stuck_listener.assignment_ready.is_set():
                    break
            assert stuck.assignment() and other.assignment()
            assert not left("c1")

            # c1 does not poll from here on: past 3 s it leaves, c2 gets both partitions and reads all.
            seen = [int((await asyncio.wait_for(other.getone(), WAIT_S)).value) for _ in range(20)]
            assert sorted(seen) == list(range(20))
            assert left("c1")
            assert other.assignment() == partitions(topic)
            [summary] = [g for g in broker.groups() if g.group_id == group]
            assert [m.client_id for m in summary.members] == ["c2"]

            # c1 polls again: it rejoins, and reads what is produced from now on of the partition it gets.
            await send(0, range(20, 30))
            await send(1, range(30, 40))
            for _ in range(10):
                value = int((await asyncio.wait_for(stuck.getone(), WAIT_S)).value)
                assert value >= 20
            await eventually(lambda: stuck.assignment() and other.assignment()
                             and stuck.assignment() | other.assignment() == partitions(topic),
                             "the partitions to be shared again")
            requests = [(r.api_key, r.client_id) for r in broker.received()]
            assert (JOIN_GROUP, "c1") in requests[requests.index((LEAVE_GROUP, "c1")):]  # joined again
        finally:
            await stuck.stop()
            await other.stop()

    run(scenario)
