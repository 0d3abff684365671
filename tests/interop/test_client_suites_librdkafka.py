"""librdkafka (confluent-kafka) in the sequences aiokafka's suite found gaps in: a regex subscription
(`^prefix.*`, refreshed every topic.metadata.refresh.interval.ms) over topics auto-created later, and a
member that stops polling past max.poll.interval.ms; for the classic protocol and KIP-848.

Broker settings are those of confluent-kafka-python's integration suite (a trivup cluster): Kafka's own
defaults (group.initial.rebalance.delay.ms stays 3000) and auto-created topics with 3 partitions
(trivup's num_partitions); for KIP-848 groups half-second heartbeats (group.consumer.heartbeat.interval.ms).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.server import MockBroker
from tests.interop.test_groups_python import wait_until

pytestmark = pytest.mark.interop
ck = pytest.importorskip("confluent_kafka")

SUITE_CONFIG = {"num.partitions": 3, "group.initial.rebalance.delay.ms": 3000, "group.consumer.heartbeat.interval.ms": 500}
SETTLE_S = 60.0
SESSION_S = 45.0  # group.consumer.session.timeout.ms, Kafka's default
CONSUMER_GROUP_HEARTBEAT = 68
PROTOCOLS: dict[str, dict[str, Any]] = {"classic": {"group.protocol": "classic", "session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
             "consumer": {"group.protocol": "consumer"}}


class Member:
    """A librdkafka consumer polling on its own thread; `stalled` stops its polls (a stuck application)."""

    def __init__(self, broker: MockBroker, group: str, client_id: str, subscription: list[str], **config: Any) -> None:
        self.consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                                     "client.id": client_id, "auto.offset.reset": "earliest",
                                     "enable.auto.commit": True, "auto.commit.interval.ms": 200, **config})
        self.records: list[tuple[str, int, str]] = []
        self.errors: list[str] = []
        self.assigned: list[set[tuple[str, int]]] = []
        self.stalled = threading.Event()
        self._stop = threading.Event()
        self.consumer.subscribe(subscription, on_assign=self._on_assign)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_assign(self, _consumer: Any, partitions: list[Any]) -> None:
        self.assigned.append({(p.topic, p.partition) for p in partitions})

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.stalled.is_set():
                self._stop.wait(0.02)
                continue
            msg = self.consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                self.errors.append(msg.error().name())
                continue
            self.records.append((msg.topic(), msg.partition(), msg.value().decode()))

    def close(self) -> None:
        self.stalled.clear()
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


def produce(broker: MockBroker, topic: str, values: list[str], partition: int = 0) -> None:
    """librdkafka's producer; a topic that does not exist is auto-created by its Metadata request."""
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    for v in values:
        producer.produce(topic, value=v.encode(), partition=partition)
    assert producer.flush(30) == 0


def owned(broker: MockBroker, group: str) -> dict[str, set[tuple[str, int]]]:
    """client id -> the partitions the broker has it own (stable groups only, else {})."""
    g = next((g for g in broker.groups() if g.group_id == group), None)
    if g is None or g.state != "Stable":
        return {}
    return {m.client_id: {(t, p) for t, ps in (m.assignment or {}).items() for p in ps} for m in g.members}


def heartbeats_after_last_of(broker: MockBroker, quiet: str, busy: str) -> int:
    """How many KIP-848 heartbeats `busy` sent after the last one of `quiet`."""
    senders = [r.client_id for r in broker.received(CONSUMER_GROUP_HEARTBEAT)]
    last = max((i for i, c in enumerate(senders) if c == quiet), default=-1)
    return senders[last + 1:].count(busy)


def advance_past_session(broker: MockBroker, clock: Clock, survivor: str, session_s: float) -> None:
    """Move the broker clock past one session timeout in steps of a third of it, waiting after each step
    for a heartbeat of the survivor (so only a member that stopped heartbeating expires)."""
    for _ in range(4):
        clock.advance(session_s / 3)
        now = clock.now_ms()
        wait_until(partial(heartbeated_at, broker, survivor, now), SETTLE_S, f"a heartbeat of {survivor}")


def heartbeated_at(broker: MockBroker, client_id: str, now_ms: int) -> bool:
    return any(r.client_id == client_id and r.time_ms >= now_ms for r in broker.received(CONSUMER_GROUP_HEARTBEAT))


def owns(broker: MockBroker, group: str, want: dict[str, set[tuple[str, int]]]) -> bool:
    return owned(broker, group) == want


