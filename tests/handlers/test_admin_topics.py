"""Raw-protocol tests of CreateTopics (19), DeleteTopics (20) and CreatePartitions (37)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import Node, Topic
from tests.rawclient import RawClient

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, METADATA = 19, 20, 37, 3


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def topic(name: str, partitions: int = 1, rf: int = 1, configs: dict[str, str | None] | None = None,
          assignments: list[tuple[int, list[int]]] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [{"partition_index": i, "broker_ids": b} for i, b in (assignments or [])],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
    }


def create(client: RawClient, *topics: dict[str, Any], version: int = 7, validate_only: bool = False) -> list[Any]:
    resp = client.request(CREATE_TOPICS, version, {"topics": list(topics), "timeout_ms": 5000,
                                                   "validate_only": validate_only})
    return list(resp.topics)


def get_topic(broker: MockBroker, name: str) -> Topic:
    t = broker.cluster.topic(name)
    assert t is not None
    return t


def add_node(broker: MockBroker, node_id: int) -> None:
    broker._call(lambda: broker.cluster.nodes.setdefault(node_id, Node(node_id)))


# -- CreateTopics ----------------------------------------------------------------------------------


def test_create_topic_v7_returns_id_partitions_rf_and_configs(client: RawClient, mockbroker: MockBroker) -> None:
    [r] = create(client, topic("orders", 3, 1, {"cleanup.policy": "compact"}))
    assert r.error_code == ErrorCode.NONE
    assert r.error_message is None
    assert (r.num_partitions, r.replication_factor) == (3, 1)
    t = get_topic(mockbroker, "orders")
    assert r.topic_id == t.topic_id != ZERO_UUID
    configs = {c.name: c for c in r.configs}
    assert configs["cleanup.policy"].value == "compact"
    assert configs["cleanup.policy"].config_source == 1  # TOPIC_CONFIG
    assert configs["retention.ms"].value == "604800000"
    assert configs["retention.ms"].config_source == 5  # DEFAULT_CONFIG
    assert not any(c.read_only or c.is_sensitive for c in r.configs)
    assert [c.name for c in r.configs] == sorted(c.name for c in r.configs)
    assert len(t.partitions) == 3


def test_create_topic_v0_succeeds_and_metadata_lists_it(client: RawClient) -> None:
    [r] = create(client, topic("v0-topic", 2), version=0)
    assert (r.name, r.error_code) == ("v0-topic", ErrorCode.NONE)
    md = client.request(METADATA, 1, {"topics": [{"name": "v0-topic"}]})
    assert len(md.topics[0].partitions) == 2


def test_create_topic_minus_one_uses_broker_defaults(client: RawClient) -> None:
    [r] = create(client, topic("defaults", -1, -1), version=5)
    assert (r.error_code, r.num_partitions, r.replication_factor) == (ErrorCode.NONE, 1, 1)


@pytest.mark.mockbroker(config={"log.retention.ms": "1000"})
def test_create_topic_reports_static_broker_config_source(client: RawClient) -> None:
    [r] = create(client, topic("static"), version=5)
    retention = next(c for c in r.configs if c.name == "retention.ms")
    assert (retention.value, retention.config_source) == ("1000", 4)  # STATIC_BROKER_CONFIG


def test_create_topic_twice_is_topic_already_exists(client: RawClient) -> None:
    create(client, topic("twice"))
    [r] = create(client, topic("twice"))
    assert r.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert r.error_message == "Topic 'twice' already exists."
    assert (r.num_partitions, r.replication_factor, r.configs, r.topic_id) == (-1, -1, [], ZERO_UUID)


def test_create_topic_v0_error_has_no_message_field(client: RawClient) -> None:
    create(client, topic("twice-v0"), version=0)
    [r] = create(client, topic("twice-v0"), version=0)
    assert r.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert r.error_message == ""  # not on the wire at v0: the schema default


@pytest.mark.parametrize("name", ["", "bad name", "a" * 250, "..", "ü"])
def test_create_topic_with_illegal_name_is_invalid_topic_exception(client: RawClient, name: str) -> None:
    [r] = create(client, topic(name))
    assert r.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert r.error_message


def test_create_topic_colliding_over_dot_and_underscore_is_invalid_topic_exception(client: RawClient) -> None:
    create(client, topic("a.b"))
    [r] = create(client, topic("a_b"))
    assert r.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert r.error_message == "Topic 'a_b' collides with existing topic: a.b"


@pytest.mark.parametrize("partitions", [0, -2])
def test_create_topic_with_bad_partition_count_is_invalid_partitions(client: RawClient, partitions: int) -> None:
    [r] = create(client, topic("bad-partitions", partitions))
    assert r.error_code == ErrorCode.INVALID_PARTITIONS
    assert r.error_message == "Number of partitions was set to an invalid non-positive value."


@pytest.mark.parametrize("rf", [0, -2])
def test_create_topic_with_bad_replication_factor_is_invalid_replication_factor(client: RawClient, rf: int) -> None:
    [r] = create(client, topic("bad-rf", 1, rf))
    assert r.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert r.error_message == "Replication factor must be larger than 0, or -1 to use the default value."


def test_create_topic_with_more_replicas_than_nodes_is_invalid_replication_factor(client: RawClient) -> None:
    [r] = create(client, topic("rf3", 1, 3))
    assert r.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert r.error_message == ("Unable to replicate the partition 3 time(s): The target replication factor of 3 "
                               "cannot be reached because only 1 broker(s) are registered.")


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
        ({"retention.ms": "soon"}, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        ({"cleanup.policy": "compacted"},
         "Invalid value compacted for configuration cleanup.policy: String must be one of: delete, compact"),
        ({"retention.ms": None}, "Null value not supported for topic configs: retention.ms"),
    ],
)
def test_create_topic_with_bad_config_is_invalid_config(client: RawClient, configs: dict[str, str | None],
                                                        message: str) -> None:
    [r] = create(client, topic("bad-config", configs=configs))
    assert r.error_code == ErrorCode.INVALID_CONFIG
    assert r.error_message == message


def test_create_topic_config_error_comes_before_partition_error(client: RawClient) -> None:
    [r] = create(client, topic("both-bad", 0, 1, {"nope": "1"}))
    assert r.error_code == ErrorCode.INVALID_CONFIG


def test_create_topic_named_twice_in_one_request_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    results = create(client, topic("dup"), topic("other"), topic("dup"))
    assert [(r.name, r.error_code) for r in results] == [("other", ErrorCode.NONE), ("dup", ErrorCode.INVALID_REQUEST)]
    assert results[1].error_message == "Duplicate topic name."
    assert mockbroker.topics() == ["other"]


def test_create_cluster_metadata_topic_is_invalid_request(client: RawClient) -> None:
    [r] = create(client, topic("__cluster_metadata"))
    assert r.error_code == ErrorCode.INVALID_REQUEST


def test_create_topic_validate_only_creates_nothing(client: RawClient, mockbroker: MockBroker) -> None:
    [r] = create(client, topic("dry", 4, 1, {"retention.ms": "5"}), validate_only=True)
    assert (r.error_code, r.num_partitions, r.replication_factor) == (ErrorCode.NONE, 4, 1)
    assert next(c.value for c in r.configs if c.name == "retention.ms") == "5"
    assert mockbroker.topics() == []


def test_create_topic_validate_only_v1_reports_errors(client: RawClient) -> None:
    [r] = create(client, topic("dry-bad", 0), version=1, validate_only=True)
    assert r.error_code == ErrorCode.INVALID_PARTITIONS
    assert r.error_message == "Number of partitions was set to an invalid non-positive value."


def test_create_topic_with_manual_assignment_places_replicas(client: RawClient, mockbroker: MockBroker) -> None:
    add_node(mockbroker, 2)
    [r] = create(client, topic("manual", -1, -1, assignments=[(0, [2, 1]), (1, [1, 2])]))
    assert (r.error_code, r.num_partitions, r.replication_factor) == (ErrorCode.NONE, 2, 2)
    parts = get_topic(mockbroker, "manual").partitions
    assert [(p.leader_id, p.replicas) for p in parts] == [(2, [2, 1]), (1, [1, 2])]


@pytest.mark.parametrize(
    ("assignments", "message"),
    [
        ([(0, [7])], "The manual partition assignment includes broker 7, but no such broker is registered."),
        ([(0, [1, 1])], "The manual partition assignment includes the broker 1 more than once."),
        ([(0, [])], "The manual partition assignment includes an empty replica list."),
        ([(1, [1])], "partitions should be a consecutive 0-based integer sequence"),
        ([(0, [1]), (0, [1])], "Found multiple manual partition assignments for partition 0"),
    ],
)
def test_create_topic_with_bad_assignment_is_invalid_replica_assignment(
    client: RawClient, mockbroker: MockBroker, assignments: list[tuple[int, list[int]]], message: str
) -> None:
    [r] = create(client, topic("bad-assign", -1, -1, assignments=assignments))
    assert r.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert r.error_message == message
    assert mockbroker.topics() == []


def test_create_topic_with_assignment_and_partition_count_is_invalid_request(client: RawClient) -> None:
    [r] = create(client, topic("assign-and-count", 1, -1, assignments=[(0, [1])]))
    assert r.error_code == ErrorCode.INVALID_REQUEST


# -- DeleteTopics ----------------------------------------------------------------------------------


def test_delete_topic_v0_by_name_removes_it(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("gone")
    resp = client.request(DELETE_TOPICS, 0, {"topic_names": ["gone"], "timeout_ms": 1000})
    assert [(r.name, r.error_code) for r in resp.responses] == [("gone", ErrorCode.NONE)]
    assert mockbroker.topics() == []


def test_delete_unknown_topic_is_unknown_topic_or_partition(client: RawClient) -> None:
    resp = client.request(DELETE_TOPICS, 5, {"topic_names": ["missing"], "timeout_ms": 1000})
    [r] = resp.responses
    assert (r.name, r.error_code) == ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert r.error_message == "This server does not host this topic-partition."


def test_delete_topic_v6_by_id_returns_its_name(client: RawClient, mockbroker: MockBroker) -> None:
    t = mockbroker.create_topic("by-id")
    resp = client.request(DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": t.topic_id}], "timeout_ms": 1000})
    [r] = resp.responses
    assert (r.name, r.topic_id, r.error_code, r.error_message) == ("by-id", t.topic_id, ErrorCode.NONE, None)
    assert mockbroker.topics() == []


def test_delete_topic_v6_by_name_returns_its_id(client: RawClient, mockbroker: MockBroker) -> None:
    t = mockbroker.create_topic("by-name")
    resp = client.request(DELETE_TOPICS, 6, {"topics": [{"name": "by-name", "topic_id": ZERO_UUID}],
                                             "timeout_ms": 1000})
    assert [(r.name, r.topic_id, r.error_code) for r in resp.responses] == [("by-name", t.topic_id, ErrorCode.NONE)]


def test_delete_unknown_topic_id_is_unknown_topic_id(client: RawClient) -> None:
    missing = uuid.uuid4()
    resp = client.request(DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": missing}], "timeout_ms": 1000})
    [r] = resp.responses
    assert (r.name, r.topic_id, r.error_code) == (None, missing, ErrorCode.UNKNOWN_TOPIC_ID)
    assert r.error_message == "This server does not host this topic ID."


def test_delete_topic_with_name_and_id_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    t = mockbroker.create_topic("both")
    resp = client.request(DELETE_TOPICS, 6, {"topics": [{"name": "both", "topic_id": t.topic_id}], "timeout_ms": 1})
    [r] = resp.responses
    assert r.error_code == ErrorCode.INVALID_REQUEST
    assert r.error_message == "You may not specify both topic name and topic id."
    assert mockbroker.topics() == ["both"]


def test_delete_topic_named_twice_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dup-del")
    resp = client.request(DELETE_TOPICS, 5, {"topic_names": ["dup-del", "dup-del"], "timeout_ms": 1})
    assert [(r.name, r.error_code, r.error_message) for r in resp.responses] == [
        ("dup-del", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
    assert mockbroker.topics() == ["dup-del"]


@pytest.mark.mockbroker(config={"delete.topic.enable": "false"})
@pytest.mark.parametrize(("version", "code"), [(2, ErrorCode.INVALID_REQUEST), (3, ErrorCode.TOPIC_DELETION_DISABLED)])
def test_delete_topic_when_disabled_is_refused(client: RawClient, mockbroker: MockBroker, version: int,
                                               code: ErrorCode) -> None:
    mockbroker.create_topic("kept")
    resp = client.request(DELETE_TOPICS, version, {"topic_names": ["kept"], "timeout_ms": 1})
    assert [(r.name, r.error_code) for r in resp.responses] == [("kept", code)]
    assert mockbroker.topics() == ["kept"]


# -- CreatePartitions ------------------------------------------------------------------------------


def grow(client: RawClient, name: str, count: int, version: int = 3, validate_only: bool = False,
         assignments: list[list[int]] | None = None) -> Any:
    body = {"topics": [{"name": name, "count": count,
                        "assignments": None if assignments is None else [{"broker_ids": a} for a in assignments]}],
            "timeout_ms": 1000, "validate_only": validate_only}
    [r] = client.request(CREATE_PARTITIONS, version, body).results
    return r


@pytest.mark.parametrize("version", [0, 3])
def test_create_partitions_grows_the_topic(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("grow", 1)
    r = grow(client, "grow", 3, version)
    assert (r.name, r.error_code, r.error_message) == ("grow", ErrorCode.NONE, None)
    assert len(get_topic(mockbroker, "grow").partitions) == 3


def test_create_partitions_validate_only_changes_nothing(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("grow-dry", 1)
    assert grow(client, "grow-dry", 5, validate_only=True).error_code == ErrorCode.NONE
    assert len(get_topic(mockbroker, "grow-dry").partitions) == 1


def test_create_partitions_to_same_count_is_invalid_partitions(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("same", 2)
    r = grow(client, "same", 2)
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s).")


def test_create_partitions_to_fewer_is_invalid_partitions(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("shrink", 3)
    r = grow(client, "shrink", 1)
    assert r.error_code == ErrorCode.INVALID_PARTITIONS
    assert r.error_message == "The topic shrink currently has 3 partition(s); 1 would not be an increase."


def test_create_partitions_of_unknown_topic_is_unknown_topic_or_partition(client: RawClient) -> None:
    assert grow(client, "nowhere", 2).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_with_wrong_assignment_count_is_invalid_replica_assignment(
    client: RawClient, mockbroker: MockBroker
) -> None:
    mockbroker.create_topic("assign-count", 1)
    r = grow(client, "assign-count", 3, assignments=[[1]])
    assert r.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert r.error_message == "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."


def test_create_partitions_with_unknown_broker_is_invalid_replica_assignment(
    client: RawClient, mockbroker: MockBroker
) -> None:
    mockbroker.create_topic("assign-bad", 1)
    r = grow(client, "assign-bad", 2, assignments=[[9]])
    assert r.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert len(get_topic(mockbroker, "assign-bad").partitions) == 1


def test_create_partitions_with_assignment_uses_its_leader(client: RawClient, mockbroker: MockBroker) -> None:
    add_node(mockbroker, 2)
    mockbroker.create_topic("assign-ok", 1)
    assert grow(client, "assign-ok", 2, assignments=[[2]]).error_code == ErrorCode.NONE
    assert get_topic(mockbroker, "assign-ok").partitions[1].leader_id == 2


def test_create_partitions_named_twice_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("twice-grow", 1)
    body = {"topics": [{"name": "twice-grow", "count": 2, "assignments": None}] * 2, "timeout_ms": 1,
            "validate_only": False}
    results = client.request(CREATE_PARTITIONS, 2, body).results
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        ("twice-grow", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
