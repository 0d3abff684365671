"""A consumer group reads every record of an idempotent acks=all producer's chaos run across coordinator
moves (issue #12 item 8): the Java consumer and librdkafka (confluent-kafka), each with the classic protocol
and KIP-848 (group.protocol=consumer), kafka-python, aiokafka and KafkaJS (classic); and a real client
retries through COORDINATOR_LOAD_IN_PROGRESS injected on the coordinator's node (item 5).

The run: a 3-node cluster, a topic with replication factor 3 and min.insync.replicas 2, one group member
subscribed (its coordinator placed on node 3 first), a confluent-kafka idempotent acks=all producer
writing while tests/interop/cluster_chaos.py moves leaders every ~200 ms and stops and restarts node 3. The
stop moves the coordinator (its __consumer_offsets partition's leader was on node 3); half-way through
`move_coordinator` moves it again. Then every acknowledged record is in the log once, in order, the member
read every record, and the group's committed offsets reach the end of every partition. The group's state
moves with its coordinator, so the member stays in its generation (classic) or epoch (KIP-848): no
rebalance, hence no record read twice (Kafka's consumers read a record again only after a rebalance that
came before its offset was committed). KafkaJS is the exception Kafka allows: it rejoins on NOT_COORDINATOR
(as the same member), and the rejoin of the group's leader starts a new generation.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.errors import ErrorCode
from mockbroker.state.cluster.internal_topics import partition_for
from tests.interop.clients import (
    java_argv,
    kafkajs_argv,
    of_type,
    parse_json_lines,
    require_java,
    require_kafkajs,
)
from tests.interop.cluster_chaos import (
    MOVES,
    STOPPED_NODE,
    Chaos,
    check_exactly_once_in_order,
    make_topic,
    produce_through_chaos,
)

pytestmark = pytest.mark.interop

PARTITIONS = 3
OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP, CG_HEARTBEAT = 8, 9, 10, 11, 14, 68
# Kafka's group.initial.rebalance.delay.ms (3 s), not 0: with no delay kafka-python 3.0.12 joins before its
# first metadata answer names the topic (the leader assigns nothing), rejoins when it arrives, and now and
# then drops the SyncGroup answer of that second join (received, never applied, heartbeats stopped: seen in
# its DEBUG log in 3 of 40 bare joins on a busy machine), so the member never gets its partitions.
GROUP_CONFIG = {"group.initial.rebalance.delay.ms": 3000, "group.consumer.heartbeat.interval.ms": 500}
SETTLE_S = 90.0
# KafkaJS takes NOT_COORDINATOR for a rebalance (kafkajs/src/errors.js isRebalancing) and sends JoinGroup to
# the new coordinator; its only member being the leader, Kafka's coordinator starts a new generation.
REJOINS_ON_NOT_COORDINATOR = {"kafkajs"}


def wait_until(predicate: Callable[[], Any], timeout: float, what: Callable[[], str] | str,
               interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)
    return value


def coordinator_of(broker: MockBroker, group: str) -> int:
    return broker.partition_state(OFFSETS_TOPIC, partition_for(group, 50)).leader


def end_offsets(broker: MockBroker, topic: str) -> dict[tuple[str, int], int]:
    return {(topic, p): broker.offsets(topic, p)["high_watermark"] for p in range(PARTITIONS)}


def group_summary(broker: MockBroker, group: str) -> Any:
    return next((g for g in broker.groups() if g.group_id == group), None)


def membership(broker: MockBroker, group: str) -> tuple[int, list[tuple[str, int | None]]]:
    """The group's generation (classic) or group epoch (KIP-848), and its members with their epochs."""
    g = group_summary(broker, group)
    assert g is not None, f"no group {group}"
    return g.generation_or_epoch, sorted((m.member_id, m.member_epoch) for m in g.members)


# -- the group members --------------------------------------------------------------------------------


