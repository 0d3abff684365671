"""Raw-protocol tests of Metadata (3): topic listing, auto creation, topic ids, brokers and partitions."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA
from tests.rawclient import RawClient

ALL_VERSIONS = [0, 1, 4, 9, 12, 13]
INT32_MIN = -(2**31)


def _request(version: int, *names: str | None, allow: bool = True,
             ids: list[uuid.UUID] | None = None) -> dict[str, object]:
    topics = [{"name": n} for n in names] + [{"name": None, "topic_id": i} for i in (ids or [])]
    return {"topics": topics, "allow_auto_topic_creation": allow}


def _topics(resp: object) -> dict[str | None, object]:
    return {t.name: t for t in resp.topics}  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_all_topics_for_a_null_list_or_an_empty_v0_list(mockbroker: MockBroker, client: RawClient,
                                                       version: int) -> None:
    mockbroker.create_topic("alpha", 2)
    mockbroker.create_topic("beta")
    resp = client.request(METADATA, version, {"topics": [] if version == 0 else None})
    topics = _topics(resp)
    assert set(topics) == {"alpha", "beta"}
    assert [p.partition_index for p in topics["alpha"].partitions] == [0, 1]  # type: ignore[attr-defined]
    assert all(t.error_code == ErrorCode.NONE for t in resp.topics)


@pytest.mark.parametrize("version", [1, 4, 9, 12, 13])
def test_empty_topic_list_v1_and_later_means_no_topics(mockbroker: MockBroker, client: RawClient,
                                                       version: int) -> None:
    mockbroker.create_topic("alpha")
    resp = client.request(METADATA, version, {"topics": []})
    assert resp.topics == []
    assert resp.brokers  # brokers are always listed


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_unknown_topic_is_auto_created_by_default(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    resp = client.request(METADATA, version, _request(version, "created-on-demand"))
    [t] = resp.topics
    assert (t.name, t.error_code) == ("created-on-demand", ErrorCode.NONE)
    assert len(t.partitions) == 1
    assert "created-on-demand" in mockbroker.topics()


@pytest.mark.mockbroker(partitions=3)
def test_auto_created_topic_gets_the_default_partition_count(mockbroker: MockBroker, client: RawClient) -> None:
    [t] = client.request(METADATA, 12, _request(12, "three")).topics
    assert [p.partition_index for p in t.partitions] == [0, 1, 2]
    assert t.topic_id != ZERO_UUID
    assert t.topic_id == mockbroker.cluster.topic("three").topic_id


@pytest.mark.parametrize("version", [4, 9, 12, 13])
def test_allow_auto_topic_creation_false_answers_unknown_topic(mockbroker: MockBroker, client: RawClient,
                                                               version: int) -> None:
    [t] = client.request(METADATA, version, _request(version, "not-created", allow=False)).topics
    assert (t.name, t.error_code) == ("not-created", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert t.partitions == []
    assert "not-created" not in mockbroker.topics()


@pytest.mark.mockbroker(auto_create_topics=False)
@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_broker_with_auto_creation_off_answers_unknown_topic(mockbroker: MockBroker, client: RawClient,
                                                             version: int) -> None:
    [t] = client.request(METADATA, version, _request(version, "nope")).topics
    assert t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert mockbroker.topics() == []


@pytest.mark.parametrize("name", ["bad name", "a" * 250, ".", "..", "", "ümlaut"])
@pytest.mark.parametrize("allow", [True, False])
def test_invalid_topic_name_answers_invalid_topic_exception(mockbroker: MockBroker, client: RawClient, name: str,
                                                            allow: bool) -> None:
    [t] = client.request(METADATA, 12, _request(12, name, allow=allow)).topics
    assert (t.name, t.error_code) == (name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    assert mockbroker.topics() == []


@pytest.mark.mockbroker(auto_create_topics=False)
def test_invalid_topic_name_is_invalid_even_with_auto_creation_off(client: RawClient) -> None:
    [t] = client.request(METADATA, 1, _request(1, "bad/name")).topics
    assert t.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_a_topic_named_twice_is_answered_once(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("twice")
    resp = client.request(METADATA, 12, _request(12, "twice", "twice"))
    assert [t.name for t in resp.topics] == ["twice"]


@pytest.mark.parametrize("version", [12, 13])
def test_topic_by_id(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    topic = mockbroker.create_topic("by-id", 2)
    [t] = client.request(METADATA, version, _request(version, ids=[topic.topic_id])).topics
    assert (t.name, t.topic_id, t.error_code) == ("by-id", topic.topic_id, ErrorCode.NONE)
    assert len(t.partitions) == 2


@pytest.mark.parametrize("version", [12, 13])
def test_unknown_topic_id_answers_unknown_topic_id(client: RawClient, version: int) -> None:
    missing = uuid.uuid4()
    [t] = client.request(METADATA, version, _request(version, ids=[missing])).topics
    assert (t.name, t.topic_id, t.error_code) == (None, missing, ErrorCode.UNKNOWN_TOPIC_ID)
    assert t.partitions == []


@pytest.mark.parametrize("version", [10, 11])
def test_topic_id_in_v10_v11_request_answers_invalid_request(mockbroker: MockBroker, client: RawClient,
                                                            version: int) -> None:
    topic = mockbroker.create_topic("ids-too-early")
    resp = client.request(METADATA, version, _request(version, ids=[topic.topic_id]))
    [t] = resp.topics
    assert (t.name, t.topic_id, t.error_code) == ("", topic.topic_id, ErrorCode.INVALID_REQUEST)
    assert resp.brokers == []


@pytest.mark.parametrize("version", [9, 10, 12, 13])
def test_topic_ids_are_answered_from_v10(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    topic = mockbroker.create_topic("with-id")
    [t] = client.request(METADATA, version, _request(version, "with-id")).topics
    assert t.topic_id == (topic.topic_id if version >= 10 else ZERO_UUID)


def test_brokers_carry_the_advertised_host_and_port(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(advertised_host="kafka.example.internal", advertised_port=19092, node_id=7)
    with RawClient("127.0.0.1", broker.port) as c:
        for version in ALL_VERSIONS:
            resp = c.request(METADATA, version, {"topics": None if version else []})
            assert [(b.node_id, b.host, b.port) for b in resp.brokers] == [(7, "kafka.example.internal", 19092)]


@pytest.mark.mockbroker(cluster_id="my-cluster-id", node_id=3)
def test_cluster_id_and_controller_id(client: RawClient) -> None:
    resp = client.request(METADATA, 12, {"topics": None})
    assert (resp.cluster_id, resp.controller_id) == ("my-cluster-id", 3)
    resp = client.request(METADATA, 1, {"topics": None})
    assert resp.controller_id == 3
    assert resp.brokers[0].rack is None


@pytest.mark.mockbroker(node_id=3)
@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_partitions_carry_leader_epoch_replicas_and_isr(mockbroker: MockBroker, client: RawClient,
                                                        version: int) -> None:
    mockbroker.create_topic("parts", 2)
    [t] = client.request(METADATA, version, _request(version, "parts")).topics
    assert t.is_internal is False
    for i, p in enumerate(t.partitions):
        assert (p.partition_index, p.error_code, p.leader_id) == (i, ErrorCode.NONE, 3)
        assert (p.replica_nodes, p.isr_nodes, p.offline_replicas) == ([3], [3], [])
        assert p.leader_epoch == (0 if version >= 7 else -1)


def test_authorized_operations_only_when_asked(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("ops")
    [t] = client.request(METADATA, 9, {"topics": [{"name": "ops"}],
                                       "include_topic_authorized_operations": False}).topics
    assert t.topic_authorized_operations == INT32_MIN
    resp = client.request(METADATA, 9, {"topics": [{"name": "ops"}], "include_topic_authorized_operations": True,
                                        "include_cluster_authorized_operations": True})
    read, write, describe = 1 << 3, 1 << 4, 1 << 8
    ops = resp.topics[0].topic_authorized_operations
    assert ops & read and ops & write and ops & describe
    assert resp.cluster_authorized_operations not in (INT32_MIN, 0)
