"""A closed connection is let go at once (issue 33, item 3): its cancelled idle timer leaves the scheduler
(or holds nothing), so neither the connection object nor its buffers wait for connections.max.idle.ms."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable

import pytest

from mockbroker.clock import Clock
from mockbroker.scheduler import Scheduler
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

pytestmark = pytest.mark.adversarial

METADATA = 3
META = {"topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


class Holder:
    """Something a timer's callback keeps alive (a connection, in the broker)."""

    def run(self) -> None:
        raise AssertionError("a cancelled timer ran")


def test_a_cancelled_timer_lets_go_of_its_callback_at_once() -> None:
    scheduler = Scheduler(Clock(frozen=True))
    holder = Holder()
    ref = weakref.ref(holder)
    timer = scheduler.call_later(600_000, holder.run)
    keep = scheduler.call_later(600_000, lambda: None)  # the heap is not emptied by the cancel alone
    del holder
    timer.cancel()
    gc.collect()
    assert ref() is None
    assert not keep.cancelled


def test_cancelled_timers_leave_the_heap_once_they_are_more_than_half() -> None:
    clock = Clock(frozen=True)
    scheduler = Scheduler(clock)
    live = [scheduler.call_later(1_000, lambda: None) for _ in range(10)]
    for _ in range(10_000):
        scheduler.call_later(600_000, lambda: None).cancel()
        assert scheduler.size <= 2 * len(live) + 1
    for timer in live[:5]:
        timer.cancel()
    assert scheduler.size <= 10
    ran: list[int] = []
    scheduler.call_later(500, lambda: ran.append(1))
    clock.advance(2)
    scheduler.run_due()
    assert ran == [1] and scheduler.size == 0
    live[5].cancel()  # cancelling a timer that already ran counts nothing
    assert scheduler._cancelled == 0


def test_a_closed_connection_is_freed_without_waiting_for_the_idle_timeout(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(clock=Clock(frozen=True))  # frozen: no idle timer ever comes due
    before = len(broker.scheduler._heap)  # (not .size: this test also ran against the scheduler before it)
    refs: list[weakref.ref[object]] = []
    for _ in range(50):
        with RawClient(broker.host, broker.port) as c:
            assert c.request(METADATA, 12, META).brokers
            refs.extend(weakref.ref(conn) for conn in list(broker._connections))
    deadline = time.monotonic() + 60
    while broker._connections:
        assert time.monotonic() < deadline, "the broker never saw the connections close"
        time.sleep(0.01)
    # The loop drops its transport's hold on a connection just after connection_lost (which empties
    # broker._connections) returns, so the last one may still be held for a moment: wait for that, bounded.
    while True:
        gc.collect()
        alive = [r for r in refs if r() is not None]
        if not alive:
            break
        assert time.monotonic() < deadline, f"{len(alive)} closed connection(s) still held after 60 s"
        time.sleep(0.01)
    assert len(broker.scheduler._heap) <= 2 * before + 1
