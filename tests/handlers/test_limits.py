"""Raw-protocol tests of the broker's limits: partitions per request (CreateTopics, CreatePartitions, HTTP,
Python API) and names validated whole (a trailing newline is not a legal character)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.errors import KafkaError
from mockbroker.faults import MAX_RECORDED_CLIENT_ID, RequestRecord
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import EXCESSIVE_PARTITIONS_MESSAGE, MAX_PARTITIONS_PER_REQUEST
from tests.handlers.conftest import PRODUCE, make_batch
from tests.rawclient import RawClient

METADATA, API_VERSIONS, CREATE_TOPICS, CREATE_PARTITIONS = 3, 18, 19, 37
INT32_MAX = 2**31 - 1


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def creatable(name: str, partitions: int, assignments: int = 0) -> dict[str, Any]:
    return {"name": name, "num_partitions": -1 if assignments else partitions, "replication_factor": -1,
            "assignments": [{"partition_index": i, "broker_ids": [1]} for i in range(assignments)],
            "configs": []}


def create(client: RawClient, *topics: dict[str, Any], validate_only: bool = False) -> list[Any]:
    resp = client.request(CREATE_TOPICS, 7, {"topics": list(topics), "timeout_ms": 5000,
                                             "validate_only": validate_only})
    return list(resp.topics)


def grow(client: RawClient, *counts: tuple[str, int]) -> list[Any]:
    body = {"topics": [{"name": n, "count": c, "assignments": None} for n, c in counts],
            "timeout_ms": 1000, "validate_only": False}
    return list(client.request(CREATE_PARTITIONS, 3, body).results)


# -- partitions per request ------------------------------------------------------------------------


@pytest.mark.parametrize("count", [MAX_PARTITIONS_PER_REQUEST + 1, 16_776_705, INT32_MAX])
def test_create_topic_with_too_many_partitions_is_policy_violation(client: RawClient, mockbroker: MockBroker,
                                                                   count: int) -> None:
    [r] = create(client, creatable("huge", count))
    assert (r.error_code, r.error_message) == (ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE)
    assert mockbroker.topics() == []
    # The broker still serves: a normal topic is created on the same connection.
    [ok] = create(client, creatable("normal", 3))
    assert (ok.error_code, ok.num_partitions) == (ErrorCode.NONE, 3)


def test_create_topics_bound_counts_the_whole_request(client: RawClient, mockbroker: MockBroker) -> None:
    """5,000 + 5,000 + 1 partitions over three topics: every topic of the request is refused, as Kafka's
    controller checks the request's total before anything else (even an invalid name gets the violation)."""
    results = create(client, creatable("a", 5000), creatable("b", 5000), creatable("c", 1),
                     creatable("bad name", 1))
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        (n, ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE) for n in ("a", "b", "c", "bad name")]
    assert mockbroker.topics() == []


def test_create_topics_at_the_bound_succeeds(client: RawClient, mockbroker: MockBroker) -> None:
    results = create(client, creatable("a", 5000), creatable("b", 5000), validate_only=True)
    assert [r.error_code for r in results] == [ErrorCode.NONE, ErrorCode.NONE]


@pytest.mark.mockbroker(partitions=6000)
def test_create_topics_bound_counts_default_partitions_and_assignments(client: RawClient) -> None:
    results = create(client, creatable("defaulted", -1), creatable("assigned", -1, assignments=4001))
    assert {r.error_code for r in results} == {ErrorCode.POLICY_VIOLATION}
    results = create(client, creatable("defaulted", -1), creatable("assigned", -1, assignments=3),
                     validate_only=True)
    assert {r.error_code for r in results} == {ErrorCode.NONE}


def test_create_partitions_beyond_the_bound_is_policy_violation(client: RawClient, mockbroker: MockBroker) -> None:
    create(client, creatable("t", 1), creatable("u", 1))
    [r] = grow(client, ("t", INT32_MAX))
    assert (r.error_code, r.error_message) == (ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE)
    # Counted over the request: the second topic crosses the bound and fails alone.
    r1, r2 = grow(client, ("t", 6001), ("u", 4002))
    assert (r1.name, r1.error_code) == ("t", ErrorCode.NONE)
    assert (r2.name, r2.error_code, r2.error_message) == ("u", ErrorCode.POLICY_VIOLATION,
                                                           EXCESSIVE_PARTITIONS_MESSAGE)
    assert [len(mockbroker.cluster.topics[n].partitions) for n in ("t", "u")] == [6001, 1]


