"""Snapshots of a broker's whole state in memory; restore; reset to the state right after start.

`broker.snapshot()` copies every room of the model (issue 34): the cluster (topics, partitions with their leaders,
epochs, ISRs and logs, producer ids given out, the broker's dynamic configs, topic configs), the transaction
coordinator (transactional ids, open transactions, the aborted-transaction index, offsets held for groups), the
group coordinator (groups, members, committed offsets) and what it wrote to `__consumer_offsets`, the share coordinator
(share groups and members, share partitions with their in-flight records and acquisition locks, share sessions, group
configs, the persisted share state; `__share_group_state` is in the cluster), the SCRAM and
PLAIN users, the ACL bindings, the fault rules, the request record and the clock's offset (how far tests moved
it). `broker.restore(snap)` brings it all back; a snapshot can be restored any number of times.

How, cheaply: every room is a "root" object the rest of the broker holds (nodes, handlers, the HTTP API); a
root keeps its identity and gets its attributes back in place, so nothing needs rewiring. What a root holds is
copied as `copy.deepcopy` would, by state/copying.py's faster copy_value, over one memo that maps every root, the
broker's services (nodes, scheduler, clock, listeners, settings, security) to themselves; Python's cyclic garbage
collector is paused while it runs (the copies all live on). A partition log copies itself
(`PartitionLog.__deepcopy__`, state/log/partition_log.py): its stored batches are shared, never copied (a stored
batch never changes), and the lists indexing them are copied shallowly. A restore copies every topic, changed
or not (benchmarks/bench_snapshot.py: 3-3.5 ms of CPU median for 100 topics, more on a loaded machine). The
state's timers (group sessions, rebalances, offsets cleanup, transaction timeouts and expiry) are copied with their
callbacks bound to the copies, and put on the scheduler again on restore; the current ones are cancelled first.
Share groups (docs/snapshots.md, "Share groups after a restore"): the share coordinator keeps its identity (the node's
clock hook and lock wake-ups hold it), restored in place, emptied in place when it was made after the snapshot; its
listeners (parked ShareFetch requests) stay the live ones. Each restored acquisition lock gets a wake-up at its
expiry; wake-ups set before the restore may still come, and end only the locks due by then. Share sessions come
back as they were but owned by no connection: the connections the restore closes release nothing restored.

What restore also does, as a broker that lost its state would look to clients: every client connection is
closed (Kafka clients reconnect and ask for metadata again; parked requests, a long-poll Fetch or a JoinGroup,
go with their connection) and every node's fetch sessions are dropped. A client then hears what the state says:
UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for a topic made after the snapshot, UNKNOWN_MEMBER_ID for a
group member that joined after it, INVALID_PRODUCER_EPOCH / an unknown producer for producers and
transactional ids the snapshot does not know. An idempotent producer that wrote after the snapshot finds its
sequence ahead of the restored partition's (OUT_OF_ORDER_SEQUENCE_NUMBER, fatal for librdkafka, as after a broker
lost acknowledged data): make producers again after a restore. One thing is not brought back: the next producer
id, which only moves forward, so no producer id is given twice.

Not in a snapshot: which nodes are running (restore refuses when a node was stopped or started since:
SnapshotError), node latency and stalls, the Schema Registry, the capture list. Memory mode only: a broker
with a data dir refuses (SnapshotError), its files would no longer match the model.
"""

from __future__ import annotations

import copy
import gc
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from mockbroker.clock import Clock
from mockbroker.scheduler import Scheduler, Timer
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.copying import copy_value, shallow_copy
from mockbroker.state.share.coordinator import ShareCoordinator

T = TypeVar("T")


class SnapshotHost(Protocol):
    """What snapshots use of the broker (mockbroker/server.py's MockBroker, which imports this module)."""

    cluster: Cluster
    clock: Clock
    scheduler: Scheduler
    node: Any  # BrokerNode: its coordinators
    security: Any  # BrokerSecurity: users, the authorizer's ACLs
    faults: Any
    requests: Any
    node_control: Any
    log_maintenance: Any
    storage: Any  # None in memory mode
    _connections: set[Any]

    @property
    def settings(self) -> Any: ...

    @property
    def nodes(self) -> Mapping[int, Any]: ...  # every BrokerNode: fetch sessions

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...


class SnapshotError(RuntimeError):
    """A snapshot cannot be taken or restored on this broker (a data dir; nodes stopped or started since)."""