class JavaMember:
    """The Java harness's `group-consume` (kafka-clients 4.3.0): prints each record, commits synchronously
    after each poll; stops when its stop file appears. A `client_race` line is kafka-clients' own
    KIP-848 position race in poll, after which the harness rewinds to what it printed and polls again
    (see GroupConsumeOps.rewindAfterRace)."""

    def __init__(self, broker: MockBroker, topic: str, group: str, protocol: str, tmp_path: Path) -> None:
        require_java()
        self.stop_file = tmp_path / "stop"
        self.out_path, self.err_path = tmp_path / "stdout", tmp_path / "stderr"
        config: dict[str, Any] = {"group.protocol": protocol, "auto.offset.reset": "earliest",
                                  "reconnect.backoff.ms": "20", "reconnect.backoff.max.ms": "200",
                                  "retry.backoff.ms": "50"}
        args = {"bootstrap": broker.bootstrap_servers, "topic": topic, "group_id": group,
                "stop_file": str(self.stop_file), "stop_after_ms": 240_000, "poll_ms": 100,
                "timeout_ms": 30_000, "deadline_ms": 280_000, "config": config}
        with self.out_path.open("wb") as out_file, self.err_path.open("wb") as err_file:
            self.proc = subprocess.Popen(java_argv("group-consume"), stdin=subprocess.PIPE, stdout=out_file,
                                         stderr=err_file)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(args).encode())
        self.proc.stdin.close()

    def lines(self) -> list[dict[str, Any]]:
        return parse_json_lines(self.out_path.read_bytes())

    def assigned(self) -> set[int]:
        return {tp["partition"] for line in of_type(self.lines(), "assigned") for tp in line["partitions"]}

    def stop(self) -> None:
        self.stop_file.touch()
        try:
            rc = self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
        assert rc == 0, self.err_path.read_text(errors="replace")[-3000:]

    def values(self) -> list[bytes]:
        return [r["value"].encode() for r in of_type(self.lines(), "record")]

    def rebalances(self) -> int:
        """Assignments after the first one, revocations and losses."""
        lines = self.lines()
        return len(of_type(lines, "assigned")) - 1 + len(of_type(lines, "revoked")) + len(of_type(lines, "lost"))


class KafkaJSMember:
    """The KafkaJS harness's `consume` as a group member (classic only): prints each record, commits what it
    read when it stops, which it does once no record came for IDLE_MS. KafkaJS has no rebalance callbacks
    to print: the group's generation tells whether it rebalanced."""

    IDLE_MS = 15_000

    def __init__(self, broker: MockBroker, topic: str, group: str, tmp_path: Path) -> None:
        require_kafkajs()
        self.broker, self.topic, self.group = broker, topic, group
        self.out_path, self.err_path = tmp_path / "stdout", tmp_path / "stderr"
        args = {"bootstrap": broker.bootstrap_servers, "topic": topic, "group_id": group, "commit": True,
                "idle_ms": self.IDLE_MS, "timeout_ms": 150_000, "deadline_ms": 200_000,
                "consumer": {"sessionTimeout": 30_000, "heartbeatInterval": 500}}
        argv, env = kafkajs_argv("consume")
        with self.out_path.open("wb") as out_file, self.err_path.open("wb") as err_file:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out_file, stderr=err_file, env=env)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(args).encode())
        self.proc.stdin.close()

    def lines(self) -> list[dict[str, Any]]:
        return parse_json_lines(self.out_path.read_bytes())

    def assigned(self) -> set[int]:
        g = group_summary(self.broker, self.group)
        if g is None or g.state != "Stable":
            return set()
        return {p for m in g.members for p in (m.assignment or {}).get(self.topic, [])}

    def stop(self) -> None:
        try:
            rc = self.proc.wait(timeout=self.IDLE_MS / 1000 + 90)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
        assert rc == 0, self.err_path.read_text(errors="replace")[-3000:]
        lines = self.lines()
        assert of_type(lines, "crash") == [] and of_type(lines, "commit_error") == [], lines[-5:]
        assert [d["stopped"] for d in of_type(lines, "done")] == ["idle"], lines[-5:]

    def values(self) -> list[bytes]:
        return [r["value"].encode() for r in of_type(self.lines(), "record")]

    def rebalances(self) -> int:
        return 0  # not visible here: the group's generation is compared instead


