"""Three Java consumers (kafka-clients 4.3.0, three JVMs, the harness's `group-consume` command) in one
group on a 6-partition topic, for the classic protocol (the client's default assignors, and the
cooperative-sticky one) and KIP-848 (group.protocol=consumer).

Each member prints what it reads and commits it synchronously after each poll (what a failed commit
left behind is committed when the partitions are revoked). The first records are there before the
members start, so they are read while the group forms; the later ones are produced once the group has
settled. One member leaves half-way (its stop file); the other two take its partitions over. In the
end every record was read exactly once across the three, each member owned partitions at some point,
the Java AdminClient describes the group and lists its offsets with zero lag, and kcat lists the topic.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mockbroker.server import MockBroker
from tests.interop.clients import Lines, of_type, parse_json_lines, run_java, run_kcat
from tests.interop.test_groups_python import wait_until

pytestmark = [pytest.mark.interop, pytest.mark.java]

TOPIC = "three"
PARTITIONS = 6
PHASE = 30  # records per phase, PHASE // PARTITIONS per partition
SETTLE_S = 60.0
# Short group timings: Kafka's minimum session timeout (6 s) and half-second heartbeats; for KIP-848 the
# heartbeat interval is the broker's setting.
CLASSIC = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
VARIANTS: dict[str, dict[str, Any]] = {
    "classic": {"group.protocol": "classic", **CLASSIC},  # [RangeAssignor, CooperativeStickyAssignor]: range
    "classic-cooperative": {"group.protocol": "classic", **CLASSIC, "partition.assignment.strategy":
                            "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
    "consumer": {"group.protocol": "consumer"},
}


class Producer:
    """librdkafka producer of the test records: record i goes to partition i % PARTITIONS."""

    def __init__(self, broker: MockBroker) -> None:
        from confluent_kafka import Producer as CkProducer

        self._p = CkProducer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
        self.values: list[str] = []

    def produce(self, count: int) -> None:
        start = len(self.values)
        for i in range(start, start + count):
            self._p.produce(TOPIC, value=f"r{i}".encode(), partition=i % PARTITIONS)
            self.values.append(f"r{i}")
        assert self._p.flush(15) == 0


def ends(broker: MockBroker) -> dict[tuple[str, int], int]:
    return {(TOPIC, p): broker.offsets(TOPIC, p)["high_watermark"] for p in range(PARTITIONS)}


def summary(broker: MockBroker, group: str) -> Any:
    return next((g for g in broker.groups() if g.group_id == group), None)


def settled(broker: MockBroker, group: str, members: int) -> Any:
    """The group's summary once it is stable with `members` members, each owning partitions, every partition
    owned once; else None."""
    g = summary(broker, group)
    if g is None or g.state != "Stable" or len(g.members) != members:
        return None
    owned = [(m.assignment or {}).get(TOPIC, []) for m in g.members]
    if not all(owned) or sorted(p for ps in owned for p in ps) != list(range(PARTITIONS)):
        return None
    return g


def wait_settled(broker: MockBroker, group: str, members: int) -> Any:
    return wait_until(lambda: settled(broker, group, members), SETTLE_S,
                      f"group {group} to settle with {members} members (now {summary(broker, group)})", 0.1)


def wait_committed(broker: MockBroker, group: str) -> None:
    wait_until(lambda: broker.committed(group) == ends(broker), SETTLE_S,
               f"group {group} to commit the end offsets {ends(broker)}")


def owned_at_some_point(lines: Lines) -> set[int]:
    return {tp["partition"] for line in of_type(lines, "assigned") for tp in line["partitions"]}


@pytest.fixture
def stop_files(tmp_path: Path) -> Iterator[dict[str, Path]]:
    files = {name: tmp_path / f"stop-{name}" for name in "abc"}
    yield files
    for f in files.values():  # whatever happened, no member outlives the test
        f.touch()


@pytest.mark.mockbroker(config={"group.initial.rebalance.delay.ms": 0, "group.consumer.heartbeat.interval.ms": 500})
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_three_java_consumers_share_a_group_and_a_leaver_is_taken_over_exactly_once(
        mockbroker: MockBroker, variant: str, stop_files: dict[str, Path]) -> None:
    mockbroker.create_topic(TOPIC, PARTITIONS)
    group = f"three-{variant}"
    producer = Producer(mockbroker)
    producer.produce(PHASE)  # read while the group forms

    def member(name: str) -> Lines:
        return run_java("group-consume", {
            "bootstrap": mockbroker.bootstrap_servers, "topic": TOPIC, "group_id": group, "timeout_ms": 15000,
            "stop_file": str(stop_files[name]), "stop_after_ms": 80000,
            "config": {**VARIANTS[variant], "client.id": f"member-{name}"}}, timeout=100)

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        futures = {name: pool.submit(member, name) for name in "abc"}
        try:
            three = wait_settled(mockbroker, group, 3)
            wait_committed(mockbroker, group)
            producer.produce(PHASE)
            wait_committed(mockbroker, group)
            owned_by_c = {p for m in three.members if m.client_id == "member-c" for p in m.assignment[TOPIC]}
            # member c leaves half-way; a and b take its partitions over
            stop_files["c"].touch()
            c_lines = futures["c"].result(timeout=60)
            two = wait_settled(mockbroker, group, 2)
            assert {m.client_id for m in two.members} == {"member-a", "member-b"}
            producer.produce(PHASE)
            wait_committed(mockbroker, group)
        finally:
            for f in stop_files.values():
                f.touch()
        a_lines, b_lines = futures["a"].result(timeout=60), futures["b"].result(timeout=60)

    lines = {"a": a_lines, "b": b_lines, "c": c_lines}
    assert [of_type(lines[n], "done")[0]["stopped"] for n in "abc"] == ["stop_file"] * 3, lines
    # every record read exactly once across the three members
    read = [(r["partition"], r["offset"], r["value"]) for n in "abc" for r in of_type(lines[n], "record")]
    assert len(read) == len(set(read)) == 3 * PHASE, sorted(read)
    assert sorted(v for _, _, v in read) == sorted(producer.values)
    for p in range(PARTITIONS):
        assert sorted(o for q, o, _ in read if q == p) == list(range(3 * PHASE // PARTITIONS))
    # the assignment was spread over the three
    assert all(owned_at_some_point(lines[n]) for n in "abc"), {n: owned_at_some_point(lines[n]) for n in "abc"}
    assert owned_by_c and owned_by_c <= owned_at_some_point(lines["c"])
    # c gave its partitions up when it left (close revokes them), and a and b took them over
    assert owned_by_c <= {tp["partition"] for line in of_type(c_lines, "revoked") for tp in line["partitions"]}
    after_c = {(r["partition"], r["value"]) for n in "ab" for r in of_type(lines[n], "record")
               if int(r["value"][1:]) >= 2 * PHASE}
    assert {p for p, _ in after_c} == set(range(PARTITIONS)) and len(after_c) == PHASE
    final = {n: {tp["partition"] for tp in of_type(lines[n], "done")[0]["assignment"]} for n in "ab"}
    assert final["a"] | final["b"] == set(range(PARTITIONS)) and not final["a"] & final["b"], final
    assert not [r for r in of_type(c_lines, "record") if int(r["value"][1:]) >= 2 * PHASE]

    assert mockbroker.committed(group) == ends(mockbroker)
    g = summary(mockbroker, group)
    assert (g.group_type, g.state, g.members) == ("consumer" if variant == "consumer" else "classic", "Empty", [])

    described, offsets, latest = of_type(run_java("admin", {
        "bootstrap": mockbroker.bootstrap_servers, "timeout_ms": 15000, "ops": [
            {"op": "describeConsumerGroups", "groups": [group]},
            {"op": "listConsumerGroupOffsets", "group": group},
            {"op": "listOffsets", "topic": TOPIC, "spec": "latest"},
        ]}, timeout=60), "result")
    [desc] = described["groups"]
    assert (desc["group_id"], desc["state"].upper(), desc["members"]) == (group, "EMPTY", [])
    assert desc["type"].upper() == ("CONSUMER" if variant == "consumer" else "CLASSIC")
    committed = {o["partition"]: o["offset"] for o in offsets["offsets"]}
    end = {o["partition"]: o["offset"] for o in latest["offsets"]}
    assert committed == end == {p: 3 * PHASE // PARTITIONS for p in range(PARTITIONS)}
    assert {p: end[p] - committed[p] for p in end} == dict.fromkeys(range(PARTITIONS), 0)  # zero lag

    listed = parse_json_lines(run_kcat(["-b", mockbroker.bootstrap_servers, "-L", "-J"], timeout=30).stdout)[0]
    [topic] = [t for t in listed["topics"] if t["topic"] == TOPIC]
    assert sorted(p["partition"] for p in topic["partitions"]) == list(range(PARTITIONS))
