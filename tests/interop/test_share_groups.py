"""Share groups (KIP-932) with both real share consumers: confluent-kafka's ShareConsumer (librdkafka 2.16)
and Java's KafkaShareConsumer (kafka-clients 4.3.0, the harness's share-consume). Members of one share
group consume a topic together with no record acquired by two at once; release, lock timeouts and a member's
closed connection redeliver with the delivery count up; reject archives; the delivery limit archives. What
the broker holds is checked record by record through broker.share_groups()."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import AcknowledgeType, Consumer, Message, Producer, ShareConsumer

from mockbroker.server import MockBroker
from tests.interop.clients import of_type, run_java

pytestmark = pytest.mark.interop
java = pytest.mark.java

TOPIC = "queue"
EARLIEST = {"share.auto.offset.reset": "earliest"}
Delivery = tuple[str, int, int, int]  # member, partition, offset, delivery count


def produce(broker: MockBroker | str, count: int, partitions: int, topic: str = TOPIC) -> None:
    """count records v0, v1... round-robin over the partitions; broker: a MockBroker or a bootstrap string."""
    bootstrap = broker if isinstance(broker, str) else broker.bootstrap_servers
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        p.produce(topic, value=f"v{i}".encode(), partition=i % partitions)
    assert p.flush(30) == 0


def share_consumer(broker: MockBroker, group: str, explicit: bool = False) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                       "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    c.subscribe([TOPIC])
    return c


def wait_for(what: Callable[[], Any], step: Callable[[], None], timeout: float = 30.0) -> Any:
    """Call step() until what() is true (generous bound, no timing asserted)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = what()
        if result:
            return result
        step()
    raise AssertionError(f"not reached in {timeout}s")


def poll_all(consumers: dict[str, ShareConsumer], deliveries: list[Delivery],
             ack: Callable[[Message], AcknowledgeType] | None = None) -> None:
    """One poll of each member; explicit members acknowledge each record as `ack` says, then commit."""
    for name, c in consumers.items():
        msgs = c.poll(0.2) or []
        for m in msgs:
            assert m.error() is None, m.error()
            deliveries.append((name, m.partition(), m.offset(), m.delivery_count()))
            if ack is not None:
                c.acknowledge(m, ack(m))
        if ack is not None and msgs:
            c.commit_sync()


def settled(broker: MockBroker, group: str, ends: dict[int, int]) -> bool:
    """Whether every record of the share partitions is acknowledged or archived (the start offset at the end)."""
    parts = broker.share_groups().get(group, {}).get("partitions", {})
    return all(parts.get(f"{TOPIC}-{p}", {}).get("start_offset") == end for p, end in ends.items())


def close_all(consumers: dict[str, ShareConsumer]) -> None:
    for c in consumers.values():
        c.close()


