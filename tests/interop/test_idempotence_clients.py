"""Idempotent producers of real clients retry through dropped connections: every record lands exactly once.

The broker applies a Produce request and then closes the connection without answering (fault
injection drop="after"); the client retries the same batch with the same producer id, epoch and
sequence, and the broker answers the retry with the offset first assigned to it (Kafka's duplicate
detection over the producer's last five batches).
"""

from __future__ import annotations

import asyncio

import pytest

from mockbroker import MockBroker
from mockbroker.testing.delivery import Acked, Acks, Read, check_delivery

pytestmark = pytest.mark.interop

N = 60


def assert_exactly_once_in_order(broker: MockBroker, topic: str, acked: list[Acked]) -> None:
    """Each of the N records sent was acknowledged, is in the log once at its acknowledged offset, in send
    order, and the log holds nothing else."""
    assert broker.faults.rules == [], "the injected drops were not all used"
    assert [a.value for a in acked] == [b"m%03d" % i for i in range(N)]
    log = [Read.of(r) for r in broker.records(topic)]
    check_delivery(acked, log, only_acked=True, distinct_values=True).assert_ok()
    batches = broker.batches(topic)
    pids = {b.producer_id for b in batches}
    assert len(pids) == 1 and -1 not in pids
    # Sequences continue without gaps across the retried batches.
    seqs = [(b.base_sequence, b.last_sequence) for b in batches]
    for (_, last), (first, _) in zip(seqs, seqs[1:], strict=False):
        assert first == last + 1


def test_confluent_idempotent_producer_retries_after_dropped_responses(mockbroker: MockBroker) -> None:
    from confluent_kafka import Producer

    mockbroker.create_topic("idem-ck")
    mockbroker.inject(0, drop="after", count=3, topic="idem-ck")
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True,
                  "linger.ms": 5, "retry.backoff.ms": 20, "reconnect.backoff.ms": 20})
    acks = Acks()
    for i in range(N):
        p.produce("idem-ck", b"m%03d" % i, on_delivery=acks)
        if i % 10 == 9:
            p.flush(30)
    assert p.flush(30) == 0
    assert acks.failed == []
    assert_exactly_once_in_order(mockbroker, "idem-ck", acks.acked)
    assert len(mockbroker.received(0)) > len(mockbroker.batches("idem-ck"))  # there were retries


def test_aiokafka_idempotent_producer_retries_after_dropped_responses(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaProducer

    mockbroker.create_topic("idem-aio")

    acked: list[Acked] = []

    async def run() -> None:
        p = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, enable_idempotence=True,
                             retry_backoff_ms=20, request_timeout_ms=5000)
        await p.start()
        try:
            for i in range(N):
                if i == 1:
                    mockbroker.inject(0, drop="after", count=3, topic="idem-aio")
                value = b"m%03d" % i
                acked.append(Acked.from_metadata(await p.send_and_wait("idem-aio", value), None, value))
        finally:
            await p.stop()

    asyncio.run(run())
    assert_exactly_once_in_order(mockbroker, "idem-aio", acked)


def test_kafka_python_idempotent_producer_retries_after_dropped_responses(mockbroker: MockBroker) -> None:
    from kafka import KafkaProducer

    mockbroker.create_topic("idem-kp")
    p = KafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers, enable_idempotence=True,
                      retry_backoff_ms=20, request_timeout_ms=5000)
    acked = [Acked.from_metadata(p.send("idem-kp", b"m%03d" % 0).get(10), None, b"m%03d" % 0)]
    mockbroker.inject(0, drop="after", count=3, topic="idem-kp")
    for i in range(1, N):
        acked.append(Acked.from_metadata(p.send("idem-kp", b"m%03d" % i).get(30), None, b"m%03d" % i))
    p.close()
    assert_exactly_once_in_order(mockbroker, "idem-kp", acked)
