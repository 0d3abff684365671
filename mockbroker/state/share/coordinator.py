"""Every share group and share partition of the cluster, and the share sessions of ShareFetch and
ShareAcknowledge (KIP-932). One object for the cluster, as the group coordinator is (node.py shares it).

- Share partitions are made on a member's first fetch of a partition: they start at the high watermark
  (`share.auto.offset.reset` latest, the default) or at the log start (earliest).
- Share sessions (Kafka's ShareSessionCache) are kept per node, group and member: epoch 0 opens one (the
  partitions named are its partitions) on the connection that sent it, a positive epoch must be the session's next one
  (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND without a session), -1 closes it after its
  acknowledgements and releases what the member still holds in the share partitions that node leads (a
  new session at epoch 0 replacing one does the same). Incremental requests add partitions and
  drop the forgotten ones. When the connection that opened a session closes, the session ends and the member's
  records there are released (Kafka's ClientConnectionDisconnectListener: `connection_closed`).
- A member that leaves, or whose session times out, hands its acquired records back.
- `expire(now_ms)` runs when the broker clock moves: locks run out, members time out; `listeners` are
  told when records may have become available (parked ShareFetch requests read again).
Settings: group.share.record.lock.duration.ms (30000), group.share.delivery.count.limit (5),
group.share.partition.max.record.locks (2000), group.share.session.timeout.ms (45000),
group.share.heartbeat.interval.ms (5000), as Kafka's broker settings and defaults, read from the broker's
settings (`MockBroker(config={...})`); share.auto.offset.reset (latest) is a group config in Kafka, here also
read as a broker-wide default. A group's own configs (GROUP config resources, `group_configs`:
share.record.lock.duration.ms, share.delivery.count.limit, share.partition.max.record.locks,
share.session.timeout.ms, share.heartbeat.interval.ms, share.auto.offset.reset) win over the broker's;
`overrides` (a test's, or the constructor's `settings`) win over all of them. A share partition takes its
group's lock duration, delivery limit and record-lock limit when it is made.
- share.isolation.level (a group config; read_uncommitted by default): with read_committed, records are
  acquired only up to the last stable offset and the records of aborted transactions (the aborted index,
  `aborted_entries`, set by the node) are archived without being delivered.
- Persistence (`store`, persisted.py; persisting.py maps one to the other): a share partition made for the
  first time is initialized in the share coordinator's state (state epoch 0), each change of what Kafka
  persists of it (start offset, acknowledged / archived / released records with their delivery counts) is
  written, and a share partition is made from that state when there is one (loaded at start on a data dir,
  state/coordinators/share_state_load.py). AlterShareGroupOffsets initializes it again at the next state
  epoch; DeleteShareGroupOffsets and DeleteGroups delete it. The share-state APIs (handlers k83-k87) work on
  the store; a change they make drops the live share partition, which is made again from the new state
  (what Kafka's leader does once fenced by the state epoch). `state_jobs` (state_jobs.py) writes snapshots of
  quiet share partitions and prunes `__share_group_state` on the broker clock, as Kafka's share coordinator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.share_group_records import (
    GROUP_METADATA,
    TARGET_ASSIGNMENT_METADATA,
    ShareGroupMetadataValue,
    ShareGroupTargetAssignmentMetadataValue,
    decode_value,
)
from mockbroker.state.share.group import ShareGroup, ShareMember
from mockbroker.state.share.group_configs import BY_BROKER_SETTING, GroupConfigs
from mockbroker.state.share.group_log import Initialized, LoadedShareState, ShareGroupLog
from mockbroker.state.share.partition import AcquiredRange, RecordState, SharePartition
from mockbroker.state.share.persisted import ShareStateStore, StateKey
from mockbroker.state.share.persisting import changes, from_state
from mockbroker.state.share.state_jobs import StateTopicJobs

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster
    from mockbroker.state.log.aborted_index import AbortedTxn
    from mockbroker.state.log.partition_log import PartitionLog

DEFAULTS: dict[str, int | str] = {
    "group.share.record.lock.duration.ms": 30000,
    "group.share.delivery.count.limit": 5,
    "group.share.partition.max.record.locks": 2000,
    "group.share.session.timeout.ms": 45000,
    "group.share.heartbeat.interval.ms": 5000,
    "share.auto.offset.reset": "latest",
}
FINAL_EPOCH = -1
SharePartitionKey = tuple[str, str, int]  # group id, topic name, partition


@dataclass
class ShareSession:
    """One member's share session on one node: its next epoch, its partitions (topic name, index) and the
    connection that opened it (None: no live one, as after a snapshot's restore)."""

    epoch: int = 1
    partitions: set[tuple[str, int]] = field(default_factory=set)
    connection_id: int | None = None


class ShareCoordinator:
    def __init__(self, cluster: Cluster, settings: Mapping[str, int | str] | None = None) -> None:
        self.cluster = cluster
        self.overrides: dict[str, int | str] = dict(settings or {})
        self.groups: dict[str, ShareGroup] = {}
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        self.sessions: dict[tuple[int, str, str], ShareSession] = {}
        # The leader epoch of its topic partition each share partition was last served under (`_follow_leader`).
        self.leader_epochs: dict[SharePartitionKey, int] = {}
        self.listeners: list[Callable[[], None]] = []
        # Set by the node: run expire at this time of the broker clock (a scheduler timer), so a lock
        # runs out on time even when nothing else happens.
        self.wake_at: Callable[[int], None] | None = None
        self.group_configs = GroupConfigs(self._broker_setting, cluster.config)
        # Set by the node: a partition's aborted-transaction index (read_committed share groups).
        self.aborted_entries: Callable[[PartitionLog], list[AbortedTxn]] | None = None
        # The share coordinator's persisted state; the node sets its `append` and `now_ms` (the broker clock).
        self.store = ShareStateStore(lambda: int(cluster.config.get("share.coordinator.snapshot.update.records.per.snapshot")))
        self.now_ms: Callable[[], int] = lambda: 0
        self.store.clock = lambda: self.now_ms()
        self.state_jobs = StateTopicJobs(cluster, self.store)  # armed by `load`
        self.group_log = ShareGroupLog()  # the node sets its `append` (__consumer_offsets)

    def _broker_setting(self, name: str) -> str | None:
        if name in self.overrides:
            return str(self.overrides[name])
        raw = self.cluster.config.unknown.get(name)
        return None if raw is None else str(raw)

    def setting(self, name: str, group_id: str | None = None) -> int:
        return int(self.setting_text(name, group_id))

    def setting_text(self, name: str, group_id: str | None = None) -> str:
        """A share setting: the override, else group_id's group config for it, else the broker's setting of
        that name, else Kafka's default."""
        if name in self.overrides:
            return str(self.overrides[name])
        group_config = BY_BROKER_SETTING.get(name)
        if group_id is not None and group_config is not None:
            own = self.group_configs.effective(group_id, group_config)
            if own is not None:
                return own
        raw = self.cluster.config.unknown.get(name)
        return str(DEFAULTS[name] if raw is None else raw)

    # -- groups ------------------------------------------------------------------------------------
    def partitions_of(self) -> dict[str, int]:
        return {t.name: len(t.partitions) for t in self.cluster.topics.values() if not t.internal}

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, subscribed: list[str] | None,
                  now_ms: int, *, client_id: str = "", client_host: str = "",
                  rack_id: str | None = None) -> ShareMember | None:
        """ShareGroupHeartbeat: the member after it (None when it left); KafkaError with Kafka's code."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if not member_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if member_epoch < -1:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
        self.expire(now_ms)
        group = self.groups.get(group_id)
        if group is None:
            if member_epoch != 0:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID if member_epoch > 0 else ErrorCode.GROUP_ID_NOT_FOUND)
            group = self.groups[group_id] = ShareGroup(group_id)
        member = group.heartbeat(member_id, member_epoch, subscribed, self.partitions_of(), now_ms,
                                 client_id=client_id, client_host=client_host, rack_id=rack_id)
        self._group_changed(group_id)
        if member is None:
            self._release_member(group_id, member_id)
        return member

    def list_groups(self, states_filter: list[str], types_filter: list[str]) -> list[tuple[str, str]]:
        """(group id, state) of the share groups ListGroups answers (filters case-insensitive; an empty
        filter passes everything, a types filter without "share" nothing)."""
        states = {st.strip().lower() for st in states_filter}
        types = {t.strip().lower() for t in types_filter}
        if types and "share" not in types:
            return []
        return [(g.group_id, g.state) for g in self.groups.values() if not states or g.state.lower() in states]

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups: GROUP_ID_NOT_FOUND for none, NON_EMPTY_GROUP while it has members."""
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND)
        if group.members:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP)
        del self.groups[group_id]
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]
            self.leader_epochs.pop(key, None)
        for skey in [k for k in self.store.states if k[0] == group_id]:
            self.store.delete(skey)
        self.group_log.changed(group_id, None)

    # -- share partitions --------------------------------------------------------------------------
    def share_partition(self, group_id: str, topic: str, index: int) -> SharePartition | None:
        """The group's share partition of topic-index, made at the reset offset on first use (None: no
        such partition)."""
        key = (group_id, topic, index)
        sp = self.partitions.get(key)
        if sp is None:
            t = self.cluster.topic(topic)
            p = t.partition(index) if t is not None else None
            if t is None or p is None:
                return None
            skey = (group_id, t.topic_id, index)
            limits = {"lock_duration_ms": self.setting("group.share.record.lock.duration.ms", group_id),
                      "delivery_limit": self.setting("group.share.delivery.count.limit", group_id),
                      "max_in_flight": self.setting("group.share.partition.max.record.locks", group_id)}
            state = self.store.states.get(skey)
            if state is not None and state.start_offset >= 0:
                sp = self.partitions[key] = from_state(state, **limits)
            else:
                earliest = self.setting_text("share.auto.offset.reset", group_id) == "earliest"
                start = p.log.log_start_offset if earliest else p.log.high_watermark
                sp = self.partitions[key] = SharePartition(start, **limits)
                self.store.initialize(skey, 0 if state is None else state.state_epoch, start, self.now_ms())
                self._group_changed(group_id, partitions=True)
        return sp

    def _state_key(self, key: SharePartitionKey) -> StateKey | None:
        t = self.cluster.topic(key[1])
        return None if t is None else (key[0], t.topic_id, key[2])

    def _persist(self, key: SharePartitionKey) -> None:
        """Write what changed of the share partition's persisted state (WriteShareGroupState from its leader)."""
        sp, skey = self.partitions.get(key), self._state_key(key)
        if sp is None or skey is None:
            return
        state = self.store.states.get(skey)
        if state is None:
            state = self.store.initialize(skey, 0, sp.start_offset, self.now_ms())
            self._group_changed(key[0], partitions=True)
        change = changes(sp, state)
        if change is None:
            return
        partition = self.cluster.partition(key[1], key[2])
        # The partition's leader epoch; -1 (not checked) when a share-state API stored a higher one: this
        # broker's leader is never stale, and a test writing epochs by hand must not fence it.
        leader_epoch = partition.leader_epoch if partition is not None else -1
        if leader_epoch < state.leader_epoch:
            leader_epoch = -1
        ranges, replace = change
        self.store.write(skey, state.state_epoch, leader_epoch, sp.start_offset, ranges, self.now_ms(), replace=replace)

    def state_changed(self, skey: StateKey) -> None:
        """The share-state APIs changed skey's persisted state: its live share partition goes, to be made
        again from the new state on next use (acquired records come back available)."""
        name = next((t.name for t in self.cluster.topics.values() if t.topic_id == skey[1]), None)
        if name is not None and self.partitions.pop((skey[0], name, skey[2]), None) is not None:
            self.leader_epochs.pop((skey[0], name, skey[2]), None)
            self._changed()

    def load(self, loaded: LoadedShareState) -> None:
        """What was read back at start (share_state_load.py): each share group from its records, empty, with its
        group and assignment epochs; each share partition made from its persisted state (its group, empty, made
        if it had no records); what the records of __share_group_state still needed are; the periodic jobs
        armed. Nothing is written (the node sets the `append`s after)."""
        for group_id, records in loaded.groups.items():
            group = self.groups.setdefault(group_id, ShareGroup(group_id))
            for key, value in records.items():
                decoded = decode_value(key.record_type, value)
                if key.record_type == GROUP_METADATA and isinstance(decoded, ShareGroupMetadataValue):
                    group.group_epoch = decoded.epoch
                elif key.record_type == TARGET_ASSIGNMENT_METADATA and isinstance(
                        decoded, ShareGroupTargetAssignmentMetadataValue):
                    group.assignment_epoch = decoded.assignment_epoch
            self.group_log.remember(group_id, records)
        state = loaded.store.states
        self.store.states.update(state)
        for index, needed in loaded.store.needed.items():
            self.store.needed[index] = needed
        self.state_jobs.start(self.now_ms(), self.wake_at)
        names = {t.topic_id: t.name for t in self.cluster.topics.values()}
        for (group_id, topic_id, index), persisted in state.items():
            self.groups.setdefault(group_id, ShareGroup(group_id))
            if topic_id in names and persisted.start_offset >= 0:
                self.share_partition(group_id, names[topic_id], index)

    def acquire(self, group_id: str, member_id: str, topic: str, index: int, max_records: int,
                now_ms: int) -> list[AcquiredRange]:
        sp = self.share_partition(group_id, topic, index)
        partition = self.cluster.partition(topic, index)
        if sp is None or partition is None:
            return []
        self._follow_leader((group_id, topic, index), sp, partition.leader_epoch)
        sp.skip_to(partition.log.log_start_offset)
        log = partition.log
        if self.group_configs.effective(group_id, "share.isolation.level") == "read_committed":
            ranges = sp.acquire(member_id, log.last_stable_offset, max_records, now_ms,
                                skip=self._aborted_offsets(log, sp.end_offset, log.last_stable_offset))
        else:
            ranges = sp.acquire(member_id, log.high_watermark, max_records, now_ms)
        self._persist((group_id, topic, index))
        if ranges and self.wake_at is not None:
            self.wake_at(now_ms + sp.lock_duration_ms)
        return ranges

    def _aborted_offsets(self, log: PartitionLog, start: int, end: int) -> frozenset[int]:
        """The offsets in [start, end) of data records of aborted transactions: the transactional batches of
        a producer between its aborted transaction's first offset and its ABORT marker."""
        entries = [a for a in (self.aborted_entries(log) if self.aborted_entries is not None else [])
                   if a.last_offset >= start and a.first_offset < end]
        if not entries or start >= end:
            return frozenset()
        out: set[int] = set()
        for batch in log.iter_batches(start):
            if batch.base_offset >= end:
                break
            if batch.is_transactional and not batch.is_control and any(
                    a.producer_id == batch.producer_id and a.first_offset <= batch.base_offset < a.last_offset
                    for a in entries):
                out.update(range(max(batch.base_offset, start), min(batch.last_offset + 1, end)))
        return frozenset(out)

    def acknowledge(self, group_id: str, member_id: str, topic: str, index: int,
                    batches: list[tuple[int, int, list[int]]], now_ms: int) -> ErrorCode:
        """Apply a partition's acknowledgement batches (first, last, types); the partition's error code."""
        sp = self.partitions.get((group_id, topic, index))
        partition = self.cluster.partition(topic, index)
        if sp is not None and partition is not None:
            self._follow_leader((group_id, topic, index), sp, partition.leader_epoch)
        code = ErrorCode.NONE
        for first, last, types in batches:
            if sp is None:
                return ErrorCode.INVALID_RECORD_STATE
            try:
                sp.acknowledge(member_id, first, last, types, now_ms)
            except KafkaError as e:
                code = ErrorCode(e.code)
        if batches:
            self._persist((group_id, topic, index))
            self._changed()
        return code

    def start_offset_and_lag(self, group_id: str, topic: str, index: int) -> tuple[int, int]:
        """DescribeShareGroupOffsets: (start offset, lag) of a share partition, (-1, -1) when it was never
        initialized. The lag (KIP-1226): records from the start offset to the high watermark not yet
        acknowledged or archived."""
        sp = self.partitions.get((group_id, topic, index))
        partition = self.cluster.partition(topic, index)
        if sp is None or partition is None:
            return -1, -1
        done = sum(1 for r in sp.records.values() if r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED))
        return sp.start_offset, max(0, partition.log.high_watermark - sp.start_offset - done)

    def alter_offsets(self, group_id: str, topic: str, index: int, start_offset: int) -> None:
        """AlterShareGroupOffsets of one partition (the group checked by `offsets_alterable`): the share
        partition starts again at start_offset with nothing in flight; its state is initialized again (state
        epoch 0 the first time, then one more each time), as Kafka's group coordinator does."""
        skey = self._state_key((group_id, topic, index))
        if skey is not None and self.cluster.partition(topic, index) is not None:
            state = self.store.states.get(skey)
            self.store.initialize(skey, 0 if state is None else state.state_epoch + 1, start_offset, self.now_ms())
            self.partitions.pop((group_id, topic, index), None)
            self.leader_epochs.pop((group_id, topic, index), None)
            self.share_partition(group_id, topic, index)  # made again from the state just written
        self._group_changed(group_id, partitions=True)
        self._changed()

    def offsets_alterable(self, group_id: str, *, create: bool) -> None:
        """Alter/DeleteShareGroupOffsets may change the group's offsets: it exists (made empty when `create`,
        as AlterShareGroupOffsets does; GROUP_ID_NOT_FOUND otherwise) and has no members (NON_EMPTY_GROUP)."""
        group = self.groups.get(group_id)
        if group is None:
            if not create:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            self.groups[group_id] = ShareGroup(group_id)
            self._group_changed(group_id)
        elif group.members:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP, f"Share group {group_id} is not empty.")

    def delete_offsets(self, group_id: str, topic: str) -> bool:
        """DeleteShareGroupOffsets of one topic: its share partitions go (a later fetch starts them again at
        the group's share.auto.offset.reset); False when the group had none."""
        keys = [k for k in self.partitions if k[0] == group_id and k[1] == topic]
        for key in keys:
            del self.partitions[key]
            self.leader_epochs.pop(key, None)
        t = self.cluster.topic(topic)
        stored = [k for k in self.store.states if t is not None and k[0] == group_id and k[1] == t.topic_id]
        for skey in stored:
            self.store.delete(skey)
        if stored:
            self._group_changed(group_id, partitions=True)
        return bool(keys or stored)

    # -- share sessions ----------------------------------------------------------------------------
    def session(self, node_id: int, group_id: str, member_id: str, epoch: int,
                connection_id: int | None = None) -> ShareSession:
        """The session a request at `epoch` belongs to, opened for 0 on connection_id; KafkaError with Kafka's
        code. A connection owns the last session it opened (Kafka keeps one session key per connection id)."""
        key = (node_id, group_id, member_id)
        if epoch == 0:
            old = self.sessions.pop(key, None)
            if old is not None:
                self._release_member(group_id, member_id, node_id)
            if connection_id is not None:
                for other in self.sessions.values():
                    if other.connection_id == connection_id:
                        other.connection_id = None
            session = self.sessions[key] = ShareSession(epoch=0, connection_id=connection_id)
            return session
        session_or_none = self.sessions.get(key)
        if session_or_none is None:
            raise KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND)
        if epoch != FINAL_EPOCH and epoch != session_or_none.epoch:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        return session_or_none

    def session_done(self, node_id: int, group_id: str, member_id: str, epoch: int, session: ShareSession) -> None:
        """After a request: the next epoch, or the session closed (epoch -1) and its records released."""
        if epoch == FINAL_EPOCH:
            self.sessions.pop((node_id, group_id, member_id), None)
            self._release_member(group_id, member_id, node_id)
        else:
            session.epoch = 1 if epoch >= 2**31 - 1 else epoch + 1

    def connection_closed(self, connection_id: int) -> int:
        """A client connection closed: the share session it opened, if still there and not opened again since
        on another connection, ends, and its member's acquired records in the share partitions that node leads
        are released (available at once, delivery counts kept; archived at the delivery limit): Kafka's
        ShareSessionCache disconnect listener calling the share group listener's onMemberLeave (KIP-932).
        How many records were released."""
        released = 0
        for key, session in list(self.sessions.items()):
            if session.connection_id == connection_id:
                del self.sessions[key]
                released += self._release_member(key[1], key[2], key[0])
        return released

    def disown_sessions(self) -> None:
        """No live connection owns a share session any more (a snapshot's restore: the connections it closes
        end nothing restored; docs/snapshots.md)."""
        for session in self.sessions.values():
            session.connection_id = None

    # -- time --------------------------------------------------------------------------------------
    def _follow_leader(self, key: SharePartitionKey, sp: SharePartition, leader_epoch: int) -> int:
        """A share partition lives on its topic partition's leader (Kafka's SharePartitionManager): when the
        leader moves (a new leader epoch), the new leader loads it from the persisted share state, where no
        record is acquired, so the records acquired through the old leader are available again (their
        delivery counts kept; archived at the delivery limit). How many were released."""
        last = self.leader_epochs.setdefault(key, leader_epoch)
        if last == leader_epoch:
            return 0
        self.leader_epochs[key] = leader_epoch
        holders = {r.member_id for r in sp.records.values() if r.state == RecordState.ACQUIRED and r.member_id}
        return sum(sp.release_member(member_id) for member_id in holders)

    def expire(self, now_ms: int) -> None:
        """Locks that ran out go back (or are archived at the delivery limit); silent members leave; the
        share partitions whose leader moved give back what was acquired through the old one. Then the jobs on
        __share_group_state that are due."""
        freed = 0
        for key, sp in list(self.partitions.items()):
            partition = self.cluster.partition(key[1], key[2])
            moved = self._follow_leader(key, sp, partition.leader_epoch) if partition is not None else 0
            expired = sp.expire(now_ms)
            if moved or expired:
                self._persist(key)
                freed += moved + expired
        partitions_of = self.partitions_of() if self.groups else {}
        for group in self.groups.values():
            timeout = self.setting("group.share.session.timeout.ms", group.group_id)
            gone = group.expire_members(now_ms, timeout, partitions_of)
            if gone:
                self._group_changed(group.group_id)
            for member_id in gone:
                freed += self._release_member(group.group_id, member_id)
        if freed:
            self._changed()
        self.state_jobs.run_due(now_ms, self.wake_at)

    def _release_member(self, group_id: str, member_id: str, node_id: int | None = None) -> int:
        """Hand back what member_id holds in the group: everywhere (it left), or only in the share partitions
        node_id leads (its share session there was replaced or closed: Kafka's share partitions live on
        their leaders, each with its own sessions)."""
        released = 0
        for key, sp in list(self.partitions.items()):
            if key[0] == group_id and (node_id is None or self._leader_of(key) == node_id):
                count = sp.release_member(member_id)
                if count:
                    self._persist(key)
                    released += count
        if released:
            self._changed()
        return released

    def _leader_of(self, key: SharePartitionKey) -> int | None:
        partition = self.cluster.partition(key[1], key[2])
        return partition.leader_id if partition is not None else None

    def _group_changed(self, group_id: str, *, partitions: bool = False) -> None:
        """Write what changed of the group's records (group_log.py); `partitions`: its initialized share
        partitions may have changed too."""
        group = self.groups.get(group_id)
        if group is not None:
            self.group_log.changed(group_id, group, self._initialized(group_id) if partitions else None)

    def _initialized(self, group_id: str) -> Initialized:
        """The group's share partitions whose state is initialized, by topic id (with the topic's name)."""
        names = {t.topic_id: t.name for t in self.cluster.topics.values()}
        out: Initialized = {}
        for (g, topic_id, index), state in self.store.states.items():
            if g == group_id and state.start_offset >= 0 and topic_id in names:
                out.setdefault(topic_id, (names[topic_id], []))[1].append(index)
        return out

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    # -- inspection --------------------------------------------------------------------------------
    def describe(self, now_ms: int) -> dict[str, dict[str, object]]:
        """Every share group as of now_ms (locks that ran out ended first): state, epochs, members with
        their assignments, and each share partition's start and end offsets and in-flight records (offset,
        state, delivery count, member holding it, lock expiry on the broker clock)."""
        self.expire(now_ms)
        out: dict[str, dict[str, object]] = {}
        for group_id, group in sorted(self.groups.items()):
            out[group_id] = {
                "state": group.state, "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "members": {m.member_id: {"member_epoch": m.member_epoch, "client_id": m.client_id,
                                          "subscribed": list(m.subscribed),
                                          "assignment": {t: list(ps) for t, ps in m.assignment.items()}}
                            for m in group.members.values()},
                "partitions": {f"{t}-{p}": sp.describe() for (g, t, p), sp in sorted(self.partitions.items())
                               if g == group_id},
            }
        return out
