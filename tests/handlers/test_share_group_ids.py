"""One group per id, of one type, as Kafka's GroupMetadataManager keeps them: the classic and consumer-group
APIs refuse a share group's id with the code Kafka gives each (JoinGroup INCONSISTENT_GROUP_PROTOCOL;
SyncGroup, Heartbeat, LeaveGroup UNKNOWN_MEMBER_ID; ConsumerGroupHeartbeat and the offset APIs
GROUP_ID_NOT_FOUND) and no classic group is made under it; ShareGroupHeartbeat refuses the id of a classic
or a consumer group with GROUP_ID_NOT_FOUND."""

from __future__ import annotations

from typing import Any

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.test_share_groups import heartbeat
from tests.rawclient import RawClient

JOIN, HEARTBEAT, LEAVE, SYNC, OFFSET_COMMIT, OFFSET_FETCH, OFFSET_DELETE, TXN_COMMIT, CG_HEARTBEAT = (
    11, 12, 13, 14, 8, 9, 47, 28, 68)
COMMIT_TOPICS = [{"name": "q", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                               "committed_leader_epoch": -1, "committed_metadata": ""}]}]


def join(client: RawClient, group: str) -> Any:
    return client.request(JOIN, 9, {
        "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
        "group_instance_id": None, "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}],
        "reason": None})


def consumer_heartbeat(client: RawClient, group: str) -> Any:
    return client.request(CG_HEARTBEAT, 0, {
        "group_id": group, "member_id": "m-1", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["q"], "server_assignor": None,
        "topic_partitions": []})


def partition_codes(resp: Any) -> list[int]:
    return [p.error_code for t in resp.topics for p in t.partitions]


def test_classic_and_consumer_group_apis_refuse_a_share_groups_id(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("q", 1)
    assert heartbeat(client, "s1", 0, ["q"], group="sg").error_code == ErrorCode.NONE
    joined = join(client, "sg")
    assert (joined.error_code, joined.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    assert client.request(SYNC, 5, {"group_id": "sg", "generation_id": 1, "member_id": "m", "group_instance_id": None,
                                    "protocol_type": "consumer", "protocol_name": "range", "assignments": []}
                          ).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert client.request(HEARTBEAT, 4, {"group_id": "sg", "generation_id": 1, "member_id": "m",
                                         "group_instance_id": None}).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert client.request(LEAVE, 4, {"group_id": "sg", "members": [{"member_id": "m", "group_instance_id": None}]}
                          ).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert consumer_heartbeat(client, "sg").error_code == ErrorCode.GROUP_ID_NOT_FOUND
    committed = client.request(OFFSET_COMMIT, 8, {"group_id": "sg", "generation_id_or_member_epoch": -1, "member_id": "",
                                                  "group_instance_id": None, "retention_time_ms": -1,
                                                  "topics": COMMIT_TOPICS})
    assert partition_codes(committed) == [ErrorCode.GROUP_ID_NOT_FOUND]
    fetched = client.request(OFFSET_FETCH, 8, {"groups": [{"group_id": "sg", "topics": None}], "require_stable": False})
    assert fetched.groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    deleted = client.request(OFFSET_DELETE, 0, {"group_id": "sg", "topics": [{"name": "q", "partitions": [
        {"partition_index": 0}]}]})
    assert deleted.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    init = client.request(22, 1, {"transactional_id": "tx", "transaction_timeout_ms": 60000})
    txn = client.request(TXN_COMMIT, 3, {"transactional_id": "tx", "group_id": "sg", "producer_id": init.producer_id,
                                         "producer_epoch": init.producer_epoch, "generation_id": -1, "member_id": "",
                                         "group_instance_id": None, "topics": COMMIT_TOPICS})
    assert partition_codes(txn) == [ErrorCode.GROUP_ID_NOT_FOUND]
    assert [g["group_id"] for g in mockbroker.groups()] == []  # no classic or consumer group was made under it
    assert mockbroker.committed("sg") == {}
    assert list(mockbroker.share_groups()["sg"]["members"]) == ["s1"]  # the share group is untouched


def test_share_group_heartbeat_refuses_a_classic_or_consumer_groups_id(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("q", 1)
    assert join(client, "classic").error_code == ErrorCode.MEMBER_ID_REQUIRED  # the classic group exists now
    assert consumer_heartbeat(client, "kip848").error_code == ErrorCode.NONE
    for group in ("classic", "kip848"):
        assert heartbeat(client, "s1", 0, ["q"], group=group).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert mockbroker.share_groups() == {}
    assert heartbeat(client, "s1", 0, ["q"], group="free").error_code == ErrorCode.NONE  # a new id is fine