def test_python_api_refuses_too_many_partitions(mockbroker: MockBroker) -> None:
    with pytest.raises(KafkaError) as info:
        mockbroker.create_topic("huge", INT32_MAX)
    assert info.value.code == ErrorCode.POLICY_VIOLATION
    with pytest.raises(KafkaError):
        mockbroker._call(mockbroker.cluster.create_partitions, "missing", INT32_MAX)
    assert mockbroker.topics() == []


# -- names are matched whole -----------------------------------------------------------------------


def test_create_topic_with_trailing_newline_is_invalid_topic_exception(client: RawClient,
                                                                       mockbroker: MockBroker) -> None:
    [r] = create(client, creatable("topic\n", 1))
    assert r.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert mockbroker.topics() == []


def test_metadata_does_not_auto_create_a_name_with_trailing_newline(client: RawClient,
                                                                    mockbroker: MockBroker) -> None:
    resp = client.request(METADATA, 12, {"topics": [{"topic_id": None, "name": "topic\n"}],
                                         "allow_auto_topic_creation": True,
                                         "include_topic_authorized_operations": False})
    [t] = resp.topics
    assert t.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert mockbroker.topics() == []


@pytest.mark.parametrize(("name", "version"), [("probe\n", "1.0"), ("probe", "1.0\n")])
def test_api_versions_software_name_with_trailing_newline_is_invalid_request(client: RawClient, name: str,
                                                                             version: str) -> None:
    resp = client.request(API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
    assert resp.error_code == ErrorCode.INVALID_REQUEST


# -- the request record --------------------------------------------------------------------------


def test_request_record_keeps_bounded_client_ids(mockbroker: MockBroker) -> None:
    """2,000 requests, each with a different 32,000-character client id: the record keeps every request
    but not the ids in full (before the bound it held ~64 MB of client ids)."""
    import tracemalloc

    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        with RawClient(mockbroker.host, mockbroker.port) as c:
            for burst in range(20):
                for i in range(100):
                    c.client_id = f"{burst:02d}{i:03d}" + "x" * 31_995
                    c.send(API_VERSIONS, 0, {})
                for _ in range(100):
                    c.recv_frame()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    got = mockbroker.received(API_VERSIONS)
    assert len(got) == 2000
    assert len({r.client_id for r in got}) == 2000
    assert max(len(r.client_id or "") for r in got) == MAX_RECORDED_CLIENT_ID
    assert after - before < 8 * 1024 * 1024, f"grew {after - before} bytes"


def test_request_record_drops_the_oldest_past_its_bound() -> None:
    record = RequestRecord(max_entries=3)
    for n in range(5):
        record.add(18, 0, "same-client", n, 0, 1)
    assert [r.correlation_id for r in record] == [2, 3, 4]
    # Equal client ids share one string.
    assert len({id(r.client_id) for r in record}) == 1


# -- a partition named twice in one Produce ---------------------------------------------------------


@pytest.mark.parametrize("split", [False, True])
def test_produce_naming_a_partition_twice_appends_the_last_copy_once(client: RawClient, mockbroker: MockBroker,
                                                                     split: bool) -> None:
    """As Kafka's KafkaApis (a map keyed by topic-partition): one append, of the last copy, one answer."""
    mockbroker.create_topic("t", 2)
    first, last, other = (bytes(make_batch(v)) for v in (b"first", b"last", b"other"))
    copies = [{"index": 0, "records": first}, {"index": 1, "records": other}, {"index": 0, "records": last}]
    topic_data = ([{"name": "t", "partition_data": copies[:2]}, {"name": "t", "partition_data": copies[2:]}]
                  if split else [{"name": "t", "partition_data": copies}])
    resp = client.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                       "topic_data": topic_data})
    [t] = resp.responses
    assert sorted((p.index, p.error_code, p.base_offset) for p in t.partition_responses) == [(0, 0, 0), (1, 0, 0)]
    assert [r.value for r in mockbroker.records("t", 0)] == [b"last"]
    assert [r.value for r in mockbroker.records("t", 1)] == [b"other"]


