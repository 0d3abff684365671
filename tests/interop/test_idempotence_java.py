"""The Java producer (kafka-clients 4.3.0) with its default idempotence, through faults the broker injects.

- Responses dropped after the append: the client retries the same batches (same producer id, epoch and
  sequences) and the broker answers the duplicates with their first offsets, so every record is in the
  log exactly once and in order.
- OUT_OF_ORDER_SEQUENCE_NUMBER on the first batch of a partition: for an idempotent (not
  transactional) producer the Java client treats it as retriable (TransactionManager.canRetry): the
  batch is the next one expected, so the client bumps its epoch on its own side (KIP-360; no
  InitProducerId for idempotent producers), rewrites the sequences from 0 under the new epoch, and
  resends. Nothing is failed to the application.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.errors import ErrorCode
from mockbroker.testing.delivery import Acked, Read, check_delivery
from tests.interop.clients import of_type, run_java

pytestmark = [pytest.mark.interop, pytest.mark.java]

PRODUCE = 0


def produce(broker: MockBroker, topic: str, records: list[dict[str, Any]], **args: Any) -> list[dict[str, Any]]:
    """One Java producer run with the client's defaults (idempotence on, acks=all); all its output lines."""
    lines = run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": topic, "records": records,
                                 "timeout_ms": 20_000, **args}, timeout=60)
    assert len(of_type(lines, "done")) == 1, lines
    return lines


def test_java_idempotent_producer_retries_dropped_responses_exactly_once_in_order(mockbroker: MockBroker) -> None:
    n = 60
    mockbroker.create_topic("java-idem-drop", 1)
    # No topic= filter: it does not match Produce v13 (see test_fault_topic_filter_matches_java_produce_v13).
    mockbroker.inject(PRODUCE, drop="after", count=3)
    # Small batches, several in flight (max.in.flight.requests.per.connection stays at its default 5).
    lines = produce(mockbroker, "java-idem-drop", [{"value": f"m{i:03d}"} for i in range(n)],
                    config={"batch.size": 128, "linger.ms": 2, "retry.backoff.ms": 20, "reconnect.backoff.ms": 20})

    assert of_type(lines, "send_error") == [], lines
    sent = sorted(of_type(lines, "sent"), key=lambda s: s["index"])
    assert [s["offset"] for s in sent] == list(range(n))  # what the client was told: each record's own offset
    assert mockbroker.faults.rules == [], "the three drops were not all used"

    # Every acknowledged record in the log once, at its offset, in send order, and nothing else there.
    acked = [Acked.from_java(s, value=b"m%03d" % s["index"]) for s in sent]
    log = [Read.of(r) for r in mockbroker.records("java-idem-drop")]
    check_delivery(acked, log, only_acked=True, distinct_values=True).assert_ok()
    batches = mockbroker.batches("java-idem-drop")
    assert len({(b.producer_id, b.producer_epoch) for b in batches}) == 1 and batches[0].producer_id >= 0
    assert [b.base_sequence for b in batches] == [b.base_offset for b in batches]  # sequences without gaps
    assert len(mockbroker.received(PRODUCE)) > len(batches)  # there were retries


def test_java_idempotent_producer_bumps_its_epoch_after_out_of_order_sequence(mockbroker: MockBroker) -> None:
    """Records 0-4 to partition 0, 5-9 to partition 1 (whose first Produce gets OUT_OF_ORDER_SEQUENCE_NUMBER),
    10-14 to partition 0 again; one record per request (sync sends)."""
    mockbroker.create_topic("java-idem-oos", 2)
    # The sixth Produce request (record 5, the first for partition 1) gets the error: five pass-through
    # rules first (a delay of 0 answers normally), since a topic= filter does not match Produce v13.
    mockbroker.inject(PRODUCE, delay=0, count=5)
    mockbroker.inject(PRODUCE, error=ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, count=1)
    records = [{"partition": 0 if i < 5 or i >= 10 else 1, "value": f"m{i:02d}"} for i in range(15)]
    lines = produce(mockbroker, "java-idem-oos", records, sync=True, config={"retry.backoff.ms": 20})

    # The client reports no failure: the batch that got the error was retried under the bumped epoch.
    assert of_type(lines, "send_error") == [], lines
    assert of_type(lines, "done")[-1] == {"type": "done", "sent": 15, "failed": 0}
    assert mockbroker.faults.rules == [], "the error was not injected"
    sent = {s["index"]: (s["partition"], s["offset"]) for s in of_type(lines, "sent")}
    assert sent == {i: (0, i) if i < 5 else (1, i - 5) if i < 10 else (0, i - 5) for i in range(15)}

    # Every record once, in order; the broker did not append the rejected batch.
    p0, p1 = mockbroker.records("java-idem-oos", 0), mockbroker.records("java-idem-oos", 1)
    assert [r.value for r in p0] == [b"m%02d" % i for i in [*range(5), *range(10, 15)]]
    assert [r.value for r in p1] == [b"m%02d" % i for i in range(5, 10)]

    # Same producer id; the epoch went up by one after the error, and sequences restarted at 0 under it.
    first_pid = p0[0].producer_id
    assert first_pid >= 0 and {r.producer_id for r in p0 + p1} == {first_pid}
    assert [(r.producer_epoch, r.sequence) for r in p0] == [(0, s) for s in range(5)] + [(1, s) for s in range(5)]
    assert [(r.producer_epoch, r.sequence) for r in p1] == [(1, s) for s in range(5)]
    # The client bumped the epoch itself (KIP-360 for idempotent producers): one InitProducerId, at the start.
    assert len(mockbroker.received(22)) == 1
    assert [(e["producer_id"], e["producer_epoch"]) for e in mockbroker.producers("java-idem-oos", 0)] == [
        (first_pid, 1)]


def test_fault_topic_filter_matches_java_produce_v13(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("java-idem-filter", 1)
    mockbroker.inject(PRODUCE, drop="after", count=1, topic="java-idem-filter")
    lines = produce(mockbroker, "java-idem-filter", [{"value": "only"}], config={"retry.backoff.ms": 20})
    assert of_type(lines, "send_error") == []
    assert {r.api_version for r in mockbroker.received(PRODUCE)} == {13}
    assert [r.value for r in mockbroker.records("java-idem-filter")] == [b"only"]
    assert mockbroker.faults.rules == [], "the rule for the topic never matched its Produce request"