def _placeholder() -> None:
    """A copied timer's callback until the copy of the real one is bound (never runs)."""


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A broker's state at one moment (broker.snapshot()); restore it with broker.restore(snap)."""

    taken_ms: int  # the broker clock when taken
    nodes_alive: dict[int, bool]  # which nodes ran; restore refuses if that changed
    roots: tuple[tuple[str, Any, dict[str, Any] | None], ...]  # (room, its object or None, its attributes)
    timers: tuple[Timer, ...]  # the live state timers among the copied attributes (on no scheduler)
    clock: tuple[int, int]  # the clock's manual offset and frozen time


# -- the rooms: where each root lives on the broker, how to read it and put it back ---------------------------

def rooms(broker: SnapshotHost) -> list[tuple[str, Any]]:
    """(room, object) for every root of the state; None for a room made on first use and not made yet."""
    node = broker.node
    security = broker.security
    authorizer = security.authorizer
    return [
        ("cluster", broker.cluster),
        ("config", broker.cluster.config),
        ("txn", node.txn_coordinator),
        ("groups", node._group_coordinator),
        ("coordinator_log", node._coordinator_log),
        ("share", node._share_coordinator),
        ("credentials", security._credentials),
        ("acls", authorizer.acls if authorizer is not None else None),
        ("faults", broker.faults),
        ("requests", broker.requests),
    ]


def _put_root(broker: SnapshotHost, room: str, obj: Any) -> None:
    """Make obj the broker's object of a room made on first use (None: not made, made again on next use)."""
    if room == "groups":
        broker.node._group_coordinator = obj
    elif room == "coordinator_log":
        broker.node._coordinator_log = obj
    elif room == "credentials":
        broker.security._credentials = obj
    elif room == "share":
        broker.node._share_coordinator = obj


# Attributes of a room that are not state but the live broker's: never copied, the live ones kept on restore. The
# share coordinator's listeners are the wake-ups of parked ShareFetch requests (asyncio events of connections).
_LIVE: dict[str, frozenset[str]] = {"share": frozenset({"listeners"})}


def _state_attrs(room: str, obj: Any) -> dict[str, Any]:
    """What a snapshot copies of a root: its attributes, those in _LIVE left out."""
    live = _LIVE.get(room)
    return obj.__dict__ if live is None else {k: v for k, v in obj.__dict__.items() if k not in live}


def _state_timers(roots: list[tuple[str, Any, dict[str, Any] | None]]) -> list[Timer]:
    """The timers the state holds: the group coordinator's (sessions, rebalances, offsets cleanup) and the
    transaction coordinator's (each open transaction's timeout, the expiry check). Read from the attributes."""
    timers: list[Timer] = []
    for room, _obj, attrs in roots:
        if attrs is None:
            continue
        if room == "groups":
            timers.extend(attrs["timers"]._timers.values())
        elif room == "txn":
            timers.extend(t.timer for t in attrs["txns"].values() if t.timer is not None)
            if attrs["_expiry_timer"] is not None:
                timers.append(attrs["_expiry_timer"])
    return [t for t in timers if isinstance(t, Timer)]


# -- copying --------------------------------------------------------------------------------------------------

def _shared(broker: SnapshotHost, roots: list[tuple[str, Any]]) -> dict[int, Any]:
    """The memo that keeps roots and services as they are: a copy refers to the same objects."""
    keep: list[Any] = [broker, broker.clock, broker.scheduler, broker.security, broker.settings, broker.cluster.nodes,
                       broker.node_control, broker.log_maintenance, *broker.cluster.listeners,
                       broker.cluster.changes]  # the waits' signal: open waits stay subscribed across a restore
    keep.extend(broker.nodes.values())
    keep.extend(node.appender for node in broker.nodes.values())
    keep.extend(obj for _room, obj in roots if obj is not None)
    return {id(obj): obj for obj in keep}


def _copy_callable(fn: Any, memo: dict[int, Any]) -> Any:
    """A timer's callback bound to the copies: a bound method on the copy of its object, a closure with its
    cells copied (deepcopy shares functions, which would leave the callback on the old objects)."""
    if isinstance(fn, types.MethodType):
        return types.MethodType(fn.__func__, copy.deepcopy(fn.__self__, memo))
    if isinstance(fn, types.FunctionType) and fn.__closure__:
        cells = []
        for cell in fn.__closure__:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                cells.append(types.CellType())
                continue
            is_function = isinstance(value, types.FunctionType | types.MethodType)
            cells.append(types.CellType(_copy_callable(value, memo) if is_function else copy.deepcopy(value, memo)))
        new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
        new.__kwdefaults__ = fn.__kwdefaults__
        return new
    return fn