# -- mockbroker.max.log.bytes ------------------------------------------------------------------------


def produce_one(client: RawClient, topic: str, value: bytes, partition: int = 0) -> Any:
    resp = client.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": bytes(make_batch(value))}]}]})
    return resp.responses[0].partition_responses[0]


@pytest.mark.mockbroker(config={"mockbroker.max.log.bytes": 20_000})
def test_past_the_log_bytes_bound_the_oldest_segments_go_first(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("old", 1, {"segment.bytes": "2000"})
    mockbroker.create_topic("new", 1, {"segment.bytes": "2000"})
    for _ in range(60):  # ~28 KB
        assert produce_one(client, "old", b"o" * 400).error_code == ErrorCode.NONE
    assert mockbroker.cluster.log_bytes_held() <= 20_000
    old_log = mockbroker.cluster.topics["old"].partitions[0].log
    assert old_log.log_start_offset > 0  # its oldest segments made room
    start_before = old_log.log_start_offset
    for _ in range(10):
        assert produce_one(client, "new", b"n" * 400).error_code == ErrorCode.NONE
    new_log = mockbroker.cluster.topics["new"].partitions[0].log
    # The newer topic's records stay: the older topic's segments went instead.
    assert new_log.log_start_offset == 0 and old_log.log_start_offset > start_before
    assert mockbroker.cluster.log_bytes_held() <= 20_000


@pytest.mark.mockbroker(config={"mockbroker.max.log.bytes": 5_000})
def test_when_retention_cannot_make_room_produce_gets_kafka_storage_error(client: RawClient,
                                                                          mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kv", 1, {"cleanup.policy": "compact"})
    codes = [produce_one(client, "kv", b"v" * 400).error_code for _ in range(20)]
    assert ErrorCode.NONE in codes and codes[-1] == ErrorCode.KAFKA_STORAGE_ERROR
    held = mockbroker.cluster.log_bytes_held()
    assert held <= 5_000
    mockbroker.create_topic("plain")
    # A batch bigger than the whole bound never fits, whatever retention does.
    assert produce_one(client, "plain", b"x" * 6_000).error_code == ErrorCode.KAFKA_STORAGE_ERROR
    mockbroker.delete_topic("kv")
    assert produce_one(client, "plain", b"y" * 400).error_code == ErrorCode.NONE


def test_no_log_bytes_bound_by_default(client: RawClient, mockbroker: MockBroker) -> None:
    assert int(mockbroker.cluster.config.get("mockbroker.max.log.bytes")) == -1
    mockbroker.create_topic("t")
    assert produce_one(client, "t", b"z" * 100_000).error_code == ErrorCode.NONE


def test_the_request_record_says_what_came_since_a_count_even_when_full() -> None:
    """The console's live request log asks for what arrived since it last looked: once the record is full
    and drops its oldest entries, the count still tells new entries apart."""
    from mockbroker.faults import RequestRecord

    record = RequestRecord(max_entries=3)
    for i in range(5):
        record.add(0, 9, "c", i, i, 1, "User:ANONYMOUS", "PLAINTEXT")
    seen = record.total
    assert (len(record), seen) == (3, 5)
    record.add(0, 9, "c", 5, 5, 1, "User:ANONYMOUS", "PLAINTEXT")
    record.add(0, 9, "c", 6, 6, 1, "User:ANONYMOUS", "PLAINTEXT")
    assert [r.correlation_id for r in record.since(seen, 100)] == [5, 6]
    assert [r.correlation_id for r in record.since(seen, 1)] == [6]
    assert [r.correlation_id for r in record.since(0, 100)] == [4, 5, 6]  # only what is still kept
    assert record.since(record.total, 100) == []
