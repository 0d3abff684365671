"""The Java client (kafka-clients 4.3.0, the harness's `group-consume`) in the sequences aiokafka's suite
found gaps in: a pattern subscription over topics auto-created later, and a member that stops polling
past max.poll.interval.ms.

Broker settings are those of Kafka's own consumer integration tests (AbstractConsumerTest):
group.initial.rebalance.delay.ms=10 and group.min.session.timeout.ms=100; for KIP-848 groups half-second
heartbeats (group.consumer.heartbeat.interval.ms=500); auto-created topics get num.partitions=2.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.server import MockBroker
from tests.interop.clients import Lines, of_type, run_java
from tests.interop.test_groups_python import wait_until

pytestmark = [pytest.mark.interop, pytest.mark.java]

SUITE_CONFIG = {"group.initial.rebalance.delay.ms": 10, "group.min.session.timeout.ms": 100,
                "group.consumer.heartbeat.interval.ms": 500, "num.partitions": 2}
SETTLE_S = 60.0
HEARTBEAT, LEAVE_GROUP, CONSUMER_GROUP_HEARTBEAT = 12, 13, 68
CLASSIC = {"group.protocol": "classic", "heartbeat.interval.ms": 500}


@pytest.fixture
def stop_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "stop"
    yield path
    path.touch()  # whatever happened, no member outlives the test


def produce(broker: MockBroker, topic: str, values: list[str], partition: int | None = None) -> None:
    """The Java producer; a topic that does not exist is auto-created by its Metadata request."""
    records = [{"value": v} if partition is None else {"value": v, "partition": partition} for v in values]
    lines = run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": topic, "records": records})
    assert of_type(lines, "done")[0]["sent"] == len(values)


def member(broker: MockBroker, group: str, client_id: str, stop_file: Path, config: dict[str, Any],
           **args: Any) -> Lines:
    return run_java("group-consume", {
        "bootstrap": broker.bootstrap_servers, "group_id": group, "timeout_ms": 15000, "stop_file": str(stop_file),
        "stop_after_ms": 100000, "config": {**config, "client.id": client_id}, **args},
        timeout=130)


def summary(broker: MockBroker, group: str) -> Any:
    return next((g for g in broker.groups() if g.group_id == group), None)


def owned(broker: MockBroker, group: str) -> dict[str, set[tuple[str, int]]]:
    """client id -> the partitions the broker has it own (stable groups only, else {})."""
    g = summary(broker, group)
    if g is None or g.state != "Stable":
        return {}
    return {m.client_id: {(t, p) for t, ps in (m.assignment or {}).items() for p in ps} for m in g.members}


def owns(broker: MockBroker, group: str, want: dict[str, set[tuple[str, int]]]) -> bool:
    return owned(broker, group) == want


def heartbeats_from(broker: MockBroker, client_id: str, protocol: str) -> int:
    """How many group heartbeats (Heartbeat for a classic member, ConsumerGroupHeartbeat for KIP-848) the
    broker has received from the client."""
    api_key = HEARTBEAT if protocol == "classic" else CONSUMER_GROUP_HEARTBEAT
    return sum(1 for r in broker.received(api_key) if r.client_id == client_id)


def records(lines: Lines) -> list[tuple[str, str]]:
    return [(r["topic"], r["value"]) for r in of_type(lines, "record")]


# The pattern members refresh their metadata every 100 ms, to see the auto-created topics at once. Only
# they: a classic member whose metadata refresh is due when its heartbeat thread leaves on
# max.poll.interval.ms queues the LeaveGroup after the refresh and then stops polling its network client
# (the thread disables itself once the member is unjoined), so the LeaveGroup is never written to the
# socket (kafka-clients 4.3.0; seen in its log: "sending LeaveGroup", and no LeaveGroup reached the broker).
FAST_METADATA = {"metadata.max.age.ms": 100}
PATTERN_VARIANTS: dict[str, dict[str, Any]] = {
    "classic": {"config": {**CLASSIC, **FAST_METADATA}, "pattern": "^jpattern-.*"},
    "consumer": {"config": {"group.protocol": "consumer", **FAST_METADATA}, "pattern": "^jpattern-.*"},
    "consumer-broker-regex": {"config": {"group.protocol": "consumer", **FAST_METADATA},
                              "subscription_pattern": "jpattern-.*"},
}


@pytest.mark.parametrize("variant", list(PATTERN_VARIANTS))
def test_java_pattern_subscription_follows_auto_created_topics(
        mockbroker_factory: Callable[..., MockBroker], stop_file: Path, variant: str) -> None:
    broker = mockbroker_factory(config=dict(SUITE_CONFIG))
    group = f"jpattern-{variant}"
    spec = dict(PATTERN_VARIANTS[variant])
    config = spec.pop("config")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(member, broker, group, "pattern-member", stop_file, config, **spec)
        try:
            wait_until(lambda: summary(broker, group) is not None and summary(broker, group).state == "Stable",
                       SETTLE_S, f"group {group} to form with no topic yet")
            assert owned(broker, group) == {"pattern-member": set()}
            expected: set[tuple[str, int]] = set()
            for topic in ("jpattern-1", "jpattern-2"):
                produce(broker, topic, [f"{topic}-a", f"{topic}-b"], partition=0)
                expected |= {(topic, 0), (topic, 1)}
                wait_until(partial(owns, broker, group, {"pattern-member": set(expected)}), SETTLE_S,
                           f"{topic}'s partitions to be assigned (now {summary(broker, group)})", 0.1)
            wait_until(lambda: broker.committed(group).get(("jpattern-2", 0)) == 2, SETTLE_S,
                       "the member to read and commit both topics")
        finally:
            stop_file.touch()
        lines = future.result()
    assert sorted(records(lines)) == [("jpattern-1", "jpattern-1-a"), ("jpattern-1", "jpattern-1-b"),
                                      ("jpattern-2", "jpattern-2-a"), ("jpattern-2", "jpattern-2-b")]
    assert not [t for t in broker.topics() if t.startswith("jpattern-") and t not in ("jpattern-1", "jpattern-2")]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_member_past_max_poll_interval_leaves_and_rejoins_on_its_next_poll(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path, stop_file: Path, protocol: str) -> None:
    """Kafka's PlaintextConsumerPollTest.testMaxPollIntervalMs with two members: the one that stops polling
    (max.poll.interval.ms=3000) leaves the group from its heartbeat thread (LeaveGroup; KIP-848: a heartbeat
    with member epoch -1), the other gets every partition and reads what is produced meanwhile; the next
    poll rejoins and the partitions are shared again. The broker clock is frozen (so no initial delay), so
    no session or rebalance timeout can remove the stalled member: only its leaving does. The members keep
    the default metadata.max.age.ms (see FAST_METADATA: with 100 ms a classic member's LeaveGroup can stay
    queued unwritten for ever)."""
    broker = mockbroker_factory(config={**SUITE_CONFIG, "group.initial.rebalance.delay.ms": 0},
                                clock=Clock(frozen=True))
    topic, group = "jmaxpoll", f"jmaxpoll-{protocol}"
    broker.create_topic(topic, 2)
    stall = tmp_path / "stall"
    config = CLASSIC if protocol == "classic" else {"group.protocol": "consumer"}
    everything = {(topic, 0), (topic, 1)}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        stuck = pool.submit(member, broker, group, "stuck", stop_file,
                            {**config, "max.poll.interval.ms": 3000}, topic=topic, stall_file=str(stall))
        other = pool.submit(member, broker, group, "other", stop_file, config, topic=topic)
        try:
            wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                       lambda: f"both members to own a partition (now {summary(broker, group)})", 0.1)
            # The group is stable once its leader synced; the member to stall may not have read its JoinGroup
            # answer yet. A classic member in that state (PREPARING_REBALANCE) has its heartbeat thread off, and
            # that thread is what leaves on max.poll.interval.ms: stalled there, it would neither sync nor
            # leave, and on the frozen clock no timeout removes it (read in AbstractCoordinator, not seen: the
            # failure seen was FAST_METADATA's). A heartbeat it sends after the group is stable shows the
            # thread is on (its heartbeats before its JoinGroup arrived before the JoinGroup, on the same
            # connection).
            beats = heartbeats_from(broker, "stuck", protocol)
            wait_until(lambda: heartbeats_from(broker, "stuck", protocol) > beats, SETTLE_S,
                       "a heartbeat from the member to stall, in the stable group")
            stall.touch()
            wait_until(lambda: owned(broker, group) == {"other": everything}, SETTLE_S,
                       lambda: f"the stalled member to leave and the other to own everything (now {summary(broker, group)})",
                       0.1)
            produce(broker, topic, ["p0-while-stalled"], partition=0)
            produce(broker, topic, ["p1-while-stalled"], partition=1)
            wait_until(lambda: broker.committed(group) == {(topic, 0): 1, (topic, 1): 1}, SETTLE_S,
                       "the remaining member to read and commit both partitions")
            stall.unlink()
            wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                       lambda: f"the member to rejoin on its next poll and share the partitions (now {summary(broker, group)})",
                       0.1)
            produce(broker, topic, ["p0-after"], partition=0)
            produce(broker, topic, ["p1-after"], partition=1)
            wait_until(lambda: broker.committed(group) == {(topic, 0): 2, (topic, 1): 2}, SETTLE_S,
                       "both partitions to be read and committed after the rejoin")
        finally:
            stop_file.touch()
        stuck_lines, other_lines = stuck.result(), other.result()
    assert of_type(stuck_lines, "stalled") and of_type(stuck_lines, "resumed")
    assert sorted(v for _, v in records(stuck_lines) + records(other_lines)) == [
        "p0-after", "p0-while-stalled", "p1-after", "p1-while-stalled"]
    assert ("jmaxpoll", "p0-while-stalled") in records(other_lines)
    assert ("jmaxpoll", "p1-while-stalled") in records(other_lines)
    if protocol == "classic":
        assert any(r.client_id == "stuck" for r in broker.received(LEAVE_GROUP))


def test_java_stuck_member_is_removed_after_the_rebalance_timeout_on_the_broker_clock(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path, stop_file: Path) -> None:
    """A classic member that stops polling but keeps heartbeating (its heartbeat thread is alive, its
    max.poll.interval.ms far away in real time) does not rejoin a rebalance another member starts: Kafka's
    coordinator waits the group's rebalance timeout (the members' JoinGroup rebalance_timeout_ms, here
    max.poll.interval.ms=60000) and then completes the join without it. The broker clock is frozen and
    moved in steps shorter than the stuck member's session, so only the rebalance timeout can remove it.
    When it polls again it finds itself unknown and rejoins."""
    clock = Clock(frozen=True)
    # A frozen clock runs no timer by itself: no initial delay, or the group's first rebalance would wait.
    broker = mockbroker_factory(config={**SUITE_CONFIG, "group.initial.rebalance.delay.ms": 0}, clock=clock)
    topic, group = "jstuck", "jstuck"
    broker.create_topic(topic, 2)
    stall = tmp_path / "stall"
    config = {**CLASSIC, "max.poll.interval.ms": 60000, "session.timeout.ms": 30000}
    everything = {(topic, 0), (topic, 1)}

    def stuck_heartbeat_at(now: int) -> bool:
        return any(r.client_id == "stuck" and r.time_ms >= now for r in broker.received(HEARTBEAT))

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        stuck = pool.submit(member, broker, group, "stuck", stop_file, config, topic=topic, stall_file=str(stall))
        other = None
        try:
            wait_until(lambda: owned(broker, group) == {"stuck": everything}, SETTLE_S, "the first member to own all")
            stall.touch()
            other = pool.submit(member, broker, group, "other", stop_file, config, topic=topic)
            wait_until(lambda: summary(broker, group).state == "PreparingRebalance", SETTLE_S,
                       "the second member to start a rebalance")
            # 50 s of broker time: inside the rebalance timeout, the stuck member is still a member.
            for _ in range(5):
                clock.advance(10)
                now = clock.now_ms()
                wait_until(partial(stuck_heartbeat_at, now), SETTLE_S, "a heartbeat of the stuck member")
            g = summary(broker, group)
            assert (g.state, sorted(m.client_id for m in g.members)) == ("PreparingRebalance", ["other", "stuck"])
            clock.advance(11)  # past the 60 s rebalance timeout
            wait_until(lambda: owned(broker, group) == {"other": everything}, SETTLE_S,
                       f"the rebalance to complete without the stuck member (now {summary(broker, group)})", 0.1)
            produce(broker, topic, ["p0"], partition=0)
            wait_until(lambda: broker.committed(group).get((topic, 0)) == 1, SETTLE_S, "the other member to read p0")
            stall.unlink()
            wait_until(lambda: len(owned(broker, group)) == 2 and all(owned(broker, group).values()), SETTLE_S,
                       f"the stuck member to rejoin on its next poll (now {summary(broker, group)})", 0.1)
        finally:
            stop_file.touch()
        stuck_lines, other_lines = stuck.result(), other.result() if other is not None else []
    assert records(other_lines) == [(topic, "p0")]
    assert of_type(stuck_lines, "lost") or of_type(stuck_lines, "revoked")
