"""connections.max.idle.ms on the broker clock: an idle connection is closed, an active or waiting one
is not."""

from __future__ import annotations

import time

import pytest

from mockbroker.clock import Clock
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    FETCH,
    METADATA,
    fetch_body,
    fetch_partition,
    fetch_topic,
)
from tests.rawclient import RawClient

META = {"topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


@pytest.mark.mockbroker(clock=Clock(frozen=True))
def test_connection_idle_for_ten_minutes_is_closed(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as idle, RawClient(mockbroker.host, mockbroker.port) as busy:
        idle.request(METADATA, 12, META)
        busy.request(METADATA, 12, META)
        mockbroker.clock.advance(9 * 60)
        busy.request(METADATA, 12, META)  # active: its idle period starts over
        mockbroker.clock.advance(60)
        assert idle.is_closed_by_peer(timeout=60)
        assert busy.request(METADATA, 12, META).brokers  # 1 minute idle: still open
        mockbroker.clock.advance(10 * 60)
        assert busy.is_closed_by_peer(timeout=60)
    with RawClient(mockbroker.host, mockbroker.port) as fresh:
        assert fresh.request(METADATA, 12, META).brokers


@pytest.mark.mockbroker(clock=Clock(frozen=True), config={"connections.max.idle.ms": 1000})
def test_idle_timeout_follows_the_setting_and_spares_a_waiting_request(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    with RawClient(mockbroker.host, mockbroker.port) as waiting:
        # A long poll (60 s on the loop's clock) keeps its connection busy, hence not idle.
        waiting.send(FETCH, 12, fetch_body([fetch_topic("t", fetch_partition(0, 0))], max_wait_ms=60_000,
                                           min_bytes=1))
        log = mockbroker.cluster.topics["t"].partitions[0].log
        deadline = time.monotonic() + 60
        while not log._listeners:
            assert time.monotonic() < deadline, "the fetch never parked"
            time.sleep(0.01)
        mockbroker.clock.advance(5)
        with RawClient(mockbroker.host, mockbroker.port) as other:
            assert other.request(METADATA, 12, META).brokers
        assert log._listeners  # still parked, connection open


@pytest.mark.mockbroker(clock=Clock(frozen=True), config={"connections.max.idle.ms": -1})
def test_negative_idle_timeout_never_closes(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        mockbroker.clock.advance(7 * 86400)
        assert c.request(METADATA, 12, META).brokers
