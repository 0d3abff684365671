"""Live updates for the console: server-sent events (GET /events) and record rates.

One `EventHub` per control server looks at the broker every `interval` seconds of real time (on the
broker's loop, so it reads state directly) and tells its subscribers what changed since the last look:

    event: records   {"topic", "partition", "high_watermark", "log_start_offset"}  a partition moved
    event: topics    {"topics": [names]}                                           topics came or went
    event: groups    {"groups": [...]}                                             any group changed
    event: requests  {"requests": [...]}                                           requests received
    event: clock     {"now_ms"}                                                    the broker clock moved
    event: metrics   {"at_ms", "bytes_in", "bytes_out", "requests"}                totals, once a second (charts)

It also samples each topic's high watermarks for `rates()` (records per second over the last ~10 s).
Looking, not hooks: the broker's state modules stay free of console code. A subscriber that falls
more than QUEUE_LIMIT events behind is dropped (its stream ends; the browser reconnects).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from mockbroker.http.metrics import metric_totals
from mockbroker.http.request import jsonable, with_api_name

if TYPE_CHECKING:
    from aiohttp import web

    from mockbroker.server import MockBroker

log = logging.getLogger("mockbroker.control")

QUEUE_LIMIT = 1000
MAX_REQUESTS_PER_EVENT = 200
RATE_WINDOW_S = 10.0
KEEPALIVE_S = 15.0
METRICS_EVERY_S = 1.0


class EventHub:
    def __init__(self, broker: MockBroker, interval: float = 0.25) -> None:
        self.broker = broker
        self.interval = interval
        self.subscribers: set[asyncio.Queue[tuple[str, Any] | None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._offsets: dict[tuple[str, int], tuple[int, int]] = {}
        self._topics: list[str] = []
        self._groups = ""
        self._requests_seen = broker.requests.total
        self._clock = -1
        self._samples: collections.deque[tuple[float, dict[str, int]]] = collections.deque()
        self._metrics_sent = 0.0  # when the last metrics event went out (time.monotonic)

    def start(self) -> None:
        self.look()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        for queue in list(self.subscribers):
            self._close(queue)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                self.look()
            except Exception:  # a bug here must not end live updates for good
                log.exception("control endpoint: live update failed")

    # -- looking ---------------------------------------------------------------------------------
    def look(self) -> None:
        """Compare the broker with the last look; queue what changed for every subscriber."""
        cluster = self.broker.cluster
        totals: dict[str, int] = {}
        offsets: dict[tuple[str, int], tuple[int, int]] = {}
        for name, topic in cluster.topics.items():
            totals[name] = sum(p.log.high_watermark for p in topic.partitions)
            for p in topic.partitions:
                offsets[(name, p.index)] = (p.log.high_watermark, p.log.log_start_offset)
        now = time.monotonic()
        self._samples.append((now, totals))
        while len(self._samples) > 2 and self._samples[1][0] <= now - RATE_WINDOW_S:
            self._samples.popleft()
        if not self.subscribers:
            self._offsets, self._topics = offsets, sorted(totals)
            self._requests_seen = self.broker.requests.total
            return
        for tp, (hw, start) in offsets.items():
            if self._offsets.get(tp) != (hw, start):
                self.publish("records", {"topic": tp[0], "partition": tp[1], "high_watermark": hw,
                                         "log_start_offset": start})
        self._offsets = offsets
        if sorted(totals) != self._topics:
            self._topics = sorted(totals)
            self.publish("topics", {"topics": self._topics})
        groups = self._group_list()
        text = json.dumps(groups, sort_keys=True)
        if text != self._groups:
            self._groups = text
            self.publish("groups", {"groups": groups})
        self._publish_requests()
        if now - self._metrics_sent >= METRICS_EVERY_S:
            self._metrics_sent = now
            self.publish("metrics", {"at_ms": int(now * 1000), **metric_totals(self.broker)})
        now_ms = self.broker.clock.now_ms()
        if now_ms != self._clock:
            self._clock = now_ms
            self.publish("clock", {"now_ms": now_ms})

    def _group_list(self) -> list[Any]:
        if not self.broker.node.group_coordinator_started:
            return []  # no group was ever asked for: do not make the coordinator just to look
        return [jsonable(g) for g in self.broker.group_coordinator.summaries()]

    def _publish_requests(self) -> None:
        requests = self.broker.requests
        new = requests.since(self._requests_seen, MAX_REQUESTS_PER_EVENT)
        self._requests_seen = requests.total
        if not new:
            return
        self.publish("requests", {"requests": [with_api_name(r) for r in new]})

    def rates(self) -> dict[str, float]:
        """Records per second of each topic over the sampling window."""
        if len(self._samples) < 2:
            return {}
        (t0, first), (t1, last) = self._samples[0], self._samples[-1]
        span = t1 - t0
        if span <= 0:
            return {}
        return {name: max(0, total - first.get(name, 0)) / span for name, total in last.items()}

    # -- subscribers -----------------------------------------------------------------------------
    def publish(self, event: str, data: Any) -> None:
        for queue in list(self.subscribers):
            try:
                queue.put_nowait((event, data))
            except asyncio.QueueFull:
                self._close(queue)

    def _close(self, queue: asyncio.Queue[tuple[str, Any] | None]) -> None:
        self.subscribers.discard(queue)
        while True:  # make room for the end marker
            try:
                queue.put_nowait(None)
                return
            except asyncio.QueueFull:
                queue.get_nowait()

    async def stream(self, request: web.BaseRequest) -> web.StreamResponse:
        """GET /events: the server-sent events stream of one subscriber."""
        from aiohttp import web

        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)
        queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue(QUEUE_LIMIT)
        self.subscribers.add(queue)
        try:
            await response.write(b"retry: 1000\n\n")
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                if item is None:
                    break
                event, data = item
                await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        except ConnectionError:
            pass  # the browser went away
        finally:
            self.subscribers.discard(queue)
        return response
