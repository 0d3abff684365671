"""(helper) `python -m mockbroker` with a record of its garbage collections, for benchmarks that ask what a pause was.

    python benchmarks/gc_probe.py OUTFILE [mockbroker arguments...]

Runs the broker's command line in this process (runpy) after adding a gc.callbacks entry that times every
collection (CPU time of the collecting thread: a busy machine's preemption left out) with its generation. On
SIGUSR1 it writes the longest collection since the last SIGUSR1 to OUTFILE as JSON ({"max_ms", "generation",
"collections"}) and starts over. The command line's own behaviour (its freezing, mockbroker/gc_tuning.py) is
unchanged: this only watches.

`PauseProbe` (imported by bench_scaling.py, in the broker's process): the loop's lag with its cause, see there.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import runpy
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Record:
    def __init__(self, path: str) -> None:
        self.path = path
        self.start = 0.0
        self.reset()

    def reset(self) -> None:
        self.max_s, self.generation, self.collections = 0.0, -1, [0, 0, 0]

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.start = time.thread_time()
            return
        took = time.thread_time() - self.start
        self.collections[info["generation"]] += 1
        if took > self.max_s:
            self.max_s, self.generation = took, info["generation"]

    def dump(self, _sig: int, _frame: FrameType | None) -> None:
        with open(self.path, "w") as f:
            json.dump({"max_ms": self.max_s * 1000, "generation": self.generation,
                       "collections": self.collections}, f)
        self.reset()


class PauseProbe:
    """The event loop's longest lag and every garbage collection, with what caused the longest lag.

    The lag is a 1 ms sleep's overshoot. For each sleep the probe also takes the loop thread's CPU time and the
    wall time collections took: a lag with as much CPU time is the loop's own work (of which `gc_ms` in
    collections), a lag without is time the thread did not run (another process on the CPU: `off_cpu_ms`).
    `callback_ms`: the longest single callback the loop ran (asyncio's Handle._run timed in CPU time of the
    loop thread, with its name: the task's coroutine or the function): nothing else is served meanwhile, so
    it is the longest pause the broker itself causes, whatever else the machine runs. A watchdog thread samples the loop thread's stack once a sleep is 2 ms late
    (`where`: the innermost mockbroker functions, `-` when the lag was shorter). The sample is taken when the
    loop thread lets go of the GIL: at once in a system call (a socket send), after the 5 ms switch interval in
    Python code; so for a lag spent off the CPU it names where the loop was when it ran again. Collections are
    timed in CPU time of the collecting thread (a busy machine's preemption left out), with their generation.
    """

    LATE_S = 0.002

    def __init__(self) -> None:
        self.reset()
        self._gc_start = self._gc_wall_start = 0.0
        self._gc_wall_total = 0.0
        self._beat = 0.0  # when the current sleep started (perf_counter); 0: not sleeping
        self._seq = 0
        self._sample: tuple[int, str] = (-1, "-")
        self._main = threading.main_thread().ident or 0
        self._clock = time.pthread_getcpuclockid(self._main)
        gc.callbacks.append(self._on_gc)
        threading.Thread(target=self._watch, daemon=True, name="pause-watchdog").start()
        self._time_callbacks()

    def _time_callbacks(self) -> None:
        """Time every callback the loop runs (this process's asyncio Handle._run wrapped; a benchmark's own)."""
        run = asyncio.events.Handle._run
        probe = self

        def timed_run(handle: asyncio.Handle) -> None:
            t0 = time.thread_time()
            run(handle)
            took = time.thread_time() - t0
            if took > probe.max_callback:
                probe.max_callback, probe.max_callback_name = took, _callback_name(handle)

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

    def reset(self) -> None:
        self.max_lag = 0.0
        self.max_callback = 0.0
        self.max_callback_name = "-"
        self.lag_cause: dict[str, Any] = {}
        self.gc_max = 0.0
        self.gc_max_gen = -1
        self.gc_count = [0, 0, 0]

    def loop_cpu(self) -> float:
        """The loop thread's CPU time so far, in seconds."""
        return time.clock_gettime(self._clock)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start, self._gc_wall_start = time.thread_time(), time.perf_counter()
            return
        took = time.thread_time() - self._gc_start
        self._gc_wall_total += time.perf_counter() - self._gc_wall_start
        self.gc_count[info["generation"]] += 1
        if took > self.gc_max:
            self.gc_max, self.gc_max_gen = took, info["generation"]

    def _watch(self) -> None:
        while True:
            time.sleep(0.001)
            beat, seq = self._beat, self._seq
            if beat and time.perf_counter() - beat > self.LATE_S and self._sample[0] != seq:
                frame = sys._current_frames().get(self._main)
                self._sample = (seq, _where(frame))

    async def run(self) -> None:
        while True:
            self._seq += 1
            t0, c0, g0 = time.perf_counter(), self.loop_cpu(), self._gc_wall_total
            self._beat = t0
            await asyncio.sleep(0.001)
            self._beat = 0.0
            wall, cpu = time.perf_counter() - t0, self.loop_cpu() - c0
            lag = wall - 0.001
            if lag > self.max_lag:
                self.max_lag = lag
                where = self._sample[1] if self._sample[0] == self._seq else "-"
                self.lag_cause = {"cpu_ms": cpu * 1000, "gc_ms": (self._gc_wall_total - g0) * 1000,
                                  "off_cpu_ms": max(wall - cpu, 0.0) * 1000, "where": where}

    def report(self) -> dict[str, Any]:
        return {"lag_ms": self.max_lag * 1000, "callback_ms": self.max_callback * 1000,
                "callback": self.max_callback_name, "lag_cause": self.lag_cause, "gc_ms": self.gc_max * 1000,
                "gc_gen": self.gc_max_gen, "gc_count": list(self.gc_count)}


def _callback_name(handle: asyncio.Handle) -> str:
    """A loop callback's name: the coroutine of the task it steps, else the function."""
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return str(getattr(coro, "__qualname__", coro))
    return str(getattr(callback, "__qualname__", callback))


def _where(frame: FrameType | None, depth: int = 3) -> str:
    """The innermost `depth` functions of the broker's own code in a stack (the loop's own frames left out)."""
    names: list[str] = []
    while frame is not None and len(names) < depth:
        path = frame.f_code.co_filename
        if "mockbroker" in path and "asyncio" not in path:
            module = os.path.splitext(os.path.relpath(path, ROOT))[0].replace(os.sep, ".")
            names.append(f"{module.removeprefix('mockbroker.')}.{frame.f_code.co_name}")
        frame = frame.f_back
    return "<".join(names) if names else "idle/other"


def main() -> None:
    record = Record(sys.argv[1])
    gc.callbacks.append(record.on_gc)
    signal.signal(signal.SIGUSR1, record.dump)
    sys.argv = ["mockbroker", *sys.argv[2:]]
    sys.path.insert(0, ROOT)
    runpy.run_module("mockbroker", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
