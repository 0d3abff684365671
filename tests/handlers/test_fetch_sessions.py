"""Raw-protocol tests of fetch sessions (KIP-227, Fetch v7+): creating, incremental fetches, forgetting
partitions, epochs and closing, as Kafka's FetchManager answers them."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    DELETE_RECORDS,
    FETCH,
    fetch_body,
    fetch_partition,
    fetch_topic,
    make_batch,
    produce,
    values_of,
)
from tests.rawclient import RawClient


class Session:
    """A consumer's side of a fetch session: remembers the id and the next epoch."""

    def __init__(self, client: RawClient, broker: MockBroker, topic: str, version: int = 12) -> None:
        self.client, self.topic, self.version = client, topic, version
        self.topic_id = broker.cluster.topic(topic).topic_id if version >= 13 else None
        self.session_id = 0
        self.epoch = 0

    def _topic(self, *partitions: dict[str, Any]) -> dict[str, Any]:
        return fetch_topic(self.topic, *partitions, topic_id=self.topic_id)

    def request(self, offsets: dict[int, int], *, forget: list[int] | None = None, epoch: int | None = None,
                session_id: int | None = None) -> Msg:
        topics = [self._topic(*(fetch_partition(p, o) for p, o in offsets.items()))] if offsets else []
        forgotten = []
        if forget:
            forgotten = [{"topic": self.topic, "topic_id": self.topic_id, "partitions": forget}] \
                if self.topic_id else [{"topic": self.topic, "partitions": forget}]
        body = fetch_body(topics, session_id=self.session_id if session_id is None else session_id,
                          session_epoch=self.epoch if epoch is None else epoch, forgotten=forgotten)
        return self.client.request(FETCH, self.version, body)

    def open(self, offsets: dict[int, int]) -> Msg:
        resp = self.request(offsets, epoch=0)
        assert resp.error_code == ErrorCode.NONE
        self.session_id, self.epoch = resp.session_id, 1
        return resp

    def next(self, offsets: dict[int, int] | None = None, forget: list[int] | None = None) -> Msg:
        resp = self.request(offsets or {}, forget=forget)
        assert (resp.error_code, resp.session_id) == (ErrorCode.NONE, self.session_id)
        self.epoch += 1
        return resp


def _partitions(resp: Msg) -> dict[int, Msg]:
    return {p.partition_index: p for t in resp.responses for p in t.partitions}


@pytest.mark.parametrize("version", [7, 12, 13, 18])
def test_epoch_0_creates_a_session_and_answers_every_partition(mockbroker: MockBroker, client: RawClient,
                                                               version: int) -> None:
    mockbroker.create_topic("s", 3)
    session = Session(client, mockbroker, "s", version)
    resp = session.open({0: 0, 1: 0, 2: 0})
    assert resp.session_id > 0
    assert sorted(_partitions(resp)) == [0, 1, 2]


@pytest.mark.parametrize("version", [7, 12, 13])
def test_incremental_fetch_answers_only_partitions_with_news(mockbroker: MockBroker, client: RawClient,
                                                             version: int) -> None:
    mockbroker.create_topic("inc", 3)
    session = Session(client, mockbroker, "inc", version)
    session.open({0: 0, 1: 0, 2: 0})
    assert _partitions(session.next()) == {}
    produce(client, "inc", make_batch(b"one"), partition=1)
    got = _partitions(session.next())
    assert list(got) == [1]
    assert (got[1].high_watermark, values_of(got[1].records)) == (1, [b"one"])
    # The client moves its position; nothing new anywhere: an empty answer.
    assert _partitions(session.next({1: 1})) == {}
    # A partition whose offsets did not change but whose fetch position still has data is answered again.
    produce(client, "inc", make_batch(b"two"), partition=2)
    assert list(_partitions(session.next())) == [2]
    assert values_of(_partitions(session.next())[2].records) == [b"two"]


