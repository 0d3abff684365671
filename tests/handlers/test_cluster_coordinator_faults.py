"""Issue #12 items 5 and 6 on the wire: COORDINATOR_LOAD_IN_PROGRESS injected on one node
(`inject(..., node=)`) for FindCoordinator and the group and transaction APIs of the coordinator's node,
and every failure call (stall, latency, a coordinator move) showing at once in `nodes()`, in Metadata
and FindCoordinator, with the request record naming the node that served each request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import partition_for
from tests.handlers.test_cluster import connect_to
from tests.rawclient import RawClient

METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP = 3, 8, 9, 10, 11
INIT_PRODUCER_ID, CG_HEARTBEAT = 22, 68
LOADING = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        broker.create_topic("t", assignments=[[1, 2, 3]])
        yield broker


def find(client: RawClient, keys: list[str], key_type: int = 0) -> list[tuple[str, int, int]]:
    resp = client.request(FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": keys})
    return [(c.key, c.node_id, c.error_code) for c in resp.coordinators]


def commit(client: RawClient, group: str, offset: int) -> int:
    resp = client.request(OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": None}]}]})
    return int(resp.topics[0].partitions[0].error_code)


def offset_fetch(client: RawClient, group: str) -> int:
    resp = client.request(OFFSET_FETCH, 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False})
    return int(resp.groups[0].error_code)


def join(client: RawClient, group: str) -> Any:
    return client.request(JOIN_GROUP, 9, {
        "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
        "group_instance_id": None, "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}],
        "reason": None})


def cg_heartbeat(client: RawClient, group: str) -> Any:
    return client.request(CG_HEARTBEAT, 0, {
        "group_id": group, "member_id": "m-1", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []})


def test_coordinator_load_in_progress_on_one_node_only(cluster: MockBroker) -> None:
    cluster.move_coordinator(2, group="g")
    cluster.move_coordinator(2, transactional_id="tx")
    rules = [cluster.inject(api, error=LOADING, count=1, node=2)
             for api in (FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, JOIN_GROUP, CG_HEARTBEAT, INIT_PRODUCER_ID)]
    txn_body = {"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}
    with connect_to(cluster, 1) as one, connect_to(cluster, 2) as two:
        # Node 1 is not touched by the rules: it answers the lookup and refuses the group's requests with
        # NOT_COORDINATOR, as it would without them.
        assert find(one, ["g", "h"]) == [("g", 2, ErrorCode.NONE), ("h", find(one, ["h"])[0][1], ErrorCode.NONE)]
        assert commit(one, "g", 5) == ErrorCode.NOT_COORDINATOR
        assert offset_fetch(one, "g") == ErrorCode.NOT_COORDINATOR
        assert join(one, "g").error_code == ErrorCode.NOT_COORDINATOR
        assert cg_heartbeat(one, "g").error_code == ErrorCode.NOT_COORDINATOR
        assert one.request(INIT_PRODUCER_ID, 4, txn_body).error_code == ErrorCode.NOT_COORDINATOR
        assert [r.count for r in rules] == [1] * 6
        # The coordinator's node is loading: once per API, then it serves.
        assert find(two, ["g", "h"]) == [("g", -1, LOADING), ("h", -1, LOADING)]
        assert commit(two, "g", 5) == LOADING
        assert offset_fetch(two, "g") == LOADING
        assert join(two, "g").error_code == LOADING
        assert cg_heartbeat(two, "g").error_code == LOADING
        assert two.request(INIT_PRODUCER_ID, 4, txn_body).error_code == LOADING
        assert [r.count for r in rules] == [0] * 6
        assert cluster.committed("g") == {}
        assert find(two, ["g"]) == [("g", 2, ErrorCode.NONE)]
        assert commit(two, "g", 5) == ErrorCode.NONE
        assert offset_fetch(two, "g") == ErrorCode.NONE
        assert join(two, "g").error_code == ErrorCode.MEMBER_ID_REQUIRED
        assert two.request(INIT_PRODUCER_ID, 4, txn_body).error_code == ErrorCode.NONE
    assert cluster.committed("g") == {("t", 0): 5}
    assert [r.node_id for r in cluster.received(OFFSET_COMMIT)] == [1, 2, 2]


def test_failure_calls_show_at_once_in_nodes_metadata_and_find_coordinator(cluster: MockBroker) -> None:
    def info(node: int) -> tuple[bool, bool, int]:
        n = next(n for n in cluster.nodes() if n.node_id == node)
        return n.alive, n.stalled, n.latency_ms

    cluster.stall_node(3)
    cluster.set_latency(2, 40)
    assert [info(n) for n in (1, 2, 3)] == [(True, False, 0), (True, False, 40), (True, True, 0)]
    cluster.resume_node(3)
    cluster.set_latency(2, 0)
    assert [info(n) for n in (1, 2, 3)] == [(True, False, 0)] * 3

    offsets = partition_for("g", 50)
    with connect_to(cluster, 1) as one:
        before = find(one, ["g"])[0][1]
        target = next(n for n in (2, 3) if n != before)  # not node 1, which this test talks to
        epoch = cluster.partition_state("__consumer_offsets", offsets).leader_epoch
        cluster.move_coordinator(target, group="g")
        # No wait: the next Metadata and FindCoordinator answers name the new leader, epoch + 1.
        meta = one.request(METADATA, 12, {"topics": [{"name": "__consumer_offsets"}],
                                          "allow_auto_topic_creation": False})
        [p] = [p for p in meta.topics[0].partitions if p.partition_index == offsets]
        assert (p.leader_id, p.leader_epoch) == (target, epoch + 1)
        assert find(one, ["g"]) == [("g", target, ErrorCode.NONE)]
        cluster.stop_node(target)
        moved = find(one, ["g"])[0][1]
        assert moved not in (target, -1)
        meta = one.request(METADATA, 12, {"topics": [{"name": "__consumer_offsets"}],
                                          "allow_auto_topic_creation": False})
        [p] = [p for p in meta.topics[0].partitions if p.partition_index == offsets]
        assert (p.leader_id, p.leader_epoch, p.offline_replicas) == (moved, epoch + 2, [target])
        assert [b.node_id for b in meta.brokers] == sorted({1, 2, 3} - {target})
    with connect_to(cluster, moved) as c:
        assert commit(c, "g", 1) == ErrorCode.NONE
    # The request record names the node that served each request.
    assert [r.node_id for r in cluster.received(FIND_COORDINATOR)] == [1, 1, 1]
    assert [r.node_id for r in cluster.received(METADATA)] == [1, 1]
    assert [r.node_id for r in cluster.received(OFFSET_COMMIT)] == [moved]