class ThreadMember(threading.Thread):
    """A Python client's member in a thread of the test: reads, commits synchronously after each batch it
    read (a failed commit is retried with the next batch), notes its rebalance callbacks."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.read: list[bytes] = []
        self.events: list[tuple[str, list[int]]] = []
        self.commit_errors: list[str] = []
        self.error: BaseException | None = None
        self.stopping = threading.Event()
        self.deadline = time.monotonic() + 240

    def note(self, kind: str, partitions: Any) -> None:
        self.events.append((kind, sorted(p.partition for p in partitions)))

    def running(self) -> bool:
        return not self.stopping.is_set() and time.monotonic() < self.deadline

    def run(self) -> None:
        try:
            self.consume()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def consume(self) -> None:
        raise NotImplementedError

    def assigned(self) -> set[int]:
        return {p for kind, parts in list(self.events) if kind == "assigned" for p in parts}

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)
        assert not self.is_alive(), "the consumer did not stop"
        if self.error is not None:
            raise self.error

    def values(self) -> list[bytes]:
        return list(self.read)

    def rebalances(self) -> int:
        assigned = [e for e in self.events if e[0] == "assigned" and e[1]]
        return len(assigned) - 1 + sum(1 for kind, parts in self.events if kind in ("revoked", "lost") and parts)


class ConfluentMember(ThreadMember):
    """confluent-kafka (librdkafka 2.16), classic or KIP-848."""

    def __init__(self, broker: MockBroker, topic: str, group: str, protocol: str) -> None:
        super().__init__(f"confluent-{protocol}")
        self.conf: dict[str, Any] = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                                     "group.protocol": protocol, "auto.offset.reset": "earliest",
                                     "enable.auto.commit": False, "reconnect.backoff.ms": 20,
                                     "reconnect.backoff.max.ms": 200}
        if protocol == "classic":
            self.conf.update({"session.timeout.ms": 30_000, "heartbeat.interval.ms": 500})
        self.topic = topic

    def consume(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer(self.conf)
        try:
            consumer.subscribe([self.topic], on_assign=lambda _c, ps: self.note("assigned", ps),
                               on_revoke=lambda _c, ps: self.note("revoked", ps),
                               on_lost=lambda _c, ps: self.note("lost", ps))
            while self.running():
                batch = [m for m in consumer.consume(500, 0.1) if m.error() is None]
                self.read.extend(m.value() or b"" for m in batch)
                if batch or self.commit_errors:
                    try:
                        consumer.commit(asynchronous=False)
                    except KafkaException as exc:
                        self.commit_errors.append(str(exc))
        finally:
            consumer.close()


class KafkaPythonMember(ThreadMember):
    """kafka-python (classic only)."""

    def __init__(self, broker: MockBroker, topic: str, group: str) -> None:
        super().__init__("kafka-python")
        self.broker, self.topic, self.group = broker, topic, group

    def consume(self) -> None:
        from kafka import ConsumerRebalanceListener, KafkaConsumer
        from kafka.errors import KafkaError

        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            def on_partitions_assigned(self, assigned: Any) -> None:
                member.note("assigned", assigned)

            def on_partitions_revoked(self, revoked: Any) -> None:
                member.note("revoked", revoked)

        consumer = KafkaConsumer(bootstrap_servers=self.broker.bootstrap_servers.split(","), group_id=self.group,
                                 auto_offset_reset="earliest", enable_auto_commit=False,
                                 session_timeout_ms=30_000, heartbeat_interval_ms=500, retry_backoff_ms=50,
                                 reconnect_backoff_ms=20, reconnect_backoff_max_ms=200)
        try:
            consumer.subscribe([self.topic], listener=Listener())
            while self.running():
                batches = consumer.poll(timeout_ms=100)
                self.read.extend(r.value for records in batches.values() for r in records)
                if batches or self.commit_errors:
                    try:
                        consumer.commit()
                    except KafkaError as exc:
                        self.commit_errors.append(str(exc))
        finally:
            consumer.close()


class AiokafkaMember(ThreadMember):
    """aiokafka (classic only), on its own event loop in the thread."""

    def __init__(self, broker: MockBroker, topic: str, group: str) -> None:
        super().__init__("aiokafka")
        self.broker, self.topic, self.group = broker, topic, group

    def consume(self) -> None:
        asyncio.run(self._consume())

    async def _consume(self) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
        from aiokafka.errors import KafkaError

        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_assigned(self, assigned: Any) -> None:
                member.note("assigned", assigned)

            async def on_partitions_revoked(self, revoked: Any) -> None:
                member.note("revoked", revoked)

        consumer = AIOKafkaConsumer(bootstrap_servers=self.broker.bootstrap_servers, group_id=self.group,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    session_timeout_ms=30_000, heartbeat_interval_ms=500, retry_backoff_ms=50)
        consumer.subscribe([self.topic], listener=Listener())
        await consumer.start()
        try:
            while self.running():
                batches = await consumer.getmany(timeout_ms=100)
                self.read.extend(r.value for records in batches.values() for r in records)
                if batches or self.commit_errors:
                    try:
                        await consumer.commit()
                    except KafkaError as exc:
                        self.commit_errors.append(str(exc))
        finally:
            await consumer.stop()


# -- the run ------------------------------------------------------------------------------------------


class CoordinatorMoves:
    """Places the group's coordinator on the node the chaos stops, then records where it goes."""

    def __init__(self, broker: MockBroker, group: str) -> None:
        self.broker, self.group = broker, group
        if coordinator_of(broker, group) != STOPPED_NODE:
            broker.move_coordinator(STOPPED_NODE, group=group)
        self.history = [coordinator_of(broker, group)]
        self.finds_before = len(broker.received(FIND_COORDINATOR))

    def note(self) -> None:
        self.history.append(coordinator_of(self.broker, self.group))

    def move_to_another_node(self) -> None:
        current = coordinator_of(self.broker, self.group)
        target = next(n for n in (1, 2, 3) if n not in (current, STOPPED_NODE))
        self.broker.move_coordinator(target, group=self.group)
        self.note()

    def hooks(self) -> dict[int, Callable[[], None]]:
        # Step MOVES // 3 stops node 3 just before its hook runs; node 3 is back at 2 * MOVES // 3.
        return {MOVES // 3: self.note, MOVES // 2: self.move_to_another_node}


MEMBERS = [pytest.param("java-classic", marks=pytest.mark.java), pytest.param("java-consumer", marks=pytest.mark.java),
           "confluent-classic", "confluent-consumer", "kafka_python-classic", "aiokafka-classic", "kafkajs-classic"]


@pytest.mark.mockbroker(brokers=3, config=GROUP_CONFIG)
@pytest.mark.parametrize("member", MEMBERS)
def test_a_group_reads_every_record_of_a_chaos_run_across_coordinator_moves(mockbroker: MockBroker, member: str,
                                                                            tmp_path: Path) -> None:
    client, protocol = member.split("-")
    topic, group = f"moves-{member}", f"g-{member}"
    make_topic(mockbroker, topic, PARTITIONS)
    # The member's first coordinator is the node the chaos stops, so it has to look for the new one whatever
    # the timing: a member that found another node first could find its coordinator back there after the
    # moves without ever asking again (KafkaJS did, once, when the chaos ran between its heartbeats).
    mockbroker.move_coordinator(STOPPED_NODE, group=group)
    consumer: JavaMember | KafkaJSMember | ThreadMember
    if client == "java":
        consumer = JavaMember(mockbroker, topic, group, protocol, tmp_path)
    elif client == "kafkajs":
        consumer = KafkaJSMember(mockbroker, topic, group, tmp_path)
    else:
        consumer = {"confluent": lambda: ConfluentMember(mockbroker, topic, group, protocol),
                    "kafka_python": lambda: KafkaPythonMember(mockbroker, topic, group),
                    "aiokafka": lambda: AiokafkaMember(mockbroker, topic, group)}[client]()
        consumer.start()
    try:
        wait_until(lambda: consumer.assigned() == set(range(PARTITIONS)), SETTLE_S, "the member's assignment")
        summary = group_summary(mockbroker, group)
        assert summary is not None and summary.group_type == protocol
        before = membership(mockbroker, group)
        moves = CoordinatorMoves(mockbroker, group)
        acked = produce_through_chaos(mockbroker, topic, PARTITIONS, Chaos(mockbroker, topic, PARTITIONS, moves.hooks()))
        moves.note()
        if moves.history[-1] == STOPPED_NODE:
            # The stopped node came back and led its internal partition again, so the coordinator is where the
            # member first found it: a member that sent no group request while it was elsewhere never had to
            # look (KafkaJS, once in 50 busy runs: it read and committed everything with one FindCoordinator).
            # Moved off, the coordinator is somewhere the member has not seen, so its last commit must find it.
            moves.move_to_another_node()
        in_log = [r.value for r in mockbroker.records(topic)]
        wait_until(lambda: set(consumer.values()) >= set(in_log), SETTLE_S,
                   lambda: f"the member to read {len(in_log)} records (read {len(set(consumer.values()))})", 0.2)
        after = membership(mockbroker, group)
        rebalances = consumer.rebalances()  # before stopping: leaving revokes
    finally:
        consumer.stop()
    ends = end_offsets(mockbroker, topic)
    wait_until(lambda: mockbroker.committed(group) == ends, SETTLE_S,
               lambda: f"the group to commit {ends} (committed {mockbroker.committed(group)})")

    check_exactly_once_in_order(mockbroker, topic, PARTITIONS, acked)
    # The coordinator went from node 3 to another node when 3 stopped, and moved again.
    first, by_stop, by_move = moves.history[:3]
    assert first == STOPPED_NODE and by_stop not in (STOPPED_NODE, -1) and by_move not in (by_stop, -1), moves.history
    assert len(mockbroker.received(FIND_COORDINATOR)) > moves.finds_before  # the member found the new ones
    # Every record read; the member kept its generation / epoch (the state moved with the coordinator), so
    # none was read twice.
    read = consumer.values()
    assert set(read) == set(in_log), f"{len(set(in_log) - set(read))} records never read"
    if client in REJOINS_ON_NOT_COORDINATOR:
        # It rejoins as the same member (the new coordinator knew it), and the group may rebalance: records
        # read again since its last commit are what Kafka allows then.
        assert after[0] >= before[0] and after[1] == before[1], (before, after)
    else:
        assert (rebalances, after) == (0, before)
        assert len(read) == len(in_log), "records read twice without a rebalance"


@pytest.mark.mockbroker(brokers=3, config=GROUP_CONFIG)
def test_confluent_consumer_retries_through_coordinator_load_in_progress_on_its_coordinators_node(
        mockbroker: MockBroker) -> None:
    """COORDINATOR_LOAD_IN_PROGRESS injected on the coordinator's node only (inject(..., node=)): the
    lookup, the join, the offset fetch and a commit each get it (others node answer normally); librdkafka
    retries each and the group reads and commits everything."""
    from confluent_kafka import Consumer, Producer

    topic, group = "loading", "g-loading"
    make_topic(mockbroker, topic, PARTITIONS)
    mockbroker.move_coordinator(2, group=group)
    loading = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    rules = [mockbroker.inject(api, error=loading, count=2, node=2)
             for api in (JOIN_GROUP, OFFSET_FETCH, OFFSET_COMMIT)]
    # FindCoordinator is asked of any node: the rule on node 2 shows it does not reach the others.
    other_node_rule = mockbroker.inject(FIND_COORDINATOR, error=loading, count=1, node=2)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True})
    for i in range(30):
        producer.produce(topic, b"%04d" % i, partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "session.timeout.ms": 10_000, "heartbeat.interval.ms": 500, "retry.backoff.ms": 50})
    seen: list[bytes] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(seen) < 30 or mockbroker.committed(group) != end_offsets(mockbroker, topic):
            assert time.monotonic() < deadline, f"read {len(seen)} of 30, committed {mockbroker.committed(group)}"
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                seen.append(msg.value() or b"")
            if seen:
                try:
                    consumer.commit(asynchronous=False)
                except Exception:  # noqa: BLE001 - an injected COORDINATOR_LOAD_IN_PROGRESS; committed again
                    pass
    finally:
        consumer.close()
    assert sorted(seen) == [b"%04d" % i for i in range(30)]
    assert [r.count for r in rules] == [0, 0, 0], "a rule on the coordinator's node was not used up"
    by_node = {api: [r.node_id for r in mockbroker.received(api)] for api in (JOIN_GROUP, OFFSET_FETCH,
                                                                                 OFFSET_COMMIT)}
    for api, nodes in by_node.items():
        assert set(nodes) == {2} and len(nodes) >= 3, (api, nodes)  # twice refused, then served
    finds = [r.node_id for r in mockbroker.received(FIND_COORDINATOR)]
    assert other_node_rule.count == (0 if 2 in finds else 1)
