"""Raw-protocol tests of DescribeGroups (15), ListGroups (16), DeleteGroups (42), ConsumerGroupHeartbeat (68),
ConsumerGroupDescribe (69), and the coordinator errors fault injection answers for every group API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.test_groups_classic import FAST, join_member, sync
from tests.handlers.test_groups_offsets import commit_body
from tests.rawclient import RawClient

E = ErrorCode
DESCRIBE, LIST, DELETE, CG_HEARTBEAT, CG_DESCRIBE = 15, 16, 42, 68, 69
INT32_MIN = -(2**31)

pytestmark = FAST


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    mockbroker.create_topic("t", 2)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def stable(c: RawClient, group: str) -> str:
    a = join_member(c, 5, group)
    sync(c, 5, group, a.member_id, 1, {a.member_id: b"A"})
    return str(a.member_id)


def cg_join(c: RawClient, group: str, member: str, version: int = 1, **extra: Any) -> Any:
    body = {"group_id": group, "member_id": member, "member_epoch": 0, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": ["t"], "topic_partitions": [], **extra}
    return c.request(CG_HEARTBEAT, version, body)


# -- DescribeGroups ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(7))
def test_describe_a_stable_group_at_every_version(client: RawClient, version: int) -> None:
    member = stable(client, "g")
    r = client.request(DESCRIBE, version, {"groups": ["g"], "include_authorized_operations": True})
    [g] = r.groups
    assert (g.error_code, g.group_id, g.group_state, g.protocol_type, g.protocol_data) == (
        0, "g", "Stable", "consumer", "range")
    assert [(m.member_id, m.client_id, m.client_host, m.member_metadata, m.member_assignment) for m in g.members] == [
        (member, "raw-test", "/127.0.0.1", b"meta", b"A")]
    if version >= 3:
        assert g.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)


@pytest.mark.parametrize("version", [5, 6])
def test_describe_unknown_and_kip848_groups(client: RawClient, version: int) -> None:
    cg_join(client, "modern", "m1")
    r = client.request(DESCRIBE, version, {"groups": ["nope", "modern"]})
    got = [(g.group_id, g.group_state, g.error_code, g.error_message) for g in r.groups]
    if version >= 6:
        assert got == [("nope", "Dead", E.GROUP_ID_NOT_FOUND, "Group nope not found."),
                       ("modern", "Dead", E.GROUP_ID_NOT_FOUND, "Group modern is not a classic group.")]
    else:
        assert [g[:3] for g in got] == [("nope", "Dead", 0), ("modern", "Dead", 0)]


# -- ListGroups -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(6))
def test_list_groups_at_every_version(client: RawClient, version: int) -> None:
    stable(client, "classic")
    client.request(8, 8, commit_body("simple", {0: 1}))
    cg_join(client, "modern", "m1")
    r = client.request(LIST, version, {"states_filter": [], "types_filter": []})
    got = {g.group_id: g for g in r.groups}
    assert {k: g.protocol_type for k, g in got.items()} == {"classic": "consumer", "simple": "", "modern": "consumer"}
    if version >= 4:
        assert {k: g.group_state for k, g in got.items()} == {"classic": "Stable", "simple": "Empty",
                                                               "modern": "Stable"}
    if version >= 5:
        assert {k: g.group_type for k, g in got.items()} == {"classic": "classic", "simple": "classic",
                                                              "modern": "consumer"}


def test_list_groups_filters(client: RawClient) -> None:
    stable(client, "classic")
    cg_join(client, "modern", "m1")
    r = client.request(LIST, 5, {"states_filter": ["stable"], "types_filter": ["Consumer"]})
    assert [g.group_id for g in r.groups] == ["modern"]
    r = client.request(LIST, 4, {"states_filter": ["Empty"]})
    assert r.groups == []


# -- DeleteGroups -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(3))
def test_delete_groups(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    stable(client, "busy")
    client.request(8, 8, commit_body("idle", {0: 1}))
    r = client.request(DELETE, version, {"groups_names": ["busy", "idle", "nope"]})
    assert [(x.group_id, x.error_code) for x in r.results] == [
        ("busy", E.NON_EMPTY_GROUP), ("idle", 0), ("nope", E.GROUP_ID_NOT_FOUND)]
    assert mockbroker.committed("idle") == {}
    assert [g.group_id for g in mockbroker.groups()] == ["busy"]


# -- KIP-848 ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1])
def test_consumer_group_heartbeat_join_heartbeat_and_leave(client: RawClient, mockbroker: MockBroker,
                                                           version: int) -> None:
    r = cg_join(client, "g", "" if version == 0 else "member-1", version)
    assert (r.error_code, r.member_epoch, r.heartbeat_interval_ms) == (0, 1, 5000)
    topic_id = mockbroker.cluster.topics["t"].topic_id
    assert [(tp.topic_id, tp.partitions) for tp in r.assignment.topic_partitions] == [(topic_id, [0, 1])]
    member = r.member_id
    hb = client.request(CG_HEARTBEAT, version, {"group_id": "g", "member_id": member, "member_epoch": 1})
    assert (hb.error_code, hb.member_epoch, hb.assignment) == (0, 1, None)
    left = client.request(CG_HEARTBEAT, version, {"group_id": "g", "member_id": member, "member_epoch": -1})
    assert (left.error_code, left.member_epoch) == (0, -1)
    [g] = mockbroker.groups()
    assert (g.group_type, g.state, g.generation_or_epoch) == ("consumer", "Empty", 2)


def test_consumer_group_heartbeat_v1_requires_a_member_id(client: RawClient) -> None:
    r = cg_join(client, "g", "", 1)
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "MemberId can't be empty.")


def test_consumer_group_heartbeat_regex_from_v1(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders-1", 1)
    r = cg_join(client, "g", "m1", 1, subscribed_topic_names=None, subscribed_topic_regex="orders-\\d+")
    assert [tp.partitions for tp in r.assignment.topic_partitions] == [[0]]
    bad = cg_join(client, "h", "m1", 1, subscribed_topic_regex="[")
    assert bad.error_code == E.INVALID_REGULAR_EXPRESSION


def test_consumer_group_heartbeat_errors(client: RawClient) -> None:
    cg_join(client, "g", "m1")
    assert client.request(CG_HEARTBEAT, 1, {"group_id": "g", "member_id": "m1", "member_epoch": 5}).error_code == \
        E.FENCED_MEMBER_EPOCH
    assert client.request(CG_HEARTBEAT, 1, {"group_id": "g", "member_id": "m9", "member_epoch": 1}).error_code == \
        E.UNKNOWN_MEMBER_ID
    assert cg_join(client, "g", "m2", server_assignor="nope").error_code == E.UNSUPPORTED_ASSIGNOR
    stable(client, "classic")
    r = cg_join(client, "classic", "m1")
    assert (r.error_code, r.error_message) == (E.GROUP_ID_NOT_FOUND, "Group classic is not a consumer group.")


def test_classic_join_to_a_kip848_group_is_inconsistent(client: RawClient) -> None:
    cg_join(client, "g", "m1")
    r = client.request(11, 5, {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                               "member_id": "", "protocol_type": "consumer",
                               "protocols": [{"name": "range", "metadata": b""}]})
    assert r.error_code == E.INCONSISTENT_GROUP_PROTOCOL


@pytest.mark.parametrize("version", [0, 1])
def test_consumer_group_describe(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    cg_join(client, "g", "m1", instance_id="i1", rack_id="r1")
    stable(client, "classic")
    r = client.request(CG_DESCRIBE, version, {"group_ids": ["g", "classic", "nope"],
                                              "include_authorized_operations": False})
    g, classic, nope = r.groups
    assert (g.error_code, g.group_state, g.group_epoch, g.assignment_epoch, g.assignor_name) == (
        0, "Stable", 1, 1, "uniform")
    [m] = g.members
    assert (m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id, m.subscribed_topic_names) == (
        "m1", "i1", "r1", 1, "raw-test", ["t"])
    assert [(tp.topic_name, tp.partitions) for tp in m.assignment.topic_partitions] == [("t", [0, 1])]
    if version >= 1:
        assert m.member_type == 1
    assert g.authorized_operations == INT32_MIN
    assert (classic.error_code, classic.error_message) == (E.GROUP_ID_NOT_FOUND, "Group classic is not a consumer group.")
    assert (nope.error_code, nope.error_message) == (E.GROUP_ID_NOT_FOUND, "Group nope not found.")


def test_kip848_member_commits_and_fetches_with_its_epoch(client: RawClient, mockbroker: MockBroker) -> None:
    cg_join(client, "g", "m1")
    ok = client.request(8, 9, commit_body("g", {0: 5}, generation=1, member="m1"))
    assert [p.error_code for t in ok.topics for p in t.partitions] == [0]
    stale = client.request(8, 9, commit_body("g", {0: 6}, generation=0, member="m1"))
    assert [p.error_code for t in stale.topics for p in t.partitions] == [E.STALE_MEMBER_EPOCH]
    old = client.request(8, 8, commit_body("g", {0: 6}, generation=1, member="m1"))
    assert [p.error_code for t in old.topics for p in t.partitions] == [E.UNSUPPORTED_VERSION]
    f = client.request(9, 9, {"groups": [{"group_id": "g", "member_id": "m1", "member_epoch": 0,
                                          "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert f.groups[0].error_code == E.STALE_MEMBER_EPOCH
    f = client.request(9, 9, {"groups": [{"group_id": "g", "member_id": "m1", "member_epoch": 1,
                                          "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert f.groups[0].topics[0].partitions[0].committed_offset == 5
    assert mockbroker.committed("g") == {("t", 0): 5}


# -- fault injection: coordinator errors ------------------------------------------------------------------

COORDINATOR_ERRORS = [E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR, E.COORDINATOR_LOAD_IN_PROGRESS]


@pytest.mark.parametrize("code", COORDINATOR_ERRORS)
def test_injected_find_coordinator_errors(client: RawClient, mockbroker: MockBroker, code: ErrorCode) -> None:
    mockbroker.inject(10, error=code, count=2)
    old = client.request(10, 3, {"key": "g", "key_type": 0})
    assert (old.error_code, old.node_id, old.host, old.port) == (code, -1, "", -1)
    new = client.request(10, 4, {"key_type": 0, "coordinator_keys": ["a", "b"]})
    assert [(c.key, c.error_code, c.node_id) for c in new.coordinators] == [("a", code, -1), ("b", code, -1)]
    ok = client.request(10, 4, {"key_type": 0, "coordinator_keys": ["a"]})
    assert ok.coordinators[0].error_code == 0


@pytest.mark.parametrize("code", COORDINATOR_ERRORS)
def test_injected_offset_commit_and_fetch_errors(client: RawClient, mockbroker: MockBroker, code: ErrorCode) -> None:
    mockbroker.inject(8, error=code)
    r = client.request(8, 8, commit_body("g", {0: 1, 1: 2}))
    assert [p.error_code for t in r.topics for p in t.partitions] == [code, code]
    assert mockbroker.committed("g") == {}
    mockbroker.inject(9, error=code, count=2)
    r = client.request(9, 8, {"groups": [{"group_id": "a", "topics": None}, {"group_id": "b", "topics": None}]})
    assert [(g.group_id, g.error_code) for g in r.groups] == [("a", code), ("b", code)]
    r = client.request(9, 5, {"group_id": "a", "topics": None})
    assert (r.error_code, r.topics) == (code, [])


@pytest.mark.parametrize("api_key,version,body,field", [
    (11, 5, {"group_id": "g", "session_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer",
             "protocols": []}, "error_code"),
    (12, 4, {"group_id": "g", "generation_id": 1, "member_id": "m"}, "error_code"),
    (13, 4, {"group_id": "g", "members": [{"member_id": "m"}]}, "error_code"),
    (14, 5, {"group_id": "g", "generation_id": 1, "member_id": "m", "protocol_type": "consumer",
             "protocol_name": "range", "assignments": []}, "error_code"),
    (16, 5, {}, "error_code"),
    (47, 0, {"group_id": "g", "topics": []}, "error_code"),
    (68, 1, {"group_id": "g", "member_id": "m", "member_epoch": 1}, "error_code"),
    (15, 5, {"groups": ["g", "h"]}, "groups"),
    (42, 2, {"groups_names": ["g", "h"]}, "results"),
    (69, 1, {"group_ids": ["g", "h"]}, "groups"),
])
def test_injected_coordinator_errors_on_group_apis(client: RawClient, mockbroker: MockBroker, api_key: int,
                                                   version: int, body: dict[str, Any], field: str) -> None:
    mockbroker.inject(api_key, error=E.NOT_COORDINATOR)
    r = client.request(api_key, version, body)
    if field == "error_code":
        assert r.error_code == E.NOT_COORDINATOR
    else:
        assert [(x.group_id, x.error_code) for x in r[field]] == [("g", E.NOT_COORDINATOR), ("h", E.NOT_COORDINATOR)]


def test_offset_delete_of_a_topic_a_kip848_group_subscribes_to(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("old", 1)
    client.request(8, 8, commit_body("g", {0: 3}, topic="old"))
    cg_join(client, "g", "m1")
    r = client.request(47, 0, {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}]},
                                                           {"name": "old", "partitions": [{"partition_index": 0}]}]})
    assert [(t.name, t.partitions[0].error_code) for t in r.topics] == [
        ("t", E.GROUP_SUBSCRIBED_TO_TOPIC), ("old", 0)]
    assert mockbroker.committed("g") == {}
