"""MockBroker: listeners, start/stop, in-process use (asyncio or a thread), inspection, faults.

    async with MockBroker(port=0) as broker:          # asyncio code
        ...
    with MockBroker(port=0).run_in_thread() as broker:  # sync code
        ...

All broker state is owned by one event loop. Called from another thread (run_in_thread), the public
methods hop onto the broker's loop and wait for the answer, so tests never race the broker.

The broker is the cluster-wide model (state/cluster/cluster.py) plus its nodes (mockbroker/node.py: fetch
sessions, view of leadership, the coordinators they share) in `nodes`: one by default, N with
`brokers=N`. Each listener belongs to a node, and each connection it accepts serves requests as that
node (`ctx.node`). The failure API (stop_node, start_node, move_leader, elect_preferred_leaders,
set_isr, partition_state) changes the model through state/cluster/leadership.py and the node's listening
sockets through mockbroker/failures.py. Parts it holds, whose methods its own of the same names call:
`node_control` (mockbroker/node_control.py: stalled nodes, latency, leader and coordinator moves, the ISR)
and `acl_admin` (mockbroker/acl_api.py); both run on the broker's loop through the thread hop
(mockbroker/loop_hop.py), as every public method does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from mockbroker import dispatch
from mockbroker.acl_api import AclAdmin
from mockbroker.client_telemetry import ClientMetricsPush, client_metrics
from mockbroker.clock import Clock
from mockbroker.connection import Connection
from mockbroker.context import RequestContext
from mockbroker.failures import NodeServers
from mockbroker.faults import FaultRule, Faults, ReceivedRequest, RequestRecord, make_rule
from mockbroker.inspection import (
    BatchInfo,
    RecordInfo,
    batches_of,
    offsets_of,
    producers_of,
    records_of,
    segments_of,
)
from mockbroker.loop_hop import LoopHop, delegate
from mockbroker.maintenance import LogMaintenance
from mockbroker.node import BrokerNode
from mockbroker.node_control import NodeControl, NodeInfo
from mockbroker.protocol.errors import ErrorCode
from mockbroker.quota_api import QuotaAdmin
from mockbroker.registry.runner import registry_of, start_registry, stop_registry
from mockbroker.scheduler import Scheduler
from mockbroker.security import principal_of
from mockbroker.security.settings import security_from_settings
from mockbroker.settings import BrokerOptions, Settings, make_settings
from mockbroker.snapshots import Snapshot, Snapshots
from mockbroker.startup import create_start_topics, listener_of_node, write_ca
from mockbroker.state.client_metrics import TELEMETRY_APIS, TELEMETRY_ENABLE
from mockbroker.state.cluster import leadership, reassignments
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.cluster.cluster import Cluster, Listener, Topic
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, SHARE_STATE_TOPIC
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.fetch_sessions import FetchSessionCache
from mockbroker.state.groups.common import GroupSummary
from mockbroker.state.groups.coordinator import GroupCoordinator
from mockbroker.state.log.cleaner import CleanerStats
from mockbroker.state.txn.coordinator import TxnCoordinator
from mockbroker.state.txn.inspection import transactions
from mockbroker.state.txn.metadata import TransactionInfo
from mockbroker.storage import data_dir_from_config
from mockbroker.waits import Waits

if TYPE_CHECKING:
    from mockbroker.intercept import Hook
    from mockbroker.registry.decode import DecodedRecord
    from mockbroker.registry.http import RegistryServer
    from mockbroker.security.tls import BrokerTls

log = logging.getLogger("mockbroker")
T = TypeVar("T")
# Kafka checks for expired producer ids every producer.id.expiration.check.interval.ms (10 minutes).


class Nodes(dict[int, BrokerNode]):
    """The broker's nodes by id (`broker.nodes[2]`: its services, as connections use them); called,
    `broker.nodes()` lists every node (NodeInfo: id, rack, running or stopped, addresses)."""

    def __init__(self, describe: Callable[[], list[NodeInfo]]) -> None:
        super().__init__()
        self._describe = describe

    def __call__(self) -> list[NodeInfo]:
        return self._describe()


class MockBroker:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, clock: Clock | None = None,
                 **options: Unpack[BrokerOptions]) -> None:
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
        defaults: "test" (the default): `config` over mockbroker/settings.py TEST_DEFAULTS; "kafka": over Kafka's.
        kafka_version: play that Kafka release ("2.8", "3.0" ... "4.3"): its API versions and behaviours
            (mockbroker/personas.py); None (the default): every version mockbroker serves.
        max_versions: {api_key: version}, the newest version served of each (ApiVersions and requests).
        schema_registry: True (a free port) or a port: a Schema Registry beside it (broker.schema_registry_url).
        """
        self._build(make_settings(host, port, **options), clock)

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock | None = None) -> MockBroker:
        """A broker made from a settings object (mockbroker/settings.py; the command's route)."""
        broker = cls.__new__(cls)
        broker._build(settings, clock)
        return broker

    @property
    def settings(self) -> Settings:
        """What the broker was made from (frozen; dynamic configs live in cluster.config)."""
        return self._settings

    @property
    def node_id(self) -> int:  # the first node's (broker.node)
        return self._settings.node_id

    @property
    def seed(self) -> int:  # every random choice's source: settings.seed or one drawn (state/seeding.py)
        return self.cluster.seed

    def _build(self, settings: Settings, clock: Clock | None) -> None:
        """Make the broker from its settings, which it keeps (broker.settings) and reads nothing else of."""
        self._settings = settings
        self.clock = clock or Clock()
        self._hop = LoopHop()  # every public method runs on the broker's loop (mockbroker/loop_hop.py)
        node_id = settings.node_id
        node_ids = [node_id + i for i in range(settings.brokers)]
        self.cluster = Cluster(node_ids=node_ids, cluster_id=settings.cluster_id, config=BrokerConfig(settings.config),
                               clock=self.clock, seed=settings.seed)
        for nid, rack in zip(node_ids, settings.racks or [], strict=False):
            self.cluster.nodes[nid].rack = rack
        self.security = security_from_settings(settings)
        self.security.now_ms = self.clock.now_ms
        listeners = [dataclasses.replace(lst) for lst in settings.listeners]  # bound here; the settings' stay
        if len(node_ids) > 1 and all(lst.node_id == node_id for lst in listeners):
            listeners = [listener_of_node(lst, nid, nid - node_id) for nid in node_ids for lst in listeners]
        self.cluster.listeners = listeners
        self.scheduler = Scheduler(self.clock)
        self.node_control = NodeControl(self.cluster, self.clock, self.scheduler, self._hop)
        self.node_latency_ms = self.node_control.latency_ms  # what connections delay answers by (set_latency)
        # The nodes this process runs (mockbroker/node.py): fetch sessions, leadership, and one group and
        # one transaction coordinator that they share (each node serves the keys of the internal partitions
        # it leads).
        persona = settings.persona if self.cluster.config.get(TELEMETRY_ENABLE) else dataclasses.replace(
            settings.persona, hidden=settings.persona.hidden | TELEMETRY_APIS)  # as Kafka without a telemetry reporter
        self.node = BrokerNode(node_id, self.cluster, self.clock, self.scheduler, security=self.security,
                               persona=persona)
        self.nodes = Nodes(self.node_control.node_infos)
        self.nodes[node_id] = self.node
        for nid in node_ids[1:]:
            self.nodes[nid] = BrokerNode(nid, self.cluster, self.clock, self.scheduler, security=self.security,
                                         coordinators_of=self.node, persona=persona)
        self.log_maintenance = LogMaintenance(self.cluster, self.clock, self.scheduler,
                                              txn_index=lambda: self.node.txn_coordinator.aborted)
        data_dir = settings.data_dir if settings.data_dir is not None else data_dir_from_config(settings.config)
        self.storage = None
        if data_dir is not None:  # imported here: memory mode loads nothing of mockbroker/storage at start-up
            from mockbroker.state.coordinators.load import load_coordinators
            from mockbroker.storage.broker_storage import open_storage
            self.storage = open_storage(data_dir, self.cluster, node_ids, cluster_id_given=settings.cluster_id is not None,
                                        aborted_index=lambda: self.node.txn_coordinator.aborted, security=self.security)
            load_coordinators(self.cluster, lambda: self.node.group_coordinator, self.node.txn_coordinator,
                              log.warning)
            if any(self.cluster.topic(t) is not None for t in (OFFSETS_TOPIC, SHARE_STATE_TOPIC)):
                self.node.share_coordinator  # noqa: B018 (made on first use, which loads share groups: now, as Kafka)
        create_start_topics(self.cluster, settings.topics)
        write_ca(self.security, settings.ssl_ca_out)  # TLS material made now: bad key material fails here, not at start
        self.faults = Faults(self.cluster.random)
        self.requests = RequestRecord()
        self.acl_admin = AclAdmin(self.security, self._hop)
        self.snapshots = Snapshots(self)  # snapshot / restore / reset (mockbroker/snapshots.py)
        self.waits = Waits(self.cluster, self.node, self._hop)  # wait_for_* (mockbroker/waits.py)
        self.quota_admin = QuotaAdmin(self.cluster.quotas, self._hop)  # set_quota / quotas (quota_api.py)
        # When a list, every request frame received is appended to it, raw (tools/capture_frames.py).
        self.capture: list[bytes] | None = None
        self._servers = NodeServers(lambda lst: Connection(self, lst), self._server_options,
                                    lambda: int(self.cluster.config.get("socket.listen.backlog.size")))
        self._connections: set[Connection] = set()
        self._stopping = False
        self.schema_registry: RegistryServer | None = None  # a Schema Registry, started with the broker when asked
        dispatch.load_handlers()

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run fn on the broker's loop (hopping threads if needed) and return its result."""
        return self._hop.call(fn, *args, **kwargs)

    # The thread hop's loop and thread under their former names (tests and benchmarks read them).
    @property
    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return self._hop.loop

    @property
    def _thread(self) -> threading.Thread | None:
        return self._hop.thread

    def _server_options(self, listener: Listener) -> dict[str, Any]:
        """create_server's TLS options for a listener (none for PLAINTEXT and SASL_PLAINTEXT)."""
        context = self.security.ssl_context(listener)
        if context is None:
            return {}
        return {"ssl": context, "ssl_handshake_timeout": self.security.handshake_timeout_s()}

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> MockBroker:
        loop = self._hop.loop = asyncio.get_running_loop()
        self.scheduler.attach(loop)
        self.log_maintenance.start()
        self.node_control.start_unclean_election_checks()
        for listener in self.cluster.listeners:
            await self._servers.bind(loop, listener)
        self.schema_registry = await start_registry(self.cluster, self.node.appender, self.clock,  # registry/runner.py
                                                    self._settings.schema_registry_port, self.cluster.listeners[0].host,
                                                    self.security.tls, self.security.credentials)
        self.snapshots.mark_start()  # what reset() goes back to
        log.info("mockbroker listening on %s", self.bootstrap_servers)
        return self

    async def stop(self) -> None:
        self._stopping = True
        self.scheduler.detach()
        await stop_registry(self.schema_registry)
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
        # requests whose connection went away mid-way (BrokerNode.carried_on, carried_on.py)
        await asyncio.gather(*(node.carried_on.finish(2) for node in self.nodes.values()))
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
        self._hop.thread = thread
        asyncio.run_coroutine_threadsafe(self.start(), loop).result(10)
        try:
            yield self
        finally:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
            self._hop.thread = None

    def snapshot(self) -> Snapshot:
        """The whole broker state now, in memory (mockbroker/snapshots.py)."""
        return self.snapshots.snapshot()

    def restore(self, snap: Snapshot) -> None:
        """Bring back a snapshot's state; client connections are closed (mockbroker/snapshots.py)."""
        self.snapshots.restore(snap)

    def reset(self) -> None:
        """Back to the state right after start (mockbroker/snapshots.py)."""
        self.snapshots.reset()

    # -- addresses -------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """"host:port" of the first listener (its advertised address); with several nodes, the listener of
        that name of each node, comma-separated."""
        first = self.cluster.listeners[0]
        same = [lst for lst in self.cluster.listeners if lst.name == first.name]
        return ",".join(f"{lst.public_host}:{lst.public_port}" for lst in same)

    @property
    def schema_registry_url(self) -> str:
        """The Schema Registry's URL (MockBroker(schema_registry=True) or a port, once started)."""
        if self.schema_registry is None:
            raise RuntimeError("no Schema Registry: MockBroker(schema_registry=True), started")
        return self.schema_registry.url

    @property
    def listeners(self) -> list[Listener]:
        """Every listener of every node, in node order (bound ports once started)."""
        return list(self.cluster.listeners)

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

    # -- nodes and failures (state/cluster/leadership.py, mockbroker/failures.py) ------------------------
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
            if self._hop.loop is not None and not self._stopping:
                self._servers.bind_now(self._hop.loop, [lst for lst in self.cluster.listeners if lst.node_id == node_id])
            leadership.start_node(self.cluster, node_id)
            reassignments.complete_due(self.cluster, self.clock.now_ms())
        self._call(start)

    # -- the rest of the failure API: broker.node_control (mockbroker/node_control.py) ---------------
    stall_node = delegate("node_control", NodeControl.stall_node)
    resume_node = delegate("node_control", NodeControl.resume_node)
    set_latency = delegate("node_control", NodeControl.set_latency)
    move_leader = delegate("node_control", NodeControl.move_leader)
    move_coordinator = delegate("node_control", NodeControl.move_coordinator)
    elect_preferred_leaders = delegate("node_control", NodeControl.elect_preferred_leaders)
    partition_state = delegate("node_control", NodeControl.partition_state)
    set_isr = delegate("node_control", NodeControl.set_isr)

    def delete_topic(self, name: str) -> None:
        self._call(self.cluster.delete_topic, name)

    def topics(self) -> list[str]:
        return self._call(lambda: sorted(self.cluster.topics))
    def topic(self, name: str) -> str: return name  # a test's name as the cluster has it: itself here; RemoteBroker prefixes
    group = transactional_id = topic  # likewise a group id and a transactional id (docs/remote-target.md)

    # -- inspection ------------------------------------------------------------------------------
    def records(self, topic: str, partition: int | None = None) -> list[RecordInfo]:
        """Decoded records of a topic (one partition, or all in partition order), control records left out."""
        return self._call(records_of, self.cluster, topic, partition)

    def schemas(self) -> list[dict[str, Any]]:
        """The Schema Registry's versions: subject, version, id, schema, deleted (mockbroker/registry)."""
        return self._call(lambda: registry_of(self.schema_registry).listing())

    def decoded_records(self, topic: str, partition: int | None = None) -> list[DecodedRecord]:
        """records(), each key and value decoded through the Schema Registry (registry/decode.py)."""
        from mockbroker.registry.decode import decoded_records
        return self._call(lambda: decoded_records(registry_of(self.schema_registry),
                                                  records_of(self.cluster, topic, partition)))

    def batches(self, topic: str, partition: int = 0) -> list[BatchInfo]:
        """What each stored batch of a partition holds, with its raw bytes."""
        return self._call(batches_of, self.cluster, topic, partition)

    def offsets(self, topic: str, partition: int = 0) -> dict[str, int]:
        """log_start_offset, high_watermark and last_stable_offset of a partition."""
        return self._call(offsets_of, self.cluster, topic, partition)

    def producers(self, topic: str, partition: int = 0) -> list[dict[str, Any]]:
        """The producer state a partition holds: id, epoch, last sequence, last timestamp, the first offset
        of the open transaction (-1 if none), and the last five batches' sequence and offset ranges."""
        return self._call(producers_of, self.cluster, topic, partition)

    # -- compaction and retention (mockbroker/maintenance.py, state/log/cleaner.py, retention.py) ----
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
        return self._call(segments_of, self.cluster, topic, partition)

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

    # -- consumer groups (state: mockbroker/state/groups/coordinator.py) ---------------------------

    def groups(self) -> list[GroupSummary]:
        """Every group: id, type (classic/consumer), protocol type, state, generation (classic) or group epoch
        (KIP-848), and members with their assignments ({topic: partitions})."""
        return self._call(lambda: self.group_coordinator.summaries())

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """A group's committed offsets: {(topic, partition): offset}."""
        return self._call(lambda: self.group_coordinator.committed(group))

    def share_groups(self) -> dict[str, dict[str, Any]]:
        """Every share group, members and share partitions record by record (ShareCoordinator.describe)."""
        return self._call(lambda: self.node.share_coordinator.describe(self.clock.now_ms()))

    # -- ACLs: broker.acl_admin (mockbroker/acl_api.py) -----------------------------------------------
    add_acl = delegate("acl_admin", AclAdmin.add_acl)
    remove_acls = delegate("acl_admin", AclAdmin.remove_acls)
    acls = delegate("acl_admin", AclAdmin.acls)

    def set_quota(self, **entity_and_values: Any) -> None:
        """Set client quotas on one entity: user=, client_id=, ip=, then the keys (QuotaAdmin.set_quota)."""
        self.quota_admin.set_quota(**entity_and_values)

    def quotas(self) -> list[dict[str, Any]]:
        """Every client quota entity and its values (QuotaAdmin.quotas)."""
        return self.quota_admin.quotas()

    # -- faults and the request record -----------------------------------------------------------
    def inject(self, api_key: int, *, error: int | ErrorCode | None = None, drop: str | None = None,
               delay: float | None = None, count: int = 1, topic: str | None = None, partition: int | None = None,
               node: int | None = None, probability: float = 1.0) -> FaultRule:
        """Make the next `count` requests of api_key (optionally for one topic/partition, or only those sent
        to one node) fail: exactly one of error=<code>, drop="before"|"after", delay=<seconds>
        (faults.make_rule says what each does); probability < 1: each matching one by chance, from broker.seed."""
        rule = make_rule(api_key, error=error, drop=drop, delay=delay, count=count, topic=topic,
                         partition=partition, node=node, probability=probability)
        return self._call(self.faults.add, rule)

    def clear_faults(self) -> None:
        self._call(self.faults.clear)

    def intercept(self, api_key: int, fn: Callable[..., Any], *, node: int | None = None,
                  count: int | None = None) -> Hook:
        """Let fn(request, context) answer api_key's requests (mockbroker/intercept.py); .remove() undoes it."""
        return self._call(self.faults.add_hook, api_key, fn, node, count, self._call)

    def clear_intercepts(self) -> None:
        """Remove every request hook."""
        self._call(self.faults.clear_hooks)

    def record_request(self, ctx: RequestContext, header: Any) -> None:
        self.requests.add(header.api_key, header.api_version, header.client_id, header.correlation_id,
                          self.clock.now_ms(), ctx.connection_id, principal_of(ctx), ctx.listener.name, ctx.node_id)

    def received(self, api_key: int | None = None) -> list[ReceivedRequest]:
        """The requests received so far (optionally of one API key)."""
        return self._call(lambda: [r for r in self.requests if api_key is None or r.api_key == api_key])

    def connection_opened(self, connection: Connection) -> None:
        self._connections.add(connection)

    def connection_closed(self, connection: Connection) -> None:
        """A connection closed: it goes, and the share session it opened ends (ShareCoordinator.connection_closed)."""
        self._connections.discard(connection)
        if connection.ctx is not None and not self._stopping and connection.node.share_coordinator_started:
            connection.node.share_coordinator.connection_closed(connection.ctx.connection_id)

    def client_metrics(self, client_id: str | None = None) -> list[ClientMetricsPush]:
        """What clients pushed with KIP-714 telemetry, decoded, oldest first (mockbroker/client_telemetry.py)."""
        return client_metrics(self._call(lambda: list(self.cluster.client_metrics.pushes)), client_id)

    def subscribe_client_metrics(self, name: str, metrics: str = "*", interval_ms: int = 300_000, match: str = "") -> None:
        """A CLIENT_METRICS subscription (KIP-714), as kafka-client-metrics.sh --alter sets one; metrics="" removes it."""
        configs = {"metrics": metrics, "interval.ms": str(interval_ms), "match": match} if metrics else {}
        self._call(self.cluster.client_metrics.subscribe, name, configs)

    # -- transactions (state: mockbroker/state/txn/coordinator.py) -------------------------------------------
    def transactions(self) -> list[TransactionInfo]:
        """Every transactional id the coordinator knows: state, producer id and epoch, timeout, start time,
        the partitions of the open transaction and the offsets it holds for groups."""
        return self._call(lambda: transactions(self.txn_coordinator))

    # -- waits for records, groups, offsets, transactions, sync and async: broker.waits (mockbroker/waits.py)
    wait_for_records = delegate("waits", Waits.wait_for_records)
    wait_for_group = delegate("waits", Waits.wait_for_group)
    wait_for_committed = delegate("waits", Waits.wait_for_committed)
    wait_for_transaction = delegate("waits", Waits.wait_for_transaction)
    wait_for_records_async = delegate("waits", Waits.wait_for_records_async)
    wait_for_group_async = delegate("waits", Waits.wait_for_group_async)
    wait_for_committed_async = delegate("waits", Waits.wait_for_committed_async)
    wait_for_transaction_async = delegate("waits", Waits.wait_for_transaction_async)