def has_read(member: Member, topic: str, values: list[str]) -> bool:
    return [v for t, _, v in member.records if t == topic] == values


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_librdkafka_regex_subscription_follows_auto_created_topics(
        mockbroker_factory: Callable[..., MockBroker], protocol: str) -> None:
    broker = mockbroker_factory(config=dict(SUITE_CONFIG))
    group, prefix = f"lrd-regex-{protocol}", f"lrd-regex-{protocol}-"
    member = Member(broker, group, "regex-member", [f"^{prefix}.*"], **PROTOCOLS[protocol],
                    **{"topic.metadata.refresh.interval.ms": 500})
    try:
        expected: set[tuple[str, int]] = set()
        for n in (1, 2):
            topic = f"{prefix}{n}"
            produce(broker, topic, [f"{topic}-a", f"{topic}-b"])
            expected |= {(topic, p) for p in range(3)}
            wait_until(partial(owns, broker, group, {"regex-member": set(expected)}), SETTLE_S,
                       f"{topic}'s partitions to be assigned (now {owned(broker, group)})", 0.1)
            wait_until(partial(has_read, member, topic, [f"{topic}-a", f"{topic}-b"]), SETTLE_S,
                       f"the member to read {topic}")
    finally:
        member.close()
    assert sorted(v for _, _, v in member.records) == [f"{prefix}1-a", f"{prefix}1-b", f"{prefix}2-a", f"{prefix}2-b"]
    assert sorted(t for t in broker.topics() if t.startswith(prefix)) == [f"{prefix}1", f"{prefix}2"]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_librdkafka_member_past_max_poll_interval_leaves_and_rejoins_on_its_next_poll(
        mockbroker_factory: Callable[..., MockBroker], protocol: str) -> None:
    """The member that stops polling (max.poll.interval.ms=6000, librdkafka's floor being the session
    timeout) leaves the group from librdkafka's own thread; the other gets every partition and reads what
    is produced meanwhile (KIP-848: after its session timeout, see below); the next poll reports the exceeded interval and rejoins. The broker clock is
    frozen (so no initial delay), so no session or rebalance timeout can remove the stalled member: only
    its leaving does."""
    clock = Clock(frozen=True)
    broker = mockbroker_factory(config={**SUITE_CONFIG, "group.initial.rebalance.delay.ms": 0}, clock=clock)
    topic, group = f"lrd-maxpoll-{protocol}", f"lrd-maxpoll-{protocol}"
    broker.create_topic(topic, 2)
    everything = {(topic, 0), (topic, 1)}
    stuck = Member(broker, group, "stuck", [topic], **PROTOCOLS[protocol], **{"max.poll.interval.ms": 6000})
    other = Member(broker, group, "other", [topic], **PROTOCOLS[protocol])
    try:
        wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                   f"both members to own a partition (now {owned(broker, group)})", 0.1)
        stuck.stalled.set()
        if protocol == "consumer":
            # librdkafka's KIP-848 member past max.poll.interval.ms stops heartbeating and sends its leave
            # heartbeat only when the application polls again: until then only its session timeout (on
            # the broker clock, moved in steps while the other member heartbeats) removes it, on Kafka too.
            wait_until(lambda: heartbeats_after_last_of(broker, "stuck", "other") >= 4, SETTLE_S,
                       "the stalled member to stop heartbeating")
            advance_past_session(broker, clock, "other", SESSION_S)
        wait_until(lambda: owned(broker, group) == {"other": everything}, SETTLE_S,
                   f"the stalled member to leave and the other to own everything (now {owned(broker, group)})", 0.1)
        produce(broker, topic, ["p0-while-stalled"], partition=0)
        produce(broker, topic, ["p1-while-stalled"], partition=1)
        wait_until(lambda: sorted(v for _, _, v in other.records) == ["p0-while-stalled", "p1-while-stalled"],
                   SETTLE_S, "the remaining member to read both partitions")
        wait_until(lambda: broker.committed(group) == {(topic, 0): 1, (topic, 1): 1}, SETTLE_S,
                   "the remaining member to commit what it read")
        stuck.stalled.clear()
        wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                   f"the member to rejoin on its next poll and share the partitions (now {owned(broker, group)})",
                   0.1)
        produce(broker, topic, ["p0-after"], partition=0)
        produce(broker, topic, ["p1-after"], partition=1)
        wait_until(lambda: sorted(v for m in (stuck, other) for _, _, v in m.records if v.endswith("after"))
                   == ["p0-after", "p1-after"], SETTLE_S, "both partitions to be read after the rejoin")
    finally:
        stuck.close()
        other.close()
    assert "_MAX_POLL_EXCEEDED" in stuck.errors
    assert not [v for _, _, v in stuck.records if v.endswith("while-stalled")]
