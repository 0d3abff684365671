"""Raw-protocol tests of Kafka's authorization of the group and transaction APIs (an ACL-limited
User:ANONYMOUS on a PLAINTEXT listener): GROUP_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED
and CLUSTER_AUTHORIZATION_FAILED where Kafka answers them, ListGroups / ListTransactions showing only
what the principal may describe, and the groups' and cluster's authorized operations."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import connect

GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
ME = "User:ANONYMOUS"
pytestmark = pytest.mark.mockbroker(acls=True)
JOIN = {"session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}]}


@pytest.fixture(autouse=True)
def acls(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders")
    mockbroker.create_topic("secret")
    mockbroker.add_acl(ME, ["READ", "WRITE"], topic="orders")
    mockbroker.add_acl(ME, "READ", group="billing")
    mockbroker.add_acl(ME, "WRITE", transactional_id="tx-ok")


def test_group_membership_apis_need_read_on_the_group(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert c.request(11, 7, {"group_id": "other", **JOIN}).error_code == GROUP_DENIED
        assert c.request(12, 4, {"group_id": "other", "generation_id": 1, "member_id": "m"}).error_code == GROUP_DENIED
        assert c.request(14, 5, {"group_id": "other", "generation_id": 1, "member_id": "m"}).error_code == GROUP_DENIED
        assert c.request(13, 4, {"group_id": "other", "members": [{"member_id": "m"}]}).error_code == GROUP_DENIED
        heartbeat = c.request(68, 0, {"group_id": "other", "member_id": "m", "member_epoch": 0,
                                      "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["orders"],
                                      "topic_partitions": []})
        assert heartbeat.error_code == GROUP_DENIED
        heartbeat = c.request(68, 0, {"group_id": "billing", "member_id": "m", "member_epoch": 0,
                                      "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["orders", "secret"],
                                      "topic_partitions": []})
        assert heartbeat.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED  # no DESCRIBE on "secret"
        joined = c.request(11, 7, {"group_id": "billing", **JOIN})
        assert joined.error_code in (ErrorCode.NONE, ErrorCode.MEMBER_ID_REQUIRED)


def test_find_coordinator_needs_describe_on_the_key(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        old = c.request(10, 3, {"key": "other", "key_type": 0})
        assert (old.error_code, old.node_id, old.error_message) == (GROUP_DENIED, -1, "Group authorization failed.")
        assert c.request(10, 3, {"key": "billing", "key_type": 0}).error_code == ErrorCode.NONE
        assert c.request(10, 3, {"key": "tx-no", "key_type": 1}).error_code == TXN_DENIED
        batch = c.request(10, 4, {"key_type": 0, "coordinator_keys": ["billing", "other"]})
        assert {k.key: k.error_code for k in batch.coordinators} == {"billing": ErrorCode.NONE, "other": GROUP_DENIED}


def test_offset_commit_and_fetch_check_the_group_then_each_topic(mockbroker: MockBroker) -> None:
    commit = {"generation_id_or_member_epoch": -1, "member_id": "", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 0}]},
        {"name": "secret", "partitions": [{"partition_index": 0, "committed_offset": 0}]}]}
    with connect(mockbroker) as c:
        resp = c.request(8, 8, {"group_id": "other", **commit})
        assert {p.error_code for t in resp.topics for p in t.partitions} == {GROUP_DENIED}
        resp = c.request(8, 8, {"group_id": "billing", **commit})
        assert {t.name: t.partitions[0].error_code for t in resp.topics} == {
            "orders": ErrorCode.NONE, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        secret_id = mockbroker.cluster.topic("secret").topic_id  # v10 names topics by id
        by_id = c.request(8, 10, {"group_id": "billing", "generation_id_or_member_epoch": -1, "member_id": "",
                                  "topics": [{"name": "", "topic_id": secret_id, "partitions": [
                                      {"partition_index": 0, "committed_offset": 0}]}]})
        assert by_id.topics[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        fetched = c.request(9, 7, {"group_id": "other", "topics": None})
        assert fetched.error_code == GROUP_DENIED
        fetched = c.request(9, 8, {"groups": [{"group_id": "other", "topics": None},
                                              {"group_id": "billing", "topics": None}]})
        assert [g.group_id for g in fetched.groups] == ["other", "billing"]  # the request's order
        by_group = {g.group_id: g for g in fetched.groups}
        assert by_group["other"].error_code == GROUP_DENIED
        assert [t.name for t in by_group["billing"].topics] == ["orders"]
        named = c.request(9, 7, {"group_id": "billing", "topics": [{"name": "secret", "partition_indexes": [0]}]})
        assert named.topics[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        deleted = c.request(47, 0, {"group_id": "billing", "topics": [{"name": "orders", "partitions": [
            {"partition_index": 0}]}]})
        assert deleted.error_code == GROUP_DENIED  # OffsetDelete needs DELETE on the group
    assert mockbroker.committed("billing") == {("orders", 0): 0}


def test_describe_and_list_groups_show_what_the_principal_may_describe(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        c.request(8, 8, {"group_id": "billing", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [
            {"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 0}]}]})
        mockbroker.add_acl("User:*", "READ", topic="orders")  # someone else's ACL makes nothing visible
        described = c.request(15, 5, {"groups": ["billing", "other"], "include_authorized_operations": True})
        by_id = {g.group_id: g for g in described.groups}
        assert by_id["other"].error_code == GROUP_DENIED
        assert by_id["billing"].authorized_operations == (1 << 3) | (1 << 8)  # READ, DESCRIBE
        assert [g.group_id for g in c.request(16, 4, {}).groups] == ["billing"]
        assert c.request(42, 2, {"groups_names": ["billing"]}).results[0].error_code == GROUP_DENIED
        cgd = c.request(69, 0, {"group_ids": ["other"], "include_authorized_operations": True})
        assert cgd.groups[0].error_code == GROUP_DENIED


def test_init_producer_id_needs_the_transactional_id_or_idempotent_write(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert c.request(22, 4, {"transactional_id": "tx-no", "transaction_timeout_ms": 60000}).error_code == TXN_DENIED
        assert c.request(22, 4, {"transactional_id": "tx-ok", "transaction_timeout_ms": 60000}).error_code == 0
        # idempotent: WRITE on some topic is enough (orders)
        assert c.request(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000}).error_code == 0
    mockbroker.remove_acls(topic="orders", operation="WRITE")
    with connect(mockbroker) as c:
        assert c.request(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000}).error_code == \
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        mockbroker.add_acl(ME, "IDEMPOTENT_WRITE", cluster=True)
        assert c.request(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000}).error_code == 0


def test_transaction_apis_check_the_id_the_group_and_the_topics(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        init = c.request(22, 4, {"transactional_id": "tx-ok", "transaction_timeout_ms": 60000})
        pid, epoch = init.producer_id, init.producer_epoch
        add = c.request(24, 3, {"v3_and_below_transactional_id": "tx-ok", "v3_and_below_producer_id": pid,
                                "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
                                    {"name": "orders", "partitions": [0]}, {"name": "secret", "partitions": [0]}]})
        assert {t.name: t.results_by_partition[0].partition_error_code for t in add.results_by_topic_v3_and_below} == {
            "orders": ErrorCode.OPERATION_NOT_ATTEMPTED, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        add = c.request(24, 3, {"v3_and_below_transactional_id": "tx-no", "v3_and_below_producer_id": pid,
                                "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
                                    {"name": "orders", "partitions": [0]}]})
        assert add.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == TXN_DENIED
        offsets = c.request(25, 3, {"transactional_id": "tx-ok", "producer_id": pid, "producer_epoch": epoch,
                                    "group_id": "other"})
        assert offsets.error_code == GROUP_DENIED
        assert c.request(26, 3, {"transactional_id": "tx-no", "producer_id": pid, "producer_epoch": epoch,
                                 "committed": False}).error_code == TXN_DENIED
        commit = c.request(28, 3, {"transactional_id": "tx-ok", "group_id": "billing", "producer_id": pid,
                                   "producer_epoch": epoch, "generation_id": -1, "member_id": "", "topics": [
                                       {"name": "secret", "partitions": [{"partition_index": 0,
                                                                           "committed_offset": 1}]}]})
        assert commit.topics[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        described = c.request(65, 0, {"transactional_ids": ["tx-ok", "tx-no"]})
        assert {s.transactional_id: s.error_code for s in described.transaction_states} == {
            "tx-ok": ErrorCode.NONE, "tx-no": TXN_DENIED}
        mockbroker.add_acl(ME, "WRITE", transactional_id="tx-hidden")
        assert c.request(22, 4, {"transactional_id": "tx-hidden", "transaction_timeout_ms": 60000}).error_code == 0
        mockbroker.remove_acls(transactional_id="tx-hidden")
        listed = c.request(66, 0, {"state_filters": [], "producer_id_filters": []})
        assert [s.transactional_id for s in listed.transaction_states] == ["tx-ok"]  # WRITE implies DESCRIBE


def test_consumer_group_describe_fills_the_principals_operations_on_the_group(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        joined = c.request(68, 0, {"group_id": "billing", "member_id": "m1", "member_epoch": 0,
                                   "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["orders"],
                                   "topic_partitions": []})
        assert joined.error_code == 0
        described = c.request(69, 0, {"group_ids": ["billing"], "include_authorized_operations": True})
        assert described.groups[0].error_code == 0
        assert described.groups[0].authorized_operations == (1 << 3) | (1 << 8)  # READ, DESCRIBE (not all)
        mockbroker.add_acl(ME, "DELETE", group="billing")
        described = c.request(69, 0, {"group_ids": ["billing"], "include_authorized_operations": True})
        assert described.groups[0].authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)  # + DELETE
        described = c.request(69, 0, {"group_ids": ["billing"], "include_authorized_operations": False})
        assert described.groups[0].authorized_operations == -2147483648


def test_share_group_offsets_apis_check_the_group_then_each_topic(mockbroker: MockBroker) -> None:
    alter = {"topics": [{"topic_name": t, "partitions": [{"partition_index": 0, "start_offset": 0}]}
                        for t in ("orders", "secret")]}
    with connect(mockbroker) as c:
        assert c.request(91, 0, {"group_id": "other", **alter}).error_code == GROUP_DENIED
        altered = c.request(91, 0, {"group_id": "billing", **alter})  # READ on the group, READ on each topic
        assert {t.topic_name: t.partitions[0].error_code for t in altered.responses} == {
            "orders": ErrorCode.NONE, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        delete = {"group_id": "billing", "topics": [{"topic_name": "orders"}]}
        assert c.request(92, 0, delete).error_code == GROUP_DENIED  # DeleteShareGroupOffsets needs DELETE
        mockbroker.add_acl(ME, "DELETE", group="billing")
        deleted = c.request(92, 0, {"group_id": "billing", "topics": [{"topic_name": "orders"}, {"topic_name": "secret"}]})
        assert {t.topic_name: t.error_code for t in deleted.responses} == {
            "orders": ErrorCode.NONE, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
