"""Connection churn (issue 33, item 3): 10,000 rounds of connect, one Metadata request, close against an
in-process broker leave the process's memory where it was after the first 1,000.

Before the fix every closed connection stayed reachable from its cancelled idle timer in the scheduler's
heap until connections.max.idle.ms (10 minutes on the broker clock), with its buffers (~64 KiB each).
RSS is VmRSS from /proc/self/status after gc.collect(), once the broker has seen every connection close;
the first 1,000 rounds warm up (allocator arenas, caches) and give the value compared against.
"""

from __future__ import annotations

import gc
import time

import pytest

from mockbroker.server import MockBroker
from tests.rawclient import RawClient

# serial: it bounds this process's RSS growth over 10,000 connections, which a busy machine (a parallel
# worker beside it) slows and whose timers it shifts; scripts/test runs it alone after the workers.
pytestmark = [pytest.mark.adversarial, pytest.mark.load, pytest.mark.serial]

WARM_UP_ROUNDS = 1_000
ROUNDS = 10_000
RSS_BOUND = 5 * 1024 * 1024
METADATA = 3
META = {"topics": [], "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def rss_bytes() -> int:
    gc.collect()
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def churn(broker: MockBroker, rounds: int) -> None:
    for _ in range(rounds):
        with RawClient(broker.host, broker.port) as c:
            assert c.request(METADATA, 12, META).brokers
    deadline = time.monotonic() + 120
    while broker._connections:
        assert time.monotonic() < deadline, f"{len(broker._connections)} connections never seen closed"
        time.sleep(0.01)


def test_memory_after_ten_thousand_connect_close_rounds_is_back_where_it_was() -> None:
    with MockBroker(port=0).run_in_thread() as broker:
        churn(broker, WARM_UP_ROUNDS)
        warmed_up = rss_bytes()
        churn(broker, ROUNDS - WARM_UP_ROUNDS)
        after = rss_bytes()
        assert after - warmed_up <= RSS_BOUND, (
            f"RSS grew {(after - warmed_up) / 2**20:.1f} MiB over {ROUNDS - WARM_UP_ROUNDS} connect/close rounds "
            f"(scheduler heap: {len(broker.scheduler._heap)} timers)")
