"""kafka-python in the sequences aiokafka's suite found gaps in: a pattern subscription over topics
auto-created later, and a member that stops polling past max_poll_interval_ms.

Broker settings are those of kafka-python's integration suite (servers/resources/default/kafka.properties):
group.initial.rebalance.delay.ms=0, group.min.session.timeout.ms=1000, and auto-created topics with the
fixture's partition count (2 here).
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
kafka = pytest.importorskip("kafka")

SUITE_CONFIG = {"group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 1000, "num.partitions": 2}
SETTLE_S = 60.0
HEARTBEAT, LEAVE_GROUP = 12, 13


class Member:
    """A kafka-python consumer polling on its own thread; `stalled` stops its polls (a stuck application)."""

    def __init__(self, broker: MockBroker, group: str, client_id: str, *, topic: str | None = None,
                 pattern: str | None = None, **config: Any) -> None:
        self.consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                            client_id=client_id, auto_offset_reset="earliest",
                                            heartbeat_interval_ms=100, auto_commit_interval_ms=200, **config)
        if pattern is not None:
            self.consumer.subscribe(pattern=pattern)
        else:
            self.consumer.subscribe([topic])
        self.records: list[tuple[str, int, str]] = []
        self.stalled = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.stalled.is_set():
                self._stop.wait(0.02)
                continue
            # kafka-python 3.0 spends the poll's timeout on a pre-rebalance commit too, and with a short
            # one gives the commit up and then never applies the SyncGroup answer that follows (the member
            # keeps its old partitions, "not part of an active group"): a poll of 1 s leaves it time.
            for tp, batch in self.consumer.poll(timeout_ms=1000).items():
                self.records += [(tp.topic, tp.partition, r.value.decode()) for r in batch]

    def close(self) -> None:
        self.stalled.clear()
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


def produce(broker: MockBroker, topic: str, values: list[str], partition: int = 0) -> None:
    """kafka-python's producer; a topic that does not exist is auto-created by its Metadata request."""
    producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    try:
        for v in values:
            producer.send(topic, v.encode(), partition=partition).get(30)
    finally:
        producer.close()


def owned(broker: MockBroker, group: str) -> dict[str, set[tuple[str, int]]]:
    """client id -> the partitions the broker has it own (stable groups only, else {})."""
    g = next((g for g in broker.groups() if g.group_id == group), None)
    if g is None or g.state != "Stable":
        return {}
    return {m.client_id: {(t, p) for t, ps in (m.assignment or {}).items() for p in ps} for m in g.members}


def heartbeats_from(broker: MockBroker, client_id: str) -> int:
    return sum(1 for r in broker.received(HEARTBEAT) if r.client_id == client_id)


def owns(broker: MockBroker, group: str, want: dict[str, set[tuple[str, int]]]) -> bool:
    return owned(broker, group) == want


def test_kafka_python_pattern_subscription_follows_auto_created_topics(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(SUITE_CONFIG))
    group, prefix = "kp-pattern", "kp-pattern-"
    member = Member(broker, group, "pattern-member", pattern=f"^{prefix}.*", metadata_max_age_ms=200)
    try:
        for n in (1, 2):
            topic = f"{prefix}{n}"
            produce(broker, topic, [f"{topic}-a", f"{topic}-b"])
            want = {(f"{prefix}{i}", p) for i in range(1, n + 1) for p in range(2)}
            wait_until(partial(owns, broker, group, {"pattern-member": want}), SETTLE_S,
                       f"{topic}'s partitions to be assigned (now {owned(broker, group)})", 0.1)
        wait_until(lambda: len(member.records) == 4, SETTLE_S, "the member to read both topics")
    finally:
        member.close()
    assert sorted(v for _, _, v in member.records) == [f"{prefix}1-a", f"{prefix}1-b", f"{prefix}2-a", f"{prefix}2-b"]


def test_kafka_python_member_past_max_poll_interval_leaves_and_rejoins_on_its_next_poll(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    """The member that stops polling (max_poll_interval_ms=3000) leaves the group from its heartbeat
    thread (LeaveGroup); the other gets every partition and reads what is produced meanwhile; the next poll
    rejoins. The broker clock is frozen, so no session or rebalance timeout can remove the stalled member:
    only its LeaveGroup does."""
    broker = mockbroker_factory(config=dict(SUITE_CONFIG), clock=Clock(frozen=True))
    topic, group = "kp-maxpoll", "kp-maxpoll"
    broker.create_topic(topic, 2)
    everything = {(topic, 0), (topic, 1)}
    stuck = Member(broker, group, "stuck", topic=topic, max_poll_interval_ms=3000, session_timeout_ms=3000)
    other = Member(broker, group, "other", topic=topic)
    try:
        wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                   lambda: f"both members to own a partition (now {owned(broker, group)})", 0.1)
        # The group is stable once its leader synced; the member to stall may not have read its own answers
        # yet. kafka-python's heartbeat thread, which leaves on max_poll_interval_ms, is off until the member
        # is stable: stalled before, it would neither sync nor leave, and on the frozen clock no timeout
        # removes it. A heartbeat it sends after the group is stable shows the thread is on.
        beats = heartbeats_from(broker, "stuck")
        wait_until(lambda: heartbeats_from(broker, "stuck") > beats, SETTLE_S,
                   "a heartbeat from the member to stall, in the stable group")
        stuck.stalled.set()
        wait_until(lambda: owned(broker, group) == {"other": everything}, SETTLE_S,
                   lambda: f"the stalled member to leave and the other to own everything (now {owned(broker, group)})",
                   0.1)
        assert any(r.client_id == "stuck" for r in broker.received(LEAVE_GROUP))
        produce(broker, topic, ["p0-while-stalled"], partition=0)
        produce(broker, topic, ["p1-while-stalled"], partition=1)
        wait_until(lambda: broker.committed(group) == {(topic, 0): 1, (topic, 1): 1}, SETTLE_S,
                   "the remaining member to read and commit both partitions")
        stuck.stalled.clear()
        wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                   lambda: f"the member to rejoin on its next poll and share the partitions (now {owned(broker, group)})",
                   0.1)
        produce(broker, topic, ["p0-after"], partition=0)
        produce(broker, topic, ["p1-after"], partition=1)
        wait_until(lambda: broker.committed(group) == {(topic, 0): 2, (topic, 1): 2}, SETTLE_S,
                   "both partitions to be read and committed after the rejoin")
    finally:
        stuck.close()
        other.close()
    assert sorted(v for m in (stuck, other) for _, _, v in m.records) == [
        "p0-after", "p0-while-stalled", "p1-after", "p1-while-stalled"]
    assert {"p0-while-stalled", "p1-while-stalled"} <= {v for _, _, v in other.records}
