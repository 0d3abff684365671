"""Raw-protocol tests of producer state beyond single requests: pipelined in-flight batches, state derived
from the log (rebuilt when the log start offset moves), expiry on the broker clock, DescribeProducers (61),
and fault injection (the tool a test uses to prove retries are de-duplicated)."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import PRODUCE, connect, idempotent_batch, produce, produce_body
from tests.rawclient import RawClient

PID = 8100
DESCRIBE_PRODUCERS = 61
DELETE_RECORDS = 21


def _values(n: int, tag: str) -> list[bytes]:
    return [f"{tag}{i}".encode() for i in range(n)]


def _pipeline(client: RawClient, topic: str, batches: list[bytearray]) -> list[tuple[int, int]]:
    """Send the batches as pipelined Produce requests on one connection; (error, base offset) of each."""
    sent = [client.send(PRODUCE, 9, produce_body(topic, b)) for b in batches]
    out = []
    for cid in sent:
        got, resp = client.recv(PRODUCE, 9)
        assert got == cid  # answered in request order
        p = resp.responses[0].partition_responses[0]
        out.append((p.error_code, p.base_offset))
    return out


def test_five_in_flight_batches_pipelined_on_one_connection_are_checked_in_order(mockbroker: MockBroker,
                                                                                   client: RawClient) -> None:
    mockbroker.create_topic("inflight")
    batches = [idempotent_batch(PID, 0, 5 * i, *_values(5, f"b{i}-")) for i in range(5)]
    assert _pipeline(client, "inflight", batches) == [(0, 0), (0, 5), (0, 10), (0, 15), (0, 20)]
    assert [(b.base_sequence, b.last_sequence) for b in mockbroker.batches("inflight")] == [
        (0, 4), (5, 9), (10, 14), (15, 19), (20, 24)]


def test_in_flight_batches_after_a_gap_are_refused_and_never_appended(mockbroker: MockBroker,
                                                                      client: RawClient) -> None:
    mockbroker.create_topic("inflight-gap")
    batches = [idempotent_batch(PID, 0, seq, *_values(5, f"s{seq}-")) for seq in (0, 10, 15, 20)]
    codes = [code for code, _ in _pipeline(client, "inflight-gap", batches)]
    assert codes == [ErrorCode.NONE] + [ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER] * 3
    assert mockbroker.offsets("inflight-gap")["high_watermark"] == 5
    # The retry of the missing batch, then the rest, go through in order, exactly once.
    retry = [idempotent_batch(PID, 0, seq, *_values(5, f"s{seq}-")) for seq in (5, 10, 15, 20)]
    assert [code for code, _ in _pipeline(client, "inflight-gap", retry)] == [ErrorCode.NONE] * 4
    assert [r.value for r in mockbroker.records("inflight-gap")] == [
        v for seq in (0, 5, 10, 15, 20) for v in _values(5, f"s{seq}-")]


def _delete_records(client: RawClient, topic: str, offset: int) -> None:
    resp = client.request(DELETE_RECORDS, 2, {"topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "offset": offset}]}], "timeout_ms": 5000})
    assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE


def test_producer_whose_records_were_all_deleted_is_forgotten_and_may_restart_at_any_sequence(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("deleted")
    assert produce(client, "deleted", idempotent_batch(PID, 0, 0, b"a", b"b")).error_code == 0
    assert produce(client, "deleted", idempotent_batch(PID + 1, 0, 0, b"other")).error_code == 0
    _delete_records(client, "deleted", 2)  # PID's batch is gone, PID+1's remains
    assert [p["producer_id"] for p in mockbroker.producers("deleted")] == [PID + 1]
    # KIP-360: the partition has no state for PID, so any sequence is accepted.
    assert produce(client, "deleted", idempotent_batch(PID, 0, 500, b"c")).error_code == 0
    # PID+1 kept its state (rebuilt from its remaining batch): a gap is still refused.
    assert produce(client, "deleted", idempotent_batch(PID + 1, 0, 7, b"x")).error_code == \
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_producer_state_expires_after_producer_id_expiration_ms_on_the_broker_clock(mockbroker: MockBroker,
                                                                                  client: RawClient) -> None:
    mockbroker.create_topic("expiry")
    assert produce(client, "expiry", idempotent_batch(PID, 0, 0, b"a")).error_code == 0
    assert produce(client, "expiry", idempotent_batch(PID, 0, 5, b"gap")).error_code == \
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    mockbroker.clock.advance(86400 + 600)  # producer.id.expiration.ms (1 day) + the check interval
    assert mockbroker.producers("expiry") == []
    # A new connection: the first one was idle for connections.max.idle.ms (10 minutes) and is closed.
    with RawClient(mockbroker.host, mockbroker.port) as again:
        assert produce(again, "expiry", idempotent_batch(PID, 0, 5, b"after")).error_code == ErrorCode.NONE


def test_describe_producers_reports_each_active_producer(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("described", 2)
    produce(client, "described", idempotent_batch(PID, 3, 0, b"a", b"b", b"c"), partition=1)
    resp = client.request(DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": "described", "partition_indexes": [0, 1, 7]}, {"name": "nope", "partition_indexes": [0]}]})
    described, nope = resp.topics
    p0, p1, p7 = described.partitions
    assert (p0.error_code, p0.active_producers) == (ErrorCode.NONE, [])
    [prod] = p1.active_producers
    assert (prod.producer_id, prod.producer_epoch, prod.last_sequence, prod.current_txn_start_offset) == (
        PID, 3, 2, -1)
    assert prod.last_timestamp == mockbroker.batches("described", 1)[0].max_timestamp
    assert p7.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert nope.partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_injected_error_is_answered_on_every_partition_and_nothing_is_appended(mockbroker: MockBroker,
                                                                               client: RawClient) -> None:
    mockbroker.create_topic("fault-err")
    mockbroker.inject(PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, count=2, topic="fault-err")
    for _ in range(2):
        assert produce(client, "fault-err", idempotent_batch(PID, 0, 0, b"a")).error_code == \
            ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert mockbroker.records("fault-err") == []
    assert produce(client, "fault-err", idempotent_batch(PID, 0, 0, b"a")).error_code == ErrorCode.NONE


def test_injected_drop_before_closes_the_connection_without_applying(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("fault-before")
    mockbroker.inject(PRODUCE, drop="before")
    with connect(mockbroker) as c:
        c.send(PRODUCE, 9, produce_body("fault-before", idempotent_batch(PID, 0, 0, b"a")))
        assert c.is_closed_by_peer()
    assert mockbroker.records("fault-before") == []


def test_injected_drop_after_applies_then_closes_and_the_retry_is_deduplicated(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("fault-after")
    mockbroker.inject(PRODUCE, drop="after")
    batch = idempotent_batch(PID, 0, 0, b"once")
    with connect(mockbroker) as c:
        c.send(PRODUCE, 9, produce_body("fault-after", batch))
        assert c.is_closed_by_peer()
    assert [r.value for r in mockbroker.records("fault-after")] == [b"once"]
    with connect(mockbroker) as c:  # the client's retry of the same batch
        p = produce(c, "fault-after", idempotent_batch(PID, 0, 0, b"once"))
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 0)
    assert [r.value for r in mockbroker.records("fault-after")] == [b"once"]


def test_injected_delay_applies_the_request_and_answers_later(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("fault-delay")
    mockbroker.inject(PRODUCE, delay=0.2)
    assert produce(client, "fault-delay", idempotent_batch(PID, 0, 0, b"late")).error_code == ErrorCode.NONE
    assert [r.value for r in mockbroker.records("fault-delay")] == [b"late"]
    assert mockbroker.faults.rules == []


def test_fault_on_another_topic_leaves_this_one_alone_and_requests_are_recorded(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("fault-a")
    mockbroker.create_topic("fault-b")
    mockbroker.inject(PRODUCE, error=ErrorCode.KAFKA_STORAGE_ERROR, topic="fault-b")
    with RawClient(mockbroker.host, mockbroker.port, client_id="recorded-client") as c:
        assert produce(c, "fault-a", idempotent_batch(PID, 0, 0, b"a")).error_code == ErrorCode.NONE
        assert produce(c, "fault-b", idempotent_batch(PID, 0, 0, b"b")).error_code == \
            ErrorCode.KAFKA_STORAGE_ERROR
    seen = [r for r in mockbroker.received(PRODUCE) if r.client_id == "recorded-client"]
    assert [(r.api_key, r.api_version) for r in seen] == [(PRODUCE, 9), (PRODUCE, 9)]
    assert all(r.time_ms > 0 for r in seen)


def test_injecting_an_error_into_an_api_whose_responses_cannot_carry_it_is_refused(mockbroker: MockBroker) -> None:
    with pytest.raises(ValueError, match="CreateTopics"):
        mockbroker.inject(19, error=ErrorCode.NOT_CONTROLLER)  # per-topic errors only, no builder
    mockbroker.inject(19, drop="before")  # dropping or delaying it is fine
