"""The admin APIs of a cluster on the wire: ElectLeaders (43), AlterPartitionReassignments (45),
ListPartitionReassignments (46), DescribeLogDirs (35), with Kafka's per-partition errors."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_cluster import connect_to
from tests.rawclient import RawClient

DESCRIBE_LOG_DIRS, ELECT_LEADERS, ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS = 35, 43, 45, 46


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        broker.create_topic("t", assignments=[[1, 2, 3], [2, 3, 1]])
        yield broker


def elect(c: RawClient, election: int, topics: list[tuple[str, list[int]]] | None) -> list[tuple[str, int, int, str | None]]:
    body = {"election_type": election, "timeout_ms": 5000,
            "topic_partitions": None if topics is None else [{"topic": t, "partitions": ps} for t, ps in topics]}
    resp = c.request(ELECT_LEADERS, 2, body)
    assert resp.error_code == ErrorCode.NONE
    return [(r.topic, p.partition_id, p.error_code, p.error_message)
            for r in resp.replica_election_results for p in r.partition_result]


def test_elect_leaders_preferred_with_kafkas_per_partition_errors(cluster: MockBroker) -> None:
    cluster.move_leader("t", 0, 2)
    with connect_to(cluster, 3) as c:
        got = elect(c, 0, [("t", [0, 1, 7]), ("nope", [0])])
    assert got == [("t", 0, ErrorCode.NONE, None),
                   ("t", 1, ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                   ("t", 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-7"),
                   ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")]
    assert cluster.partition_state("t", 0).leader == 1
    cluster.move_leader("t", 0, 3)
    cluster.set_isr("t", 0, [2, 3])
    with connect_to(cluster, 1) as c:
        # Null topics: every partition, the ones whose preferred replica leads left out.
        assert elect(c, 0, None) == [("t", 0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                                      "The preferred leader was not available.")]
        # v0 has no election type: preferred.
        v0 = c.request(ELECT_LEADERS, 0, {"topic_partitions": [{"topic": "t", "partitions": [1]}], "timeout_ms": 1})
        assert v0.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED


def test_elect_leaders_unclean_brings_an_offline_partition_back(cluster: MockBroker) -> None:
    cluster.set_isr("t", 0, [1])
    cluster.stop_node(1)
    assert cluster.partition_state("t", 0).leader == -1
    with connect_to(cluster, 2) as c:
        assert elect(c, 1, [("t", [0, 1])]) == [
            ("t", 0, ErrorCode.NONE, None),
            ("t", 1, ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")]
        state = cluster.partition_state("t", 0)
        assert (state.leader, state.isr) == (2, [2])
        bad = c.request(ELECT_LEADERS, 2, {"election_type": 5, "timeout_ms": 1,
                                           "topic_partitions": [{"topic": "t", "partitions": [0]}]})
        assert bad.error_code == ErrorCode.INVALID_REQUEST
        assert bad.replica_election_results[0].partition_result[0].error_code == ErrorCode.INVALID_REQUEST


def test_elect_leaders_unclean_without_a_live_replica(cluster: MockBroker) -> None:
    cluster.create_topic("one", assignments=[[3]])
    cluster.stop_node(3)
    with connect_to(cluster, 1) as c:
        assert elect(c, 1, [("one", [0])]) == [("one", 0, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                                                "Eligible topic partition leaders are not available.")]


def reassign(c: RawClient, targets: list[tuple[str, int, list[int] | None]], version: int = 1,
             allow_rf_change: bool = True) -> list[tuple[str, int, int]]:
    body = {"timeout_ms": 5000, "allow_replication_factor_change": allow_rf_change, "topics": [
        {"name": t, "partitions": [{"partition_index": i, "replicas": r}]} for t, i, r in targets]}
    resp = c.request(ALTER_REASSIGNMENTS, version, body)
    assert resp.error_code == ErrorCode.NONE
    return [(t.name, p.partition_index, p.error_code) for t in resp.responses for p in t.partitions]


def listed(c: RawClient, topics: list[dict[str, object]] | None = None) -> list[tuple[str, int, list[int], list[int], list[int]]]:
    resp = c.request(LIST_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": topics})
    assert resp.error_code == ErrorCode.NONE
    return [(t.name, p.partition_index, list(p.replicas), list(p.adding_replicas), list(p.removing_replicas))
            for t in resp.topics for p in t.partitions]


def test_a_reassignment_completes_at_once_by_default_and_moves_the_leader(cluster: MockBroker) -> None:
    with connect_to(cluster, 2) as c:
        assert reassign(c, [("t", 0, [3, 2])]) == [("t", 0, ErrorCode.NONE)]
        assert listed(c) == []
    state = cluster.partition_state("t", 0)
    assert (state.replicas, state.isr, state.leader, state.leader_epoch) == ([3, 2], [3, 2], 3, 1)


def test_a_delayed_reassignment_is_listed_until_the_broker_clock_reaches_it(cluster: MockBroker) -> None:
    cluster.cluster.config.set("mockbroker.reassignment.ms", 60_000)
    cluster.create_topic("small", assignments=[[1]])
    with connect_to(cluster, 1) as c:
        assert reassign(c, [("small", 0, [2, 3])]) == [("small", 0, ErrorCode.NONE)]
        assert listed(c) == [("small", 0, [2, 3, 1], [2, 3], [1])]
        assert listed(c, [{"name": "small", "partition_indexes": [0, 4]}, {"name": "x", "partition_indexes": [0]}]) \
            == [("small", 0, [2, 3, 1], [2, 3], [1])]
        assert listed(c, [{"name": "t", "partition_indexes": [0]}]) == []
        assert cluster.partition_state("small", 0).leader == 1
    cluster.clock.advance(60)
    for _ in range(200):
        if cluster.partition_state("small", 0).replicas == [2, 3]:
            break
        time.sleep(0.05)
    state = cluster.partition_state("small", 0)
    assert (state.replicas, state.isr, state.leader) == ([2, 3], [2, 3], 2)
    with connect_to(cluster, 2) as c:
        assert listed(c) == []


def test_reassignment_errors(cluster: MockBroker) -> None:
    with connect_to(cluster, 1) as c:
        assert reassign(c, [("t", 0, None), ("t", 1, [1, 1]), ("t", 1, [4]), ("t", 9, [1]), ("nope", 0, [1]),
                            ("t", 1, [])]) == [
            ("t", 0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS), ("t", 1, ErrorCode.INVALID_REPLICA_ASSIGNMENT),
            ("t", 1, ErrorCode.INVALID_REPLICA_ASSIGNMENT), ("t", 9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ("t", 1, ErrorCode.INVALID_REPLICA_ASSIGNMENT)]
        assert reassign(c, [("t", 1, [1, 2])], allow_rf_change=False) == [
            ("t", 1, ErrorCode.INVALID_REPLICATION_FACTOR)]
    assert cluster.partition_state("t", 1).replicas == [2, 3, 1]


def test_describe_log_dirs_one_dir_per_node_with_partition_sizes(cluster: MockBroker) -> None:
    cluster.create_topic("solo", assignments=[[2]])
    with connect_to(cluster, 1) as c:
        assert produce(c, "t", make_batch(b"x" * 100), acks=1).error_code == ErrorCode.NONE
    size = sum(b.size for b in cluster.batches("t", 0))
    for node_id, expected in ((1, {"t": {0: size, 1: 0}}), (2, {"t": {0: size, 1: 0}, "solo": {0: 0}})):
        with connect_to(cluster, node_id) as c:
            resp = c.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
            [result] = resp.results
            assert (result.error_code, result.log_dir, result.total_bytes, result.usable_bytes) == (
                0, "/tmp/kafka-logs", -1, -1)
            got = {t.name: {p.partition_index: p.partition_size for p in t.partitions} for t in result.topics}
            assert got == expected
            assert all(p.offset_lag == 0 and not p.is_future_key for t in result.topics for p in t.partitions)
    with connect_to(cluster, 3) as c:
        resp = c.request(DESCRIBE_LOG_DIRS, 1, {"topics": [{"topic": "t", "partitions": [1]},
                                                          {"topic": "nope", "partitions": [0]}]})
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in resp.results[0].topics] == [("t", [1])]


def test_describe_log_dirs_reports_the_log_bound_as_the_volume() -> None:
    with MockBroker(config={"mockbroker.max.log.bytes": 10_000}).run_in_thread() as broker:
        broker.create_topic("t")
        with RawClient(broker.host, broker.port) as c:
            assert produce(c, "t", make_batch(b"x" * 100)).error_code == ErrorCode.NONE
            [result] = c.request(DESCRIBE_LOG_DIRS, 5, {"topics": None}).results
        held = sum(b.size for b in broker.batches("t"))
        assert (result.total_bytes, result.usable_bytes, result.is_cordoned) == (10_000, 10_000 - held, False)


def test_fault_injection_fails_elect_leaders_and_reassignments(cluster: MockBroker) -> None:
    cluster.inject(ELECT_LEADERS, error=ErrorCode.NOT_CONTROLLER)
    cluster.inject(LIST_REASSIGNMENTS, error=ErrorCode.NOT_CONTROLLER)
    with connect_to(cluster, 1) as c:
        v0 = c.request(ELECT_LEADERS, 0, {"topic_partitions": [{"topic": "t", "partitions": [0]}], "timeout_ms": 1})
        assert v0.replica_election_results[0].partition_result[0].error_code == ErrorCode.NOT_CONTROLLER
        assert c.request(LIST_REASSIGNMENTS, 0, {"timeout_ms": 1, "topics": None}).error_code == ErrorCode.NOT_CONTROLLER
