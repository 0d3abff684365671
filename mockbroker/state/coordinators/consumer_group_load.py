"""KIP-848 consumer groups rebuilt from the ConsumerGroup* records of __consumer_offsets (what Kafka's
GroupMetadataManager.replay does with them, then onLoaded): the reverse of consumer_group_log.py.

Records are read in log order; the last record of a key wins and a tombstone removes it. A group comes
back with its group epoch, its assignment epoch, each member (metadata, member epoch, previous epoch,
state, assigned and revoking partitions) and each member's target assignment. A member record without its
group's epoch record, or a member without metadata, is left out (Kafka's loader would not have it either
after the tombstones of its removal). Then each member's session timer starts again on the broker clock
(group.consumer.session.timeout.ms, as Kafka's onLoaded does): a member that does not heartbeat is fenced
and its partitions go to the others; a member left revoking partitions gets its rebalance timeout again.
Type 4 (ConsumerGroupPartitionMetadata, written before Kafka 4.1) is skipped. No I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker.protocol.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    RECORD_TYPES,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataValue,
    TopicPartitions,
    decode_key,
    decode_value,
)
from mockbroker.state.coordinators.consumer_group_log import MEMBER_STATE_IDS
from mockbroker.state.groups.consumer import ConsumerGroup, ConsumerMember
from mockbroker.state.groups.states import MemberState

if TYPE_CHECKING:
    from mockbroker.state.groups.coordinator import GroupCoordinator

Records = Iterable[tuple[bytes | None, bytes | None]]
_STATES = {i: state for state, i in MEMBER_STATE_IDS.items()}


@dataclass
class StoredConsumerGroup:
    """What the records hold of one group."""

    epoch: int | None = None
    assignment_epoch: int = 0
    members: dict[str, MemberMetadataValue] = field(default_factory=dict)
    targets: dict[str, TargetAssignmentMemberValue] = field(default_factory=dict)
    current: dict[str, CurrentMemberAssignmentValue] = field(default_factory=dict)


def replay_consumer_groups(records: Records) -> dict[str, StoredConsumerGroup]:
    groups: dict[str, StoredConsumerGroup] = {}
    for key, value in records:
        if key is None or len(key) < 2 or int.from_bytes(key[:2], "big", signed=True) not in RECORD_TYPES:
            continue
        k = decode_key(key)
        v = None if value is None else decode_value(k.record_type, value)
        if value is not None and v is None:
            continue  # PartitionMetadata
        group = groups.setdefault(k.group_id, StoredConsumerGroup())
        member = k.member_id or ""
        if k.record_type == GROUP_METADATA:
            if v is None:
                groups.pop(k.group_id, None)
            else:
                assert isinstance(v, GroupMetadataValue)
                group.epoch = v.epoch
        elif k.record_type == TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = v.assignment_epoch if isinstance(v, TargetAssignmentMetadataValue) else 0
        elif k.record_type == MEMBER_METADATA:
            _put(group.members, member, v, MemberMetadataValue)
        elif k.record_type == TARGET_ASSIGNMENT_MEMBER:
            _put(group.targets, member, v, TargetAssignmentMemberValue)
        elif k.record_type == CURRENT_MEMBER_ASSIGNMENT:
            _put(group.current, member, v, CurrentMemberAssignmentValue)
    return {gid: g for gid, g in groups.items() if g.epoch is not None}


def _put(table: dict, member_id: str, value: object, kind: type) -> None:  # type: ignore[type-arg]
    if value is None:
        table.pop(member_id, None)
    elif isinstance(value, kind):
        table[member_id] = value


def _assignment(partitions: TopicPartitions) -> dict[uuid.UUID, set[int]]:
    return {t: set(ps) for t, ps in partitions.items() if ps}


def consumer_group_from_records(coordinator: GroupCoordinator, group_id: str,
                                stored: StoredConsumerGroup) -> ConsumerGroup:
    group = ConsumerGroup(coordinator, group_id)
    group.group_epoch = stored.epoch or 0
    group.assignment_epoch = stored.assignment_epoch
    for member_id, meta in stored.members.items():
        current = stored.current.get(member_id)
        member = ConsumerMember(
            member_id, instance_id=meta.instance_id, rack_id=meta.rack_id, client_id=meta.client_id,
            client_host=meta.client_host, rebalance_timeout_ms=meta.rebalance_timeout_ms,
            server_assignor=meta.server_assignor, subscribed_topic_names=list(meta.subscribed_topic_names),
            subscribed_topic_regex=meta.subscribed_topic_regex)
        if current is not None:
            member.member_epoch = current.member_epoch
            member.previous_member_epoch = current.previous_member_epoch
            member.state = _STATES.get(current.state, MemberState.STABLE)
            member.assigned = _assignment(current.assigned)
            member.pending_revocation = _assignment(current.pending_revocation)
        group._put_member(member)
    group.target = {mid: _assignment(t.partitions) for mid, t in stored.targets.items() if mid in group.members}
    group.subscription_metadata = group._metadata_for(group.subscribed_topic_names())
    return group


def start_timers(group: ConsumerGroup) -> None:
    """Kafka's onLoaded: every member's session timer, and the rebalance timer of a member revoking."""
    for member in group.members.values():
        group._schedule_session_timeout(member.member_id)
        if member.state == MemberState.UNREVOKED_PARTITIONS:
            group.coordinator.timers.schedule(group._rebalance_key(member.member_id),
                                              max(member.rebalance_timeout_ms, 0),
                                              _expiry(group, member.member_id, member.member_epoch))


def _expiry(group: ConsumerGroup, member_id: str, epoch: int) -> Callable[[], None]:
    return lambda: group._expire(member_id, epoch)
