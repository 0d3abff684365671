"""Raw-protocol tests of OffsetCommit (8), OffsetFetch (9) and OffsetDelete (47), every version."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.test_groups_classic import FAST, join_member, sync
from tests.rawclient import RawClient

COMMIT, FETCH, OFFSET_DELETE = 8, 9, 47
E = ErrorCode

pytestmark = FAST


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    mockbroker.create_topic("t", 3)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def commit_body(group: str, partitions: dict[int, int], *, topic: str = "t", generation: int = -1, member: str = "",
                metadata: str | None = "", topic_id: uuid.UUID | None = None, **extra: Any) -> dict[str, Any]:
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "retention_time_ms": -1, **extra,
            "topics": [{"name": topic, "topic_id": topic_id,
                        "partitions": [{"partition_index": p, "committed_offset": o, "committed_leader_epoch": 4,
                                        "committed_metadata": metadata, "commit_timestamp": -1}
                                       for p, o in partitions.items()]}]}


def codes(r: Any) -> list[tuple[int, int]]:
    return [(p.partition_index, p.error_code) for t in r.topics for p in t.partitions]


def fetch(c: RawClient, version: int, group: str, partitions: list[int] | None, topic: str = "t") -> Any:
    topics = None if partitions is None else [{"name": topic, "partition_indexes": partitions}]
    if version >= 8:
        return c.request(FETCH, version, {"groups": [{"group_id": group, "topics": topics}], "require_stable": True})
    return c.request(FETCH, version, {"group_id": group, "topics": topics, "require_stable": version >= 7})


@pytest.mark.parametrize("version", range(11))
def test_simple_commit_and_fetch_at_every_version(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    topic_id = mockbroker.cluster.topics["t"].topic_id
    r = client.request(COMMIT, version, commit_body("simple", {0: 10, 2: 30}, metadata="m", topic_id=topic_id))
    assert codes(r) == [(0, 0), (2, 0)]
    if version >= 10:
        assert r.topics[0].topic_id == topic_id
    else:
        assert r.topics[0].name == "t"
    assert mockbroker.committed("simple") == {("t", 0): 10, ("t", 2): 30}
    fetch_version = min(version, 10)
    if fetch_version >= 10:
        f = client.request(FETCH, 10, {"groups": [{"group_id": "simple", "member_id": None, "member_epoch": -1,
                                                   "topics": [{"topic_id": topic_id, "partition_indexes": [0, 1]}]}]})
        [t] = f.groups[0].topics
        assert t.topic_id == topic_id
        parts = t.partitions
    elif fetch_version >= 8:
        parts = fetch(client, fetch_version, "simple", [0, 1]).groups[0].topics[0].partitions
    else:
        parts = fetch(client, fetch_version, "simple", [0, 1]).topics[0].partitions
    got = [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for p in parts]
    assert got == [(0, 10, "m", 0), (1, -1, "", 0)]
    if fetch_version >= 5:
        assert [p.committed_leader_epoch for p in parts] == [4 if version >= 6 else -1, -1]


@pytest.mark.parametrize("version", [2, 7, 8, 10])
def test_fetch_all_offsets_of_a_group(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("u", 1)
    client.request(COMMIT, 8, commit_body("g", {1: 5}))
    client.request(COMMIT, 8, commit_body("g", {0: 7}, topic="u"))
    if version >= 8:
        r = client.request(FETCH, version, {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1,
                                                        "topics": None}]})
        topics = r.groups[0].topics
    else:
        topics = fetch(client, version, "g", None).topics
    got = sorted((t.name if version < 10 else str(t.topic_id), p.partition_index, p.committed_offset)
                 for t in topics for p in t.partitions)
    names = {"t": "t", "u": "u"} if version < 10 else {n: str(mockbroker.cluster.topics[n].topic_id) for n in "tu"}
    assert got == sorted([(names["t"], 1, 5), (names["u"], 0, 7)])


def test_fetch_of_an_unknown_group_answers_no_offsets(client: RawClient) -> None:
    r = fetch(client, 8, "nope", [0])
    assert [(p.committed_offset, p.error_code) for p in r.groups[0].topics[0].partitions] == [(-1, 0)]
    assert fetch(client, 7, "nope", None).topics == []


def test_fetch_batches_groups_from_v8(client: RawClient) -> None:
    client.request(COMMIT, 8, commit_body("a", {0: 1}))
    client.request(COMMIT, 8, commit_body("b", {0: 2}))
    r = client.request(FETCH, 8, {"groups": [{"group_id": g, "topics": [{"name": "t", "partition_indexes": [0]}]}
                                             for g in ("a", "b", "c")]})
    assert [(g.group_id, g.error_code, g.topics[0].partitions[0].committed_offset) for g in r.groups] == [
        ("a", 0, 1), ("b", 0, 2), ("c", 0, -1)]


def test_commit_to_an_unknown_topic_or_partition(client: RawClient, mockbroker: MockBroker) -> None:
    r = client.request(COMMIT, 8, commit_body("g", {0: 1}, topic="nope"))
    assert codes(r) == [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]
    r = client.request(COMMIT, 8, commit_body("g", {0: 1, 9: 1}))
    assert codes(r) == [(0, 0), (9, E.UNKNOWN_TOPIC_OR_PARTITION)]
    r = client.request(COMMIT, 10, commit_body("g", {0: 1}, topic="", topic_id=uuid.uuid4()))
    assert codes(r) == [(0, E.UNKNOWN_TOPIC_ID)]
    assert mockbroker.committed("g") == {("t", 0): 1}


def test_fetch_of_an_unknown_topic_id_is_unknown_topic_id(client: RawClient) -> None:
    unknown = uuid.uuid4()
    r = client.request(FETCH, 10, {"groups": [{"group_id": "g", "member_id": None, "member_epoch": -1,
                                               "topics": [{"topic_id": unknown, "partition_indexes": [0]}]}]})
    assert [(t.topic_id, [p.error_code for p in t.partitions]) for t in r.groups[0].topics] == [
        (unknown, [E.UNKNOWN_TOPIC_ID])]


def test_member_commits_are_checked_against_the_generation(client: RawClient, mockbroker: MockBroker) -> None:
    a = join_member(client, 5, "g")
    sync(client, 5, "g", a.member_id, 1, {})
    ok = client.request(COMMIT, 8, commit_body("g", {0: 3}, generation=1, member=a.member_id))
    assert codes(ok) == [(0, 0)]
    bad = client.request(COMMIT, 8, commit_body("g", {0: 4}, generation=2, member=a.member_id))
    assert codes(bad) == [(0, E.ILLEGAL_GENERATION)]
    stranger = client.request(COMMIT, 8, commit_body("g", {0: 4}, generation=1, member="x"))
    assert codes(stranger) == [(0, E.UNKNOWN_MEMBER_ID)]
    simple = client.request(COMMIT, 8, commit_body("g", {0: 4}))
    assert codes(simple) == [(0, E.UNKNOWN_MEMBER_ID)]
    assert mockbroker.committed("g") == {("t", 0): 3}


@pytest.mark.parametrize("version,code", [(8, E.ILLEGAL_GENERATION), (9, E.GROUP_ID_NOT_FOUND)])
def test_commit_with_a_generation_to_an_unknown_group(client: RawClient, version: int, code: ErrorCode) -> None:
    r = client.request(COMMIT, version, commit_body("nope", {0: 1}, generation=3, member="m"))
    assert codes(r) == [(0, code)]


def test_metadata_too_large(client: RawClient) -> None:
    r = client.request(COMMIT, 8, commit_body("g", {0: 1}, metadata="x" * 4097))
    assert codes(r) == [(0, E.OFFSET_METADATA_TOO_LARGE)]


@pytest.mark.parametrize("version", [0, 1])
def test_fetch_group_errors_go_to_every_partition_before_v2(client: RawClient, mockbroker: MockBroker,
                                                            version: int) -> None:
    mockbroker.inject(FETCH, error=E.NOT_COORDINATOR)
    r = fetch(client, version, "g", [0, 1])
    assert [(p.partition_index, p.error_code) for p in r.topics[0].partitions] == [
        (0, E.NOT_COORDINATOR), (1, E.NOT_COORDINATOR)]


def test_fetch_with_a_member_of_a_classic_group_is_accepted(client: RawClient) -> None:
    client.request(COMMIT, 8, commit_body("g", {0: 9}))
    r = client.request(FETCH, 9, {"groups": [{"group_id": "g", "member_id": "anyone", "member_epoch": 3,
                                              "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert (r.groups[0].error_code, r.groups[0].topics[0].partitions[0].committed_offset) == (0, 9)


def test_offset_delete(client: RawClient, mockbroker: MockBroker) -> None:
    client.request(COMMIT, 8, commit_body("g", {0: 1, 1: 2}))
    r = client.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 9}]},
        {"name": "nope", "partitions": [{"partition_index": 0}]}]})
    assert r.error_code == 0
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in r.topics] == [
        ("t", [(0, 0), (9, E.UNKNOWN_TOPIC_OR_PARTITION)]), ("nope", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert mockbroker.committed("g") == {("t", 1): 2}
    missing = client.request(OFFSET_DELETE, 0, {"group_id": "nope", "topics": []})
    assert (missing.error_code, missing.topics) == (E.GROUP_ID_NOT_FOUND, [])
    assert client.request(OFFSET_DELETE, 0, {"group_id": "", "topics": []}).error_code == E.INVALID_GROUP_ID


def test_offset_delete_of_a_group_with_members(client: RawClient) -> None:
    a = join_member(client, 5, "g")
    sync(client, 5, "g", a.member_id, 1, {})
    r = client.request(OFFSET_DELETE, 0, {"group_id": "g", "topics": [{"name": "t", "partitions": [
        {"partition_index": 0}]}]})
    assert r.error_code == E.NON_EMPTY_GROUP


def test_offsets_of_an_empty_group_expire_on_the_broker_clock(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(clock=Clock(frozen=True), config={"offsets.retention.minutes": 5})
    broker.create_topic("t", 1)
    with RawClient(broker.host, broker.port) as c:
        c.request(COMMIT, 8, commit_body("g", {0: 7}))
        broker.clock.advance(4 * 60)
        assert broker.committed("g") == {("t", 0): 7}
        broker.clock.advance(6 * 60)  # past the retention; the 10-minute check (Kafka's default) has run
        assert broker.committed("g") == {}
        assert broker.groups() == []
    # A new connection: the first one was idle for connections.max.idle.ms (10 minutes) and is closed.
    with RawClient(broker.host, broker.port) as c:
        assert fetch(c, 8, "g", [0]).groups[0].topics[0].partitions[0].committed_offset == -1


def test_require_stable_fetch_of_offsets_pending_in_a_transaction_is_unstable(client: RawClient,
                                                                               mockbroker: MockBroker) -> None:
    init = client.request(22, 4, {"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": -1,
                                  "producer_epoch": -1})
    assert init.error_code == 0
    pid, epoch = init.producer_id, init.producer_epoch
    assert client.request(25, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                  "group_id": "g"}).error_code == 0
    r = client.request(28, 3, {"transactional_id": "tx", "group_id": "g", "producer_id": pid, "producer_epoch": epoch,
                               "generation_id": -1, "member_id": "", "group_instance_id": None,
                               "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                                         "committed_leader_epoch": -1,
                                                                         "committed_metadata": ""}]}]})
    assert [p.error_code for t in r.topics for p in t.partitions] == [0]
    stable = fetch(client, 8, "g", [0, 1]).groups[0].topics[0].partitions
    assert [(p.partition_index, p.committed_offset, p.error_code) for p in stable] == [
        (0, -1, E.UNSTABLE_OFFSET_COMMIT), (1, -1, 0)]
    loose = client.request(FETCH, 8, {"groups": [{"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}]}],
                                      "require_stable": False}).groups[0].topics[0].partitions
    assert [(p.committed_offset, p.error_code) for p in loose] == [(-1, 0)]
    assert client.request(26, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                  "committed": True}).error_code == 0
    assert [(p.committed_offset, p.error_code) for p in fetch(client, 8, "g", [0]).groups[0].topics[0].partitions] == [
        (5, 0)]
