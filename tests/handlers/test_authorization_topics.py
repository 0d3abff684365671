"""Raw-protocol tests of Kafka's authorization of the topic APIs (an ACL-limited User:ANONYMOUS on a
PLAINTEXT listener): TOPIC_AUTHORIZATION_FAILED for Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
DeleteRecords, CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs (CLUSTER_AUTHORIZATION_FAILED for a broker resource), DescribeProducers;
Metadata leaving out what the principal may not describe, refusing auto-creation without CREATE, and
the authorized-operations fields."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    FETCH,
    METADATA,
    PRODUCE,
    connect,
    fetch,
    list_offsets,
    make_batch,
    produce,
    produce_body,
)

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
ME = "User:ANONYMOUS"
pytestmark = pytest.mark.mockbroker(acls=True)
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS = 3, 4, 5, 6, 7, 8, 10, 11


def bits(*ops: int) -> int:
    return sum(1 << op for op in ops)


@pytest.fixture(autouse=True)
def topics(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders")
    mockbroker.create_topic("secret")
    mockbroker.add_acl(ME, ["READ", "WRITE"], topic="orders")


def test_produce_needs_write_on_the_topic(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert produce(c, "secret", make_batch(b"x")).error_code == DENIED
        assert produce(c, "orders", make_batch(b"x")).error_code == ErrorCode.NONE
        body = produce_body("orders", make_batch(b"y"))
        body["topic_data"].append(produce_body("secret", make_batch(b"z"))["topic_data"][0])
        resp = c.request(PRODUCE, 9, body)
        assert {t.name: t.partition_responses[0].error_code for t in resp.responses} == {"orders": 0, "secret": DENIED}
    assert [r.value for r in mockbroker.records("orders")] == [b"x", b"y"]
    assert mockbroker.records("secret") == []


def test_produce_with_a_transactional_id_needs_write_on_it(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(PRODUCE, 9, produce_body("orders", make_batch(b"x"), transactional_id="tx"))
        assert resp.responses[0].partition_responses[0].error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_acks0_produce_to_a_forbidden_topic_closes_the_connection(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        c.send(PRODUCE, 9, produce_body("secret", make_batch(b"x"), acks=0))
        assert c.is_closed_by_peer()


def test_fetch_and_list_offsets_need_read_and_describe(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert fetch(c, "secret").error_code == DENIED
        assert fetch(c, "orders").error_code == ErrorCode.NONE
        assert list_offsets(c, "secret", -1).error_code == DENIED
        assert list_offsets(c, "orders", -1).error_code == ErrorCode.NONE
        # a follower's fetch needs CLUSTER_ACTION
        resp = c.request(FETCH, 12, {"replica_id": 1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                     "session_epoch": -1, "topics": [{"topic": "orders", "partitions": [
                                         {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
        assert resp.responses[0].partitions[0].error_code == DENIED


def test_metadata_leaves_out_undescribed_topics_and_refuses_named_ones(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        listed = c.request(METADATA, 12, {"topics": None})
        assert [t.name for t in listed.topics] == ["orders"]
        named = c.request(METADATA, 12, {"topics": [{"name": "secret"}, {"name": "orders"}]})
        assert {t.name: t.error_code for t in named.topics} == {"secret": DENIED, "orders": ErrorCode.NONE}
        assert [t.partitions for t in named.topics if t.name == "secret"] == [[]]


def test_metadata_auto_creation_needs_create_on_the_topic_or_cluster(mockbroker: MockBroker) -> None:
    mockbroker.add_acl(ME, "DESCRIBE", topic="new-", pattern="PREFIXED")
    with connect(mockbroker) as c:
        resp = c.request(METADATA, 12, {"topics": [{"name": "new-a"}], "allow_auto_topic_creation": True})
        assert resp.topics[0].error_code == DENIED
        assert "new-a" not in mockbroker.topics()
        mockbroker.add_acl(ME, "CREATE", topic="new-b")
        resp = c.request(METADATA, 12, {"topics": [{"name": "new-b"}], "allow_auto_topic_creation": True})
        assert resp.topics[0].error_code == ErrorCode.NONE
        mockbroker.add_acl(ME, "CREATE", cluster=True)
        resp = c.request(METADATA, 12, {"topics": [{"name": "new-c"}], "allow_auto_topic_creation": True})
        assert resp.topics[0].error_code == ErrorCode.NONE
    assert {"new-b", "new-c"} <= set(mockbroker.topics())


def test_metadata_authorized_operations_when_asked(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(METADATA, 10, {"topics": [{"name": "orders"}], "include_topic_authorized_operations": True,
                                        "include_cluster_authorized_operations": True})
        assert resp.topics[0].topic_authorized_operations == bits(READ, WRITE, DESCRIBE)
        assert resp.cluster_authorized_operations == 0  # no DESCRIBE on the cluster
        mockbroker.add_acl(ME, "DESCRIBE", cluster=True)
        resp = c.request(METADATA, 10, {"topics": [], "include_cluster_authorized_operations": True})
        assert resp.cluster_authorized_operations == bits(DESCRIBE)
        resp = c.request(METADATA, 10, {"topics": [{"name": "orders"}]})
        assert resp.topics[0].topic_authorized_operations == -2147483648


def test_admin_topic_apis_answer_topic_authorization_failed(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        created = c.request(19, 7, {"topics": [{"name": "made", "num_partitions": 1, "replication_factor": 1}],
                                    "timeout_ms": 1000})
        assert (created.topics[0].error_code, created.topics[0].error_message) == (DENIED, "Authorization failed.")
        deleted = c.request(20, 5, {"topic_names": ["secret"], "timeout_ms": 1000})
        assert deleted.responses[0].error_code == DENIED
        records = c.request(21, 2, {"topics": [{"name": "secret", "partitions": [
            {"partition_index": 0, "offset": 0}]}], "timeout_ms": 1000})
        assert records.topics[0].partitions[0].error_code == DENIED
        partitions = c.request(37, 3, {"topics": [{"name": "secret", "count": 3}], "timeout_ms": 1000})
        assert partitions.results[0].error_code == DENIED
        configs = c.request(32, 4, {"resources": [{"resource_type": 2, "resource_name": "secret"},
                                                  {"resource_type": 4, "resource_name": "1"}]})
        assert [r.error_code for r in configs.results] == [DENIED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
        altered = c.request(44, 1, {"resources": [{"resource_type": 2, "resource_name": "orders", "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}]})
        assert altered.responses[0].error_code == DENIED
        epochs = c.request(23, 4, {"replica_id": -1, "topics": [{"topic": "secret", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
        assert epochs.topics[0].partitions[0].error_code == DENIED
        producers = c.request(61, 0, {"topics": [{"name": "secret", "partition_indexes": [0]}]})
        assert producers.topics[0].partitions[0].error_code == DENIED
    assert "secret" in mockbroker.topics() and "made" not in mockbroker.topics()


def test_create_topics_with_create_on_the_topic(mockbroker: MockBroker) -> None:
    mockbroker.add_acl(ME, "CREATE", topic="made")
    with connect(mockbroker) as c:
        created = c.request(19, 7, {"topics": [{"name": "made", "num_partitions": 1, "replication_factor": 1}],
                                    "timeout_ms": 1000})
    [topic] = created.topics
    assert (topic.error_code, topic.topic_config_error_code) == (ErrorCode.NONE, DENIED)  # no DESCRIBE_CONFIGS
    assert "made" in mockbroker.topics()


def test_describe_topic_partitions_filters_and_fills_operations(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(75, 0, {"topics": [{"name": "orders"}, {"name": "secret"}], "response_partition_limit": 100})
    by_name = {t.name: t for t in resp.topics}
    assert by_name["secret"].error_code == DENIED
    assert by_name["orders"].topic_authorized_operations == bits(READ, WRITE, DESCRIBE)


def test_alter_configs_needs_alter_configs_on_the_topic_or_the_cluster(mockbroker: MockBroker) -> None:
    def alter(c, api_key: int, version: int, rtype: int, name: str) -> int:  # type: ignore[no-untyped-def]
        setting = "retention.ms" if rtype == 2 else "log.retention.ms"
        config = {"name": setting, "value": "1000"} | ({"config_operation": 0} if api_key == 44 else {})
        resp = c.request(api_key, version, {"resources": [{"resource_type": rtype, "resource_name": name,
                                                           "configs": [config]}], "validate_only": True})
        return int(resp.responses[0].error_code)

    with connect(mockbroker) as c:
        for api_key, version in ((33, 2), (44, 1)):  # AlterConfigs, IncrementalAlterConfigs
            assert alter(c, api_key, version, 2, "orders") == DENIED  # READ/WRITE do not imply ALTER_CONFIGS
            assert alter(c, api_key, version, 4, "1") == ErrorCode.CLUSTER_AUTHORIZATION_FAILED  # a broker
        mockbroker.add_acl(ME, "ALTER_CONFIGS", topic="orders")
        mockbroker.add_acl(ME, "ALTER_CONFIGS", cluster=True)
        for api_key, version in ((33, 2), (44, 1)):
            assert alter(c, api_key, version, 2, "orders") == ErrorCode.NONE
            assert alter(c, api_key, version, 2, "secret") == DENIED
            assert alter(c, api_key, version, 4, "1") == ErrorCode.NONE
