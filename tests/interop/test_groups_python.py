"""Consumer groups with the real Python clients (confluent-kafka/librdkafka, aiokafka, kafka-python), each
member in its own process (tests/interop/groups_worker.py) so that one can die without leaving.

Each scenario: three members of one group on a 6-partition topic; records are produced only while the
group is settled (every partition owned once), so "exactly once" is a property of the broker (committed
offsets, generation/epoch checks, revocation before reassignment), not of timing. A member that dies is
removed by its session timeout on the broker clock, which the test advances in steps no longer than the
live members' sessions, waiting for their heartbeats in between.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mockbroker.server import MockBroker
from mockbroker.testing.delivery import Acked, Acks, Read, check_delivery

pytestmark = pytest.mark.interop

WORKER = Path(__file__).with_name("groups_worker.py")
TOPIC = "orders"
PARTITIONS = 6
SESSION_MS = 10000
GROUP_CONFIG = {
    "group.initial.rebalance.delay.ms": 0,
    "group.consumer.heartbeat.interval.ms": 500,
    "group.consumer.session.timeout.ms": 10000,
}
SETTLE_S = 60.0


def wait_until(predicate: Callable[[], Any], timeout: float, what: str | Callable[[], str],
               interval: float = 0.05) -> Any:
    """Poll `predicate` until it is truthy (bounded); fail with `what` otherwise (a callable is asked then,
    so the message can show the state at the time out)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


