"""A share group (KIP-932): its members, their epochs and assignments, and the group epoch.

- A member joins with epoch 0 and the member id it chose (ShareGroupHeartbeat v1), heartbeats with its
  current epoch, leaves with -1. An epoch other than the member's current one is fenced
  (FENCED_MEMBER_EPOCH); an unknown member id with an epoch > 0 gets UNKNOWN_MEMBER_ID.
- Any change of members or subscriptions bumps the group epoch and the assignment is computed again at
  once: share groups need no revocation step, a partition may be consumed by several members, so each
  member moves to the new epoch on its next heartbeat.
- The assignment is the simple assignor's (Kafka's SimpleAssignor, the share groups' default): for each
  subscribed topic, with no more members than partitions the partitions go round the members one by one
  (each partition to one member); with more members than partitions every member still gets a partition,
  the partitions going round the members (so some partitions have several members).
- Sessions: a member not heard from for the session timeout (group.share.session.timeout.ms) is removed
  (`expire_members`).
Simpler than Kafka: the assignor is not sticky across changes (Kafka's hashes and keeps what it can).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.errors import ErrorCode, KafkaError

Assignment = dict[str, list[int]]  # topic name -> partitions


@dataclass
class ShareMember:
    member_id: str
    member_epoch: int = 0
    client_id: str = ""
    client_host: str = ""
    rack_id: str | None = None
    subscribed: list[str] = field(default_factory=list)
    assignment: Assignment = field(default_factory=dict)
    last_seen_ms: int = 0


class ShareGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        self._assigned_counts: dict[str, int] = {}

    @property
    def state(self) -> str:
        """As ShareGroupDescribe and ListGroups name it."""
        return "Stable" if self.members else "Empty"

    def heartbeat(self, member_id: str, member_epoch: int, subscribed: list[str] | None, partitions_of: dict[str, int],
                  now_ms: int, *, client_id: str = "", client_host: str = "", rack_id: str | None = None) -> ShareMember | None:
        """One ShareGroupHeartbeat; the member as it is now (None after a leave). partitions_of: the
        partition count of every existing topic. Raises KafkaError with Kafka's code."""
        member = self.members.get(member_id)
        if member_epoch == -1:
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            self.remove(member_id, partitions_of)
            return None
        if member_epoch == 0:
            if member is None:
                if subscribed is None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
                member = ShareMember(member_id, client_id=client_id, client_host=client_host, rack_id=rack_id)
                self.members[member_id] = member
                member.subscribed = sorted(set(subscribed))
                self._rebalance(partitions_of)
        elif member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        elif member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH)
        member.last_seen_ms = now_ms
        if subscribed is not None and sorted(set(subscribed)) != member.subscribed:
            member.subscribed = sorted(set(subscribed))
            self._rebalance(partitions_of)
        elif self._topics_changed(partitions_of):
            self._rebalance(partitions_of)
        member.member_epoch = self.group_epoch
        return member

    def remove(self, member_id: str, partitions_of: dict[str, int]) -> None:
        if self.members.pop(member_id, None) is not None:
            self._rebalance(partitions_of)

    def expire_members(self, now_ms: int, session_timeout_ms: int, partitions_of: dict[str, int]) -> list[str]:
        """Remove the members whose session ran out; their ids."""
        gone = [m.member_id for m in self.members.values() if m.last_seen_ms + session_timeout_ms <= now_ms]
        for member_id in gone:
            self.members.pop(member_id)
        if gone:
            self._rebalance(partitions_of)
        return gone

    def _topics_changed(self, partitions_of: dict[str, int]) -> bool:
        return self._assigned_counts != self._counts(partitions_of)

    def _counts(self, partitions_of: dict[str, int]) -> dict[str, int]:
        topics = {t for m in self.members.values() for t in m.subscribed}
        return {t: partitions_of[t] for t in sorted(topics) if t in partitions_of}

    def _rebalance(self, partitions_of: dict[str, int]) -> None:
        self.group_epoch += 1
        self._assigned_counts = self._counts(partitions_of)
        for member in self.members.values():
            member.assignment = {}
        for topic, count in self._assigned_counts.items():
            subscribers = sorted(m for m, member in self.members.items() if topic in member.subscribed)
            if not subscribers or count == 0:
                continue
            for p, member_id in assign_simple(subscribers, count):
                self.members[member_id].assignment.setdefault(topic, []).append(p)
        for member in self.members.values():
            for parts in member.assignment.values():
                parts.sort()
        self.assignment_epoch = self.group_epoch

    def assigned(self, member_id: str, topic: str, partition: int) -> bool:
        member = self.members.get(member_id)
        return member is not None and partition in member.assignment.get(topic, [])


def assign_simple(members: list[str], partitions: int) -> list[tuple[int, str]]:
    """(partition, member) pairs of one topic: every partition to a member, every member a partition."""
    if len(members) <= partitions:
        return [(p, members[p % len(members)]) for p in range(partitions)]
    return [(i % partitions, m) for i, m in enumerate(members)]
