"""What a share group writes to __consumer_offsets, as Kafka 4.x's group coordinator writes the group-level
ShareGroup* records (mockbroker/protocol/share_group_records.py has the bytes), in the group id's partition:

    ShareGroupMetadata                  the group epoch (a member joined, left, was fenced, changed its
                                        subscription; the group made empty by AlterShareGroupOffsets)
    ShareGroupTargetAssignmentMetadata  the assignment epoch
    ShareGroupStatePartitionMetadata    the topic partitions whose share state the group initialized (here:
                                        those of its share partitions in the share coordinator's state)

After each change of a group (ShareCoordinator calls `changed`), the records whose bytes differ from what
was written last of the same key go out in one batch, in Kafka's order (epoch, assignment epoch, state
partitions); a deleted group gets tombstones in Kafka's order (ShareGroup.createGroupTombstoneRecords: the
assignment epoch, the state partitions, the group epoch last). The member records (ShareGroupMemberMetadata,
ShareGroupTargetAssignmentMember, ShareGroupCurrentMemberAssignment) are not written: after a restart a share
group comes back empty with its epochs, its members join again (their share sessions, and the records they
held, were lost with the broker anyway). `remember` takes what a load read back as written. No I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker.protocol.share_group_records import (
    GROUP_METADATA,
    STATE_PARTITION_METADATA,
    TARGET_ASSIGNMENT_METADATA,
    ShareGroupKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMetadataValue,
    TopicPartitionsInfo,
    encode_key,
    encode_value,
)

if TYPE_CHECKING:
    from mockbroker.state.share.group import ShareGroup
    from mockbroker.state.share.persisted import ShareStateStore

Record = tuple[bytes, bytes | None]
Initialized = dict[uuid.UUID, tuple[str, list[int]]]  # topic id -> (topic name, partitions)
_WRITE_ORDER = {GROUP_METADATA: 0, TARGET_ASSIGNMENT_METADATA: 1, STATE_PARTITION_METADATA: 2}
_TOMBSTONE_ORDER = {TARGET_ASSIGNMENT_METADATA: 0, STATE_PARTITION_METADATA: 1, GROUP_METADATA: 2}


def state_partitions_value(initialized: Initialized) -> ShareGroupStatePartitionMetadataValue:
    topics = [TopicPartitionsInfo(topic_id, name, sorted(partitions))
              for topic_id, (name, partitions) in sorted(initialized.items(), key=lambda kv: kv[0].bytes)]
    return ShareGroupStatePartitionMetadataValue([], topics, [])


def group_records(group: ShareGroup, initialized: Initialized | None) -> dict[ShareGroupKey, bytes]:
    """The group's records now; without `initialized`, no state-partitions record."""
    gid = group.group_id
    out = {ShareGroupKey(GROUP_METADATA, gid): encode_value(ShareGroupMetadataValue(group.group_epoch)),
           ShareGroupKey(TARGET_ASSIGNMENT_METADATA, gid): encode_value(
               ShareGroupTargetAssignmentMetadataValue(group.assignment_epoch))}
    if initialized is not None:
        out[ShareGroupKey(STATE_PARTITION_METADATA, gid)] = encode_value(state_partitions_value(initialized))
    return out


class ShareGroupLog:
    """Turns each change of a share group into its records (`append(group id, records)`: one batch, set by the
    node; None writes nothing)."""

    def __init__(self) -> None:
        self.append: Callable[[str, list[Record]], None] | None = None
        self.written: dict[str, dict[ShareGroupKey, bytes]] = {}

    def remember(self, group_id: str, records: dict[ShareGroupKey, bytes]) -> None:
        """What a load read back of a group: what was written."""
        self.written[group_id] = dict(records)

    def changed(self, group_id: str, group: ShareGroup | None, initialized: Initialized | None = None) -> None:
        """The group's records after a change (group None: it was deleted). `initialized`: its initialized
        share partitions, when they may have changed (None: as last written)."""
        before = self.written.setdefault(group_id, {})
        if group is None:
            gone = sorted(before, key=lambda k: _TOMBSTONE_ORDER[k.record_type])
            records: list[Record] = [(encode_key(k), None) for k in gone]
            del self.written[group_id]
        else:
            now = group_records(group, initialized)
            if initialized is None:
                now = {k: v for k, v in now.items() if k.record_type != STATE_PARTITION_METADATA}
            put = sorted(((k, v) for k, v in now.items() if before.get(k) != v),
                         key=lambda kv: _WRITE_ORDER[kv[0].record_type])
            before.update(put)
            records = [(encode_key(k), v) for k, v in put]
        if records and self.append is not None:
            self.append(group_id, records)


@dataclass
class LoadedShareState:
    """What a broker starting on a data dir read back (state/coordinators/share_state_load.py): the share
    coordinator's state from __share_group_state, and the share groups' records from __consumer_offsets
    (group id -> the latest record of each key, as Kafka's replay keeps it)."""

    store: ShareStateStore
    groups: dict[str, dict[ShareGroupKey, bytes]] = field(default_factory=dict)
