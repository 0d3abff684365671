"""Which records of one partition of `__share_group_state` are still needed, as Kafka's
ShareCoordinatorOffsetsManager keeps it for each partition its share coordinator leads.

A share partition's state is whole in its latest ShareSnapshot and the ShareUpdates after it, so every record
of a share partition key before its latest snapshot is redundant. Kept per key: the offset of its latest
ShareSnapshot (or tombstone). The last redundant offset is the lowest of those: every record below it has been
overridden by newer ones (Kafka's `updateState`: the offsets of the keys after the new one is put, a deleted
key's tombstone counted once and then dropped, since nothing is written for that key after its deletion). Kafka
answers none for an offset of 0 or before anything was counted (`lastRedundantOffset`).

The share coordinator's prune job (state/share/coordinator.py, every share.coordinator.state.topic.prune.interval.ms)
deletes the records of the partition before that offset, the way DeleteRecords does (the log start offset moves,
whole segments below it go), and remembers what it pruned to so it does not ask twice (Kafka's
ShareCoordinatorService.lastPrunedOffsets). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

StateKey = tuple[str, Any, int]  # group id, topic id, partition (persisted.py's StateKey)


class NeededOffsets:
    """One partition of __share_group_state: the offset of each key's latest snapshot, and the offset below
    which every record is redundant."""

    def __init__(self) -> None:
        self.snapshots: dict[StateKey, int] = {}
        self._redundant_below: int | None = None

    def snapshot_written(self, key: StateKey, offset: int, *, deleted: bool = False) -> None:
        """A ShareSnapshot (or, `deleted`, a tombstone) of key at offset, written or replayed."""
        self.snapshots[key] = offset
        self._redundant_below = min(self.snapshots.values())
        if deleted:
            del self.snapshots[key]

    def last_redundant_offset(self) -> int | None:
        """Every record before this offset is redundant; None when nothing is (yet)."""
        value = self._redundant_below
        return None if value is None or value <= 0 else value
