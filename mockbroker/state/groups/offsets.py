"""Committed offsets of consumer groups (Kafka's OffsetMetadataManager, without the log underneath).

Offsets are kept per group by (topic name, partition): offset, leader epoch, metadata string, commit
time and, for OffsetCommit v2-v4 with an explicit retention_time_ms, an expiry time. Who may commit is
the group's business (ClassicGroup / ConsumerGroup `validate_offset_commit`); this store only keeps the
values and answers which of them have expired.

Expiry, as Kafka's OffsetExpirationConditionImpl: an offset with an explicit expiry time expires at that
time; otherwise when `offsets.retention.minutes` have passed since its base time, which the group picks
(the time an empty classic group became empty, else the commit time). Offsets of topics a group is
still subscribed to never expire.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Kafka's offset.metadata.max.bytes default (a metadata string longer than this is refused).
DEFAULT_METADATA_MAX_BYTES = 4096


@dataclass
class CommittedOffset:
    offset: int
    leader_epoch: int  # -1: none
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None  # OffsetCommit v2-v4 retention_time_ms != -1
    topic_id: uuid.UUID | None = None  # the topic's id at commit time (a re-created topic has a new one)

    def is_expired(self, now_ms: int, base_ms: int, retention_ms: int) -> bool:
        if self.expire_timestamp_ms is not None:
            return now_ms >= self.expire_timestamp_ms
        return now_ms - base_ms >= retention_ms


# Told of every change: (group, topic, partition, the new value or None when the offset is gone).
OffsetListener = Callable[[str, str, int, "CommittedOffset | None"], None]


class OffsetStore:
    def __init__(self, changed: Callable[[], None] | None = None) -> None:
        self._by_group: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        # The coordinator's log (state/coordinators/log.py) listens: each change is a record there.
        self.listener: OffsetListener | None = None
        self.changed = changed  # the cluster's change signal (state/changes.py), for the waits

    def _changed(self, group_id: str, topic: str, partition: int, value: CommittedOffset | None) -> None:
        if self.changed is not None:
            self.changed()
        if self.listener is not None:
            self.listener(group_id, topic, partition, value)

    def commit(self, group_id: str, topic: str, partition: int, value: CommittedOffset) -> None:
        self._by_group.setdefault(group_id, {})[(topic, partition)] = value
        self._changed(group_id, topic, partition, value)

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._by_group.get(group_id, {}).get((topic, partition))

    def group_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        """The group's offsets, sorted by topic then partition (a copy)."""
        return dict(sorted(self._by_group.get(group_id, {}).items()))

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._by_group.get(group_id))

    def groups(self) -> Iterator[str]:
        return iter(list(self._by_group))

    def delete(self, group_id: str, topic: str, partition: int) -> bool:
        offsets = self._by_group.get(group_id)
        if offsets is None or (topic, partition) not in offsets:
            return False
        del offsets[(topic, partition)]
        if not offsets:
            del self._by_group[group_id]
        self._changed(group_id, topic, partition, None)
        return True

    def delete_group(self, group_id: str) -> int:
        gone = self._by_group.pop(group_id, {})
        for topic, partition in gone:
            self._changed(group_id, topic, partition, None)
        return len(gone)

    def delete_topic(self, topic: str) -> None:
        """Forget the offsets of a deleted topic in every group (Kafka's onPartitionsDeleted)."""
        for group_id in list(self._by_group):
            offsets = self._by_group[group_id]
            for key in [k for k in offsets if k[0] == topic]:
                del offsets[key]
                self._changed(group_id, key[0], key[1], None)
            if not offsets:
                del self._by_group[group_id]

    def expire(self, group_id: str, now_ms: int, retention_ms: int, base_ms: Callable[[CommittedOffset], int],
               keep: Callable[[str, int], bool]) -> bool:
        """Drop the group's expired offsets, except those `keep(topic, partition)` holds on to (a topic the
        group subscribes to, offsets pending in a transaction); True when none is left (the group may go)."""
        offsets = self._by_group.get(group_id)
        if not offsets:
            return True
        all_expired = True
        for (topic, partition), value in list(offsets.items()):
            if not keep(topic, partition) and value.is_expired(now_ms, base_ms(value), retention_ms):
                del offsets[(topic, partition)]
                self._changed(group_id, topic, partition, None)
            else:
                all_expired = False
        if not offsets:
            del self._by_group[group_id]
        return all_expired
