"""The broker's one clock: every timeout (sessions, transactions, retention) reads it.

`Clock` follows wall time plus a manual offset, so a test can `advance(seconds)` to age segments,
tombstones, producer state and sessions without sleeping. Listeners registered with `on_advance`
(the broker's timer wheel) are told when time jumps, so work that became due runs at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Clock:
    def __init__(self, start_ms: int | None = None, *, frozen: bool = False) -> None:
        """start_ms: the time now, in ms (default: wall time). frozen: time moves only with advance()."""
        self._frozen = frozen
        wall = int(time.time() * 1000)
        self._offset_ms = 0 if start_ms is None else start_ms - wall
        self._frozen_ms = wall + self._offset_ms
        self._listeners: list[Callable[[], None]] = []

    def now_ms(self) -> int:
        if self._frozen:
            return self._frozen_ms
        return int(time.time() * 1000) + self._offset_ms

    def advance(self, seconds: float) -> None:
        """Move the clock forward; due timers run."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        delta = int(seconds * 1000)
        self._offset_ms += delta
        self._frozen_ms += delta
        for listener in list(self._listeners):
            listener()

    def on_advance(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)