def test_librdkafka_three_members_share_a_topic_each_record_delivered_and_acknowledged_once(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 4)
    members = {f"m{i}": share_consumer(broker, "sg3") for i in range(3)}
    deliveries: list[Delivery] = []
    try:
        def joined() -> bool:
            g = broker.share_groups().get("sg3")
            return g is not None and len(g["members"]) == 3 and all(
                m["member_epoch"] == g["group_epoch"] for m in g["members"].values())
        wait_for(joined, lambda: poll_all(members, deliveries))
        # Records in rounds until two members have had some: right after joining, the member that came first
        # may still hold every partition until its next heartbeat, so a round may go to it alone.
        produced = 0
        for _round in range(30):
            produce(broker, 60, 4)
            produced += 60
            ends = {p: produced // 4 for p in range(4)}
            wait_for(lambda ends=ends: settled(broker, "sg3", ends), lambda: poll_all(members, deliveries))
            if len({name for name, *_ in deliveries}) >= 2:
                break
    finally:
        close_all(members)
    got = sorted((p, o) for _, p, o, _ in deliveries)
    assert got == sorted((i % 4, i // 4) for i in range(produced))  # every record, none twice
    assert {count for *_, count in deliveries} == {1}
    assert len({name for name, *_ in deliveries}) >= 2


def test_librdkafka_release_redelivers_with_the_delivery_count_up(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 1)
    produce(broker, 5, 1)
    members = {"a": share_consumer(broker, "sg-release", explicit=True)}
    deliveries: list[Delivery] = []
    try:
        def release_first(m: Message) -> AcknowledgeType:
            return AcknowledgeType.RELEASE if m.delivery_count() == 1 else AcknowledgeType.ACCEPT
        wait_for(lambda: settled(broker, "sg-release", {0: 5}), lambda: poll_all(members, deliveries, release_first))
    finally:
        close_all(members)
    assert sorted((o, n) for _, _, o, n in deliveries) == [(o, n) for o in range(5) for n in (1, 2)]


def test_librdkafka_lock_timeout_hands_records_to_another_member(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 1)
    produce(broker, 3, 1)
    holder = {"holder": share_consumer(broker, "sg-lock", explicit=True)}
    held: list[Delivery] = []
    other = {"other": share_consumer(broker, "sg-lock")}
    later: list[Delivery] = []
    try:
        wait_for(lambda: len(held) == 3, lambda: _poll_without_ack(holder, held))
        records = broker.share_groups()["sg-lock"]["partitions"][f"{TOPIC}-0"]["records"]
        assert [(r["state"], r["delivery_count"]) for r in records] == [("ACQUIRED", 1)] * 3
        broker.clock.advance(31)  # past share.record.lock.duration.ms (30 s)
        wait_for(lambda: settled(broker, "sg-lock", {0: 3}), lambda: poll_all(other, later))
    finally:
        close_all(other)
        close_all(holder)
    assert sorted((o, n) for _, _, o, n in later) == [(0, 2), (1, 2), (2, 2)]


def _poll_without_ack(consumers: dict[str, ShareConsumer], deliveries: list[Delivery]) -> None:
    """Poll a member in explicit mode without acknowledging (its records stay acquired); polls only until
    it has some, as an explicit consumer may not poll again before acknowledging."""
    for name, c in consumers.items():
        if deliveries:
            time.sleep(0.05)
            continue
        for m in c.poll(0.2) or []:
            deliveries.append((name, m.partition(), m.offset(), m.delivery_count()))


def test_librdkafka_reject_archives_and_the_delivery_limit_archives(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config={**EARLIEST, "group.share.delivery.count.limit": 2})
    broker.create_topic(TOPIC, 2)
    produce(broker, 6, 2)
    members = {"a": share_consumer(broker, "sg-limit", explicit=True)}
    deliveries: list[Delivery] = []
    try:
        def ack(m: Message) -> AcknowledgeType:  # partition 0: reject; partition 1: release every time
            return AcknowledgeType.REJECT if m.partition() == 0 else AcknowledgeType.RELEASE
        wait_for(lambda: settled(broker, "sg-limit", {0: 3, 1: 3}), lambda: poll_all(members, deliveries, ack))
        broker.clock.advance(31)
        for _ in range(5):
            poll_all(members, deliveries, ack)
    finally:
        close_all(members)
    assert sorted((p, o, n) for _, p, o, n in deliveries) == (
        [(0, o, 1) for o in range(3)] + [(1, o, n) for o in range(3) for n in (1, 2)])


def test_librdkafka_share_group_on_a_three_node_cluster_fetches_from_each_leader(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(brokers=3, config=dict(EARLIEST))
    broker.create_topic(TOPIC, 3)
    assert len({broker.partition_state(TOPIC, p).leader for p in range(3)}) == 3
    produce(broker, 30, 3)
    members = {f"m{i}": share_consumer(broker, "sg-cluster") for i in range(2)}
    deliveries: list[Delivery] = []
    try:
        wait_for(lambda: settled(broker, "sg-cluster", {p: 10 for p in range(3)}), lambda: poll_all(members, deliveries))
    finally:
        close_all(members)
    assert sorted((p, o, n) for _, p, o, n in deliveries) == sorted((i % 3, i // 3, 1) for i in range(30))


def test_librdkafka_share_and_consumer_groups_on_one_topic_do_not_affect_each_other(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config={**EARLIEST, "group.initial.rebalance.delay.ms": 0})
    broker.create_topic(TOPIC, 2)
    produce(broker, 10, 2)
    members = {"s": share_consumer(broker, "shared")}
    shared: list[Delivery] = []
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "plain",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([TOPIC])
    plain: list[tuple[int, int]] = []

    def step() -> None:
        poll_all(members, shared)
        m = consumer.poll(0.2)
        if m is not None and m.error() is None:
            plain.append((m.partition(), m.offset()))
    try:
        wait_for(lambda: len(plain) == 10 and settled(broker, "shared", {0: 5, 1: 5}), step)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
        close_all(members)
    assert sorted(plain) == sorted((p, o) for _, p, o, _ in shared) == sorted((i % 2, i // 2) for i in range(10))
    assert broker.committed("plain") == {(TOPIC, 0): 5, (TOPIC, 1): 5}
    assert "plain" not in broker.share_groups() and "shared" not in {g.group_id for g in broker.groups()}


# -- Java -------------------------------------------------------------------------------------------

def java_share_consume(broker: MockBroker, group: str, **args: Any) -> list[dict[str, Any]]:
    return run_java("share-consume", {"bootstrap": broker.bootstrap_servers, "topic": TOPIC, "group_id": group,
                                      "idle_ms": 3000, "stop_after_ms": 40000, **args}, timeout=90)


@java
def test_java_two_members_share_a_topic_each_record_delivered_and_acknowledged_once(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 3)
    produce(broker, 45, 3)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: java_share_consume(broker, "jsg2"), range(2)))
    records = [r for run in runs for r in of_type(run, "record")]
    assert sorted((r["partition"], r["offset"]) for r in records) == sorted((i % 3, i // 3) for i in range(45))
    assert {r["delivery_count"] for r in records} == {1}
    assert settled(broker, "jsg2", {p: 15 for p in range(3)})
    assert broker.share_groups()["jsg2"]["members"] == {}


@java
def test_java_release_redelivers_until_the_delivery_limit_archives(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config={**EARLIEST, "group.share.delivery.count.limit": 3})
    broker.create_topic(TOPIC, 1)
    produce(broker, 4, 1)
    run = java_share_consume(broker, "jsg-release", ack="release")
    records = of_type(run, "record")
    assert sorted((r["offset"], r["delivery_count"]) for r in records) == [(o, n) for o in range(4) for n in (1, 2, 3)]
    assert not of_type(run, "ack_error")
    assert settled(broker, "jsg-release", {0: 4})


@java
def test_java_reject_archives(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 1)
    produce(broker, 4, 1)
    run = java_share_consume(broker, "jsg-reject", ack="reject")
    assert sorted((r["offset"], r["delivery_count"]) for r in of_type(run, "record")) == [(o, 1) for o in range(4)]
    assert settled(broker, "jsg-reject", {0: 4})
    broker.clock.advance(31)
    again = java_share_consume(broker, "jsg-reject", idle_ms=None, stop_after_ms=3000)
    assert of_type(again, "record") == []


@java
def test_java_admin_lists_and_describes_share_groups_and_their_offsets(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 2)
    produce(broker, 6, 2)
    members = {"a": share_consumer(broker, "sg-admin", explicit=True)}
    deliveries: list[Delivery] = []
    try:  # partition 0's records accepted, partition 1's released (they stay in flight)
        wait_for(lambda: settled(broker, "sg-admin", {0: 3, 1: 3}) or len(deliveries) >= 6,
                 lambda: poll_all(members, deliveries, lambda m: AcknowledgeType.ACCEPT if m.partition() == 0
                                  else AcknowledgeType.RELEASE))
        lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "timeout_ms": 20000, "ops": [
            {"op": "listShareGroups"}, {"op": "describeShareGroups", "groups": ["sg-admin", "missing"]},
            {"op": "listShareGroupOffsets", "group": "sg-admin"}]}, timeout=90)
    finally:
        close_all(members)
    listed, described, offsets = of_type(lines, "result")
    assert listed["groups"] == [{"group_id": "sg-admin", "type": "Share", "state": "Stable"}]
    group, missing = described["groups"]
    assert (group["state"], len(group["members"])) == ("Stable", 1)
    assert group["members"][0]["assignment"] == [f"{TOPIC}-0", f"{TOPIC}-1"]
    assert "GroupIdNotFound" in missing["error"]
    state = broker.share_groups()["sg-admin"]["partitions"]
    assert offsets["offsets"] == {f"{TOPIC}-{p}": {"start_offset": state[f"{TOPIC}-{p}"]["start_offset"],
                                                   "leader_epoch": 0, "lag": 3 - state[f"{TOPIC}-{p}"]["start_offset"]}
                                  for p in (0, 1)}
    assert offsets["offsets"][f"{TOPIC}-0"]["start_offset"] == 3


def test_librdkafka_admin_sets_the_group_auto_offset_reset_and_the_share_consumer_reads_from_the_start(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )
    broker = mockbroker_factory()  # no broker-wide share.auto.offset.reset: latest
    broker.create_topic(TOPIC, 1)
    produce(broker, 3, 1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    resource = ConfigResource(ResourceType.GROUP, "sg-configured", incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    [described] = admin.describe_configs([ConfigResource(ResourceType.GROUP, "sg-configured")]).values()
    entry = described.result(30)["share.auto.offset.reset"]
    assert (entry.value, entry.source) == ("earliest", 8)  # GROUP_CONFIG
    members = {"a": share_consumer(broker, "sg-configured")}
    deliveries: list[Delivery] = []
    try:
        wait_for(lambda: len(deliveries) >= 3, lambda: poll_all(members, deliveries))
    finally:
        close_all(members)
    assert sorted(o for _, _, o, _ in deliveries) == [0, 1, 2]


@java
def test_java_admin_alters_and_deletes_share_group_offsets(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory()
    broker.create_topic(TOPIC, 2)
    produce(broker, 10, 2)
    members = {"a": share_consumer(broker, "sg-offsets", explicit=True)}
    deliveries: list[Delivery] = []
    try:  # a member: the group is not empty
        wait_for(lambda: broker.share_groups().get("sg-offsets", {}).get("members"), lambda: poll_all(members, deliveries))
        busy = run_java("admin", {"bootstrap": broker.bootstrap_servers, "timeout_ms": 20000, "ops": [
            {"op": "alterShareGroupOffsets", "group": "sg-offsets", "offsets": {f"{TOPIC}-0": 1}},
            {"op": "deleteShareGroupOffsets", "group": "sg-offsets", "topics": [TOPIC]}]}, timeout=90)
    finally:
        close_all(members)
    wait_for(lambda: not broker.share_groups()["sg-offsets"]["members"], lambda: time.sleep(0.2))
    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "timeout_ms": 20000, "ops": [
        {"op": "alterShareGroupOffsets", "group": "sg-offsets", "offsets": {f"{TOPIC}-0": 2, f"{TOPIC}-1": 4}},
        {"op": "listShareGroupOffsets", "group": "sg-offsets"},
        {"op": "deleteShareGroupOffsets", "group": "sg-offsets", "topics": [TOPIC]},
        {"op": "listShareGroupOffsets", "group": "sg-offsets"},
        {"op": "deleteShareGroupOffsets", "group": "never-seen", "topics": [TOPIC]}]}, timeout=90)
    not_empty_alter, not_empty_delete = of_type(busy, "result")
    assert not_empty_alter["error"] == "GroupNotEmptyException"
    assert not_empty_delete["error"] == "GroupNotEmptyException"
    altered, listed, deleted, after, missing = of_type(lines, "result")
    assert "error" not in altered and altered["partitions"] == {f"{TOPIC}-0": "ok", f"{TOPIC}-1": "ok"}
    assert {k: v["start_offset"] for k, v in listed["offsets"].items()} == {f"{TOPIC}-0": 2, f"{TOPIC}-1": 4}
    assert "error" not in deleted and deleted["topics"] == {TOPIC: "ok"}
    assert after["offsets"] == {}
    assert missing["error"] == "GroupIdNotFoundException"
    assert broker.share_groups()["sg-offsets"]["partitions"] == {}


def test_librdkafka_read_committed_share_group_skips_aborted_records_and_stops_at_the_lso(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 1)
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    resource = ConfigResource(ResourceType.GROUP, "sg-committed", incremental_configs=[
        ConfigEntry("share.isolation.level", "read_committed", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    plain = Producer({"bootstrap.servers": broker.bootstrap_servers})
    txn = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "share-txn"})
    txn.init_transactions(30)
    plain.produce(TOPIC, b"before")
    assert plain.flush(30) == 0
    txn.begin_transaction()
    txn.produce(TOPIC, b"aborted-1")
    txn.produce(TOPIC, b"aborted-2")
    assert txn.flush(30) == 0   # on the broker (offsets 1-2) before the abort marker (3)
    txn.abort_transaction(30)
    txn.begin_transaction()
    txn.produce(TOPIC, b"committed")
    assert txn.flush(30) == 0   # open: the last stable offset stays at its first offset
    plain.produce(TOPIC, b"after")
    assert plain.flush(30) == 0
    c = share_consumer(broker, "sg-committed")
    seen: list[bytes] = []

    def poll() -> None:
        for m in c.poll(0.2) or []:
            assert m.error() is None, m.error()
            seen.append(m.value())
    try:
        wait_for(lambda: seen, poll)
        for _ in range(10):  # nothing past the open transaction comes while it is open
            poll()
        assert seen == [b"before"]
        txn.commit_transaction(30)
        wait_for(lambda: len(seen) >= 3, poll)
    finally:
        c.close()
    assert seen == [b"before", b"committed", b"after"]
    part = broker.share_groups()["sg-committed"]["partitions"][f"{TOPIC}-0"]
    assert part["end_offset"] >= 6   # past the aborted records (archived, never delivered)


@java
def test_java_a_member_that_halts_hands_its_records_back_at_its_disconnect(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # Locks of an hour and no clock move: the records can come back neither through a lock timeout nor through a
    # leave (a halted JVM sends none), only through its connection closing. Kafka ends the share session of a
    # connection that closes and releases its member's records (ShareSessionCache's disconnect listener).
    # (Lock timeouts with a live holder: test_librdkafka_lock_timeout_hands_records_to_another_member.)
    broker = mockbroker_factory(config={**EARLIEST, "group.share.max.record.lock.duration.ms": 3_600_000,
                                        "group.share.record.lock.duration.ms": 3_600_000})
    broker.create_topic(TOPIC, 1)
    produce(broker, 3, 1)
    # A member that takes the records and ends without closing: no acknowledgement, no leave.
    held = java_share_consume(broker, "jsg-halt", ack="hold", on_stop="halt")
    assert sorted((r["offset"], r["delivery_count"]) for r in of_type(held, "record")) == [(0, 1), (1, 1), (2, 1)]

    def states() -> list[tuple[str, int]]:
        records = broker.share_groups()["jsg-halt"]["partitions"][f"{TOPIC}-0"]["records"]
        return [(r["state"], r["delivery_count"]) for r in records]
    # Its process is gone, so are its connections: available again, delivery counts kept.
    wait_for(lambda: states() == [("AVAILABLE", 1)] * 3, lambda: time.sleep(0.05))
    later = java_share_consume(broker, "jsg-halt")
    assert sorted((r["offset"], r["delivery_count"]) for r in of_type(later, "record")) == [(0, 2), (1, 2), (2, 2)]


@java
def test_java_a_member_that_leaves_hands_its_records_back(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # Locks of an hour: the records can come back only through the leave, never through a lock timeout.
    broker = mockbroker_factory(config={**EARLIEST, "group.share.max.record.lock.duration.ms": 3_600_000,
                                        "group.share.record.lock.duration.ms": 3_600_000})
    broker.create_topic(TOPIC, 1)
    produce(broker, 3, 1)
    held = java_share_consume(broker, "jsg-leave", ack="hold")  # closes: leaves the group holding them
    assert len(of_type(held, "record")) == 3
    later = java_share_consume(broker, "jsg-leave")
    assert sorted((r["offset"], r["delivery_count"]) for r in of_type(later, "record")) == [(0, 2), (1, 2), (2, 2)]


@java
def test_java_share_and_consumer_groups_on_one_topic_do_not_affect_each_other(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 2)
    produce(broker, 10, 2)
    shared = of_type(java_share_consume(broker, "jsg-beside"), "record")
    plain = of_type(run_java("group-consume", {"bootstrap": broker.bootstrap_servers, "topic": TOPIC,
                                               "group_id": "jplain", "idle_ms": 3000, "stop_after_ms": 40000,
                                               "config": {"auto.offset.reset": "earliest"}}, timeout=90), "record")
    every = sorted((i % 2, i // 2) for i in range(10))
    assert sorted((r["partition"], r["offset"]) for r in shared) == every  # each group reads every record
    assert sorted((r["partition"], r["offset"]) for r in plain) == every
    assert broker.committed("jplain") == {(TOPIC, 0): 5, (TOPIC, 1): 5}
    assert settled(broker, "jsg-beside", {0: 5, 1: 5})
    assert "jplain" not in broker.share_groups() and "jsg-beside" not in {g.group_id for g in broker.groups()}
