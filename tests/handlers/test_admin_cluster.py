"""Raw-protocol tests of DescribeCluster (60) and DescribeTopicPartitions (75)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.handlers.support.constants import CLUSTER_OPERATIONS, TOPIC_OPERATIONS
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import Listener
from tests.rawclient import RawClient

DESCRIBE_CLUSTER, DESCRIBE_TOPIC_PARTITIONS = 60, 75
INT32_MIN = -(2**31)


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


# -- DescribeCluster -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster_lists_the_broker_and_controller(client: RawClient, mockbroker: MockBroker,
                                                          version: int) -> None:
    body = {"include_cluster_authorized_operations": False, "endpoint_type": 1, "include_fenced_brokers": True}
    r = client.request(DESCRIBE_CLUSTER, version, body)
    assert (r.error_code, r.error_message) == (ErrorCode.NONE, None)
    assert r.cluster_id == mockbroker.cluster.cluster_id
    assert r.controller_id == 1
    assert [(b.broker_id, b.host, b.port, b.rack, b.is_fenced) for b in r.brokers] == [
        (1, mockbroker.host, mockbroker.port, None, False)]
    assert r.cluster_authorized_operations == INT32_MIN
    if version >= 1:
        assert r.endpoint_type == 1


def test_describe_cluster_reports_authorized_operations_when_asked(client: RawClient) -> None:
    r = client.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1})
    assert r.cluster_authorized_operations == CLUSTER_OPERATIONS


def test_describe_cluster_for_controllers_is_mismatched_endpoint_type(client: RawClient) -> None:
    r = client.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 2})
    assert r.error_code == ErrorCode.MISMATCHED_ENDPOINT_TYPE
    assert r.error_message == ("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
                               "type CONTROLLER")
    assert r.brokers == []


def test_describe_cluster_unknown_endpoint_type_is_unsupported_endpoint_type(client: RawClient) -> None:
    r = client.request(DESCRIBE_CLUSTER, 2, {"include_cluster_authorized_operations": False, "endpoint_type": 9,
                                             "include_fenced_brokers": False})
    assert (r.error_code, r.error_message) == (ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9")


def test_describe_cluster_answers_with_the_clients_listener_address(mockbroker_factory: Any) -> None:
    broker = mockbroker_factory(listeners=[
        Listener("INTERNAL", 1, "127.0.0.1", 0, advertised_host="broker.internal", advertised_port=19092),
        Listener("EXTERNAL", 1, "127.0.0.1", 0, advertised_host="localhost", advertised_port=29092),
    ])
    for listener, expected in zip(broker.cluster.listeners, [("broker.internal", 19092), ("localhost", 29092)],
                                  strict=True):
        with RawClient("127.0.0.1", listener.port) as c:
            r = c.request(DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": False})
            assert [(b.host, b.port) for b in r.brokers] == [expected]


# -- DescribeTopicPartitions -----------------------------------------------------------------------


def describe_topics(client: RawClient, names: list[str], limit: int = 2000,
                    cursor: tuple[str, int] | None = None) -> Any:
    body = {"topics": [{"name": n} for n in names], "response_partition_limit": limit,
            "cursor": None if cursor is None else {"topic_name": cursor[0], "partition_index": cursor[1]}}
    return client.request(DESCRIBE_TOPIC_PARTITIONS, 0, body)


def test_describe_topic_partitions_lists_partitions_and_ids(client: RawClient, mockbroker: MockBroker) -> None:
    t = mockbroker.create_topic("dtp", 2)
    r = describe_topics(client, ["dtp"])
    [entry] = r.topics
    assert (entry.error_code, entry.name, entry.topic_id, entry.is_internal) == (ErrorCode.NONE, "dtp", t.topic_id,
                                                                                 False)
    assert entry.topic_authorized_operations == TOPIC_OPERATIONS
    assert [(p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.eligible_leader_replicas,
             p.last_known_elr, p.offline_replicas) for p in entry.partitions] == [
        (0, 1, 0, [1], [1], [], [], []), (1, 1, 0, [1], [1], [], [], [])]
    assert r.next_cursor is None


def test_describe_topic_partitions_unknown_topic_is_unknown_topic_or_partition(client: RawClient,
                                                                              mockbroker: MockBroker) -> None:
    mockbroker.create_topic("known")
    r = describe_topics(client, ["zzz-missing", "known", "bad name"])
    assert [(t.name, t.error_code) for t in r.topics] == [
        ("bad name", ErrorCode.INVALID_TOPIC_EXCEPTION), ("known", ErrorCode.NONE),
        ("zzz-missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert r.topics[2].topic_id == ZERO_UUID
    assert r.topics[2].partitions == []


def test_describe_topic_partitions_empty_list_means_every_topic(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("b")
    mockbroker.create_topic("a")
    assert [t.name for t in describe_topics(client, []).topics] == ["a", "b"]


def test_describe_topic_partitions_pages_with_a_cursor(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("p1", 3)
    mockbroker.create_topic("p2", 2)
    first = describe_topics(client, ["p1", "p2"], limit=2)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [("p1", [0, 1])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("p1", 2)
    second = describe_topics(client, ["p1", "p2"], limit=2, cursor=("p1", 2))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in second.topics] == [("p1", [2]), ("p2", [0])]
    assert (second.next_cursor.topic_name, second.next_cursor.partition_index) == ("p2", 1)
    third = describe_topics(client, ["p1", "p2"], limit=2, cursor=("p2", 1))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in third.topics] == [("p2", [1])]
    assert third.next_cursor is None


def test_describe_topic_partitions_limit_used_up_points_cursor_at_next_topic(client: RawClient,
                                                                             mockbroker: MockBroker) -> None:
    mockbroker.create_topic("x1", 2)
    mockbroker.create_topic("x2", 1)
    r = describe_topics(client, [], limit=2)
    assert [t.name for t in r.topics] == ["x1"]
    assert (r.next_cursor.topic_name, r.next_cursor.partition_index) == ("x2", 0)


def test_describe_topic_partitions_cursor_outside_topics_is_invalid_request(client: RawClient,
                                                                           mockbroker: MockBroker) -> None:
    mockbroker.create_topic("c1")
    r = describe_topics(client, ["c1"], cursor=("c0", 0))
    assert [(t.name, t.error_code) for t in r.topics] == [("c1", ErrorCode.INVALID_REQUEST)]


def test_describe_topic_partitions_negative_cursor_partition_is_invalid_request(client: RawClient,
                                                                               mockbroker: MockBroker) -> None:
    mockbroker.create_topic("c2")
    r = describe_topics(client, ["c2"], cursor=("c2", -1))
    assert [(t.name, t.error_code) for t in r.topics] == [("c2", ErrorCode.INVALID_REQUEST)]
