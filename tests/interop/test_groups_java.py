"""Consumer groups with the Java client (kafka-clients 4.3.0, classic and group.protocol=consumer), its
AdminClient, and kcat (librdkafka's balanced consumer, -G)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker.server import MockBroker
from mockbroker.testing.delivery import Read
from tests.interop.clients import of_type, parse_json_lines, require_java, run_java, run_kcat
from tests.interop.test_groups_python import GroupRun

pytestmark = pytest.mark.interop
java = pytest.mark.java

TOPIC = "jgroups"
PARTITIONS = 6
GROUP_CONFIG = {"group.initial.rebalance.delay.ms": 0, "group.consumer.heartbeat.interval.ms": 500}


@pytest.fixture
def broker(mockbroker_factory: Callable[..., MockBroker]) -> MockBroker:
    b = mockbroker_factory(config=dict(GROUP_CONFIG))
    b.create_topic(TOPIC, PARTITIONS)
    return b


def produce(broker: MockBroker, start: int, count: int) -> None:
    lines = run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": TOPIC,
                                 "records": [{"value": f"v{i}", "partition": i % PARTITIONS}
                                             for i in range(start, start + count)]})
    assert of_type(lines, "done")[0]["sent"] == count


def group_consume(broker: MockBroker, group: str, protocol: str, **extra: Any) -> list[dict[str, Any]]:
    args = {"bootstrap": broker.bootstrap_servers, "topic": TOPIC, "subscribe": True, "until_end": True,
            "commit": True, "timeout_ms": 30000,
            "config": {"group.id": group, "group.protocol": protocol, "client.id": f"java-{protocol}"}, **extra}
    return run_java("consume", args, timeout=90)


@java
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_group_member_commits_and_a_new_member_resumes_there(broker: MockBroker, protocol: str) -> None:
    produce(broker, 0, 30)
    first = group_consume(broker, f"java-{protocol}", protocol)
    assert sorted(r["value"] for r in of_type(first, "record")) == sorted(f"v{i}" for i in range(30))
    assert of_type(first, "committed")
    assert broker.committed(f"java-{protocol}") == {(TOPIC, p): 5 for p in range(PARTITIONS)}
    [group] = [g for g in broker.groups() if g.group_id == f"java-{protocol}"]
    assert (group.group_type, group.state, group.members) == ("classic" if protocol == "classic" else "consumer",
                                                              "Empty", [])

    produce(broker, 30, 12)
    second = group_consume(broker, f"java-{protocol}", protocol)
    assert sorted(r["value"] for r in of_type(second, "record")) == sorted(f"v{i}" for i in range(30, 42))
    assert broker.committed(f"java-{protocol}") == {(TOPIC, p): 7 for p in range(PARTITIONS)}


@java
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_admin_describes_groups_and_lists_their_offsets(broker: MockBroker, protocol: str) -> None:
    produce(broker, 0, 12)
    group_consume(broker, f"adm-{protocol}", protocol)
    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "ops": [
        {"op": "describeConsumerGroups", "groups": [f"adm-{protocol}", "no-such-group"]},
        {"op": "listConsumerGroupOffsets", "group": f"adm-{protocol}"},
    ]})
    described, offsets = of_type(lines, "result")
    known, unknown = described["groups"]
    assert known["state"].upper() == "EMPTY" and known["members"] == []
    assert known["type"].upper() == ("CLASSIC" if protocol == "classic" else "CONSUMER")
    assert known["coordinator"]["id"] == broker.node_id
    assert unknown["error"] == "GroupIdNotFoundException"
    assert [(o["topic"], o["partition"], o["offset"]) for o in offsets["offsets"]] == [
        (TOPIC, p, 2) for p in range(PARTITIONS)]


def test_kcat_balanced_consumer_reads_everything_and_commits(broker: MockBroker) -> None:
    produce_py(broker, 18)
    proc = run_kcat(["-b", broker.bootstrap_servers, "-G", "kcat-group", TOPIC, "-o", "beginning", "-e", "-J",
                     "-X", "auto.commit.interval.ms=100", "-X", "heartbeat.interval.ms=500"], timeout=60)
    records = [line for line in parse_json_lines(proc.stdout) if "payload" in line]
    assert sorted(r["payload"] for r in records) == sorted(f"k{i}" for i in range(18))
    assert broker.committed("kcat-group") == {(TOPIC, p): 3 for p in range(PARTITIONS)}
    listed = run_kcat(["-b", broker.bootstrap_servers, "-L", "-J"], timeout=30)
    meta = parse_json_lines(listed.stdout)[0]
    # As against Kafka, the group's coordinator made __consumer_offsets, which kcat -L lists too.
    assert sorted(t["topic"] for t in meta["topics"]) == ["__consumer_offsets", TOPIC]


def produce_py(broker: MockBroker, count: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for i in range(count):
        p.produce(TOPIC, value=f"k{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(15) == 0


@java
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_member_joins_and_leaves_a_group_of_librdkafka_members(mockbroker_factory: Callable[..., MockBroker],
                                                                    protocol: str) -> None:
    """Two confluent-kafka members and one Java member share a group (range on both sides for the classic
    protocol; the broker's uniform assignor for KIP-848): every record is read once, by whoever owns it."""
    require_java()
    from tests.interop import test_groups_python as pygroups

    b = mockbroker_factory(config=dict(pygroups.GROUP_CONFIG))
    b.create_topic(pygroups.TOPIC, pygroups.PARTITIONS)
    extra = {"protocol": "consumer"} if protocol == "consumer" else {"strategy": "range"}
    run = GroupRun(b, "confluent", f"mixed-{protocol}", **extra)
    run.commit_start_offsets()  # librdkafka's stale offset-lookup retry: see GroupRun.commit_start_offsets
    java_lines: list[dict[str, Any]] = []
    try:
        run.start("py-a")
        run.start("py-b")
        run.wait_settled(2)
        run.produce(30)
        run.wait_consumed()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            java = pool.submit(run_java, "consume", {
                "bootstrap": b.bootstrap_servers, "topic": pygroups.TOPIC, "subscribe": True, "commit": True,
                "max_records": 10, "timeout_ms": 60000,
                "config": {"group.id": run.group, "group.protocol": protocol, "client.id": "java-member",
                           "heartbeat.interval.ms": 500} if protocol == "classic" else
                          {"group.id": run.group, "group.protocol": protocol, "client.id": "java-member"},
            }, timeout=90)
            run.wait_settled(3)
            run.produce(30)
            java_lines = java.result(timeout=90)
        java_values = [r["value"] for r in of_type(java_lines, "record")]
        assert len(java_values) == 10 and of_type(java_lines, "committed")
        run.external.extend(Read.of(r) for r in of_type(java_lines, "record"))
        run.wait_settled(2)
        run.wait_consumed()
        run.produce(30)
        run.wait_consumed()
    finally:
        run.stop_all()
    run.assert_exactly_once()
    run.assert_no_offset_lookups()
