"""Timers on the broker's clock: session timeouts, transaction timeouts, retention, cleaning.

`call_at(due_ms, callback)` runs callback on the broker's event loop once the broker clock reaches
due_ms: in real time as the clock moves with the wall clock, and at once when a test moves the clock
with `clock.advance(seconds)` (from any thread: the work hops onto the broker's loop). Callbacks are
plain functions; state objects stay free of asyncio.

A cancelled timer lets go of its callback at once (a connection's idle timer would otherwise keep the
closed connection and its buffers until the timer's time came, 10 minutes on), and the heap is
rebuilt without the cancelled entries as soon as they are more than half of it, so the heap holds at
most twice the live timers.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
from collections.abc import Callable

from mockbroker.clock import Clock

log = logging.getLogger("mockbroker.scheduler")


def _cancelled_callback() -> None:
    """What a cancelled timer holds instead of its callback (it never runs)."""


class Timer:
    __slots__ = ("due_ms", "callback", "cancelled", "_scheduler")

    def __init__(self, due_ms: int, callback: Callable[[], None], scheduler: Scheduler | None = None) -> None:
        self.due_ms = due_ms
        self.callback = callback
        self.cancelled = False
        self._scheduler = scheduler  # while in that scheduler's heap

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        self.callback = _cancelled_callback  # let go of whatever the callback holds (a connection)
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler._cancelled_one()


class Scheduler:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._heap: list[tuple[int, int, Timer]] = []
        self._cancelled = 0  # cancelled timers still in the heap
        self._seq = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._handle: asyncio.TimerHandle | None = None
        clock.on_advance(self._on_advance)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start running timers on this loop (called by MockBroker.start, on that loop)."""
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._arm()

    def detach(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._loop = None

    @property
    def size(self) -> int:
        """How many timers the heap holds, cancelled ones not yet dropped included."""
        return len(self._heap)

    def _cancelled_one(self) -> None:
        self._cancelled += 1
        if self._cancelled * 2 > len(self._heap):
            self._heap = [entry for entry in self._heap if not entry[2].cancelled]
            heapq.heapify(self._heap)
            self._cancelled = 0

    def _pop(self) -> Timer:
        timer = heapq.heappop(self._heap)[2]
        if timer.cancelled:
            self._cancelled -= 1
        timer._scheduler = None  # out of the heap: a later cancel() has nothing to count
        return timer

    def call_at(self, due_ms: int, callback: Callable[[], None]) -> Timer:
        timer = Timer(due_ms, callback, self)
        heapq.heappush(self._heap, (due_ms, next(self._seq), timer))
        if self._heap[0][2] is timer:
            self._arm()
        return timer

    def adopt(self, timer: Timer) -> None:
        """Put a timer made off the scheduler (a restored snapshot's, mockbroker/snapshots.py) in the heap."""
        timer._scheduler = self
        heapq.heappush(self._heap, (timer.due_ms, next(self._seq), timer))
        if self._heap[0][2] is timer:
            self._arm()

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        return self.call_at(self.clock.now_ms() + delay_ms, callback)

    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run callback at the loop's next pass, after whatever I/O is ready (a long task's next step,
        so connections are served in between); at once when no loop is attached. Call on the loop."""
        if self._loop is None:
            callback()
        else:
            self._loop.call_soon(callback)

    def run_due(self) -> None:
        """Run every timer whose time has come (on the broker's loop)."""
        now = self.clock.now_ms()
        while self._heap and self._heap[0][0] <= now:
            timer = self._pop()
            if timer.cancelled:
                continue
            try:
                timer.callback()
            except Exception:
                log.exception("timer callback failed")
        self._arm()

    def _arm(self) -> None:
        loop = self._loop
        if loop is None:
            return
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        while self._heap and self._heap[0][2].cancelled:
            self._pop()
        if not self._heap:
            return
        delay = max(0.0, (self._heap[0][0] - self.clock.now_ms()) / 1000.0)
        self._handle = loop.call_later(delay, self.run_due)

    def _on_advance(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if threading.get_ident() == self._loop_thread:
            self.run_due()
        else:
            loop.call_soon_threadsafe(self.run_due)
