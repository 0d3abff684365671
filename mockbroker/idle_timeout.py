"""connections.max.idle.ms: a connection with no request and no answer for that long is closed, as
Kafka's Selector does (default 10 minutes), on the broker clock (a test moves it with clock.advance).

A connection whose handler is still waiting (a long poll, a JoinGroup) is not idle: it is looked at
again one idle period later. A value <= 0 turns the timeout off.
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.scheduler import Scheduler, Timer


class IdleTimeout:
    def __init__(self, scheduler: Scheduler, idle_ms: int, *, is_busy: Callable[[], bool],
                 close: Callable[[str], None]) -> None:
        self.scheduler = scheduler
        self.idle_ms = idle_ms
        self.is_busy = is_busy
        self.close = close
        self.last_active_ms = scheduler.clock.now_ms()
        self._timer: Timer | None = None
        self._arm(self.last_active_ms + idle_ms)

    def touch(self) -> None:
        """Something was read or written: the idle period starts over (the timer re-checks when due)."""
        self.last_active_ms = self.scheduler.clock.now_ms()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, due_ms: int) -> None:
        if self.idle_ms > 0:
            self._timer = self.scheduler.call_at(due_ms, self._check)

    def _check(self) -> None:
        self._timer = None
        now = self.scheduler.clock.now_ms()
        due = self.last_active_ms + self.idle_ms
        if now < due:
            self._arm(due)
        elif self.is_busy():
            self._arm(now + self.idle_ms)
        else:
            self.close(f"idle for more than connections.max.idle.ms ({self.idle_ms} ms)")
