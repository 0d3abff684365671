"""The per-request work bound (issue #20): no request keeps the event loop busy for long.

Every batch is bounded on its own (mockbroker.max.records.per.batch, 256 MiB decompressed: state/
validation.py), but a request may carry many batches: a 1 MiB Produce of nine 200,000-record zstd batches
costs seconds of walking, and the 100 MiB request limit allows minutes. So a handler whose request holds
several heavy parts does them in steps: once a step has run for mockbroker.max.request.step.ms, the
handler hands the rest to a coroutine that lets the event loop serve every other connection (one loop
pass) before each further part. A part (one partition's validate-and-append, one partition's
down-conversion) is never split, so each step is at most that long or one part long. A request that
finishes within one step stays a plain synchronous call.

The bound is measured (time.perf_counter, the time the loop is held), not estimated from batch headers:
a header tells how many records a batch declares but not what its payload decompresses to (one record
of a 256 MiB value costs as much as its bytes). Requests on one connection still run one at a time, in
order (connection.py), so only other connections move ahead. When a connection goes away while its
request is between steps, the rest still runs (mockbroker/carried_on.py, owned by the node), as Kafka completes a request
it has read.
"""

from __future__ import annotations

import asyncio
from time import perf_counter

from mockbroker.state.cluster.cluster import Cluster

STEP_MS = "mockbroker.max.request.step.ms"

now_s = perf_counter  # the clock steps are measured with (wall time: a busy machine holds the loop too)


def step_seconds(cluster: Cluster) -> float:
    """How long one step of a request may hold the event loop before the next part waits its turn."""
    return int(cluster.config.get(STEP_MS)) / 1000.0


async def let_others_run() -> None:
    """Give the event loop one pass: every other connection's ready request is read and handled."""
    await asyncio.sleep(0)
