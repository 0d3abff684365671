"""The broker's request counters: what Kafka's RequestMetrics and BrokerTopicMetrics count, kept cheaply.

One `RequestCounters` per broker (`broker.requests.metrics`, beside the request record of faults.py).
The connection counts on the request path with plain dict increments, no lock (one event loop owns the
broker): every request received by API key (RequestsPerSec), the time from its frame being read to its
answer going out (TotalTimeMs) as a histogram per API, and the record bytes each Fetch answer carries per
topic (BytesOutPerSec). Bytes and records appended per topic (BytesInPerSec, MessagesInPerSec) are the
Appender's own counts (state/cluster/appender.py), read at scrape time. Counters only go up: clearing the
request record (POST /reset) leaves them. Nothing here knows Prometheus: mockbroker/http/metrics.py turns
them, and what it reads of the model at scrape time, into Prometheus' text format.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

# The upper bounds of the latency histogram's buckets, in milliseconds (the last bucket is +Inf).
LATENCY_BUCKETS_MS = (1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0,
                      30000.0)


class RequestCounters:
    """Requests by API key, their latency histogram, and Fetch's bytes out by topic."""

    def __init__(self) -> None:
        self.received: dict[int, int] = {}  # api key -> requests received
        self.latency_buckets: dict[int, list[int]] = {}  # api key -> count per bucket (not cumulative)
        self.latency_sum_ms: dict[int, float] = {}
        self.bytes_out: dict[str, int] = {}  # topic -> record bytes sent in Fetch answers

    def request(self, api_key: int) -> None:
        self.received[api_key] = self.received.get(api_key, 0) + 1

    def answered(self, api_key: int, seconds: float) -> None:
        """A request of api_key was answered (or dropped) `seconds` after its frame was read."""
        ms = seconds * 1000.0
        buckets = self.latency_buckets.get(api_key)
        if buckets is None:
            buckets = self.latency_buckets[api_key] = [0] * (len(LATENCY_BUCKETS_MS) + 1)
        buckets[bisect.bisect_left(LATENCY_BUCKETS_MS, ms)] += 1
        self.latency_sum_ms[api_key] = self.latency_sum_ms.get(api_key, 0.0) + ms

    def fetched(self, response: Mapping[str, Any]) -> None:
        """Count the record bytes of a Fetch answer by topic (the topic's name is in every version's Msg)."""
        out = self.bytes_out
        for topic in response.get("responses") or ():
            size = 0
            for p in topic.get("partitions") or ():
                records = p.get("records")
                if records:
                    size += sum(len(c) for c in records) if isinstance(records, list) else len(records)
            if size:
                name = topic.get("topic") or ""
                out[name] = out.get(name, 0) + size
