"""Several nodes in one process, on the wire: Metadata and DescribeTopicPartitions report replicas, ISR,
offline replicas and leaders truthfully; a node that does not lead answers NOT_LEADER_OR_FOLLOWER with
KIP-951 leader hints; leader epochs are checked (KIP-320); acks=all needs min.insync.replicas; stopped
nodes refuse connections and start again on the same port; coordinators sit on the lowest live node."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import partition_for
from tests.handlers.conftest import (
    FETCH,
    METADATA,
    PRODUCE,
    fetch,
    fetch_body,
    fetch_partition,
    fetch_topic,
    list_offsets,
    make_batch,
    produce,
    produce_body,
    values_of,
)
from tests.rawclient import RawClient

OFFSET_FOR_LEADER_EPOCH, FIND_COORDINATOR, DESCRIBE_TOPIC_PARTITIONS = 23, 10, 75


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3, racks=["a", "b", "c"]).run_in_thread() as broker:
        broker.create_topic("t", config={"min.insync.replicas": "2"}, assignments=[[1, 2, 3]])
        yield broker


def port_of(broker: MockBroker, node_id: int) -> int:
    return next(lst.port for lst in broker.cluster.listeners if lst.node_id == node_id)


def connect_to(broker: MockBroker, node_id: int) -> RawClient:
    return RawClient("127.0.0.1", port_of(broker, node_id))


def metadata_partition(client: RawClient, topic: str = "t") -> object:
    meta = client.request(METADATA, 12, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    [t] = meta.topics
    [p] = t.partitions
    return p


def test_bootstrap_servers_and_metadata_list_every_node_with_its_rack(cluster: MockBroker) -> None:
    ports = [port_of(cluster, n) for n in (1, 2, 3)]
    assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{p}" for p in ports)
    for node_id in (1, 2, 3):
        with connect_to(cluster, node_id) as c:
            meta = c.request(METADATA, 12, {"topics": None})
            assert [(b.node_id, b.port, b.rack) for b in meta.brokers] == list(zip((1, 2, 3), ports, "abc", strict=True))
    assert [(n.node_id, n.rack, n.alive) for n in cluster.nodes()] == [(1, "a", True), (2, "b", True),
                                                                       (3, "c", True)]


def test_create_topics_with_a_replication_factor_places_replicas_and_refuses_too_many(cluster: MockBroker) -> None:
    with connect_to(cluster, 2) as c:
        body = {"topics": [{"name": "r3", "num_partitions": 3, "replication_factor": 3, "assignments": [],
                            "configs": []},
                           {"name": "r4", "num_partitions": 1, "replication_factor": 4, "assignments": [],
                            "configs": []},
                           {"name": "bad", "num_partitions": -1, "replication_factor": -1,
                            "assignments": [{"partition_index": 0, "broker_ids": [1, 7]}], "configs": []}],
                "timeout_ms": 5000, "validate_only": False}
        resp = c.request(19, 7, body)
        codes = {t.name: t.error_code for t in resp.topics}
        assert codes == {"r3": 0, "r4": ErrorCode.INVALID_REPLICATION_FACTOR,
                         "bad": ErrorCode.INVALID_REPLICA_ASSIGNMENT}
        meta = c.request(METADATA, 12, {"topics": [{"name": "r3"}], "allow_auto_topic_creation": False})
        parts = meta.topics[0].partitions
        assert all(sorted(p.replica_nodes) == [1, 2, 3] and p.leader_id == p.replica_nodes[0] for p in parts)
        assert sorted(p.leader_id for p in parts) == [1, 2, 3]


def test_a_follower_answers_not_leader_with_the_leaders_id_epoch_and_endpoint(cluster: MockBroker) -> None:
    with connect_to(cluster, 2) as c:
        resp = c.request(PRODUCE, 10, produce_body("t", make_batch(b"x")))
        part = resp.responses[0].partition_responses[0]
        assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (1, 0)
        assert [(n.node_id, n.host, n.port, n.rack) for n in resp.node_endpoints] == [
            (1, "127.0.0.1", port_of(cluster, 1), "a")]
        # A consumer fetch (v11+) may be served by any replica (KIP-392): ask a node holding no replica.
        cluster.create_topic("away", assignments=[[1, 3]])
        topic_id = cluster.cluster.topics["away"].topic_id
        body = fetch_body([fetch_topic("", fetch_partition(0, 0), topic_id=topic_id)])
        fresp = c.request(FETCH, 16, body)
        fpart = fresp.responses[0].partitions[0]
        assert fpart.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (fpart.current_leader.leader_id, fpart.current_leader.leader_epoch) == (1, 0)
        assert [n.node_id for n in fresp.node_endpoints] == [1]
        # Before KIP-951's versions the hints are not on the wire.
        assert produce(c, "t", make_batch(b"x"), version=9).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert list_offsets(c, "t", -1).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    with connect_to(cluster, 1) as c:
        ok = c.request(PRODUCE, 10, produce_body("t", make_batch(b"x")))
        assert ok.responses[0].partition_responses[0].error_code == ErrorCode.NONE
        assert not ok.get("node_endpoints")


def test_a_leader_move_fences_old_epochs_and_moves_service_to_the_new_leader(cluster: MockBroker) -> None:
    with connect_to(cluster, 1) as c:
        assert produce(c, "t", make_batch(b"one")).error_code == ErrorCode.NONE
    cluster.move_leader("t", 0, 3)
    state = cluster.partition_state("t", 0)
    assert (state.leader, state.leader_epoch, state.isr) == (3, 1, [1, 2, 3])
    with connect_to(cluster, 1) as c:
        p = c.request(PRODUCE, 12, produce_body("t", make_batch(b"x"))).responses[0].partition_responses[0]
        assert (p.error_code, p.current_leader.leader_id, p.current_leader.leader_epoch) == (
            ErrorCode.NOT_LEADER_OR_FOLLOWER, 3, 1)
        # A replica checks the epoch first (Kafka's getLocalLog): a stale one is fenced even on a follower.
        assert fetch(c, "t", current_leader_epoch=0).error_code == ErrorCode.FENCED_LEADER_EPOCH
        # Before v11 a consumer fetch goes to the leader only; from v11 a follower serves it (KIP-392).
        assert fetch(c, "t", current_leader_epoch=1, version=10).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert values_of(fetch(c, "t", current_leader_epoch=1, version=11).records) == [b"one"]
    with connect_to(cluster, 3) as c:
        fenced = fetch(c, "t", current_leader_epoch=0, version=12)
        assert (fenced.error_code, fenced.current_leader.leader_id, fenced.current_leader.leader_epoch) == (
            ErrorCode.FENCED_LEADER_EPOCH, 3, 1)
        assert fetch(c, "t", current_leader_epoch=2).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        assert list_offsets(c, "t", -1, current_leader_epoch=0).error_code == ErrorCode.FENCED_LEADER_EPOCH
        assert list_offsets(c, "t", -1, current_leader_epoch=5).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
        assert produce(c, "t", make_batch(b"two")).error_code == ErrorCode.NONE
        assert values_of(fetch(c, "t", current_leader_epoch=1).records) == [b"one", b"two"]
        oe = c.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "current_leader_epoch": 1, "leader_epoch": 0},
        ]}]})
        assert [(p.error_code, p.leader_epoch, p.end_offset) for p in oe.topics[0].partitions] == [(0, 0, 1)]
        stale = c.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0}]}]})
        assert stale.topics[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
        future = c.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "current_leader_epoch": 2, "leader_epoch": 0}]}]})
        assert future.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert [b.partition_leader_epoch for b in cluster.batches("t")] == [0, 1]


def test_acks_all_needs_min_insync_replicas_and_acks_one_does_not(cluster: MockBroker) -> None:
    cluster.set_isr("t", 0, [1])
    with connect_to(cluster, 1) as c:
        refused = produce(c, "t", make_batch(b"x"), acks=-1)
        assert (refused.error_code, refused.base_offset) == (ErrorCode.NOT_ENOUGH_REPLICAS, -1)
        assert produce(c, "t", make_batch(b"y"), acks=1).error_code == ErrorCode.NONE
        cluster.set_isr("t", 0, [1, 3])
        assert produce(c, "t", make_batch(b"z"), acks=-1).error_code == ErrorCode.NONE
    assert [r.value for r in cluster.records("t")] == [b"y", b"z"]


def test_stopping_a_node_drops_its_connections_refuses_new_ones_and_moves_leadership(cluster: MockBroker) -> None:
    port = port_of(cluster, 1)
    with connect_to(cluster, 1) as c1, connect_to(cluster, 2) as c2:
        assert produce(c1, "t", make_batch(b"a")).error_code == ErrorCode.NONE
        cluster.stop_node(1)
        assert c1.is_closed_by_peer()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        p = metadata_partition(c2)
        assert (p.error_code, p.leader_id, p.leader_epoch, p.isr_nodes, p.offline_replicas) == (0, 2, 1, [2, 3], [1])
        meta = c2.request(METADATA, 12, {"topics": None})
        assert [b.node_id for b in meta.brokers] == [2, 3] and meta.controller_id == 2
        assert produce(c2, "t", make_batch(b"b")).error_code == ErrorCode.NONE
        dtp = c2.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "t"}], "response_partition_limit": 10})
        [dp] = dtp.topics[0].partitions
        assert (dp.leader_id, dp.isr_nodes, dp.offline_replicas) == (2, [2, 3], [1])
        coord = c2.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
        # The leader of g's __consumer_offsets partition, made now over the running nodes 2 and 3.
        leader = cluster.partition_state("__consumer_offsets", partition_for("g", 50)).leader
        assert leader in (2, 3)
        assert [(x.node_id, x.port) for x in coord.coordinators] == [(leader, port_of(cluster, leader))]
    cluster.start_node(1)
    assert port_of(cluster, 1) == port
    with connect_to(cluster, 1) as c1:
        p = metadata_partition(c1)
        assert (p.leader_id, p.isr_nodes, p.offline_replicas) == (2, [1, 2, 3], [])
        coord = c1.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["tx"]})
        leader = cluster.partition_state("__transaction_state", partition_for("tx", 50)).leader
        assert [x.node_id for x in coord.coordinators] == [leader]
    assert cluster.elect_preferred_leaders() == [("t", 0)]
    assert cluster.partition_state("t", 0).leader == 1
    assert [r.value for r in cluster.records("t")] == [b"a", b"b"]


def test_a_partition_without_a_live_isr_member_is_offline(cluster: MockBroker) -> None:
    cluster.set_isr("t", 0, [3])
    cluster.stop_node(3)
    with connect_to(cluster, 1) as c:
        p = metadata_partition(c)
        assert (p.error_code, p.leader_id, p.isr_nodes, p.offline_replicas) == (
            ErrorCode.LEADER_NOT_AVAILABLE, -1, [3], [3])
        resp = c.request(PRODUCE, 10, produce_body("t", make_batch(b"x")))
        part = resp.responses[0].partition_responses[0]
        assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert part.current_leader.leader_id == -1 and not resp.get("node_endpoints")
    cluster.start_node(3)
    state = cluster.partition_state("t", 0)
    assert (state.leader, state.isr, state.offline_replicas) == (3, [1, 2, 3], [])


def test_describe_cluster_lists_a_stopped_node_as_fenced_only_when_asked(cluster: MockBroker) -> None:
    cluster.stop_node(2)
    with connect_to(cluster, 3) as c:
        plain = c.request(60, 2, {"include_cluster_authorized_operations": False, "endpoint_type": 1,
                                  "include_fenced_brokers": False})
        assert [(b.broker_id, b.is_fenced) for b in plain.brokers] == [(1, False), (3, False)]
        fenced = c.request(60, 2, {"include_cluster_authorized_operations": False, "endpoint_type": 1,
                                   "include_fenced_brokers": True})
        assert [(b.broker_id, b.is_fenced) for b in fenced.brokers] == [(1, False), (2, True), (3, False)]


def test_nodes_stop_and_start_from_asyncio_code_on_the_brokers_own_loop() -> None:
    async def run() -> None:
        async with MockBroker(brokers=2) as broker:
            port = port_of(broker, 2)
            broker.stop_node(2)
            with pytest.raises(OSError):
                await asyncio.open_connection("127.0.0.1", port)
            broker.start_node(2)
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
            writer.close()
            await writer.wait_closed()
            assert [n.alive for n in broker.nodes()] == [True, True]

    asyncio.run(run())
