"""A share group's own records in __consumer_offsets (ShareGroupMetadata, ShareGroupTargetAssignmentMetadata,
ShareGroupStatePartitionMetadata, as Kafka's group coordinator writes them): after a restart on the data dir
the group is there, empty, with its group and assignment epochs, ShareGroupDescribe and ListGroups show it,
and a member joining again moves the epoch on from there and resumes at the persisted start offset. A
deleted group's tombstones keep it gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mockbroker.protocol.share_group_records import (
    GROUP_METADATA,
    STATE_PARTITION_METADATA,
    TARGET_ASSIGNMENT_METADATA,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMetadataValue,
    TopicPartitionsInfo,
    decode_key,
    decode_value,
)
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_share_groups import acquired, heartbeat, share_fetch
from tests.rawclient import RawClient

DESCRIBE, LIST_GROUPS, DELETE_GROUPS, OFFSETS = 77, 16, 42, 90
ACCEPT, GROUP_ID_NOT_FOUND = 1, 69
SHARE_TYPES = {10, 11, 12, 13, 14, 15}


def share_group_records(broker: MockBroker) -> list[tuple[int, Any]]:
    """(record type, decoded value or None) of every share group record in __consumer_offsets, in log order."""
    out = []
    for partition in broker.node.cluster.topic(OFFSETS_TOPIC).partitions:
        for _, record in partition.log.records():
            if int.from_bytes(record.key[:2], "big") in SHARE_TYPES:
                key = decode_key(record.key)
                out.append((key.record_type, None if record.value is None else decode_value(key.record_type,
                                                                                            record.value)))
    return out


def describe(client: RawClient) -> Any:
    group, = client.request(DESCRIBE, 1, {"group_ids": ["sg"], "include_authorized_operations": False}).groups
    return group


def listed(client: RawClient) -> list[tuple[str, str, str]]:
    r = client.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["share"]})
    return [(g.group_id, g.group_state, g.group_type) for g in r.groups]


def test_a_share_group_comes_back_with_its_epochs_after_a_restart(tmp_path: Path) -> None:
    config = {"share.auto.offset.reset": "earliest"}
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b1:
        b1.create_topic("q", 1)
        client = RawClient(b1.host, b1.port)
        produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(6)]))
        topic_id = b1.node.cluster.topic("q").topic_id
        heartbeat(client, "a", 0, ["q"])
        heartbeat(client, "b", 0, ["q"])
        assert acquired(share_fetch(client, topic_id, "a", 0, max_records=3)) == [(0, 0, 2, 1)]
        assert share_fetch(client, topic_id, "a", 1, acks={0: [(0, 2, [ACCEPT])]}, max_records=0).error_code == 0
        share_fetch(client, topic_id, "a", -1)  # the session closed: what it acquired since goes back
        assert heartbeat(client, "b", -1).error_code == 0
        assert heartbeat(client, "a", -1).error_code == 0
        group = describe(client)
        assert (group.group_state, group.group_epoch, group.assignment_epoch, group.members) == ("Empty", 4, 4, [])
        records = share_group_records(b1)
        # What Kafka writes: the epochs at each change, the initialized share partitions once; no member records.
        assert {t for t, _ in records} == {GROUP_METADATA, TARGET_ASSIGNMENT_METADATA, STATE_PARTITION_METADATA}
        assert [v.epoch for t, v in records if t == GROUP_METADATA] == [1, 2, 3, 4]
        assert [v for t, v in records if t == STATE_PARTITION_METADATA] == [
            ShareGroupStatePartitionMetadataValue([], [TopicPartitionsInfo(topic_id, "q", [0])], [])]
        records = share_group_records(b1)
        client.close()
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b2:
        client = RawClient(b2.host, b2.port)
        assert listed(client) == [("sg", "Empty", "share")]
        group = describe(client)
        assert (group.error_code, group.group_state, group.group_epoch, group.assignment_epoch) == (0, "Empty", 4, 4)
        offsets = client.request(OFFSETS, 1, {"groups": [{"group_id": "sg", "topics": None}]}).groups[0]
        assert [(t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions]) for t in offsets.topics] == [
            ("q", [(0, 3)])]
        assert share_group_records(b2) == records  # the load wrote nothing
        # A member joining again: the epoch goes on from the stored one, the records from the persisted start.
        joined = heartbeat(client, "c", 0, ["q"])
        assert (joined.error_code, joined.member_epoch) == (0, 5)
        # 3-5 were delivered once before the stop (the acknowledging fetch acquired them, the close released them).
        assert acquired(share_fetch(client, topic_id, "c", 0, max_records=10)) == [(0, 3, 5, 2)]
        assert share_group_records(b2)[-2:] == [(GROUP_METADATA, ShareGroupMetadataValue(5)),
                                                (TARGET_ASSIGNMENT_METADATA, ShareGroupTargetAssignmentMetadataValue(5))]
        share_fetch(client, topic_id, "c", -1)
        assert heartbeat(client, "c", -1).error_code == 0
        assert client.request(DELETE_GROUPS, 2, {"groups_names": ["sg"]}).results[0].error_code == 0
        # Tombstones in Kafka's order: the assignment epoch, the initialized partitions, the group epoch last.
        assert share_group_records(b2)[-3:] == [(TARGET_ASSIGNMENT_METADATA, None), (STATE_PARTITION_METADATA, None),
                                                (GROUP_METADATA, None)]
        client.close()
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b3:
        client = RawClient(b3.host, b3.port)
        assert listed(client) == []
        assert describe(client).error_code == GROUP_ID_NOT_FOUND
        client.close()


def test_after_a_restart_a_share_groups_id_is_refused_by_the_group_apis_before_any_share_request(
        tmp_path: Path) -> None:
    from tests.handlers.test_share_group_ids import join

    with MockBroker(data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("q", 1)
        client = RawClient(b1.host, b1.port)
        assert heartbeat(client, "a", 0, ["q"]).error_code == 0
        assert heartbeat(client, "a", -1).error_code == 0
        client.close()
    with MockBroker(data_dir=tmp_path).run_in_thread() as b2:
        client = RawClient(b2.host, b2.port)
        # The first request names the share group's id: the share groups were loaded at start, as Kafka loads them.
        joined = join(client, "sg")
        assert (joined.error_code, joined.member_id) == (23, "")  # INCONSISTENT_GROUP_PROTOCOL, as before the restart
        client.close()
