"""(helper) `python -m mockbroker` with a record of its garbage collections, for benchmarks that ask what a pause was.

    python benchmarks/gc_probe.py OUTFILE [mockbroker arguments...]

Runs the broker's command line in this process (runpy) after adding a gc.callbacks entry that times every
collection (CPU time of the collecting thread: a busy machine's preemption left out) with its generation. On
SIGUSR1 it writes the longest collection since the last SIGUSR1 to OUTFILE as JSON ({"max_ms", "generation",
"collections"}) and starts over. The command line's own behaviour (its freezing, mockbroker/gc_tuning.py) is
unchanged: this only watches.
"""

from __future__ import annotations

import gc
import json
import os
import runpy
import signal
import sys
import time
from types import FrameType

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


def main() -> None:
    record = Record(sys.argv[1])
    gc.callbacks.append(record.on_gc)
    signal.signal(signal.SIGUSR1, record.dump)
    sys.argv = ["mockbroker", *sys.argv[2:]]
    sys.path.insert(0, ROOT)
    runpy.run_module("mockbroker", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
