"""The share coordinator's state (KIP-932), as Kafka's ShareCoordinatorShard keeps it: for each share
partition (group id, topic id, partition) its persisted state, and the records of `__share_group_state`
each change of it writes (mockbroker/protocol/share_state_records.py has the bytes).

- A share partition's state: state epoch, leader epoch, snapshot epoch, start offset, and state batches
  (ranges of offsets with a delivery state, 0 available, 2 acknowledged, 4 archived, and a delivery count),
  kept as sorted ranges that do not overlap; what a write names overlays what was there (later wins), and
  ranges below the start offset go (Kafka's PersisterStateBatchCombiner).
- `initialize` (InitializeShareGroupState; the group's share partition made, or its offsets altered): a
  fresh state at a state epoch, written as a ShareSnapshot (snapshot epoch 0, or one more than before);
  FENCED_STATE_EPOCH when the epoch is below the one stored.
- `write` (WriteShareGroupState; the share partition's leader after each change): INVALID_REQUEST for a
  partition never initialized, FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH for an epoch below the stored one
  (-1 passes). Written as a ShareUpdate holding the batches written, or as a full ShareSnapshot once
  share.coordinator.snapshot.update.records.per.snapshot (500) updates are counted (Kafka's snapshotUpdateCount:
  the first update after a share partition's state is made counts 0, each later one one more; a snapshot
  written at the limit sets the count back to 0, any other snapshot leaves it).
- `read` (ReadShareGroupState): INVALID_REQUEST for a partition never initialized, FENCED_LEADER_EPOCH for
  a lower leader epoch; a higher one is stored (a ShareUpdate written), as Kafka's
  readStateAndMaybeUpdateLeaderEpoch.
- `summary` (ReadShareGroupStateSummary): start offset, leader and state epochs; (-1, 0, 0) for none.
- `delete` (DeleteShareGroupState): a tombstone (with a ShareSnapshotKey) when there was a state.
- `snapshot_cold` (every share.coordinator.cold.partition.snapshot.interval.ms, Kafka's snapshotColdPartitions):
  a share partition whose last snapshot is that old gets a new one (same state, next snapshot epoch, write
  timestamp now), so a quiet share partition does not hold back the pruning of its partition of the topic;
  nothing for a partition of the topic where every state was already snapshotted so.
- `needed` (pruning.py): per partition of __share_group_state, each key's latest snapshot offset, from which
  the prune job knows the records before which everything is redundant (`prune_points`).
- `replay`: the records read back when a broker starts on a data dir (state/coordinators/share_state_load.py).
Pure: no I/O; `append(coordinator key, records)` is given by the node (the records go into the key's
partition of __share_group_state; it answers that partition and the offset of the first record) and is None
while records are replayed.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.share_state_records import (
    SHARE_SNAPSHOT,
    SHARE_UPDATE,
    ShareSnapshotValue,
    ShareStateKey,
    ShareUpdateValue,
    StateBatch,
    encode_key,
    encode_value,
)
from mockbroker.state.share.pruning import NeededOffsets

StateKey = tuple[str, uuid.UUID, int]  # group id, topic id, partition
Range = tuple[int, int, int, int]  # first offset, last offset, delivery state, delivery count
Record = tuple[bytes, bytes | None]
# (coordinator key, records) -> (partition of __share_group_state, offset of the first record), None: not placed.
Append = Callable[[str, list[Record]], "tuple[int, int] | None"]


def kafka_uuid_text(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def coordinator_key(key: StateKey) -> str:
    """SharePartitionKey.asCoordinatorKey: "group:topicId:partition", what places the key in the topic."""
    return f"{key[0]}:{kafka_uuid_text(key[1])}:{key[2]}"


def parse_coordinator_key(text: str) -> StateKey:
    """SharePartitionKey.getInstance("group:topicId:partition"); ValueError when it is not one (as Kafka's
    validate: three parts, a group id not blank, a base64 topic id of 16 bytes, an int partition)."""
    tokens = text.split(":")
    while tokens and tokens[-1] == "":
        tokens.pop()  # Java's String.split drops trailing empty strings
    if len(tokens) != 3:
        raise ValueError(f"Invalid key format: expected - groupId:topicId:partition, found -  {text}")
    group, topic, partition = tokens
    if not group.strip():
        raise ValueError("GroupId must be alphanumeric string")
    try:
        if len(topic) > 24:
            raise ValueError(topic)
        raw = base64.b64decode(topic + "=" * (-len(topic) % 4), altchars=b"-_", validate=True)
    except (ValueError, binascii.Error):
        raise ValueError(f"Invalid topic ID: {topic}") from None
    if len(raw) != 16:
        raise ValueError(f"Invalid topic ID: {topic}")
    if not re.fullmatch(r"[+-]?[0-9]+", partition) or not -2**31 <= int(partition) < 2**31:
        raise ValueError(f"Invalid partition: {partition}")
    return group.strip(), uuid.UUID(bytes=raw), int(partition)


def overlay(ranges: list[Range], new: list[Range], start_offset: int) -> list[Range]:
    """`new` laid over `ranges` (each later range wins where they overlap), nothing below start_offset,
    neighbours with the same state and count joined."""
    out = list(ranges)
    for first, last, state, count in new:
        if last < first:
            continue
        kept: list[Range] = []
        for f, la, s, c in out:
            if la < first or f > last:
                kept.append((f, la, s, c))
                continue
            if f < first:
                kept.append((f, first - 1, s, c))
            if la > last:
                kept.append((last + 1, la, s, c))
        kept.append((first, last, state, count))
        out = sorted(kept)
    merged: list[Range] = []
    for f, la, s, c in out:
        if la < start_offset:
            continue
        f = max(f, start_offset)
        if merged and merged[-1][1] + 1 == f and merged[-1][2:] == (s, c):
            merged[-1] = (merged[-1][0], la, s, c)
        else:
            merged.append((f, la, s, c))
    return merged


def lookup(ranges: list[Range], offset: int) -> tuple[int, int] | None:
    """(state, count) of the range holding offset, None outside every range."""
    i = bisect_right(ranges, (offset, 2**63, 0, 0)) - 1
    if i >= 0 and ranges[i][0] <= offset <= ranges[i][1]:
        return ranges[i][2], ranges[i][3]
    return None


@dataclass
class PersistedState:
    """What the share coordinator holds of one share partition (Kafka's ShareGroupOffset)."""

    state_epoch: int = 0
    leader_epoch: int = 0
    snapshot_epoch: int = 0
    start_offset: int = -1
    create_timestamp: int = 0
    write_timestamp: int = 0
    batches: list[Range] = field(default_factory=list)
    # Kafka's snapshotUpdateCount; -1: no update counted since the state was made (Kafka's absent entry).
    updates_since_snapshot: int = -1


def _known(known: bool) -> None:
    if not known:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def _batches(ranges: list[Range]) -> list[StateBatch]:
    return [StateBatch(f, la, s, c) for f, la, s, c in ranges]


class ShareStateStore:
    def __init__(self, updates_per_snapshot: Callable[[], int] = lambda: 500) -> None:
        self.states: dict[StateKey, PersistedState] = {}
        self.append: Append | None = None
        self.updates_per_snapshot = updates_per_snapshot
        self.needed: dict[int, NeededOffsets] = {}  # per partition of __share_group_state
        self.pruned: dict[int, int] = {}  # the offset each partition was last pruned to (lastPrunedOffsets)
        self.clock: Callable[[], int] = lambda: 0  # the broker clock's now in ms (set by the share coordinator)

    # -- the operations ----------------------------------------------------------------------------
    def initialize(self, key: StateKey, state_epoch: int, start_offset: int, now_ms: int, *,
                   known: bool = True) -> PersistedState:
        """`known`: whether the topic partition exists (UNKNOWN_TOPIC_OR_PARTITION, after the epoch check)."""
        old = self.states.get(key)
        if old is not None and state_epoch != -1 and old.state_epoch > state_epoch:
            raise KafkaError(ErrorCode.FENCED_STATE_EPOCH)
        _known(known)
        state = PersistedState(state_epoch=state_epoch, leader_epoch=0 if old is None else old.leader_epoch,
                               snapshot_epoch=0 if old is None else old.snapshot_epoch + 1, start_offset=start_offset,
                               create_timestamp=now_ms, write_timestamp=now_ms,
                               updates_since_snapshot=-1 if old is None else old.updates_since_snapshot)
        self.states[key] = state
        self._write_snapshot(key, state)
        return state

    def write(self, key: StateKey, state_epoch: int, leader_epoch: int, start_offset: int, batches: list[Range],
              now_ms: int, *, replace: bool = False, known: bool = True) -> None:
        """Overlay batches (and the start offset, unless -1) on the state; `replace`: the batches are the
        whole state (written as a snapshot)."""
        state = self.states.get(key)
        if state is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Write operation on uninitialized share partition not allowed.")
        if leader_epoch != -1 and state.leader_epoch > leader_epoch:
            raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
        if state_epoch != -1 and state.state_epoch > state_epoch:
            raise KafkaError(ErrorCode.FENCED_STATE_EPOCH)
        _known(known)
        new_start = state.start_offset if start_offset == -1 else start_offset
        state.batches = overlay([] if replace else state.batches, batches, new_start)
        state.start_offset = new_start
        if leader_epoch != -1:
            state.leader_epoch = leader_epoch
        self._write_change(key, state, start_offset, batches, now_ms, replace=replace)

    def read(self, key: StateKey, leader_epoch: int, *, known: bool = True) -> PersistedState:
        state = self.states.get(key)
        if state is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
        if state.leader_epoch > leader_epoch:
            raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
        _known(known)
        if leader_epoch != -1 and leader_epoch != state.leader_epoch:
            state.leader_epoch = leader_epoch
            self._write_change(key, state, state.start_offset, [], self.clock())
        return state

    def summary(self, key: StateKey, *, known: bool = True) -> tuple[int, int, int, int]:
        """(start offset, leader epoch, state epoch, delivery complete count: the offsets from the start
        acknowledged or archived); (-1, 0, 0, -1) for a partition never initialized."""
        _known(known)
        state = self.states.get(key)
        if state is None:
            return -1, 0, 0, -1
        done = sum(last - first + 1 for first, last, s, _ in state.batches if s in (2, 4))
        return state.start_offset, state.leader_epoch, state.state_epoch, done

    def delete(self, key: StateKey, *, known: bool = True) -> bool:
        """The state gone, a tombstone written; False when there was none (nothing written)."""
        _known(known)
        if self.states.pop(key, None) is None:
            return False
        placed = self._emit(key, [(encode_key(ShareStateKey(SHARE_SNAPSHOT, *key)), None)])
        self._snapshot_placed(key, placed, deleted=True)
        return True

    # -- the periodic jobs -------------------------------------------------------------------------
    def snapshot_cold(self, now_ms: int, interval_ms: int) -> int:
        """A new snapshot of each share partition whose last one is interval_ms old or more, per partition of
        the topic, unless every state there was already snapshotted so (its create and write timestamps
        differ); how many were written."""
        by_partition: dict[int | None, list[StateKey]] = {}
        placed = {key: index for index, needed in self.needed.items() for key in needed.snapshots}
        for key in self.states:
            by_partition.setdefault(placed.get(key), []).append(key)
        written = 0
        for keys in by_partition.values():
            if all(self.states[k].create_timestamp != self.states[k].write_timestamp for k in keys):
                continue  # a quiet partition: every state already snapshotted for being cold
            for key in keys:
                state = self.states[key]
                if now_ms - state.write_timestamp >= interval_ms:
                    state.snapshot_epoch += 1
                    state.write_timestamp = now_ms
                    self._write_snapshot(key, state)
                    written += 1
        return written

    def prune_points(self) -> dict[int, int]:
        """Per partition of __share_group_state, the offset before which its records are redundant, where that
        moved since the partition was last pruned (`pruned_to` records a prune)."""
        out = {}
        for index, needed in self.needed.items():
            offset = needed.last_redundant_offset()
            if offset is not None and self.pruned.get(index) != offset:
                out[index] = offset
        return out

    def pruned_to(self, index: int, offset: int) -> None:
        self.pruned[index] = offset

    # -- records -----------------------------------------------------------------------------------
    def _write_change(self, key: StateKey, state: PersistedState, start_offset: int, batches: list[Range],
                      now_ms: int, *, replace: bool = False) -> None:
        """A write's record (Kafka's generateShareStateRecord): a snapshot once the updates counted reach
        the limit (or for `replace`), else an update."""
        if replace or max(state.updates_since_snapshot, 0) >= self.updates_per_snapshot():
            state.snapshot_epoch += 1
            state.create_timestamp = state.write_timestamp = now_ms
            self._write_snapshot(key, state)
        else:
            self._write_update(key, state, start_offset, batches)

    def _counted_snapshot(self, state: PersistedState) -> None:
        """A snapshot written or replayed: the update count back to 0 when it had reached the limit."""
        if state.updates_since_snapshot >= self.updates_per_snapshot():
            state.updates_since_snapshot = 0

    def _write_snapshot(self, key: StateKey, state: PersistedState) -> None:
        self._counted_snapshot(state)
        value = ShareSnapshotValue(state.snapshot_epoch, state.state_epoch, state.leader_epoch, state.start_offset,
                                   state.create_timestamp, state.write_timestamp, _batches(state.batches))
        placed = self._emit(key, [(encode_key(ShareStateKey(SHARE_SNAPSHOT, *key)), encode_value(value))])
        self._snapshot_placed(key, placed)

    def _write_update(self, key: StateKey, state: PersistedState, start_offset: int, batches: list[Range]) -> None:
        state.updates_since_snapshot += 1
        value = ShareUpdateValue(state.snapshot_epoch, state.leader_epoch, start_offset,
                                 _batches([b for b in batches if b[1] >= b[0]]))
        self._emit(key, [(encode_key(ShareStateKey(SHARE_UPDATE, *key)), encode_value(value))])

    def _emit(self, key: StateKey, records: list[Record]) -> tuple[int, int] | None:
        if self.append is not None:
            return self.append(coordinator_key(key), records)
        return None

    def _snapshot_placed(self, key: StateKey, placed: tuple[int, int] | None, *, deleted: bool = False) -> None:
        if placed is not None:
            index, offset = placed
            self.needed.setdefault(index, NeededOffsets()).snapshot_written(key, offset, deleted=deleted)

    def replay(self, key: ShareStateKey, value: ShareSnapshotValue | ShareUpdateValue | None,
               placed: tuple[int, int] | None = None) -> None:
        """One record read back, as ShareCoordinatorShard.replay: a snapshot replaces, an update overlays,
        a tombstone removes; placed: the record's partition of __share_group_state and offset."""
        k: StateKey = (key.group_id, key.topic_id, key.partition)
        ranges = [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in (
            value.state_batches if value is not None else [])]
        if value is None:
            self.states.pop(k, None)
            self._snapshot_placed(k, placed, deleted=True)
        elif isinstance(value, ShareSnapshotValue):
            old = self.states.get(k)
            state = self.states[k] = PersistedState(
                value.state_epoch, value.leader_epoch, value.snapshot_epoch, value.start_offset, value.create_timestamp,
                value.write_timestamp, overlay([], ranges, value.start_offset),
                -1 if old is None else old.updates_since_snapshot)
            self._counted_snapshot(state)
            self._snapshot_placed(k, placed)
        else:
            existing = self.states.get(k)
            if existing is None:
                return  # an update without its snapshot: nothing to apply it to
            start = existing.start_offset if value.start_offset == -1 else value.start_offset
            existing.batches = overlay(existing.batches, ranges, start)
            existing.start_offset = start
            existing.leader_epoch = max(existing.leader_epoch, value.leader_epoch)
            existing.updates_since_snapshot += 1
