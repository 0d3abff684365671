"""Share groups (KIP-932) over the raw protocol: ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch with
its share sessions, ShareAcknowledge, and share groups in ListGroups, DeleteGroups and ApiVersions."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from tests.handlers.conftest import make_batch, produce, records_of
from tests.rawclient import RawClient

HEARTBEAT, DESCRIBE, FETCH, ACK = 76, 77, 78, 79
LIST_GROUPS, DELETE_GROUPS, API_VERSIONS, OFFSETS = 16, 42, 18, 90
NONE, INVALID_REQUEST, UNKNOWN_MEMBER_ID, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND = 0, 42, 25, 68, 69
FENCED_MEMBER_EPOCH, INVALID_RECORD_STATE, SESSION_NOT_FOUND, INVALID_SESSION_EPOCH = 110, 121, 122, 123
ACCEPT, RELEASE = 1, 2
EARLIEST = {"share.auto.offset.reset": "earliest"}


def heartbeat(client: RawClient, member: str, epoch: int, topics: list[str] | None = None,
              group: str = "sg") -> Msg:
    return client.request(HEARTBEAT, 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                                         "rack_id": None, "subscribed_topic_names": topics})


def share_fetch(client: RawClient, topic_id: uuid.UUID, member: str, epoch: int, *, partitions: tuple[int, ...] = (0,),
                acks: dict[int, list[tuple[int, int, list[int]]]] | None = None, max_records: int = 100,
                max_wait_ms: int = 0, forget: tuple[int, ...] = (), version: int = 1) -> Msg:
    acks = acks or {}
    body: dict[str, Any] = {
        "group_id": "sg", "member_id": member, "share_session_epoch": epoch, "max_wait_ms": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": max_records,
        "topics": [{"topic_id": topic_id, "partitions": [
            {"partition_index": p, "acknowledgement_batches": [
                {"first_offset": f, "last_offset": last, "acknowledge_types": t} for f, last, t in acks.get(p, [])]}
            for p in partitions]}] if partitions else [],
        "forgotten_topics_data": [{"topic_id": topic_id, "partitions": list(forget)}] if forget else []}
    return client.request(FETCH, version, body)


def acquired(r: Msg) -> list[tuple[int, int, int, int]]:
    """(partition, first, last, delivery count) of every AcquiredRecords."""
    return [(p.partition_index, a.first_offset, a.last_offset, a.delivery_count)
            for t in r.responses for p in t.partitions for a in p.acquired_records]


@pytest.fixture
def topic_id(mockbroker: MockBroker) -> uuid.UUID:
    mockbroker.create_topic("q", 2)
    return mockbroker.node.cluster.topic("q").topic_id


def produce_values(client: RawClient, n: int, partition: int = 0) -> None:
    produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(n)]), partition=partition)


def test_heartbeat_assigns_partitions_by_topic_id_and_fences_stale_epochs(client: RawClient, topic_id: uuid.UUID) -> None:
    a = heartbeat(client, "a", 0, ["q"])
    assert (a.error_code, a.member_id, a.member_epoch) == (NONE, "a", 1)
    assert [(t.topic_id, t.partitions) for t in a.assignment.topic_partitions] == [(topic_id, [0, 1])]
    b = heartbeat(client, "b", 0, ["q"])
    assert (b.member_epoch, [t.partitions for t in b.assignment.topic_partitions]) == (2, [[1]])
    a = heartbeat(client, "a", 1)
    assert (a.member_epoch, [t.partitions for t in a.assignment.topic_partitions]) == (2, [[0]])
    assert heartbeat(client, "a", 7).error_code == FENCED_MEMBER_EPOCH
    assert heartbeat(client, "zz", 3).error_code == UNKNOWN_MEMBER_ID
    assert heartbeat(client, "", 0, ["q"]).error_code == INVALID_REQUEST
    d = client.request(DESCRIBE, 1, {"group_ids": ["sg", "nope"], "include_authorized_operations": False})
    sg, nope = d.groups
    assert (sg.error_code, sg.group_state, sg.group_epoch, sg.assignor_name) == (NONE, "Stable", 2, "simple")
    assert sorted((m.member_id, m.member_epoch) for m in sg.members) == [("a", 2), ("b", 2)]
    assert nope.error_code == GROUP_ID_NOT_FOUND
    left = heartbeat(client, "b", -1)
    assert (left.error_code, left.member_epoch) == (NONE, -1)


@pytest.mark.mockbroker(config=EARLIEST)
def test_share_fetch_acquires_acknowledges_and_keeps_its_session_epochs(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:
    heartbeat(client, "a", 0, ["q"])
    produce_values(client, 5)
    r = share_fetch(client, topic_id, "a", 0, max_records=3)
    assert r.error_code == NONE and r.acquisition_lock_timeout_ms == 30000
    assert acquired(r) == [(0, 0, 2, 1)]
    [p0] = [p for t in r.responses for p in t.partitions if p.partition_index == 0]
    assert [rec.offset for rec in records_of(p0.records)] == [0, 1, 2, 3, 4]  # the batch holding them
    # Epoch 1 comes next: acknowledge (accept 0-1, release 2) and fetch again.
    r = share_fetch(client, topic_id, "a", 1, acks={0: [(0, 0, [ACCEPT]), (1, 2, [ACCEPT, RELEASE])]})
    assert acquired(r) == [(0, 2, 2, 2), (0, 3, 4, 1)]
    assert [p.acknowledge_error_code for t in r.responses for p in t.partitions if p.partition_index == 0] == [NONE]
    assert share_fetch(client, topic_id, "a", 1).error_code == INVALID_SESSION_EPOCH
    assert share_fetch(client, topic_id, "b", 3).error_code == SESSION_NOT_FOUND
    assert share_fetch(client, topic_id, "a", 0, acks={0: [(2, 2, [ACCEPT])]}).error_code == INVALID_REQUEST
    # Another member's records cannot be acknowledged.
    other = share_fetch(client, topic_id, "b", 0, partitions=(0,))
    assert acquired(other) == []
    r = share_fetch(client, topic_id, "b", 1, acks={0: [(2, 2, [ACCEPT])]})
    assert [p.acknowledge_error_code for t in r.responses for p in t.partitions if p.partition_index == 0] == [INVALID_RECORD_STATE]
    # ShareAcknowledge at the session's epoch (2), then the final epoch closes the session and releases 3-4.
    ack = client.request(ACK, 1, {"group_id": "sg", "member_id": "a", "share_session_epoch": 2, "topics": [
        {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": 2, "last_offset": 2, "acknowledge_types": [ACCEPT]}]}]}]})
    assert [(p.partition_index, p.error_code) for t in ack.responses for p in t.partitions] == [(0, NONE)]
    close = client.request(ACK, 1, {"group_id": "sg", "member_id": "a", "share_session_epoch": -1, "topics": []})
    assert close.error_code == NONE
    part = mockbroker.share_groups()["sg"]["partitions"]["q-0"]
    assert part["start_offset"] == 3
    assert [(r["offset"], r["state"], r["delivery_count"]) for r in part["records"]] == [
        (3, "AVAILABLE", 1), (4, "AVAILABLE", 1)]


def test_latest_reset_starts_at_the_high_watermark_and_a_parked_fetch_wakes_on_produce(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:
    produce_values(client, 2)
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, topic_id, "a", 0)) == []
    client.send(FETCH, 1, {"group_id": "sg", "member_id": "a", "share_session_epoch": 1, "max_wait_ms": 10000,
                           "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10,
                           "topics": [], "forgotten_topics_data": []})
    with RawClient(mockbroker.host, mockbroker.port) as producer:
        produce_values(producer, 1)
    _, r = client.recv(FETCH, 1)
    assert acquired(r) == [(0, 2, 2, 1)]


@pytest.mark.mockbroker(config=EARLIEST)
def test_lock_timeout_on_the_broker_clock_redelivers(client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:
    produce_values(client, 2)
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, topic_id, "a", 0)) == [(0, 0, 1, 1)]
    records = mockbroker.share_groups()["sg"]["partitions"]["q-0"]["records"]
    assert [(r["state"], r["member_id"]) for r in records] == [("ACQUIRED", "a")] * 2
    mockbroker.clock.advance(30)
    assert [r["state"] for r in mockbroker.share_groups()["sg"]["partitions"]["q-0"]["records"]] == ["AVAILABLE"] * 2
    assert acquired(share_fetch(client, topic_id, "a", 1)) == [(0, 0, 1, 2)]


@pytest.mark.mockbroker(config=EARLIEST)
def test_describe_share_group_offsets_gives_start_offsets_and_lag(client: RawClient, topic_id: uuid.UUID) -> None:
    heartbeat(client, "a", 0, ["q"])
    produce_values(client, 4)
    share_fetch(client, topic_id, "a", 0, max_records=4)
    share_fetch(client, topic_id, "a", 1, acks={0: [(0, 0, [ACCEPT]), (2, 2, [ACCEPT])]}, max_records=0)

    def describe(version: int, topics: Any) -> Msg:
        return client.request(OFFSETS, version, {"groups": [{"group_id": "sg", "topics": topics},
                                                            {"group_id": "nope", "topics": None}]})
    r = describe(1, None)
    sg, nope = r.groups
    assert [(t.topic_name, t.topic_id, [(p.partition_index, p.start_offset, p.lag, p.error_code) for p in t.partitions])
            for t in sg.topics] == [("q", topic_id, [(0, 1, 2, NONE)])]  # offset 0 done, 2 done: 1 and 3 left
    assert nope.error_code == GROUP_ID_NOT_FOUND
    r = describe(0, [{"topic_name": "q", "partitions": [0, 1]}, {"topic_name": "ghost", "partitions": [0]}])
    assert [(t.topic_name, [(p.partition_index, p.start_offset, p.error_code) for p in t.partitions])
            for t in r.groups[0].topics] == [("q", [(0, 1, NONE), (1, -1, NONE)]), ("ghost", [(0, -1, 3)])]


def test_list_and_delete_share_groups(client: RawClient, topic_id: uuid.UUID) -> None:
    heartbeat(client, "a", 0, ["q"])
    r = client.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["Share"]})
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.groups] == [
        ("sg", "share", "Stable", "share")]
    assert client.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["consumer"]}).groups == []
    d = client.request(DELETE_GROUPS, 2, {"groups_names": ["sg"]})
    assert [(x.group_id, x.error_code) for x in d.results] == [("sg", NON_EMPTY_GROUP)]
    heartbeat(client, "a", -1)
    d = client.request(DELETE_GROUPS, 2, {"groups_names": ["sg"]})
    assert [(x.group_id, x.error_code) for x in d.results] == [("sg", NONE)]
    assert client.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []}).groups == []


@pytest.mark.parametrize("kafka_version, advertised", [(None, True), ("4.3", True), ("4.1", False), ("3.9", False)])
def test_share_apis_and_share_version_only_where_share_groups_are_on(
        mockbroker_factory: Any, kafka_version: str | None, advertised: bool) -> None:
    broker = mockbroker_factory(**({"kafka_version": kafka_version} if kafka_version else {}))
    with RawClient(broker.host, broker.port) as c:
        r = c.request(API_VERSIONS, 4, {"client_software_name": "t", "client_software_version": "1"})
    keys = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    if advertised:
        assert (keys[76], keys[77], keys[78], keys[79], keys[90]) == ((1, 1), (1, 1), (1, 2), (1, 2), (0, 1))
        assert ("share.version", 1) in [(f.name, f.max_version_level) for f in r.finalized_features]
    else:
        assert not {76, 77, 78, 79, 90} & set(keys)
        assert "share.version" not in [f.name for f in r.finalized_features]
