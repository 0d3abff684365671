"""Fault injection and request hooks on the share-group APIs, with a real share consumer (confluent-kafka's
ShareConsumer, librdkafka 2.16): `broker.inject` on ShareGroupHeartbeat, ShareFetch and ShareAcknowledge
reaches it and it behaves as with Kafka: retriable heartbeat errors and a lost connection are retried,
NOT_COORDINATOR sends it to FindCoordinator before the next heartbeat, a lost share session is opened again
(epoch 0), a partition's NOT_LEADER_OR_FOLLOWER makes it refresh metadata, an answer lost after the records
were acquired makes them come back with the delivery count up, and a failed ShareAcknowledge is reported by
commit_sync per partition and the records are delivered again. `broker.intercept` hooks see and answer the
same requests. Every record ends acknowledged exactly once (the share partitions' start offsets at the end)."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import AcknowledgeType, Message

from mockbroker import intercept
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.interop.test_share_groups import (
    EARLIEST,
    TOPIC,
    Delivery,
    close_all,
    poll_all,
    produce,
    settled,
    share_consumer,
    wait_for,
)

pytestmark = pytest.mark.interop
RECORDS, PARTITIONS = 6, 2
ENDS = {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
HEARTBEAT, FETCH, ACK, FIND_COORDINATOR, METADATA = (ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_FETCH,
                                                      ApiKey.SHARE_ACKNOWLEDGE, ApiKey.FIND_COORDINATOR,
                                                      ApiKey.METADATA)


def broker_with_records(factory: Callable[..., MockBroker]) -> MockBroker:
    broker = factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, PARTITIONS)
    produce(broker, RECORDS, PARTITIONS)
    broker.requests.clear()
    return broker


def consume_all(broker: MockBroker, group: str, explicit: bool = False,
                ack: Callable[[Message], AcknowledgeType] | None = None) -> list[Delivery]:
    """One member consumes until every record is acknowledged; what it was given."""
    members = {"m": share_consumer(broker, group, explicit=explicit)}
    deliveries: list[Delivery] = []
    try:
        wait_for(lambda: settled(broker, group, ENDS), lambda: poll_all(members, deliveries, ack))
    finally:
        close_all(members)
    return deliveries


def each_record_once(deliveries: list[Delivery]) -> bool:
    return sorted((p, o) for _, p, o, _ in deliveries) == sorted((i % PARTITIONS, i // PARTITIONS) for i in range(RECORDS))


def api_keys(broker: MockBroker) -> list[int]:
    return [r.api_key for r in broker.requests]


def faults_left(broker: MockBroker) -> list[Any]:
    return [r for r in broker.faults.rules if r.action != "hook"]


@pytest.mark.parametrize("fault", [{"error": ErrorCode.COORDINATOR_NOT_AVAILABLE, "count": 3},
                                   {"error": ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "count": 2},
                                   {"drop": "before", "count": 1}], ids=["not-available", "loading", "drop"])
def test_heartbeat_retriable_errors_and_a_lost_connection_are_retried(
        mockbroker_factory: Callable[..., MockBroker], fault: dict[str, Any]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(HEARTBEAT, **fault)
    deliveries = consume_all(broker, "sg-hb")
    assert faults_left(broker) == []  # every injected fault reached the consumer
    assert api_keys(broker).count(HEARTBEAT) > fault["count"]
    assert each_record_once(deliveries) and {n for *_, n in deliveries} == {1}


def test_heartbeat_not_coordinator_sends_the_consumer_to_find_coordinator_first(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(HEARTBEAT, error=ErrorCode.NOT_COORDINATOR)
    deliveries = consume_all(broker, "sg-nc")
    assert faults_left(broker) == []
    keys = api_keys(broker)
    first, second = [i for i, k in enumerate(keys) if k == HEARTBEAT][:2]
    assert FIND_COORDINATOR in keys[first + 1:second]  # rediscovered before heartbeating again
    assert each_record_once(deliveries)


def test_share_fetch_lost_session_is_opened_again_at_epoch_zero(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(FETCH, error=ErrorCode.SHARE_SESSION_NOT_FOUND)
    epochs: list[int] = []
    broker.intercept(FETCH, lambda req, ctx: epochs.append(req.share_session_epoch))  # after the fault: sees the rest
    deliveries = consume_all(broker, "sg-session")
    assert faults_left(broker) == []
    assert epochs[0] == 0 and len(epochs) >= 2
    assert each_record_once(deliveries) and {n for *_, n in deliveries} == {1}


def test_share_fetch_not_leader_on_one_partition_refreshes_metadata(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=TOPIC, partition=1)
    elsewhere = broker.inject(FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="another-topic")
    deliveries = consume_all(broker, "sg-leader")
    assert broker.faults.rules == [elsewhere]  # the other topic's rule never matched a share fetch
    keys = api_keys(broker)
    faulted = keys.index(FETCH)  # the first share fetch named partition 1 and got the fault
    assert METADATA in keys[faulted + 1:]
    assert each_record_once(deliveries)


def test_share_fetch_answer_lost_after_acquiring_redelivers_with_the_count_up(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(FETCH, drop="after")
    deliveries = consume_all(broker, "sg-drop")
    assert faults_left(broker) == []
    assert each_record_once(deliveries)  # the lost answer's records came back, and went to the app once
    assert 2 in {n for *_, n in deliveries}


def test_share_acknowledge_error_is_reported_by_commit_sync_and_the_records_come_back(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    broker.inject(ACK, error=ErrorCode.INVALID_RECORD_STATE)
    consumer = share_consumer(broker, "sg-ack", explicit=True)
    deliveries: list[Delivery] = []
    commits: list[dict[Any, Any]] = []
    try:
        def step() -> None:
            msgs = consumer.poll(0.2) or []
            for m in msgs:
                assert m.error() is None, m.error()
                deliveries.append(("m", m.partition(), m.offset(), m.delivery_count()))
                consumer.acknowledge(m, AcknowledgeType.ACCEPT)
            if msgs:
                commits.append(consumer.commit_sync())
        wait_for(lambda: settled(broker, "sg-ack", ENDS), step)
    finally:
        consumer.close()
    assert faults_left(broker) == []
    failed = [(tp.partition, tp.error.code()) for tp in commits[0] if tp.error is not None]
    assert failed and {code for _, code in failed} == {ErrorCode.INVALID_RECORD_STATE}
    counts = collections.Counter((p, o) for _, p, o, _ in deliveries)
    redelivered = {(p, o) for _, p, o, n in deliveries if n == 2}
    assert {p for p, _ in redelivered} == {p for p, _ in failed}  # the failed partitions' records came again
    assert set(counts) == {(i % PARTITIONS, i // PARTITIONS) for i in range(RECORDS)}


def test_intercept_hooks_answer_share_heartbeats_and_acknowledgements(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = broker_with_records(mockbroker_factory)
    seen: list[tuple[str, int]] = []

    def heartbeat_hook(req: Any, ctx: intercept.InterceptContext) -> Any:
        seen.append((req.member_id, req.member_epoch))
        if len(seen) == 1:
            return intercept.error(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)  # the first one: try again
        return ctx.call_broker()

    acks: list[int] = []

    def ack_hook(req: Any, ctx: intercept.InterceptContext) -> Any:
        acks.append(sum(len(p.acknowledgement_batches) for t in req.topics for p in t.partitions))
        return intercept.passthrough

    hb = broker.intercept(HEARTBEAT, heartbeat_hook)
    ack = broker.intercept(ACK, ack_hook)
    try:
        deliveries = consume_all(broker, "sg-hooks", explicit=True, ack=lambda m: AcknowledgeType.ACCEPT)
    finally:
        hb.remove()
        ack.remove()
    assert len(seen) >= 2 and seen[0][1] == 0 and seen[1][1] == 0  # joined again after the refused first try
    assert sum(acks) >= 1  # commit_sync's acknowledgements went through the hook and were applied
    assert each_record_once(deliveries)
