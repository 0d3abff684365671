"""MockBroker: listeners, start/stop, in-process use (asyncio or a thread), inspection, faults.

    async with MockBroker(port=0) as broker:          # asyncio code
        ...
    with MockBroker(port=0).run_in_thread() as broker:  # sync code
        ...

All broker state is owned by one event loop. Called from another thread (run_in_thread), the public
methods hop onto the broker's loop and wait for the answer, so tests never race the broker.

The broker is the cluster-wide model (state/cluster.py) plus its nodes (mockbroker/node.py: fetch
sessions, view of leadership, the coordinators they share) in `nodes`: one by default, N with
`brokers=N`. Each listener belongs to a node, and each connection it accepts serves requests as that
node (`ctx.node`). The failure API (stop_node, start_node, move_leader, elect_preferred_leaders,
set_isr, partition_state) changes the model through state/leadership.py and the node's listening
sockets through mockbroker/failures.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from mockbroker import dispatch, error_responses
from mockbroker.acl_api import AclApi
from mockbroker.clock import Clock
from mockbroker.connection import Connection
from mockbroker.context import RequestContext
from mockbroker.failures import NodeServers
from mockbroker.faults import FaultRule, Faults, ReceivedRequest, RequestRecord
from mockbroker.handlers.request_steps import finish_carried_on
from mockbroker.inspection import BatchInfo, RecordInfo, batch_info, record_info
from mockbroker.maintenance import LogMaintenance
from mockbroker.node import BrokerNode
from mockbroker.node_control import NodeControl
from mockbroker.protocol.errors import ErrorCode
from mockbroker.scheduler import Scheduler
from mockbroker.security import principal_of
from mockbroker.security.settings import security_from_settings
from mockbroker.state import leadership, reassignments
from mockbroker.state.appender import Appender
from mockbroker.state.cleaner import CleanerStats
from mockbroker.state.cluster import Cluster, Listener, Topic
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.fetch_sessions import FetchSessionCache
from mockbroker.state.group_common import GroupSummary
from mockbroker.state.group_coordinator import GroupCoordinator
from mockbroker.state.segments import describe_segments
from mockbroker.state.txn import TxnCoordinator
from mockbroker.state.txn_inspection import transactions
from mockbroker.state.txn_metadata import TransactionInfo
from mockbroker.storage import data_dir_from_config

if TYPE_CHECKING:
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.tls import BrokerTls, TlsConfig

log = logging.getLogger("mockbroker")
T = TypeVar("T")
# Kafka checks for expired producer ids every producer.id.expiration.check.interval.ms (10 minutes).
PRODUCER_EXPIRATION_CHECK_MS = 600_000


@dataclass(frozen=True)
class NodeInfo:
    """What broker.nodes() tells of a node."""

    node_id: int
    rack: str | None
    alive: bool
    listeners: list[str]  # NAME://host:port as advertised
    stalled: bool = False  # its replication is stopped (stall_node)
    latency_ms: int = 0  # its answers are this late (set_latency)


class Nodes(dict[int, BrokerNode]):
    """The broker's nodes by id (`broker.nodes[2]`: its services, as connections use them); called,
    `broker.nodes()` lists every node (NodeInfo: id, rack, running or stopped, addresses)."""

    def __init__(self, describe: Callable[[], list[NodeInfo]]) -> None:
        super().__init__()
        self._describe = describe

    def __call__(self) -> list[NodeInfo]:
        return self._describe()


class MockBroker(NodeControl, AclApi):
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
        security: str | None = None,
        users: dict[str, str] | None = None,
        sasl_mechanisms: list[str] | None = None,
        tls: TlsConfig | None = None,
        oauth: OAuthConfig | None = None,
        brokers: int = 1,
        racks: list[str | None] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        acls: bool | None = None,
        super_users: list[str] | None = None,
    ) -> None:
        """A broker (one node) listening on host:port (port 0: a free port, chosen at start).

        config: broker settings in Kafka's names (e.g. {"log.retention.ms": "1000"}).
        listeners: several named listeners (bind + advertised address each); default one PLAINTEXT.
        security: the default listener's security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL);
            the listener is then named after it. Named listeners take Listener(..., security_protocol=...)
            or config["listener.security.protocol.map"].
        users: {name: password} who may log in with every enabled SASL mechanism (see add_user).
        sasl_mechanisms: the enabled mechanisms (default PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; or
            config["sasl.enabled.mechanisms"]).
        tls: TLS key material and ssl.client.auth (mockbroker.security.tls.TlsConfig); by default a
            throwaway CA and server certificate, in broker.tls (ca_file, ca_pem, client_cert()).
        oauth: OAUTHBEARER token validation (mockbroker.security.oauth.OAuthConfig); given, OAUTHBEARER
            is enabled by default (else list it in sasl_mechanisms: unsecured JWTs, Kafka's default).
        brokers: how many nodes (ids node_id, node_id+1, ...); each gets the listeners of the first, on
        the next ports (port 0: each a free port); racks: one per node.
        data_dir: keep the logs there in Kafka's layout and load what it holds (mockbroker/storage; also
        config["log.dirs"] / ["log.dir"]); None: in memory only, nothing touches the disk.
        acls: True turns Kafka's StandardAuthorizer on (as config["authorizer.class.name"] does): every
            request is checked against the ACLs (add_acl, CreateAcls); super_users=["User:admin"] (or
            config["super.users"]) may do everything, and turns it on too.
        """
        settings = dict(config or {})
        if partitions is not None:
            settings["num.partitions"] = partitions
        if auto_create_topics is not None:
            settings["auto.create.topics.enable"] = auto_create_topics
        if max_request_size is not None:
            settings["socket.request.max.bytes"] = max_request_size
        if brokers < 1:
            raise ValueError(f"brokers must be at least 1, got {brokers}")
        if racks is not None and len(racks) != brokers:
            raise ValueError(f"racks names {len(racks)} rack(s) for {brokers} broker(s)")
        self.clock = clock or Clock()
        node_ids = [node_id + i for i in range(brokers)]
        self.cluster = Cluster(node_ids=node_ids, cluster_id=cluster_id, config=BrokerConfig(settings),
                               clock=self.clock)
        for nid, rack in zip(node_ids, racks or [], strict=False):
            self.cluster.nodes[nid].rack = rack
        self.node_id = node_id
        if listeners is not None and security is not None:
            raise ValueError("give security= for the one default listener, or listeners= each with its "
                             "security_protocol, not both")
        if listeners is None:
            protocol = (security or "PLAINTEXT").upper()
            listeners = [Listener(protocol, node_id, host, port, advertised_host, advertised_port, protocol)]
        self.security = security_from_settings(listeners, settings, sasl_mechanisms, tls, oauth, acls,
                                               super_users)
        self.security.now_ms = self.clock.now_ms
        for name, password in (users or {}).items():
            self.security.credentials.add_user(name, password, self.security.mechanisms)
        if brokers > 1 and all(lst.node_id == node_id for lst in listeners):
            listeners = [_shifted(lst, nid, nid - node_id) for nid in node_ids for lst in listeners]
        self.cluster.listeners = listeners
        for listener in listeners:
            if listener.node_id not in self.cluster.nodes:
                raise ValueError(f"listener {listener.name} belongs to node {listener.node_id}, but this broker "
                                 f"runs node(s) {node_ids}")
        self.scheduler = Scheduler(self.clock)
        # The nodes this process runs (mockbroker/node.py): fetch sessions, leadership, and one group and
        # one transaction coordinator that they share (each node serves the keys of the internal partitions
        # it leads).
        self.node = BrokerNode(node_id, self.cluster, self.clock, self.scheduler, security=self.security)
        self.nodes = Nodes(self._node_infos)
        self.nodes[node_id] = self.node
        for nid in node_ids[1:]:
            self.nodes[nid] = BrokerNode(nid, self.cluster, self.clock, self.scheduler, security=self.security,
                                         coordinators_of=self.node)
        self.log_maintenance = LogMaintenance(self.cluster, self.clock, self.scheduler,
                                              txn_index=lambda: self.node.txn_coordinator.aborted)
        data_dir = data_dir if data_dir is not None else data_dir_from_config(settings)
        self.storage = None
        if data_dir is not None:  # imported here: memory mode loads nothing of mockbroker/storage at start-up
            from mockbroker.state.coordinator_load import load_coordinators
            from mockbroker.storage.broker_storage import open_storage
            self.storage = open_storage(data_dir, self.cluster, node_ids, cluster_id_given=cluster_id is not None,
                                        aborted_index=lambda: self.node.txn_coordinator.aborted, security=self.security)
            load_coordinators(self.cluster, lambda: self.node.group_coordinator, self.node.txn_coordinator,
                              log.warning)
        self.faults = Faults()
        self.requests = RequestRecord()
        self.node_latency_ms: dict[int, int] = {}  # set_latency (mockbroker/node_control.py)
        self._isr_check = None
        # When a list, every request frame received is appended to it, raw (tools/capture_frames.py).
        self.capture: list[bytes] | None = None
        self._servers = NodeServers(lambda lst: Connection(self, lst), self._server_options,
                                    lambda: int(self.cluster.config.get("socket.listen.backlog.size")))
        self._connections: set[Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        dispatch.load_handlers()

    def _server_options(self, listener: Listener) -> dict[str, Any]:
        """create_server's TLS options for a listener (none for PLAINTEXT and SASL_PLAINTEXT)."""
        context = self.security.ssl_context(listener)
        if context is None:
            return {}
        return {"ssl": context, "ssl_handshake_timeout": self.security.handshake_timeout_s()}

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> MockBroker:
        self._loop = asyncio.get_running_loop()
        self.scheduler.attach(self._loop)
        self.scheduler.call_later(PRODUCER_EXPIRATION_CHECK_MS, self._expire_producers)
        self.log_maintenance.start()
        self._start_unclean_election_checks()
        for listener in self.cluster.listeners:
            await self._servers.bind(self._loop, listener)
        log.info("mockbroker listening on %s", self.bootstrap_servers)
        return self

    async def stop(self) -> None:
        self._stopping = True
        self.scheduler.detach()
        await self._servers.settle()
        servers = self._servers.all()
        for server in servers:
            server.close()
        tasks = []
        for conn in list(self._connections):
            conn.close()
            task = conn.cancel_pending()
            if task is not None:
                tasks.append(task)
        if tasks:
            await asyncio.wait(tasks, timeout=2)
        await finish_carried_on(2)  # requests whose connection went away mid-way (handlers/request_steps.py)
        for server in servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        self._servers.clear()
        if self.storage is not None:
            self.storage.close()  # snapshots, checkpoints, the clean shutdown marker

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
        """"host:port" of the first listener (its advertised address); with several nodes, the listener of
        that name of each node, comma-separated."""
        first = self.cluster.listeners[0]
        same = [lst for lst in self.cluster.listeners if lst.name == first.name]
        return ",".join(f"{lst.public_host}:{lst.public_port}" for lst in same)

    def listener(self, name: str) -> Listener:
        """The listener called name."""
        for lst in self.cluster.listeners:
            if lst.name == name:
                return lst
        raise KeyError(f"no listener {name!r}")

    def bootstrap_for(self, name: str) -> str:
        """"host:port" of the listener called name (its advertised address)."""
        lst = self.listener(name)
        return f"{lst.public_host}:{lst.public_port}"

    # -- security (mockbroker/security) -----------------------------------------------------------
    @property
    def tls(self) -> BrokerTls:
        """The TLS material of the SSL / SASL_SSL listeners: ca_file, ca_pem, client_cert(name)."""
        tls = self.security.tls
        if tls is None:
            raise ValueError("no listener of this broker uses TLS (security_protocol SSL or SASL_SSL)")
        return tls

    def add_user(self, name: str, password: str, mechanism: str | list[str] | None = None,
                 iterations: int = 4096) -> None:
        """Let name log in with password: with one mechanism, a list, or (None) every enabled one."""
        mechanisms = self.security.mechanisms if mechanism is None else (
            [mechanism] if isinstance(mechanism, str) else list(mechanism))
        self._call(self.security.credentials.add_user, name, password, mechanisms, iterations)

    def remove_user(self, name: str) -> None:
        self._call(self.security.credentials.remove_user, name)

    @property
    def host(self) -> str:
        return self.cluster.listeners[0].public_host

    @property
    def port(self) -> int:
        return self.cluster.listeners[0].port

    # -- topics ----------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, config: dict[str, Any] | None = None,
                     replication_factor: int = -1, assignments: list[list[int]] | None = None) -> Topic:
        """Create a topic (raises mockbroker.errors.KafkaError if Kafka would refuse it); replication_factor
        -1: default.replication.factor; assignments: each partition's replica list, placed by hand."""
        if assignments is not None:
            topic = self._call(self.cluster.create_topic, name, -1, -1, config,
                               assignments=list(enumerate(assignments)))
        else:
            topic = self._call(self.cluster.create_topic, name, partitions, replication_factor, config)
        assert topic is not None
        return topic

    # -- nodes and failures (state/leadership.py, mockbroker/failures.py) ------------------------
    def _node_infos(self) -> list[NodeInfo]:
        return self._call(lambda: [
            NodeInfo(n.node_id, n.rack, n.alive,
                     [f"{lst.name}://{lst.public_host}:{lst.public_port}" for lst in self.cluster.listeners
                      if lst.node_id == n.node_id], n.stalled_since_ms >= 0, self.node_latency_ms.get(n.node_id, 0))
            for _, n in sorted(self.cluster.nodes.items())])

    def stop_node(self, node_id: int) -> None:
        """Stop a node: its listeners close, its connections drop, it leaves every ISR, and the partitions it
        led move to live ISR members (epoch bumped) or go offline; so do the internal partitions, and with
        them the groups and transactional ids they coordinate."""
        def stop() -> None:
            leadership.stop_node(self.cluster, node_id)
            self._servers.close_node(node_id, self._connections)
        self._call(stop)

    def start_node(self, node_id: int) -> None:
        """Start a stopped node again on the same ports; it rejoins the ISRs, leads the offline partitions
        it can (elect_preferred_leaders gives it back its preferred ones)."""
        def start() -> None:
            if self.cluster.nodes[node_id].alive:
                return
            if self._loop is not None and not self._stopping:
                self._servers.bind_now(self._loop, [lst for lst in self.cluster.listeners if lst.node_id == node_id])
            leadership.start_node(self.cluster, node_id)
            reassignments.complete_due(self.cluster, self.clock.now_ms())
        self._call(start)

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

    # -- the node's services (mockbroker/node.py), as the tests and the HTTP API read them --------
    @property
    def group_coordinator(self) -> GroupCoordinator:
        """Every group of the broker and their committed offsets (made on first use)."""
        return self.node.group_coordinator

    @property
    def txn_coordinator(self) -> TxnCoordinator:
        return self.node.txn_coordinator

    @property
    def fetch_sessions(self) -> FetchSessionCache:
        return self.node.fetch_sessions

    @property
    def appender(self) -> Appender:
        return self.node.appender

    # -- consumer groups (state: mockbroker/state/group_coordinator.py) ---------------------------

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
        node: int | None = None,
    ) -> FaultRule:
        """Make the next `count` requests of api_key (optionally for one topic/partition, or only those sent
        to one node) fail.

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
            rule = FaultRule(api_key, "error", count, error_code=int(error), topic=topic, partition=partition,
                             node=node)
        elif drop is not None:
            if drop not in ("before", "after"):
                raise ValueError('drop must be "before" or "after"')
            rule = FaultRule(api_key, f"drop_{drop}", count, topic=topic, partition=partition, node=node)
        else:
            rule = FaultRule(api_key, "delay", count, delay_s=float(delay or 0), topic=topic, partition=partition,
                             node=node)
        return self._call(self.faults.add, rule)

    def clear_faults(self) -> None:
        self._call(self.faults.clear)

    def record_request(self, ctx: RequestContext, header: Any) -> None:
        self.requests.add(header.api_key, header.api_version, header.client_id, header.correlation_id,
                          self.clock.now_ms(), ctx.connection_id, principal_of(ctx), ctx.listener.name, ctx.node_id)

    def received(self, api_key: int | None = None) -> list[ReceivedRequest]:
        """The requests received so far (optionally of one API key)."""
        return self._call(lambda: [r for r in self.requests if api_key is None or r.api_key == api_key])

    def on_connection_closed(self, ctx: RequestContext) -> None:
        pass

    # -- transactions (state: mockbroker/state/txn.py) -------------------------------------------
    def transactions(self) -> list[TransactionInfo]:
        """Every transactional id the coordinator knows: state, producer id and epoch, timeout, start time,
        the partitions of the open transaction and the offsets it holds for groups."""
        return self._call(lambda: transactions(self.txn_coordinator))


def _shifted(listener: Listener, node_id: int, offset: int) -> Listener:
    """The listener of another node: the same name and host, the port (and an advertised port) `offset`
    further on; port 0 stays 0 (a free port each)."""
    return Listener(listener.name, node_id, listener.host, listener.port + offset if listener.port else 0,
                    listener.advertised_host,
                    listener.advertised_port + offset if listener.advertised_port else listener.advertised_port,
                    listener.security_protocol)