def _copy_root_attrs(kind: type, attrs: dict[str, Any], memo: dict[int, Any]) -> dict[str, Any]:
    """A root's attributes copied; those its class names in SNAPSHOT_SHALLOW (collections of entries that never
    change, as the request record's) one level only."""
    shallow: frozenset[str] = getattr(kind, "SNAPSHOT_SHALLOW", frozenset())
    return {key: shallow_copy(value) if key in shallow else copy_value(value, memo) for key, value in attrs.items()}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a copy runs (back as it was after). A copy makes thousands of
    objects, which all live on: the collections their count would start (of the young generations, each 700 new
    objects, and of the older ones every 10 of those) would visit them and free nothing. The count goes on, so
    one collection of the young generations comes at the next allocation after the copy."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _copy_state(roots: list[tuple[str, Any, dict[str, Any] | None]], timers: list[Timer],
                memo: dict[int, Any]) -> tuple[list[tuple[str, Any, dict[str, Any] | None]], list[Timer]]:
    """Copy each root's attributes and the state's timers over one memo; the copied timers are on no scheduler."""
    with _collector_paused():
        return _copy_state_now(roots, timers, memo)


def _copy_state_now(roots: list[tuple[str, Any, dict[str, Any] | None]], timers: list[Timer],
                    memo: dict[int, Any]) -> tuple[list[tuple[str, Any, dict[str, Any] | None]], list[Timer]]:
    copies: list[Timer] = []
    for timer in timers:
        twin = Timer(timer.due_ms, _placeholder)
        if timer.cancelled:
            twin.cancelled = True
        else:
            copies.append(twin)
        memo[id(timer)] = twin
    copied = [(room, obj, None if attrs is None else _copy_root_attrs(type(obj), attrs, memo)) for room, obj, attrs in roots]
    for timer in timers:
        if not timer.cancelled:
            memo[id(timer)].callback = _copy_callable(timer.callback, memo)
    return copied, copies


def _check_memory_mode(broker: SnapshotHost) -> None:
    if broker.storage is not None:
        raise SnapshotError("snapshots need a broker in memory mode: this one keeps its logs in a data dir "
                            "(MockBroker(data_dir=...) / log.dirs), whose files would no longer match a restored state")


def take(broker: SnapshotHost) -> Snapshot:
    """The broker's whole state now (call on the broker's loop: MockBroker.snapshot hops there)."""
    _check_memory_mode(broker)
    live = rooms(broker)
    roots = [(room, obj, None if obj is None else _state_attrs(room, obj)) for room, obj in live]
    copied, timers = _copy_state(roots, _state_timers(roots), _shared(broker, live))
    clock = broker.clock
    return Snapshot(taken_ms=clock.now_ms(), nodes_alive={n: node.alive for n, node in broker.cluster.nodes.items()},
                    roots=tuple(copied), timers=tuple(timers), clock=(clock._offset_ms, clock._frozen_ms))


def restore(broker: SnapshotHost, snap: Snapshot) -> None:
    """Put the broker's state back to snap (on the broker's loop): every room in place, its timers on the
    scheduler again, every client connection closed and every fetch session dropped."""
    _check_memory_mode(broker)
    alive = {n: node.alive for n, node in broker.cluster.nodes.items()}
    if alive != snap.nodes_alive:
        raise SnapshotError(f"nodes running now {sorted(n for n, a in alive.items() if a)} differ from those at the "
                            f"snapshot {sorted(n for n, a in snap.nodes_alive.items() if a)}: start or stop them first")
    live = rooms(broker)
    for timer in _state_timers([(room, obj, None if obj is None else obj.__dict__) for room, obj in live]):
        timer.cancel()
    next_producer_id = broker.cluster._next_producer_id
    memo = _shared(broker, live)
    memo.update((id(obj), obj) for _room, obj, _attrs in snap.roots if obj is not None)
    copied, timers = _copy_state(list(snap.roots), list(snap.timers), memo)
    live_objs = dict(live)
    for room, obj, attrs in copied:
        if attrs is None:
            if room != "share" or live_objs[room] is None:
                _put_root(broker, room, None)
            continue  # a share coordinator made since is emptied in place below (its timers and clock hook stay)
        kept = {key: obj.__dict__[key] for key in _LIVE.get(room, ()) if key in obj.__dict__}
        obj.__dict__.clear()
        obj.__dict__.update(attrs)
        obj.__dict__.update(kept)
        _put_root(broker, room, obj)
    # Producer ids are never given twice (Kafka's come from blocks that only move forward): a producer made
    # after the snapshot keeps an id no new producer gets.
    broker.cluster._next_producer_id = max(broker.cluster._next_producer_id, next_producer_id)
    for timer in timers:
        broker.scheduler.adopt(timer)
    broker.clock._offset_ms, broker.clock._frozen_ms = snap.clock
    share = broker.node._share_coordinator
    if share is not None:
        if dict((room, attrs) for room, _obj, attrs in snap.roots)["share"] is None:
            _empty_share(broker, share, live_objs["coordinator_log"])
        _arm_share_locks(share)
        share.disown_sessions()  # the connections closed below end no restored session (docs/snapshots.md)
    for node in broker.nodes.values():
        node.fetch_sessions.sessions.clear()
    for conn in list(broker._connections):
        conn.close()
    broker.scheduler.run_due()  # what became due with the clock set back (nothing, usually)


