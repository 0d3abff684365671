"""Fault rules on ShareFetch and ShareAcknowledge over the raw protocol: a partition-level code comes on every
partition the request names (as Kafka answers NOT_LEADER_OR_FOLLOWER, with empty records, never null), a
request-wide one at the top level; topic/partition filters see the partitions a ShareFetch names by topic id
and, for an incremental ShareFetch that names none, the partitions of its share session."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.test_share_groups import (  # noqa: F401  (topic_id: the fixture)
    EARLIEST,
    acquired,
    heartbeat,
    produce_values,
    share_fetch,
    topic_id,
)
from tests.rawclient import RawClient

FETCH, ACK = 78, 79


def partition_codes(r: object) -> list[tuple[int, int, int]]:
    """(partition, error code, acknowledge error code) of every partition of a ShareFetch answer."""
    return [(p.partition_index, p.error_code, p.get("acknowledge_error_code", 0))
            for t in r.responses for p in t.partitions]  # type: ignore[attr-defined]


@pytest.mark.mockbroker(config=EARLIEST)
def test_share_fetch_partition_fault_comes_on_each_partition_and_nothing_is_acquired(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:  # noqa: F811
    heartbeat(client, "a", 0, ["q"])
    produce_values(client, 3)
    other = mockbroker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="q", partition=7)
    mockbroker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="q", partition=1)
    r = share_fetch(client, topic_id, "a", 0, partitions=(0, 1))
    assert r.error_code == 0
    assert partition_codes(r) == [(0, ErrorCode.NOT_LEADER_OR_FOLLOWER, 0), (1, ErrorCode.NOT_LEADER_OR_FOLLOWER, 0)]
    assert [len(p.records) for t in r.responses for p in t.partitions] == [0, 0] and acquired(r) == []
    assert mockbroker.faults.rules == [other]  # partition 7 is named by no request
    assert mockbroker.share_groups()["sg"]["partitions"] == {}  # not applied: no session, nothing acquired
    r = share_fetch(client, topic_id, "a", 0, partitions=(0, 1))
    assert r.error_code == 0 and acquired(r) == [(0, 0, 2, 1)]


@pytest.mark.mockbroker(config=EARLIEST)
def test_an_incremental_share_fetch_matches_a_topic_filter_by_its_session(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:  # noqa: F811
    heartbeat(client, "a", 0, ["q"])
    assert share_fetch(client, topic_id, "a", 0, partitions=(1,)).error_code == 0  # the session holds q-1
    mockbroker.create_topic("elsewhere", 1)
    elsewhere = mockbroker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="elsewhere")
    mockbroker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="q", partition=1)
    r = share_fetch(client, topic_id, "a", 1, partitions=())  # names nothing: fetches its session's q-1
    assert (r.error_code, partition_codes(r)) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, [])  # none named: top level
    assert mockbroker.faults.rules == [elsewhere]


@pytest.mark.mockbroker(config=EARLIEST)
def test_acknowledgement_faults_carry_invalid_record_state_per_partition(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:  # noqa: F811
    heartbeat(client, "a", 0, ["q"])
    produce_values(client, 3)
    assert acquired(share_fetch(client, topic_id, "a", 0, partitions=(0,))) == [(0, 0, 2, 1)]
    mockbroker.inject(FETCH, error=ErrorCode.INVALID_RECORD_STATE)
    r = share_fetch(client, topic_id, "a", 1, partitions=(0,), acks={0: [(0, 0, [1])]})
    assert (r.error_code, partition_codes(r)) == (0, [(0, 0, ErrorCode.INVALID_RECORD_STATE)])
    mockbroker.inject(ACK, error=ErrorCode.INVALID_RECORD_STATE)
    mockbroker.inject(ACK, error=ErrorCode.SHARE_SESSION_NOT_FOUND)
    body = {"group_id": "sg", "member_id": "a", "share_session_epoch": 1, "topics": [
        {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]}
    ack = client.request(ACK, 1, body)
    assert ack.error_code == 0
    assert [(p.partition_index, p.error_code) for t in ack.responses for p in t.partitions] == [
        (0, ErrorCode.INVALID_RECORD_STATE)]
    ack = client.request(ACK, 1, body)
    assert (ack.error_code, ack.responses) == (ErrorCode.SHARE_SESSION_NOT_FOUND, [])
    records = mockbroker.share_groups()["sg"]["partitions"]["q-0"]["records"]
    assert [r["state"] for r in records] == ["ACQUIRED"] * 3  # no injected answer applied anything
    assert client.request(ACK, 1, body).responses[0].partitions[0].error_code == 0  # the real one is
