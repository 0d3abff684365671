"""Keeping the broker's long-lived objects out of Python's garbage collections, in the broker's own process.

Stored batches are no longer objects (state/log/batch_store.py keeps their bytes in a few chunks per log), but
what else lives long (groups, producer state, connections, the interpreter's modules) is still visited by every
full (generation 2) collection, and grows with the broker. `gc.freeze()` moves every tracked object to the
permanent generation, which no collection visits.

- `FreezeSurvivors`: after each collection of generation 1 (or older) that the interpreter runs by itself, on
  the loop: the young generations collected (their garbage is not frozen), then everything left frozen. What
  survives two collections is frozen before a full collection would visit it, so the longest collection stays
  that of the young generations (under 1 ms of CPU at a million stored batches, flat in the log's size).
- `freeze_now()`: the same once, for what is already there (the interpreter's modules, a data dir's logs).

The price: an object frozen while alive that later becomes garbage inside a reference cycle is not reclaimed.
No stored batch is an object at all; 2,100 connections opened and
closed left 85 such objects more than without freezing (bench_scaling.py's churn figures in docs/benchmarks.md).

Only the command line (`python -m mockbroker`, the image) uses this: the process is the broker's. An in-process
broker (MockBroker.start, the pytest plugin) does not: a freeze is process-wide, would keep the user's own
cyclic garbage alive, and a test expecting gc.collect() to reclaim one of its objects would fail. Nothing here
changes the collector's thresholds or anything the broker answers.
"""

from __future__ import annotations

import asyncio
import gc


def freeze_now() -> None:
    """Collect the young generations, then move every tracked object to the permanent generation."""
    gc.collect(1)
    gc.freeze()


class FreezeSurvivors:
    """Freeze what survives the collector's own collections of `generation` and older, on the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, generation: int = 1) -> None:
        self._loop = loop
        self.generation = generation
        self._pending = False
        self.freezes = 0

    def install(self) -> FreezeSurvivors:
        gc.callbacks.append(self._on_gc)
        return self

    def uninstall(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        # Runs inside the collector, maybe on another thread: only schedule the freeze.
        if (phase == "stop" and info.get("generation", 0) >= self.generation and not self._pending
                and not self._loop.is_closed()):
            self._pending = True
            self._loop.call_soon_threadsafe(self.freeze)

    def freeze(self) -> None:
        """freeze_now(); its own collection schedules no other freeze (still _pending)."""
        freeze_now()
        self._pending = False
        self.freezes += 1
