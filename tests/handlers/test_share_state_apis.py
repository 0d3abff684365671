"""The share coordinator's APIs (KIP-932) over the raw protocol: InitializeShareGroupState (83),
ReadShareGroupState (84), WriteShareGroupState (85), DeleteShareGroupState (86),
ReadShareGroupStateSummary (87), FindCoordinator's share key type, and what they write to
__share_group_state; served from the same state as the share partitions of ShareFetch."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.share_state_records import SHARE_SNAPSHOT, SHARE_UPDATE, decode_key, decode_value
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC, partition_for
from mockbroker.state.share.persisted import coordinator_key
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_admin_configs import incremental
from tests.handlers.test_share_group_configs import alter_offsets, delete_offsets
from tests.handlers.test_share_groups import acquired, heartbeat, share_fetch
from tests.rawclient import RawClient

INITIALIZE, READ, WRITE, DELETE, SUMMARY, FIND_COORDINATOR, API_VERSIONS = 83, 84, 85, 86, 87, 10, 18
SHARE_KEY, GROUP_RESOURCE = 2, 32
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4
ACCEPT, RELEASE, REJECT = 1, 2, 3


@pytest.fixture
def topic_id(mockbroker: MockBroker) -> uuid.UUID:
    mockbroker.create_topic("q", 2)
    return mockbroker.node.cluster.topic("q").topic_id


def one(resp: Msg) -> Any:
    [t] = resp.results
    [p] = t.partitions
    return p


def initialize(client: RawClient, topic_id: uuid.UUID, partition: int = 0, *, state_epoch: int = 0,
               start_offset: int = 0, group: str = "sg") -> Msg:
    return client.request(INITIALIZE, 0, {"group_id": group, "topics": [{"topic_id": topic_id, "partitions": [
        {"partition": partition, "state_epoch": state_epoch, "start_offset": start_offset}]}]})


def read(client: RawClient, topic_id: uuid.UUID, partition: int = 0, *, leader_epoch: int = 0,
         group: str = "sg") -> Msg:
    return client.request(READ, 0, {"group_id": group, "topics": [{"topic_id": topic_id, "partitions": [
        {"partition": partition, "leader_epoch": leader_epoch}]}]})


def write(client: RawClient, topic_id: uuid.UUID, batches: list[tuple[int, int, int, int]], partition: int = 0, *,
          state_epoch: int = 0, leader_epoch: int = 0, start_offset: int = -1, group: str = "sg",
          version: int = 1) -> Msg:
    body: dict[str, Any] = {"partition": partition, "state_epoch": state_epoch, "leader_epoch": leader_epoch,
                            "start_offset": start_offset, "state_batches": [
                                {"first_offset": f, "last_offset": la, "delivery_state": s, "delivery_count": c}
                                for f, la, s, c in batches]}
    if version >= 1:
        body["delivery_complete_count"] = -1
    return client.request(WRITE, version, {"group_id": group, "topics": [{"topic_id": topic_id, "partitions": [body]}]})


def delete(client: RawClient, topic_id: uuid.UUID, partition: int = 0, group: str = "sg") -> Msg:
    return client.request(DELETE, 0, {"group_id": group, "topics": [{"topic_id": topic_id, "partitions": [
        {"partition": partition}]}]})


def summary(client: RawClient, topic_id: uuid.UUID, partition: int = 0, group: str = "sg", version: int = 1) -> Msg:
    return client.request(SUMMARY, version, {"group_id": group, "topics": [{"topic_id": topic_id, "partitions": [
        {"partition": partition, "leader_epoch": 0}]}]})


def batches(p: Any) -> list[tuple[int, int, int, int]]:
    return [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches]


def state_records(broker: MockBroker) -> list[tuple[int, str, Any]]:
    """(record type, coordinator key, value) of every record of __share_group_state."""
    out = []
    for partition in broker.node.cluster.topic(SHARE_STATE_TOPIC).partitions:
        for _, record in partition.log.records():
            k = decode_key(record.key)
            value = None if record.value is None else decode_value(k.record_type, record.value)
            out.append((k.record_type, coordinator_key((k.group_id, k.topic_id, k.partition)), value))
    return out


def test_api_versions_advertises_the_share_state_apis_at_kafka_4_3s_versions(client: RawClient) -> None:
    keys = {k.api_key: (k.min_version, k.max_version) for k in client.request(API_VERSIONS, 3, {
        "client_software_name": "t", "client_software_version": "1"}).api_keys}
    assert {k: keys.get(k) for k in (83, 84, 85, 86, 87)} == {83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0),
                                                              87: (0, 1)}


def test_the_state_a_share_consumer_leaves_is_read_back(mockbroker: MockBroker, client: RawClient,
                                                        topic_id: uuid.UUID) -> None:
    produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(6)]))
    assert incremental(client, GROUP_RESOURCE, "sg", [("share.auto.offset.reset", 0, "earliest")]).error_code == 0
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, topic_id, "a", 0, max_records=5)) == [(0, 0, 4, 1)]
    acks = {0: [(0, 0, [ACCEPT]), (1, 1, [RELEASE]), (2, 2, [REJECT])]}
    assert share_fetch(client, topic_id, "a", 1, acks=acks, max_records=0).error_code == 0
    p = one(read(client, topic_id))
    assert (p.error_code, p.state_epoch, p.start_offset) == (0, 0, 1)
    # 1 released (available, delivered once), 2 rejected; 3-4 still acquired: written as never delivered.
    assert batches(p) == [(1, 1, AVAILABLE, 1), (2, 2, ARCHIVED, 1)]
    s = one(summary(client, topic_id))
    assert (s.error_code, s.start_offset, s.state_epoch, s.delivery_complete_count) == (0, 1, 0, 1)
    types = [(t, v.start_offset) for t, _, v in state_records(mockbroker)]
    assert types == [(SHARE_SNAPSHOT, 0), (SHARE_UPDATE, 1)]


def test_initialize_write_read_delete(mockbroker: MockBroker, client: RawClient, topic_id: uuid.UUID) -> None:
    assert one(initialize(client, topic_id, state_epoch=3, start_offset=10)).error_code == 0
    p = one(read(client, topic_id))
    assert (p.error_code, p.state_epoch, p.start_offset, batches(p)) == (0, 3, 10, [])
    assert one(write(client, topic_id, [(10, 14, ACKNOWLEDGED, 1), (15, 15, AVAILABLE, 2)], state_epoch=3,
                     leader_epoch=1)).error_code == 0
    # A later write overlays the earlier one and moves the start: ranges below it go.
    assert one(write(client, topic_id, [(13, 13, ARCHIVED, 2)], state_epoch=3, leader_epoch=1,
                     start_offset=12, version=0)).error_code == 0
    p = one(read(client, topic_id, leader_epoch=1))
    assert (p.start_offset, batches(p)) == (12, [(12, 12, ACKNOWLEDGED, 1), (13, 13, ARCHIVED, 2),
                                                 (14, 14, ACKNOWLEDGED, 1), (15, 15, AVAILABLE, 2)])
    s = one(summary(client, topic_id))
    assert (s.start_offset, s.leader_epoch, s.state_epoch, s.delivery_complete_count) == (12, 1, 3, 3)
    assert one(summary(client, topic_id, version=0)).start_offset == 12
    records = state_records(mockbroker)
    assert [t for t, _, _ in records] == [SHARE_SNAPSHOT, SHARE_UPDATE, SHARE_UPDATE]
    assert {k for _, k, _ in records} == {coordinator_key(("sg", topic_id, 0))}
    assert records[0][2].state_epoch == 3 and records[2][2].start_offset == 12
    assert one(delete(client, topic_id)).error_code == 0
    assert state_records(mockbroker)[-1][0::2] == (SHARE_SNAPSHOT, None)  # a tombstone
    s = one(summary(client, topic_id))
    assert (s.error_code, s.start_offset, s.leader_epoch, s.state_epoch) == (0, -1, 0, 0)
    assert one(delete(client, topic_id)).error_code == 0  # nothing to delete: success, nothing written
    assert len(state_records(mockbroker)) == 4


def test_kafkas_error_codes(client: RawClient, topic_id: uuid.UUID) -> None:
    uninitialized = one(read(client, topic_id))
    assert (uninitialized.error_code, uninitialized.error_message) == (
        ErrorCode.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
    assert one(write(client, topic_id, [])).error_code == ErrorCode.INVALID_REQUEST
    assert one(initialize(client, topic_id, state_epoch=2)).error_code == 0
    assert one(initialize(client, topic_id, state_epoch=1)).error_code == ErrorCode.FENCED_STATE_EPOCH
    assert one(write(client, topic_id, [], state_epoch=1)).error_code == ErrorCode.FENCED_STATE_EPOCH
    assert one(write(client, topic_id, [], state_epoch=2, leader_epoch=5)).error_code == 0
    assert one(write(client, topic_id, [], state_epoch=2, leader_epoch=4)).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert one(read(client, topic_id, leader_epoch=4)).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert one(read(client, topic_id, leader_epoch=6)).error_code == 0  # a higher leader epoch is stored
    assert one(summary(client, topic_id)).leader_epoch == 6
    unknown = uuid.uuid4()
    for resp in (initialize(client, unknown), delete(client, unknown), summary(client, unknown),
                 initialize(client, topic_id, 7), summary(client, topic_id, 7)):
        assert one(resp).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    negative = one(initialize(client, topic_id, -1))
    assert (negative.error_code, negative.error_message) == (ErrorCode.INVALID_REQUEST,
                                                             "The partition id cannot be a negative number.")
    # No group id, no topics, a topic without partitions: an empty answer.
    assert initialize(client, topic_id, group="").results == []
    assert client.request(READ, 0, {"group_id": "sg", "topics": []}).results == []
    assert client.request(SUMMARY, 1, {"group_id": "sg", "topics": [{"topic_id": topic_id, "partitions": []}]}
                          ).results == []


def test_a_write_changes_what_share_consumers_get(mockbroker: MockBroker, client: RawClient,
                                                 topic_id: uuid.UUID) -> None:
    produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(6)]))
    assert one(initialize(client, topic_id, start_offset=0)).error_code == 0
    assert one(write(client, topic_id, [(0, 2, ACKNOWLEDGED, 1), (3, 3, AVAILABLE, 2)])).error_code == 0
    heartbeat(client, "a", 0, ["q"])
    # 0-2 are done, 3 comes with its third delivery, then the records never delivered.
    assert acquired(share_fetch(client, topic_id, "a", 0, max_records=10)) == [(0, 3, 3, 3), (0, 4, 5, 1)]
    assert mockbroker.share_groups()["sg"]["partitions"]["q-0"]["start_offset"] == 3


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        broker.create_topic("q", 1)
        yield broker


def connect_to(broker: MockBroker, node_id: int) -> RawClient:
    port = next(lst.port for lst in broker.cluster.listeners if lst.node_id == node_id)
    return RawClient("127.0.0.1", port)


def test_find_coordinator_names_the_share_coordinator_and_others_answer_not_coordinator(cluster: MockBroker) -> None:
    topic_id = cluster.node.cluster.topic("q").topic_id
    key = coordinator_key(("sg", topic_id, 0))
    with connect_to(cluster, 1) as c:
        [found] = c.request(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY, "coordinator_keys": [key]}).coordinators
        assert found.error_code == 0
        # The same key with spaces around the group id and a partition written "+0" is the same key.
        [same] = c.request(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY,
                                                 "coordinator_keys": [f" sg :{key.split(':')[1]}:+0"]}).coordinators
        assert same.node_id == found.node_id
        bad = c.request(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY, "coordinator_keys": [
            "sg", "sg:not-an-id:0", f"sg:{key.split(':')[1]}:x", f" :{key.split(':')[1]}:0"]}).coordinators
        assert [b.error_code for b in bad] == [ErrorCode.INVALID_REQUEST] * 4
        [old] = c.request(FIND_COORDINATOR, 5, {"key_type": SHARE_KEY, "coordinator_keys": [key]}).coordinators
        assert old.error_code == ErrorCode.INVALID_REQUEST  # share keys from v6
    other = next(n for n in (1, 2, 3) if n != found.node_id)
    with connect_to(cluster, found.node_id) as home, connect_to(cluster, other) as elsewhere:
        assert one(initialize(home, topic_id)).error_code == 0
        wrong = one(read(elsewhere, topic_id))
        assert (wrong.error_code, wrong.error_message) == (
            ErrorCode.NOT_COORDINATOR, "Unable to read share group state: This is not the correct coordinator.")
        assert one(read(home, topic_id)).error_code == 0


def test_alter_and_delete_share_group_offsets_go_through_the_share_coordinators_state(
        mockbroker: MockBroker, client: RawClient, topic_id: uuid.UUID) -> None:
    produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(5)]))
    assert alter_offsets(client, "sg", {("q", 0): 3}).error_code == 0
    s = one(summary(client, topic_id))
    assert (s.start_offset, s.state_epoch) == (3, 0)  # initialized there
    assert alter_offsets(client, "sg", {("q", 0): 1}).error_code == 0
    s = one(summary(client, topic_id))
    assert (s.start_offset, s.state_epoch) == (1, 1)  # initialized again, at the next state epoch
    assert delete_offsets(client, "sg", ["q"]).responses[0].error_code == 0
    assert one(summary(client, topic_id)).start_offset == -1
    assert state_records(mockbroker)[-1][0::2] == (SHARE_SNAPSHOT, None)


def test_the_share_coordinator_moves_with_its_partitions_leader(cluster: MockBroker) -> None:
    topic_id = cluster.node.cluster.topic("q").topic_id
    key = coordinator_key(("sg", topic_id, 0))
    with connect_to(cluster, 1) as c:
        [found] = c.request(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY, "coordinator_keys": [key]}).coordinators
    with connect_to(cluster, found.node_id) as home:
        assert one(initialize(home, topic_id, start_offset=4)).error_code == 0
    index = partition_for(key, len(cluster.node.cluster.topic(SHARE_STATE_TOPIC).partitions))
    new_home = next(n for n in (1, 2, 3) if n != found.node_id)
    cluster.node_control.move_leader(SHARE_STATE_TOPIC, index, new_home)
    with connect_to(cluster, new_home) as c, connect_to(cluster, found.node_id) as old:
        [moved] = c.request(FIND_COORDINATOR, 6, {"key_type": SHARE_KEY, "coordinator_keys": [key]}).coordinators
        assert moved.node_id == new_home
        assert one(read(old, topic_id)).error_code == ErrorCode.NOT_COORDINATOR
        p = one(read(c, topic_id))
        assert (p.error_code, p.start_offset) == (0, 4)  # the state moved with the leadership