class Worker:
    """A group member in a subprocess; its JSON lines are collected as they come."""

    def __init__(self, **cfg: Any) -> None:
        self.cfg = cfg
        self.lines: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(cfg)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            with self._lock:
                self.lines.append(line)

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        with self._lock:
            return [line for line in self.lines if line.get("type") == type_]

    def records(self) -> list[tuple[int, int, str]]:
        return [(r["partition"], r["offset"], r["value"]) for r in self.of_type("record")]

    def close(self, timeout: float = 30.0) -> None:
        """Leave the group the normal way."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write("close\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(5)

    def kill(self) -> None:
        """Die without a word (SIGKILL): the broker only notices through the session timeout."""
        self.proc.kill()
        self.proc.wait(10)
        self._reader.join(5)


class GroupRun:
    def __init__(self, broker: MockBroker, client: str, group: str, **extra: Any) -> None:
        pytest.importorskip({"confluent": "confluent_kafka", "aiokafka": "aiokafka", "kafka-python": "kafka"}[client])
        pytest.importorskip("confluent_kafka")  # the test's own producer
        self.broker = broker
        self.client = client
        self.group = group
        self.extra = extra
        self.workers: list[Worker] = []
        self.produced: list[str] = []
        self.acks = Acks()  # the delivery reports of what was produced
        self.external: list[Read] = []  # records read by members that are not workers (the Java harness)
        self._producer: Any = None

    def start(self, client_id: str, **overrides: Any) -> Worker:
        cfg = {"client": self.client, "bootstrap": self.broker.bootstrap_servers, "group": self.group,
               "topic": TOPIC, "client_id": client_id, "session_timeout_ms": SESSION_MS,
               "heartbeat_interval_ms": 500, **self.extra, **overrides}
        w = Worker(**cfg)
        self.workers.append(w)
        wait_until(lambda: w.of_type("ready") or w.proc.poll() is not None, 30, f"{client_id} to start")
        assert w.proc.poll() is None, f"worker {client_id} exited: {w.lines}"
        return w

    def produce(self, count: int) -> None:
        from confluent_kafka import Producer

        if self._producer is None:
            self._producer = Producer({"bootstrap.servers": self.broker.bootstrap_servers, "linger.ms": 0})
        start = len(self.produced)
        for i in range(start, start + count):
            value = f"r{i}"
            self._producer.produce(TOPIC, value=value.encode(), partition=i % PARTITIONS, on_delivery=self.acks)
            self.produced.append(value)
        assert self._producer.flush(15) == 0
        assert self.acks.failed == [] and len(self.acks.acked) == len(self.produced)

    def commit_start_offsets(self) -> None:
        """Commit offset 0 on every partition for the group before any member starts: a simple commit
        (generation -1, no member), which leaves an empty classic group that the first member takes over.

        Why, for librdkafka members: a partition with no committed offset is looked up with ListOffsets
        (auto.offset.reset). If the member's assignment changes while that lookup is in flight (the second
        member joining right after the first got every partition), the reply comes back outdated and
        librdkafka 2.16.0 arms a 500 ms retry timer ("outdated offset response", rdkafka_partition.c) that
        the newer reply does not stop. When it fires the partition is already fetching, and the lookup sends
        it back to offset 0: the member reads again what it read and committed since (seen in 1 of 10 busy
        runs, with debug=topic: "timed offset query for offset BEGINNING ... in state active"). With a
        committed offset on every partition no member ever looks one up; `assert_no_offset_lookups` checks it.
        """
        from confluent_kafka import Consumer, TopicPartition

        committer = Consumer({"bootstrap.servers": self.broker.bootstrap_servers, "group.id": self.group,
                              "client.id": "start-offsets", "enable.auto.commit": False})
        try:
            committer.commit(offsets=[TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)], asynchronous=False)
        finally:
            committer.close()
        assert self.broker.committed(self.group) == {(TOPIC, p): 0 for p in range(PARTITIONS)}

    def assert_no_offset_lookups(self) -> None:
        """No member sent ListOffsets (key 2): each started from a committed offset."""
        ids = {str(w.cfg["client_id"]) for w in self.workers}
        lookups = [r.client_id for r in self.broker.received(2) if r.client_id in ids]
        assert not lookups, f"members looked up offsets with ListOffsets: {sorted(set(lookups))}"

    def consumed(self) -> list[str]:
        return [(r.value or b"").decode() for r in self.reads()]

    def reads(self) -> list[Read]:
        """What every member read (the workers' records and the external ones)."""
        return [Read(TOPIC, p, o, None, value.encode()) for w in self.workers for p, o, value in w.records()] + \
            self.external

    def wait_consumed(self) -> None:
        wait_until(lambda: set(self.consumed()) >= set(self.produced), SETTLE_S,
                   f"all {len(self.produced)} records to be consumed (have {len(set(self.consumed()))})")

    def group_summary(self) -> Any:
        return next((g for g in self.broker.groups() if g.group_id == self.group), None)

    def settled(self, members: int) -> bool:
        """The group is stable with `members` members owning every partition exactly once."""
        g = self.group_summary()
        if g is None or g.state != "Stable" or len(g.members) != members:
            return False
        owned = [p for m in g.members for p in ((m.assignment or {}).get(TOPIC, []))]
        return sorted(owned) == list(range(PARTITIONS))

    def wait_settled(self, members: int) -> None:
        wait_until(lambda: self.settled(members), SETTLE_S, f"group {self.group} to settle with {members} members "
                   f"(now {self.group_summary()})", interval=0.1)

    def advance_past_session(self, survivors: list[Worker], session_ms: int, heartbeat_key: int) -> None:
        """Move the broker clock past one session timeout in steps shorter than a session, waiting after
        each step until every survivor has heartbeated at the new time (so only the dead expire)."""
        step_s = session_ms / 1000 / 3
        for _ in range(4):
            self.broker.clock.advance(step_s)
            now = self.broker.clock.now_ms()
            for w in survivors:
                cid = str(w.cfg["client_id"])

                def heartbeated(cid: str = cid, now: int = now) -> bool:
                    return any(r.client_id == cid and r.time_ms >= now for r in self.broker.received(heartbeat_key))

                wait_until(heartbeated, 30, f"a heartbeat from {cid}")

    def stop_all(self) -> None:
        for w in self.workers:
            w.close()

    def assert_exactly_once(self) -> None:
        """Every acknowledged record read once, nothing else read, and no committed offset past a record the
        members did not read. The members' reads are taken in offset order: the order across members (a
        partition moving back and forth) is not known here."""
        acked: list[Acked] = self.acks.acked
        assert sorted((a.value or b"").decode() for a in acked) == sorted(self.produced)
        read = sorted(self.reads(), key=lambda r: (r.partition, r.offset))
        check_delivery(acked, read, broker=self.broker, group=self.group, distinct_values=True,
                       only_acked=True).assert_ok()


@pytest.fixture
def groups_broker(mockbroker_factory: Callable[..., MockBroker]) -> Iterator[MockBroker]:
    broker = mockbroker_factory(config=dict(GROUP_CONFIG))
    broker.create_topic(TOPIC, PARTITIONS)
    yield broker


def run_membership_scenario(broker: MockBroker, client: str, heartbeat_key: int, session_ms: int,
                            **extra: Any) -> None:
    run = GroupRun(broker, client, f"g-{client}", **extra)
    if client == "confluent":
        run.commit_start_offsets()  # librdkafka's stale offset-lookup retry: see commit_start_offsets
    try:
        a = run.start("member-a")
        b = run.start("member-b")
        run.wait_settled(2)
        run.produce(30)
        run.wait_consumed()
        # A member joins.
        c = run.start("member-c")
        run.wait_settled(3)
        run.produce(30)
        run.wait_consumed()
        assert c.records(), "the member that joined got no partition"
        # A member leaves.
        b.close()
        run.wait_settled(2)
        run.produce(30)
        run.wait_consumed()
        # A member dies: only its session timeout on the broker clock removes it.
        c.kill()
        run.advance_past_session([a], session_ms, heartbeat_key)
        run.wait_settled(1)
        run.produce(30)
        run.wait_consumed()
    finally:
        run.stop_all()
    run.assert_exactly_once()
    if client == "confluent":
        run.assert_no_offset_lookups()
    assert broker.committed(run.group) == {(TOPIC, p): 20 for p in range(PARTITIONS)}


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_classic_group_consumes_each_record_once_across_rebalances(groups_broker: MockBroker,
                                                                             strategy: str) -> None:
    run_membership_scenario(groups_broker, "confluent", 12, SESSION_MS, strategy=strategy)


def test_confluent_consumer_protocol_group_consumes_each_record_once_across_rebalances(
        groups_broker: MockBroker) -> None:
    run_membership_scenario(groups_broker, "confluent", 68, 10000, protocol="consumer")


def test_aiokafka_group_consumes_each_record_once_across_rebalances(groups_broker: MockBroker) -> None:
    run_membership_scenario(groups_broker, "aiokafka", 12, SESSION_MS)


def test_kafka_python_group_consumes_each_record_once_across_rebalances(groups_broker: MockBroker) -> None:
    run_membership_scenario(groups_broker, "kafka-python", 12, SESSION_MS)


@pytest.mark.parametrize("client,extra", [
    ("confluent", {}), ("confluent", {"protocol": "consumer"}), ("aiokafka", {}), ("kafka-python", {}),
], ids=["confluent-classic", "confluent-consumer", "aiokafka", "kafka-python"])
def test_restarted_member_resumes_from_committed_offsets(groups_broker: MockBroker, client: str,
                                                         extra: dict[str, Any]) -> None:
    run = GroupRun(groups_broker, client, f"resume-{client}", **extra)
    try:
        first = run.start("first")
        run.wait_settled(1)
        run.produce(24)
        run.wait_consumed()
        first.close()
        run.produce(24)
        second = run.start("second")
        run.wait_consumed()
    finally:
        run.stop_all()
    run.assert_exactly_once()
    assert [v for _, _, v in second.records()] and all(int(v[1:]) >= 24 for _, _, v in second.records())


@pytest.mark.parametrize("client,extra", [
    ("confluent", {}), ("confluent", {"protocol": "consumer"}), ("kafka-python", {}),
], ids=["confluent-classic", "confluent-consumer", "kafka-python"])
def test_static_member_rejoins_without_a_rebalance(groups_broker: MockBroker, client: str,
                                                   extra: dict[str, Any]) -> None:
    run = GroupRun(groups_broker, client, f"static-{client}", **extra)
    if client == "confluent":
        run.commit_start_offsets()  # librdkafka's stale offset-lookup retry: see commit_start_offsets
    try:
        run.start("static-a", instance_id="instance-a")
        run.start("static-b", instance_id="instance-b")
        run.wait_settled(2)
        before = run.group_summary()
        owned_before = {m.instance_id: m.assignment for m in before.members}
        run.produce(12)
        run.wait_consumed()
        run.workers[1].close()  # a static member closes without leaving the group (or leaves with epoch -2)
        run.start("static-b2", instance_id="instance-b")
        run.wait_settled(2)
        after = run.group_summary()
        assert after.generation_or_epoch == before.generation_or_epoch
        assert {m.instance_id: m.assignment for m in after.members} == owned_before
        run.produce(12)
        run.wait_consumed()
    finally:
        run.stop_all()
    run.assert_exactly_once()
    if client == "confluent":
        run.assert_no_offset_lookups()
