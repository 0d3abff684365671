"""MockBroker: listeners, start/stop, in-process use (asyncio or a thread), inspection, faults.

    async with MockBroker(port=0) as broker:          # asyncio code
        ...
    with MockBroker(port=0).run_in_thread() as broker:  # sync code
        ...

All broker state is owned by one event loop. Called from another thread (run_in_thread), the public
methods hop onto the broker's loop and wait for the answer, so tests never race the broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from mockbroker import dispatch, error_responses
from mockbroker.clock import Clock
from mockbroker.connection import Connection, RequestContext
from mockbroker.faults import FaultRule, Faults, ReceivedRequest, RequestRecord
from mockbroker.inspection import BatchInfo, RecordInfo, batch_info, record_info
from mockbroker.maintenance import LogMaintenance
from mockbroker.protocol.errors import ErrorCode
from mockbroker.scheduler import Scheduler
from mockbroker.state.appender import Appender
from mockbroker.state.cleaner import CleanerStats
from mockbroker.state.cluster import Cluster, Listener, Partition, Topic
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.fetch_sessions import FetchSessionCache
from mockbroker.state.groups import GroupCoordinator, GroupSummary
from mockbroker.state.segments import describe_segments
from mockbroker.state.txn import TransactionInfo, TxnCoordinator

log = logging.getLogger("mockbroker")
T = TypeVar("T")
# Kafka checks for expired producer ids every producer.id.expiration.check.interval.ms (10 minutes).
PRODUCER_EXPIRATION_CHECK_MS = 600_000


class MockBroker:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        node_id: int = 1,
        cluster_id: str | None = None,
        partitions: int | None = None,
        auto_create_topics: bool | None = None,
        config: dict[str, Any] | None = None,
        clock: Clock | None = None,
        listeners: list[Listener] | None = None,
        max_request_size: int | None = None,
    ) -> None:
        """A broker (one node) listening on host:port (port 0: a free port, chosen at start).

        config: broker settings in Kafka's names (e.g. {"log.retention.ms": "1000"}).
        listeners: several named listeners (bind + advertised address each); default one PLAINTEXT.
        """
        settings = dict(config or {})
        if partitions is not None:
            settings["num.partitions"] = partitions
        if auto_create_topics is not None:
            settings["auto.create.topics.enable"] = auto_create_topics
        if max_request_size is not None:
            settings["socket.request.max.bytes"] = max_request_size
        self.clock = clock or Clock()
        self.cluster = Cluster(node_ids=[node_id], cluster_id=cluster_id, config=BrokerConfig(settings),
                               clock=self.clock)
        self.node_id = node_id
        if listeners is None:
            listeners = [Listener("PLAINTEXT", node_id, host, port, advertised_host, advertised_port)]
        self.cluster.listeners = listeners
        self.scheduler = Scheduler(self.clock)
        self.log_maintenance = LogMaintenance(self.cluster, self.clock, self.scheduler,
                                              txn_index=lambda: getattr(self, "txn_coordinator", None))
        self.faults = Faults()
        self.appender = Appender()
        self.txn_coordinator = TxnCoordinator(self.cluster, self.clock, self.scheduler,
                                              groups=lambda: getattr(self, "group_coordinator", None))
        self.appender.txn_check = self.txn_coordinator.check_produce
        self.requests = RequestRecord()
        # When a list, every request frame received is appended to it, raw (tools/capture_frames.py).
        self.capture: list[bytes] | None = None
        self.fetch_sessions = FetchSessionCache(int(self.cluster.config.get("max.incremental.fetch.session.cache.slots")))
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: set[Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        dispatch.load_handlers()

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> MockBroker:
        self._loop = asyncio.get_running_loop()
        self.scheduler.attach(self._loop)
        self.scheduler.call_later(PRODUCER_EXPIRATION_CHECK_MS, self._expire_producers)
        self.log_maintenance.start()
        for listener in self.cluster.listeners:
            server = await self._loop.create_server(
                lambda lst=listener: Connection(self, lst),  # type: ignore[misc]
                listener.host,
                listener.port,
                reuse_address=True,
            )
            if listener.port == 0:
                listener.port = server.sockets[0].getsockname()[1]
            self._servers.append(server)
        log.info("mockbroker listening on %s", self.bootstrap_servers)
        return self

    async def stop(self) -> None:
        self._stopping = True
        self.scheduler.detach()
        for server in self._servers:
            server.close()
        tasks = []
        for conn in list(self._connections):
            conn.close()
            task = conn.cancel_pending()
            if task is not None:
                tasks.append(task)
        if tasks:
            await asyncio.wait(tasks, timeout=2)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        self._servers.clear()

    async def __aenter__(self) -> MockBroker:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[MockBroker]:
        """Run the broker on its own event loop in a daemon thread (for sync code)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def runner() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        thread = threading.Thread(target=runner, name="mockbroker", daemon=True)
        thread.start()
        ready.wait(10)
        self._thread = thread
        asyncio.run_coroutine_threadsafe(self.start(), loop).result(10)
        try:
            yield self
        finally:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
            self._thread = None

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run fn on the broker's loop (hopping threads if needed) and return its result."""
        loop = self._loop
        if loop is None or self._thread is None or threading.current_thread() is self._thread:
            return fn(*args, **kwargs)

        async def call() -> T:
            return fn(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(call(), loop).result(30)

    # -- addresses -------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """"host:port" of the first listener (its advertised address)."""
        first = self.cluster.listeners[0]
        return f"{first.public_host}:{first.public_port}"

    @property
    def host(self) -> str:
        return self.cluster.listeners[0].public_host

    @property
    def port(self) -> int:
        return self.cluster.listeners[0].port

    # -- topics ----------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, config: dict[str, Any] | None = None) -> Topic:
        """Create a topic (raises mockbroker.errors.KafkaError if Kafka would refuse it)."""
        topic = self._call(self.cluster.create_topic, name, partitions, -1, config)
        assert topic is not None
        return topic

    def delete_topic(self, name: str) -> None:
        self._call(self.cluster.delete_topic, name)

    def topics(self) -> list[str]:
        return self._call(lambda: sorted(self.cluster.topics))

    # -- inspection ------------------------------------------------------------------------------
    def records(self, topic: str, partition: int | None = None) -> list[RecordInfo]:
        """Decoded records of a topic (one partition, or all in partition order), control records left out."""

        def collect() -> list[RecordInfo]:
            t = self.cluster.topic(topic)
            if t is None:
                raise KeyError(f"no topic {topic!r}")
            parts = t.partitions if partition is None else [t.partitions[partition]]
            out = []
            for p in parts:
                for batch, rec in p.log.records():
                    out.append(record_info(topic, p.index, batch, rec))
            return out

        return self._call(collect)

    def batches(self, topic: str, partition: int = 0) -> list[BatchInfo]:
        """What each stored batch of a partition holds, with its raw bytes."""

        def collect() -> list[BatchInfo]:
            t = self.cluster.topic(topic)
            if t is None:
                raise KeyError(f"no topic {topic!r}")
            return [batch_info(b) for b in t.partitions[partition].log.batches]

        return self._call(collect)

    def offsets(self, topic: str, partition: int = 0) -> dict[str, int]:
        """log_start_offset, high_watermark and last_stable_offset of a partition."""

        def collect() -> dict[str, int]:
            p = self.cluster.partition(topic, partition)
            if p is None:
                raise KeyError(f"no partition {topic}-{partition}")
            return {
                "log_start_offset": p.log.log_start_offset,
                "high_watermark": p.log.high_watermark,
                "last_stable_offset": p.log.last_stable_offset,
            }

        return self._call(collect)

    def producers(self, topic: str, partition: int = 0) -> list[dict[str, int]]:
        """The producer state a partition holds: id, epoch, last sequence, last timestamp, the first offset
        of the open transaction (-1 if none), and the last five batches' sequence and offset ranges."""

        def collect() -> list[dict[str, Any]]:
            p = self.cluster.partition(topic, partition)
            if p is None:
                raise KeyError(f"no partition {topic}-{partition}")
            return [
                {
                    "producer_id": e.producer_id,
                    "producer_epoch": e.epoch,
                    "last_sequence": e.last_seq,
                    "last_timestamp": e.last_timestamp,
                    "current_txn_start_offset": e.current_txn_first_offset,
                    "batches": [(b.first_seq, b.last_seq, b.first_offset, b.last_offset) for b in e.batches],
                }
                for e in sorted(p.log.producers.entries.values(), key=lambda e: e.producer_id)
            ]

        return self._call(collect)

    def _expire_producers(self) -> None:
        """Drop producer state idle for producer.id.expiration.ms (broker clock), then check again."""
        expiration = int(self.cluster.config.get("producer.id.expiration.ms"))
        now = self.clock.now_ms()
        for topic in self.cluster.topics.values():
            for p in topic.partitions:
                p.log.producers.expire(now, expiration)
        self.scheduler.call_later(min(expiration, PRODUCER_EXPIRATION_CHECK_MS), self._expire_producers)

    # -- compaction and retention (mockbroker/maintenance.py, state/cleaner.py, retention.py) ----
    def compact(self, topic: str, partition: int | None = None) -> list[CleanerStats]:
        """Roll the active segment of a compacted topic's partitions (or one) and run the log cleaner now,
        whatever the dirty ratio; what each pass did. Tombstones and transaction markers go once their
        delete horizon (set by an earlier pass, delete.retention.ms after it) has passed on the broker clock."""
        return self._call(self.log_maintenance.compact, topic, partition)

    def enforce_retention(self, topic: str | None = None) -> int:
        """Run retention now (retention.ms by the broker clock, retention.bytes, the log start offset) on one
        topic or all; the number of segments deleted."""
        return self._call(self.log_maintenance.enforce_retention, topic)

    def segments(self, topic: str, partition: int = 0) -> list[dict[str, int]]:
        """A partition's segments: base and next offset, size, batch count, largest timestamp, active."""

        def collect() -> list[dict[str, int]]:
            p = self.cluster.partition(topic, partition)
            if p is None:
                raise KeyError(f"no partition {topic}-{partition}")
            return describe_segments(p.log)

        return self._call(collect)

    # -- consumer groups (state: mockbroker/state/groups.py) -------------------------------------
    @property
    def group_coordinator(self) -> GroupCoordinator:
        """Every group of the broker and their committed offsets (made on first use)."""
        coordinator = self.__dict__.get("_group_coordinator")
        if coordinator is None:
            coordinator = self.__dict__["_group_coordinator"] = GroupCoordinator(
                self.cluster, self.scheduler, self.clock,
                pending_transactional_offsets=lambda g, t, p: bool(
                    getattr(self, "txn_coordinator", None) and self.txn_coordinator.has_pending_offsets(g, t, p)))
        return coordinator

    def groups(self) -> list[GroupSummary]:
        """Every group: id, type (classic/consumer), protocol type, state, generation (classic) or group epoch
        (KIP-848), and members with their assignments ({topic: partitions})."""
        return self._call(lambda: self.group_coordinator.summaries())

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """A group's committed offsets: {(topic, partition): offset}."""
        return self._call(lambda: self.group_coordinator.committed(group))

    # -- faults and the request record -----------------------------------------------------------
    def inject(
        self,
        api_key: int,
        *,
        error: int | ErrorCode | None = None,
        drop: str | None = None,
        delay: float | None = None,
        count: int = 1,
        topic: str | None = None,
        partition: int | None = None,
    ) -> FaultRule:
        """Make the next `count` requests of api_key (optionally for one topic/partition) fail.

        Exactly one of: error=<code> (answered with that error, not applied), drop="before" (connection
        closed, not applied), drop="after" (applied, then the connection is closed unanswered),
        delay=<seconds> (applied, answer held back).
        """
        chosen = [x is not None for x in (error, drop, delay)]
        if sum(chosen) != 1:
            raise ValueError("give exactly one of error=, drop=, delay=")
        if error is not None:
            spec = dispatch.lookup(api_key)
            if spec is not None and not all(error_responses.supports(api_key, v)
                                            for v in range(spec.min_version, spec.max_version + 1)):
                raise ValueError(f"{spec.name} responses have no field to carry an injected error code "
                                 "(use drop= or delay=)")
            rule = FaultRule(api_key, "error", count, error_code=int(error), topic=topic, partition=partition)
        elif drop is not None:
            if drop not in ("before", "after"):
                raise ValueError('drop must be "before" or "after"')
            rule = FaultRule(api_key, f"drop_{drop}", count, topic=topic, partition=partition)
        else:
            rule = FaultRule(api_key, "delay", count, delay_s=float(delay or 0), topic=topic, partition=partition)
        return self._call(self.faults.add, rule)

    def clear_faults(self) -> None:
        self._call(self.faults.clear)

    def record_request(self, ctx: RequestContext, header: Any) -> None:
        self.requests.add(header.api_key, header.api_version, header.client_id, header.correlation_id,
                          self.clock.now_ms(), ctx.connection_id)

    def received(self, api_key: int | None = None) -> list[ReceivedRequest]:
        """The requests received so far (optionally of one API key)."""
        return self._call(lambda: [r for r in self.requests if api_key is None or r.api_key == api_key])

    def on_connection_closed(self, ctx: RequestContext) -> None:
        pass

    def aborted_transactions(self, partition: Partition, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of aborted transactions overlapping [start, end) (read_committed)."""
        return self.txn_coordinator.aborted_transactions(partition.log, start, end)

    # -- transactions (state: mockbroker/state/txn.py) -------------------------------------------
    def transactions(self) -> list[TransactionInfo]:
        """Every transactional id the coordinator knows: state, producer id and epoch, timeout, start time,
        the partitions of the open transaction and the offsets it holds for groups."""
        return self._call(self.txn_coordinator.transactions)