def test_incremental_fetch_answers_a_changed_log_start_offset(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("lso", 2)
    for _ in range(3):
        produce(client, "lso", make_batch(b"x"), partition=0)
    session = Session(client, mockbroker, "lso")
    session.open({0: 3, 1: 0})
    client.request(DELETE_RECORDS, 2, {"topics": [{"name": "lso", "partitions": [
        {"partition_index": 0, "offset": 2}]}], "timeout_ms": 1000})
    got = _partitions(session.next())
    assert list(got) == [0]
    assert (got[0].log_start_offset, got[0].high_watermark) == (2, 3)


def test_incremental_fetch_always_answers_partitions_in_error(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("err", 2)
    session = Session(client, mockbroker, "err")
    session.open({0: 0, 1: 5})  # partition 1: past its end
    for _ in range(2):
        got = _partitions(session.next())
        assert list(got) == [1]
        assert got[1].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_incremental_fetch_can_add_partitions(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("add", 2)
    produce(client, "add", make_batch(b"p1"), partition=1)
    session = Session(client, mockbroker, "add")
    session.open({0: 0})
    got = _partitions(session.next({1: 0}))
    assert list(got) == [1]
    assert values_of(got[1].records) == [b"p1"]


@pytest.mark.parametrize("version", [7, 12, 13])
def test_forgotten_partitions_leave_the_session(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("forget", 2)
    session = Session(client, mockbroker, "forget", version)
    session.open({0: 0, 1: 0})
    assert _partitions(session.next(forget=[1])) == {}
    produce(client, "forget", make_batch(b"ignored"), partition=1)
    produce(client, "forget", make_batch(b"kept"), partition=0)
    assert list(_partitions(session.next())) == [0]


def test_forgetting_every_partition_closes_the_session(mockbroker: MockBroker, client: RawClient) -> None:
    # Kafka's FetchManager: a session left empty is removed and the fetch answered sessionless.
    mockbroker.create_topic("forget-all")
    session = Session(client, mockbroker, "forget-all")
    session.open({0: 0})
    resp = session.request({}, forget=[0])
    assert (resp.error_code, resp.session_id, resp.responses) == (ErrorCode.NONE, 0, [])
    assert session.request({}, epoch=2).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


@pytest.mark.parametrize("wrong", [2, 5])
def test_wrong_epoch_is_invalid_fetch_session_epoch(mockbroker: MockBroker, client: RawClient, wrong: int) -> None:
    mockbroker.create_topic("epoch", 1)
    session = Session(client, mockbroker, "epoch")
    session.open({0: 0})
    resp = session.request({0: 0}, epoch=wrong)
    assert (resp.error_code, resp.session_id, resp.responses) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])
    # The session is still there, at the epoch it expects.
    session.next()


def test_unknown_session_id_is_fetch_session_id_not_found(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("unknown-session")
    session = Session(client, mockbroker, "unknown-session")
    resp = session.request({0: 0}, session_id=123456, epoch=1)
    assert (resp.error_code, resp.session_id, resp.responses) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])


def test_epoch_minus_1_closes_the_session_and_fetches_sessionless(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    mockbroker.create_topic("close", 2)
    produce(client, "close", make_batch(b"a"), partition=0)
    session = Session(client, mockbroker, "close")
    session.open({0: 0, 1: 0})
    old_id = session.session_id
    resp = session.request({0: 0}, epoch=-1)
    assert (resp.error_code, resp.session_id) == (ErrorCode.NONE, 0)
    assert list(_partitions(resp)) == [0]  # a full fetch of what the request names
    assert values_of(_partitions(resp)[0].records) == [b"a"]
    assert session.request({}, session_id=old_id, epoch=1).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_epoch_0_with_a_session_id_replaces_that_session(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("reopen")
    session = Session(client, mockbroker, "reopen")
    session.open({0: 0})
    old_id = session.session_id
    resp = session.request({0: 0}, epoch=0)
    assert resp.error_code == ErrorCode.NONE
    assert resp.session_id not in (0, old_id)
    assert session.request({}, session_id=old_id, epoch=1).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_sessions_are_per_topic_id_use(mockbroker: MockBroker, client: RawClient) -> None:
    # A session opened with topic ids (v13+) cannot be continued without them, and the other way round.
    mockbroker.create_topic("ids")
    with_ids = Session(client, mockbroker, "ids", 13)
    with_ids.open({0: 0})
    resp = client.request(FETCH, 12, fetch_body([], session_id=with_ids.session_id, session_epoch=1))
    assert (resp.error_code, resp.session_id) == (ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, 0)
    names = Session(client, mockbroker, "ids", 12)
    names.open({0: 0})
    resp = client.request(FETCH, 13, fetch_body([], session_id=names.session_id, session_epoch=1))
    assert resp.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def test_sessionless_fetch_answers_session_id_0(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("sessionless")
    resp = client.request(FETCH, 12, fetch_body([fetch_topic("sessionless", fetch_partition(0, 0))]))
    assert (resp.error_code, resp.session_id) == (ErrorCode.NONE, 0)


# -- eviction (Kafka's FetchSessionCache.tryEvict, on the broker clock) ------------------------------


@pytest.mark.mockbroker(config={"max.incremental.fetch.session.cache.slots": 2}, clock=Clock(frozen=True))
def test_abandoned_sessions_are_evicted_once_idle_for_two_minutes(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    mockbroker.create_topic("s", 2)
    abandoned = [Session(client, mockbroker, "s") for _ in range(2)]
    for s in abandoned:
        assert s.open({0: 0}).session_id > 0
    late = Session(client, mockbroker, "s")
    assert late.request({0: 0}, epoch=0).session_id == 0  # full, nothing idle long enough
    mockbroker.clock.advance(120.001)
    assert late.open({0: 0}).session_id > 0  # the least recently used one made room
    gone = abandoned[0].request({}, epoch=1)
    assert gone.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert abandoned[1].next().error_code == ErrorCode.NONE  # still there


@pytest.mark.mockbroker(config={"max.incremental.fetch.session.cache.slots": 1}, clock=Clock(frozen=True))
def test_a_bigger_session_evicts_a_used_but_old_smaller_one(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("s", 3)
    small = Session(client, mockbroker, "s")
    small.open({0: 0})
    mockbroker.clock.advance(100)
    small.next()
    mockbroker.clock.advance(21)  # created 121 s ago, used 21 s ago: not stale
    small.next()  # used now, older than 2 minutes: evictable by a bigger session
    same_size = Session(client, mockbroker, "s")
    assert same_size.request({0: 0}, epoch=0).session_id == 0
    bigger = Session(client, mockbroker, "s")
    assert bigger.open({0: 0, 1: 0}).session_id > 0
    assert small.request({}, epoch=small.epoch).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


@pytest.mark.mockbroker(config={"max.incremental.fetch.session.cache.slots": 1}, clock=Clock(frozen=True))
def test_a_young_session_is_not_evicted_by_a_bigger_one(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("s", 3)
    small = Session(client, mockbroker, "s")
    small.open({0: 0})
    mockbroker.clock.advance(60)
    small.next()
    bigger = Session(client, mockbroker, "s")
    assert bigger.request({0: 0, 1: 0, 2: 0}, epoch=0).session_id == 0
    assert small.next().error_code == ErrorCode.NONE
