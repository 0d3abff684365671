"""__consumer_offsets and __transaction_state as real internal topics, and coordinators placed by their
partitions (issues #21 item 1, #12 item 5), over the wire."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.coordinator_records import (
    OffsetCommitKey,
    decode_offset_commit_value,
    decode_offsets_key,
)
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import partition_for
from tests.handlers.conftest import (
    INIT_PRODUCER_ID,
    METADATA,
    fetch,
    list_offsets,
    make_batch,
    produce,
    records_of,
)
from tests.rawclient import RawClient

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT = 8, 9, 10, 11, 12
LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 13, 14, 15, 16
END_TXN, TXN_OFFSET_COMMIT, DESCRIBE_CONFIGS, DELETE_GROUPS = 26, 28, 32, 42
TOPIC_RESOURCE = 2


def find(client: RawClient, key: str, key_type: int = 0, version: int = 3) -> Any:
    return client.request(FIND_COORDINATOR, version, {"key": key, "key_type": key_type})


def commit(client: RawClient, group: str, topic: str, offset: int, version: int = 8) -> int:
    resp = client.request(OFFSET_COMMIT, version, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                   "committed_leader_epoch": -1, "committed_metadata": "m"}]}]})
    return int(resp.topics[0].partitions[0].error_code)


def all_topics(client: RawClient) -> dict[str, Any]:
    return {t.name: t for t in client.request(METADATA, 12, {"topics": None}).topics}


# -- one node --------------------------------------------------------------------------------------


def test_find_coordinator_creates_consumer_offsets_which_metadata_lists_as_internal(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("t")
    assert "__consumer_offsets" not in all_topics(client)
    resp = find(client, "g")
    assert (resp.error_code, resp.node_id, resp.port) == (ErrorCode.NONE, mockbroker.node_id, mockbroker.port)
    topics = all_topics(client)
    offsets = topics["__consumer_offsets"]
    assert offsets.is_internal and not topics["t"].is_internal
    assert len(offsets.partitions) == 50 and {tuple(p.replica_nodes) for p in offsets.partitions} == {(1,)}
    assert "__transaction_state" not in topics
    assert find(client, "tx", key_type=1).error_code == ErrorCode.NONE
    assert all_topics(client)["__transaction_state"].is_internal


def test_metadata_naming_an_internal_topic_creates_it_with_its_configs(mockbroker: MockBroker,
                                                                       client: RawClient) -> None:
    meta = client.request(METADATA, 12, {"topics": [{"name": "__transaction_state"}],
                                         "allow_auto_topic_creation": True})
    [t] = meta.topics
    assert (t.error_code, t.name, t.is_internal, len(t.partitions)) == (ErrorCode.NONE, "__transaction_state", True, 50)
    body = {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": "__transaction_state",
                           "configuration_keys": None}], "include_synonyms": False, "include_documentation": False}
    [result] = client.request(DESCRIBE_CONFIGS, 4, body).results
    configs = {c.name: c.value for c in result.configs}
    assert configs["cleanup.policy"] == "compact" and configs["compression.type"] == "uncompressed"
    assert configs["unclean.leader.election.enable"] == "false" and configs["min.insync.replicas"] == "2"


def test_committed_offsets_are_records_of_the_groups_partition(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("t")
    assert commit(client, "my-group", "t", 42) == ErrorCode.NONE
    partition = partition_for("my-group", 50)
    assert partition == 12
    assert list_offsets(client, "__consumer_offsets", -1, partition=partition).offset == 1
    assert list_offsets(client, "__consumer_offsets", -1, partition=0).offset == 0
    [record] = records_of(fetch(client, "__consumer_offsets", partition=partition).records)
    assert record.key is not None and record.value is not None
    assert decode_offsets_key(record.key) == OffsetCommitKey("my-group", "t", 0)
    value = decode_offset_commit_value(record.value)
    assert (value.offset, value.metadata, value.leader_epoch) == (42, "m", -1)
    body = {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": "__consumer_offsets",
                           "configuration_keys": ["cleanup.policy"]}], "include_synonyms": False,
            "include_documentation": False}
    [result] = client.request(DESCRIBE_CONFIGS, 4, body).results
    assert [(c.name, c.value) for c in result.configs] == [("cleanup.policy", "compact")]


def test_producing_to_an_internal_topic_is_refused(mockbroker: MockBroker, client: RawClient) -> None:
    find(client, "g")
    resp = produce(client, "__consumer_offsets", make_batch(b"x"))
    assert resp.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert list_offsets(client, "__consumer_offsets", -1).offset == 0


# -- three nodes -----------------------------------------------------------------------------------


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        broker.create_topic("t", assignments=[[1, 2, 3]])
        yield broker


def connect_to(broker: MockBroker, node_id: int) -> RawClient:
    port = next(lst.port for lst in broker.cluster.listeners if lst.node_id == node_id)
    return RawClient("127.0.0.1", port)


def coordinator_of(broker: MockBroker, topic: str, key: str) -> int:
    return broker.partition_state(topic, partition_for(key, 50)).leader


def test_find_coordinator_answers_the_leader_of_each_keys_partition(cluster: MockBroker) -> None:
    groups = [f"group-{i}" for i in range(12)]
    with connect_to(cluster, 1) as c:
        resp = c.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": groups})
        leaders = [coordinator_of(cluster, "__consumer_offsets", g) for g in groups]
        assert [(x.key, x.node_id, x.error_code) for x in resp.coordinators] == [
            (g, n, ErrorCode.NONE) for g, n in zip(groups, leaders, strict=True)]
        assert len(set(leaders)) > 1  # spread over the nodes, as Kafka's placement spreads the partitions
        assert {len(p.replica_nodes) for p in all_topics(c)["__consumer_offsets"].partitions} == {3}
        v3 = find(c, "tx-1", key_type=1)
        assert v3.node_id == coordinator_of(cluster, "__transaction_state", "tx-1")


def test_group_requests_to_another_node_get_not_coordinator(cluster: MockBroker) -> None:
    cluster.move_coordinator(2, group="g")
    with connect_to(cluster, 1) as one, connect_to(cluster, 2) as two:
        assert find(one, "g").node_id == 2
        assert commit(one, "g", "t", 5) == ErrorCode.NOT_COORDINATOR
        assert commit(two, "g", "t", 5) == ErrorCode.NONE
        fetched = one.request(OFFSET_FETCH, 8, {"groups": [{"group_id": "g", "topics": None}],
                                                "require_stable": False})
        assert fetched.groups[0].error_code == ErrorCode.NOT_COORDINATOR
        hb = one.request(HEARTBEAT, 4, {"group_id": "g", "generation_id": 1, "member_id": "m",
                                        "group_instance_id": None})
        assert hb.error_code == ErrorCode.NOT_COORDINATOR
        join = one.request(JOIN_GROUP, 9, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                           "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                                           "protocols": [{"name": "range", "metadata": b""}], "reason": None})
        assert join.error_code == ErrorCode.NOT_COORDINATOR
        sync = one.request(SYNC_GROUP, 5, {"group_id": "g", "generation_id": 1, "member_id": "m",
                                           "group_instance_id": None, "protocol_type": "consumer",
                                           "protocol_name": "range", "assignments": []})
        assert sync.error_code == ErrorCode.NOT_COORDINATOR
        leave = one.request(LEAVE_GROUP, 5, {"group_id": "g", "members": [{"member_id": "m",
                                                                           "group_instance_id": None}]})
        assert leave.error_code == ErrorCode.NOT_COORDINATOR
        described = one.request(DESCRIBE_GROUPS, 5, {"groups": ["g"], "include_authorized_operations": False})
        assert [(d.group_id, d.error_code) for d in described.groups] == [("g", ErrorCode.NOT_COORDINATOR)]
        assert [g.group_id for g in two.request(LIST_GROUPS, 4, {"states_filter": []}).groups] == ["g"]
        assert one.request(LIST_GROUPS, 4, {"states_filter": []}).groups == []
        deleted = one.request(DELETE_GROUPS, 2, {"groups_names": ["g"]})
        assert [(r.group_id, r.error_code) for r in deleted.results] == [("g", ErrorCode.NOT_COORDINATOR)]

        # The coordinator moves with the group's state: node 3 now serves its offsets.
        cluster.move_coordinator(3, group="g")
        with connect_to(cluster, 3) as three:
            assert find(one, "g").node_id == 3
            assert commit(two, "g", "t", 6) == ErrorCode.NOT_COORDINATOR
            got = three.request(OFFSET_FETCH, 8, {"groups": [{"group_id": "g", "topics": None}],
                                                  "require_stable": False})
            [g] = got.groups
            assert (g.error_code, g.topics[0].partitions[0].committed_offset) == (ErrorCode.NONE, 5)


def test_transaction_requests_to_another_node_get_not_coordinator(cluster: MockBroker) -> None:
    cluster.move_coordinator(3, transactional_id="tx")
    body = {"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}
    with connect_to(cluster, 1) as one, connect_to(cluster, 3) as three:
        assert find(one, "tx", key_type=1).node_id == 3
        assert one.request(INIT_PRODUCER_ID, 4, body).error_code == ErrorCode.NOT_COORDINATOR
        init = three.request(INIT_PRODUCER_ID, 4, body)
        assert init.error_code == ErrorCode.NONE
        end = one.request(END_TXN, 4, {"transactional_id": "tx", "producer_id": init.producer_id,
                                       "producer_epoch": init.producer_epoch, "committed": False})
        assert end.error_code == ErrorCode.NOT_COORDINATOR
        # An idempotent producer (no transactional id) may ask any node.
        idempotent = one.request(INIT_PRODUCER_ID, 4, {**body, "transactional_id": None})
        assert idempotent.error_code == ErrorCode.NONE


def test_a_stopped_coordinator_moves_and_an_offline_partition_has_none() -> None:
    with MockBroker(brokers=3, config={"offsets.topic.replication.factor": 1}).run_in_thread() as broker:
        with connect_to(broker, 1) as c:
            leader = find(c, "g").node_id
        other = next(n for n in (1, 2, 3) if n != leader)
        broker.stop_node(leader)
        with connect_to(broker, other) as c:
            # One replica only: the partition is offline, so is its coordinator.
            resp = c.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
            assert [(x.node_id, x.error_code) for x in resp.coordinators] == [(-1, ErrorCode.COORDINATOR_NOT_AVAILABLE)]
            assert commit(c, "g", "t", 1) == ErrorCode.NOT_COORDINATOR
        broker.start_node(leader)
        with connect_to(broker, other) as c:
            assert find(c, "g").node_id == leader
