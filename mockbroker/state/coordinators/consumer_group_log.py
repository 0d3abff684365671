"""What a KIP-848 consumer group writes to __consumer_offsets, as Kafka 4.x's group coordinator writes it
(mockbroker/protocol/consumer_group_records.py has the bytes): after each change of the group (a heartbeat, a member
leaving or fenced, the group deleted) the records whose content changed, in one batch, in Kafka's order:

    ConsumerGroupMemberMetadata (member)       a member joined or changed its subscription or metadata
    ConsumerGroupMetadata (group)              the group epoch
    ConsumerGroupTargetAssignmentMember        a member's target assignment
    ConsumerGroupTargetAssignmentMetadata      the assignment epoch
    ConsumerGroupCurrentMemberAssignment       a member's epoch, state and assigned / revoking partitions

A member that left gets tombstones (current assignment, target assignment, member metadata, in that
order, before the new group epoch); a deleted group gets every tombstone, the group's own records last.
Kafka writes each record at the moment it changes; this broker, after each change, encodes the records of the
members the group says it touched (ConsumerGroup.changed_members: the heartbeating member, one that left, those
whose target the assignor moved) and the group's two, and writes those whose bytes differ from what it wrote
last (`ConsumerGroupLog.written`), which gives the same records at a cost that follows what changed, not the
group's size. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.protocol.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    ConsumerGroupKey,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataValue,
    TopicPartitions,
    encode_key,
    encode_value,
)
from mockbroker.state.groups.states import MemberState

if TYPE_CHECKING:
    from mockbroker.state.groups.consumer import Assignment, ConsumerGroup, ConsumerMember

# Kafka's MemberState ids.
MEMBER_STATE_IDS: dict[MemberState, int] = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1,
                                            MemberState.UNRELEASED_PARTITIONS: 2}
# The order of tombstones: a member's records, then the group's (the group's epoch record last).
_TOMBSTONE_ORDER = {CURRENT_MEMBER_ASSIGNMENT: 0, TARGET_ASSIGNMENT_MEMBER: 1, MEMBER_METADATA: 2,
                    TARGET_ASSIGNMENT_METADATA: 3, GROUP_METADATA: 4}
# The order of a change's records (Kafka's consumerGroupHeartbeat): the members' metadata, the group epoch, the
# target assignment (members, then its epoch), the members' current assignments.
_WRITE_ORDER = {MEMBER_METADATA: 0, GROUP_METADATA: 1, TARGET_ASSIGNMENT_MEMBER: 2, TARGET_ASSIGNMENT_METADATA: 3,
                CURRENT_MEMBER_ASSIGNMENT: 4}

Record = tuple[bytes, bytes | None]


def topic_partitions(assignment: Assignment) -> TopicPartitions:
    return {t: sorted(ps) for t, ps in assignment.items() if ps}


def member_metadata(m: ConsumerMember) -> MemberMetadataValue:
    return MemberMetadataValue(m.instance_id, m.rack_id, m.client_id, m.client_host, list(m.subscribed_topic_names),
                               m.subscribed_topic_regex, m.rebalance_timeout_ms, m.server_assignor)


def current_assignment(m: ConsumerMember) -> CurrentMemberAssignmentValue:
    return CurrentMemberAssignmentValue(m.member_epoch, m.previous_member_epoch, MEMBER_STATE_IDS.get(m.state, 127),
                                        topic_partitions(m.assigned), topic_partitions(m.pending_revocation))


def group_records(group: ConsumerGroup) -> dict[ConsumerGroupKey, bytes]:
    """The group's current records, key -> value bytes, in Kafka's write order (empty for a dead group): what
    a group loaded from the log holds (every member's records: O(group size), used once per load)."""
    if group.dead:
        return {}
    gid = group.group_id
    out: dict[ConsumerGroupKey, bytes] = {}
    for m in group.members.values():
        out[ConsumerGroupKey(MEMBER_METADATA, gid, m.member_id)] = encode_value(member_metadata(m))
    out.update(_group_level(group))
    for member_id, target in group.target.items():
        if member_id in group.members:
            out[ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = encode_value(
                TargetAssignmentMemberValue(topic_partitions(target)))
    for m in group.members.values():
        out[ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, gid, m.member_id)] = encode_value(current_assignment(m))
    return {k: out[k] for k in sorted(out, key=lambda k: _WRITE_ORDER[k.record_type])}


def _group_level(group: ConsumerGroup) -> dict[ConsumerGroupKey, bytes]:
    """The group's own two records: its epoch and its assignment epoch. The assignment time is not written: it
    would differ on every comparison (Kafka writes it once, when the epoch moves); the epoch is what a reload
    needs."""
    gid = group.group_id
    return {ConsumerGroupKey(GROUP_METADATA, gid): encode_value(GroupMetadataValue(group.group_epoch)),
            ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, gid): encode_value(
                TargetAssignmentMetadataValue(group.assignment_epoch))}


def member_records(group: ConsumerGroup, member_id: str) -> dict[ConsumerGroupKey, bytes | None]:
    """One member's three records as the group holds them now (None: the member, or its target, is gone)."""
    gid = group.group_id
    m = group.members.get(member_id)
    target = group.target.get(member_id) if m is not None else None
    return {
        ConsumerGroupKey(MEMBER_METADATA, gid, member_id): None if m is None else encode_value(member_metadata(m)),
        ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, gid, member_id): (
            None if target is None else encode_value(TargetAssignmentMemberValue(topic_partitions(target)))),
        ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, gid, member_id): (
            None if m is None else encode_value(current_assignment(m))),
    }


class ConsumerGroupLog:
    """Turns each change of a consumer group into its records (append: writes one batch of them)."""

    def __init__(self, append: Callable[[str, list[Record]], None]) -> None:
        self.append = append
        # What was written last of each group, key -> value: the latest record of each key in the log.
        self.written: dict[str, dict[ConsumerGroupKey, bytes]] = {}

    def remember(self, group: ConsumerGroup) -> None:
        """A group loaded from the log: what it holds is what was written."""
        self.written[group.group_id] = group_records(group)
        group.take_changed_members()

    def changed(self, group: ConsumerGroup) -> None:
        """Writes the records of what changed since the last call: the group's two records and the records of
        the members the group says it touched (ConsumerGroup.take_changed_members), those whose bytes differ
        from what was written last. The cost follows the members touched, not the group's size."""
        touched = group.take_changed_members()
        before = self.written.setdefault(group.group_id, {})
        if group.dead:
            now: dict[ConsumerGroupKey, bytes | None] = dict.fromkeys(before)
        else:
            now = {}
            for member_id in touched:
                now.update(member_records(group, member_id))
            now.update(_group_level(group))
        gone = sorted((k for k, v in now.items() if v is None and k in before),
                      key=lambda k: _TOMBSTONE_ORDER[k.record_type])
        put = sorted(((k, v) for k, v in now.items() if v is not None and before.get(k) != v),
                     key=lambda kv: _WRITE_ORDER[kv[0].record_type])
        records: list[Record] = [(encode_key(k), None) for k in gone if k.member_id is not None]
        records += [(encode_key(k), v) for k, v in put]
        records += [(encode_key(k), None) for k in gone if k.member_id is None]
        for k in gone:
            del before[k]
        before.update(put)
        if not before:
            del self.written[group.group_id]
        if records:
            self.append(group.group_id, records)
