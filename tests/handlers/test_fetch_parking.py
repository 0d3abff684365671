"""Parked fetches (long polls) cost a producer a constant amount per partition and append: an append
counts bytes instead of re-reading the batches of every parked fetch (Kafka's DelayedFetch)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.server import MockBroker
from mockbroker.state.log import PartitionLog
from tests.handlers.conftest import (
    FETCH,
    batches_of,
    fetch_body,
    fetch_partition,
    fetch_topic,
    make_batch,
    produce,
)
from tests.rawclient import RawClient

PARKED = 20
APPENDS = 200


def wait_until(condition: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def batches_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A counter of the batches PartitionLog.read returns (one entry: the running total)."""
    count = [0]
    original = PartitionLog.read

    def counting(self: PartitionLog, *args: Any, **kwargs: Any) -> tuple[list[memoryview], int]:
        out, size = original(self, *args, **kwargs)
        count[0] += len(out)
        return out, size

    monkeypatch.setattr(PartitionLog, "read", counting)
    yield count


def park(broker: MockBroker, topic: str, offset: int, min_bytes: int) -> RawClient:
    c = RawClient(broker.host, broker.port, timeout=60)
    c.send(FETCH, 12, fetch_body([fetch_topic(topic, fetch_partition(0, offset))], max_wait_ms=60_000,
                                 min_bytes=min_bytes))
    return c


def test_appends_with_parked_fetches_read_a_bounded_number_of_batches(mockbroker: MockBroker,
                                                                      batches_read: list[int]) -> None:
    mockbroker.create_topic("t")
    log = mockbroker.cluster.topics["t"].partitions[0].log
    fetchers = [park(mockbroker, "t", 0, 1024 * 1024) for _ in range(PARKED)]
    try:
        wait_until(lambda: len(log._listeners) == PARKED, "every fetch to park")
        before = batches_read[0]
        with RawClient(mockbroker.host, mockbroker.port) as producer:
            for n in range(APPENDS):
                assert produce(producer, "t", make_batch(b"v%d" % n), acks=1).error_code == 0
        # Re-reading on every append would read PARKED * APPENDS * (APPENDS + 1) / 2 = 402,000 batches.
        assert batches_read[0] - before <= APPENDS, batches_read[0] - before
        assert len(log._listeners) == PARKED  # still parked: 1 MiB never arrived
    finally:
        for c in fetchers:
            c.close()


def test_parked_fetch_answers_once_min_bytes_arrive(mockbroker: MockBroker, batches_read: list[int]) -> None:
    mockbroker.create_topic("t")
    log = mockbroker.cluster.topics["t"].partitions[0].log
    with park(mockbroker, "t", 0, 2000) as fetcher, RawClient(mockbroker.host, mockbroker.port) as producer:
        wait_until(lambda: len(log._listeners) == 1, "the fetch to park")
        sent = 0
        while log.size_bytes < 2000:
            assert produce(producer, "t", make_batch(b"x" * 100), acks=1).error_code == 0
            sent += 1
        _, resp = fetcher.recv(FETCH, 12)
        [t] = resp.responses
        [p] = t.partitions
        assert len(batches_of(p.records)) == sent
        # One read when parking (empty), one when the bytes were there: each batch read once.
        assert batches_read[0] == sent
