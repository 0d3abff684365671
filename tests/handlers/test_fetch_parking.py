"""Parked fetches (long polls) cost a producer a constant amount per partition and append: an append
counts bytes instead of re-reading the batches of every parked fetch (Kafka's DelayedFetch)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.log.partition_log import PartitionLog
from tests.handlers.conftest import (
    FETCH,
    batches_of,
    fetch_body,
    fetch_partition,
    fetch_topic,
    make_batch,
    produce,
)
from tests.handlers.test_txn_protocol import add_partitions, data_values, end_txn, init_ok, produce_txn
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


def park_long(broker: MockBroker, topic: str, min_bytes: int, isolation: int = 0) -> RawClient:
    """A fetch parked for 10 minutes: only a wake-up answers it within the client's 60 s timeout."""
    c = RawClient(broker.host, broker.port, timeout=60)
    c.send(FETCH, 12, fetch_body([fetch_topic(topic, fetch_partition(0, 0))], max_wait_ms=600_000,
                                 min_bytes=min_bytes, isolation_level=isolation))
    return c


def test_deleting_the_topic_wakes_a_parked_fetch(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    log = mockbroker.cluster.topics["t"].partitions[0].log
    with park_long(mockbroker, "t", 1024 * 1024) as fetcher:
        wait_until(lambda: len(log._listeners) == 1, "the fetch to park")
        mockbroker.delete_topic("t")
        _, resp = fetcher.recv(FETCH, 12)
        assert resp.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_read_committed_parked_fetch_wakes_when_the_transaction_commits(mockbroker: MockBroker) -> None:
    """The transaction's bytes arrive while it is open (counted, read, not readable: below min_bytes after
    the last stable offset); its commit marker adds few bytes but moves the last stable offset."""
    mockbroker.create_topic("t")
    log = mockbroker.cluster.topics["t"].partitions[0].log
    with RawClient(mockbroker.host, mockbroker.port) as producer:
        pid, epoch = init_ok(producer)
        assert add_partitions(producer, pid, epoch, ("t", 0)) == {("t", 0): 0}
        with park_long(mockbroker, "t", 1000, isolation=1) as fetcher:
            wait_until(lambda: len(log._listeners) == 1, "the fetch to park")
            assert produce_txn(producer, "t", pid, epoch, 0, b"x" * 2000).error_code == 0
            assert len(log._listeners) == 1  # still parked: nothing committed
            assert end_txn(producer, pid, epoch, True).error_code == 0
            _, resp = fetcher.recv(FETCH, 12)
            [p] = resp.responses[0].partitions
            assert p.error_code == 0 and data_values(p.records) == [b"x" * 2000]