def _empty_share(broker: SnapshotHost, share: ShareCoordinator, old_log: Any) -> None:
    """The share coordinator made since the snapshot (none then) back to a new one's state, in place: the node's
    closures (its clock hook, the lock timers it set) hold this object. What the node wired into it stays: the
    callables set on it, its store and its group log (the broker clock, the scheduler's wake-up, the coordinator log's writers),
    the parked requests' listeners. Those bound to objects the restore replaced are bound again: to the restored
    transaction coordinator's aborted index, and to the node's coordinator log when old_log (the one before the
    restore) is no longer it (made after the snapshot too, it goes: the next use makes one)."""
    wired = {key: value for key, value in share.__dict__.items() if callable(value) or key in _LIVE["share"]}
    parts = ("store", "group_log")  # the parts whose callables the node sets (the coordinator log's writers)
    parts_wired = {part: {key: value for key, value in getattr(share, part).__dict__.items() if callable(value)}
                   for part in parts}
    share.__dict__.clear()
    ShareCoordinator.__init__(share, broker.cluster)
    share.__dict__.update(wired)
    for part in parts:
        getattr(share, part).__dict__.update(parts_wired[part])
    if share.aborted_entries is not None:
        share.aborted_entries = broker.node.txn_coordinator.aborted.entries
    if old_log is not None and broker.node._coordinator_log is not old_log:
        for attrs in (share.__dict__, share.store.__dict__, share.group_log.__dict__):
            for key, value in attrs.items():
                if isinstance(value, types.MethodType) and value.__self__ is old_log:
                    attrs[key] = types.MethodType(value.__func__, broker.node.coordinator_log)
    share.state_jobs.start(share.now_ms(), share.wake_at)  # armed, as the node's load arms a new one's


def _arm_share_locks(share: ShareCoordinator) -> None:
    """A restored acquisition lock runs out on time on the broker clock (its expiry is kept, as the clock is put
    back), and so do the state topic's jobs: a wake-up at each lock expiry and job time (only acquired records have one), as each acquisition sets one. Wake-ups
    set before the restore may still come: each ends only the locks due by then, which never wrongs the restored
    state."""
    if share.wake_at is None:
        return
    dues = {rec.lock_expiry_ms for sp in share.partitions.values() for rec in sp.records.values()
            if rec.lock_expiry_ms is not None}
    jobs = share.state_jobs  # the prune and cold-snapshot jobs (state_jobs.py) at their restored times
    dues.update(due for due in (jobs.next_prune_ms, jobs.next_cold_snapshot_ms) if due is not None)
    for due in sorted(dues):
        share.wake_at(due)


class Snapshots:
    """The broker's part for snapshots: the one taken at start (what reset goes back to), and those kept by id
    for the HTTP API (mockbroker/http/snapshots.py)."""

    def __init__(self, broker: SnapshotHost) -> None:
        self._broker = broker
        self.at_start: Snapshot | None = None
        self.kept: dict[str, Snapshot] = {}
        self._next_id = 1

    def mark_start(self) -> None:
        """Take the snapshot reset() goes back to (MockBroker.start calls it; memory mode only)."""
        if self._broker.storage is None:
            self.at_start = take(self._broker)

    def snapshot(self) -> Snapshot:
        """The broker's whole state now: restore it with restore(snap), as many times as wanted."""
        return self._broker._call(take, self._broker)

    def restore(self, snap: Snapshot) -> None:
        """Bring back the state of snap (module header: what is in it, what clients see)."""
        self._broker._call(restore, self._broker, snap)

    def reset(self) -> None:
        """Back to the state right after start: topics, groups, transactions, producers, ACLs, users, configs,
        faults and the request record made since are gone, the clock is back where it was."""
        if self.at_start is None:
            _check_memory_mode(self._broker)
            raise SnapshotError("reset needs a started broker (its state at start is what reset goes back to)")
        self.restore(self.at_start)

    # -- kept by id (the HTTP API) ----------------------------------------------------------------------
    def keep(self, snap: Snapshot) -> str:
        """Keep snap under a new id ("1", "2"...)."""
        snap_id = str(self._next_id)
        self._next_id += 1
        self.kept[snap_id] = snap
        return snap_id
