"""KIP-848 consumer groups (ConsumerGroupHeartbeat): server-side assignment, member and group epochs.

As Kafka's GroupMetadataManager.consumerGroupHeartbeat does, one heartbeat:
1. validates the request and the member's epoch (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, static
   members: UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID);
2. updates the member; a changed subscription (names or regex), or changed metadata of the subscribed
   topics (a topic created, deleted, grown), bumps the group epoch, and so does a new group's first
   heartbeat (epoch 0 -> 1, also when the member subscribes to nothing yet);
3. when the group epoch is ahead of the target assignment epoch, runs the assignor (the one most members
   ask for with `server_assignor`, else the first of group.consumer.assignors: uniform) for a new target;
4. reconciles the member towards its target (Kafka's CurrentAssignmentBuilder): partitions it must give
   up are revoked first (it stays at its epoch, UNREVOKED_PARTITIONS, until a heartbeat's owned partitions
   show them gone); a partition is handed to its new owner only once no other member holds it
   (UNRELEASED_PARTITIONS until then); then the member moves to the target epoch.

Members leave with epoch -1; a static member (instance id) leaves for a while with -2 and keeps its
assignment until it rejoins under the same instance id or its session times out. Sessions
(group.consumer.session.timeout.ms) and the rebalance timeout of a revoking member run on the broker clock.

Differences from Kafka: the regex (subscribed_topic_regex) is Python `re` full-matched against topic
names, where Kafka uses RE2/J (the common syntax is the same; Python-only constructs are accepted and
RE2-only ones refused); topic metadata and regexes are re-evaluated on every heartbeat instead of on a
refresh interval; the uniform assignor's heterogeneous case (members subscribed to different topics) is a
simpler balanced-and-sticky pass than Kafka's; classic members inside a KIP-848 group (the online
migration of group.consumer.migration.policy) are not served.
"""

from __future__ import annotations

import dataclasses
import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.common import GROUP_AUTHORIZED_OPERATIONS, GroupHost, GroupSummary, MemberSummary
from mockbroker.state.groups.consumer_assignors import ASSIGNORS, AssignMember
from mockbroker.state.groups.consumer_subscriptions import SubscriptionCounts, member_topics
from mockbroker.state.groups.offsets import CommittedOffset
from mockbroker.state.groups.states import ConsumerState, MemberState, consumer_group_state
from mockbroker.state.seeding import random_base64_id

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
INT32_MIN = -(2**31)
CONSUMER_MEMBER_TYPE = 1  # ConsumerGroupDescribe v1 member_type: 0 classic, 1 consumer

Assignment = dict[uuid.UUID, set[int]]


def new_member_id(rng: random.Random) -> str:
    """A member id as Kafka's Uuid.randomUuid().toString(): 22 characters of URL-safe base64 (from the
    broker's seeded source, state/seeding.py)."""
    return random_base64_id(rng)


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == MemberState.STABLE and self.member_epoch == epoch


def _copy_assignment(a: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in a.items() if ps}


def _partitions(a: Assignment) -> set[tuple[uuid.UUID, int]]:
    return {(t, p) for t, ps in a.items() for p in ps}


# -- reconciliation (Kafka's CurrentAssignmentBuilder) ----------------------------------------------


def _owns_any(revoking: Assignment, owned: list[Msg] | None) -> bool:
    if owned is None:
        return True  # the member did not say: assume it still owns them
    for tp in owned:
        parts = revoking.get(tp.topic_id, set())
        if any(p in parts for p in tp.partitions):
            return True
    return False


def reconcile(member: ConsumerMember, target_epoch: int, target: Assignment, owned: list[Msg] | None,
              partition_epoch: Callable[[uuid.UUID, int], int]) -> ConsumerMember:
    """The member's next step towards its target assignment (a new object when anything changes)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(member, member.member_epoch, target_epoch, target, owned, partition_epoch)
        return member
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(member.pending_revocation, owned):
            return member
        return _next_assignment(member, member.member_epoch + 1, target_epoch, target, owned, partition_epoch)
    return _next_assignment(member, member.member_epoch, target_epoch, target, owned, partition_epoch)


def _next_assignment(member: ConsumerMember, epoch: int, target_epoch: int, target: Assignment,
                     owned: list[Msg] | None, partition_epoch: Callable[[uuid.UUID, int], int]) -> ConsumerMember:
    has_unreleased = False
    assigned: Assignment = {}
    revoking: Assignment = {}
    pending: Assignment = {}
    for topic_id in set(target) | set(member.assigned):
        want = target.get(topic_id, set())
        current = member.assigned.get(topic_id, set())
        keep = current & want
        revoke = current - keep
        to_assign = want - keep
        unreleased = {p for p in to_assign if partition_epoch(topic_id, p) != -1}
        to_assign -= unreleased
        has_unreleased = has_unreleased or bool(unreleased)
        if keep:
            assigned[topic_id] = keep
        if revoke:
            revoking[topic_id] = revoke
        if to_assign:
            pending[topic_id] = to_assign
    if revoking and _owns_any(revoking, owned):
        # Partitions must be given up first: the member stays at its epoch until they are.
        return dataclasses.replace(member, state=MemberState.UNREVOKED_PARTITIONS, member_epoch=epoch,
                                   previous_member_epoch=member.member_epoch, assigned=assigned,
                                   pending_revocation=revoking)
    for topic_id, parts in pending.items():
        assigned.setdefault(topic_id, set()).update(parts)
    state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
    return dataclasses.replace(member, state=state, member_epoch=target_epoch,
                               previous_member_epoch=member.member_epoch, assigned=assigned, pending_revocation={})


# -- assignors ---------------------------------------------------------------------------------------


class ConsumerGroup:
    group_type = "consumer"
    protocol_type = "consumer"

    def __init__(self, coordinator: GroupHost, group_id: str) -> None:
        self.coordinator = coordinator
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}
        self.target: dict[str, Assignment] = {}
        self.partition_epochs: dict[tuple[uuid.UUID, int], int] = {}
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.subscriptions = SubscriptionCounts()  # what the members subscribe to, counted
        self.dead = False
        # Members whose records (metadata, target, current assignment) may have changed since the coordinator
        # log last took them (take_changed_members), in order: it writes theirs only, as Kafka writes records.
        self.changed_members: dict[str, None] = {}

    def take_changed_members(self) -> list[str]:
        """The members touched since the last call (added, changed, removed, target moved), and forget them."""
        touched, self.changed_members = list(self.changed_members), {}
        return touched

    # -- state -------------------------------------------------------------------------------------
    @property
    def state(self) -> ConsumerState:
        if self.dead:
            return ConsumerState.DEAD
        return consumer_group_state(len(self.members), self.group_epoch, self.assignment_epoch,
                                    all(m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()))

    @property
    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def _alive(self) -> bool:
        return self.coordinator.groups.get(self.group_id) is self

    def partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), -1)

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None

    def _put_member(self, member: ConsumerMember) -> None:
        old = self.members.get(member.member_id)
        if old is not None:
            self._release_partitions(old)
            self.subscriptions.add(old, -1)
        self.members[member.member_id] = member
        self.subscriptions.add(member)
        self.changed_members[member.member_id] = None
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for tp in _partitions(member.assigned) | _partitions(member.pending_revocation):
            self.partition_epochs[tp] = member.member_epoch

    def _release_partitions(self, member: ConsumerMember) -> None:
        for tp in _partitions(member.assigned) | _partitions(member.pending_revocation):
            if self.partition_epochs.get(tp) is not None:
                del self.partition_epochs[tp]

    def _drop_member(self, member_id: str) -> ConsumerMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self._release_partitions(member)
        self.subscriptions.add(member, -1)
        self.changed_members[member_id] = None
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        return member

    # -- topics ------------------------------------------------------------------------------------
    def _member_topics(self, member: ConsumerMember) -> set[str]:
        return member_topics(self.coordinator.cluster, member)

    def subscribed_topic_names(self) -> set[str]:
        return self.subscriptions.topics(self.coordinator.cluster)

    def _metadata_for(self, names: set[str]) -> dict[str, tuple[uuid.UUID, int]]:
        out = {}
        for name in sorted(names):
            t = self.coordinator.cluster.topic(name)
            if t is not None:
                out[name] = (t.topic_id, len(t.partitions))
        return out

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topic_names()

    # -- timers ------------------------------------------------------------------------------------
    def _session_key(self, member_id: str) -> tuple[str, ...]:
        return ("consumer-session", self.group_id, member_id)

    def _rebalance_key(self, member_id: str) -> tuple[str, ...]:
        return ("consumer-rebalance", self.group_id, member_id)

    def _schedule_session_timeout(self, member_id: str) -> None:
        self.coordinator.timers.schedule(self._session_key(member_id),
                                         int(self.coordinator.setting("group.consumer.session.timeout.ms")),
                                         lambda: self._expire(member_id, None))

    def _expire(self, member_id: str, epoch: int | None) -> None:
        if not self._alive():
            return
        member = self.members.get(member_id)
        if member is None or (epoch is not None and member.member_epoch != epoch):
            return
        self.fence(member)

    def _cancel_timers(self, member_id: str) -> None:
        self.coordinator.timers.cancel(self._session_key(member_id))
        self.coordinator.timers.cancel(self._rebalance_key(member_id))

    # -- heartbeat ---------------------------------------------------------------------------------
    @staticmethod
    def _check_epoch(member: ConsumerMember, received: int, owned: list[Msg] | None) -> None:
        if received > member.member_epoch:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a greater member epoch ({received}) than the one known "
                             f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                             "partitions and rejoin.")
        if received < member.member_epoch:
            # The previous epoch with a subset of the assignment is fine: our last answer may have been lost.
            subset = owned is not None and all(
                p in member.assigned.get(tp.topic_id, set()) for tp in owned for p in tp.partitions)
            if received != member.previous_member_epoch or not subset:
                raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({received}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                                 "all its partitions and rejoin.")

    def heartbeat(self, *, member_id: str, member_epoch: int, instance_id: str | None, rack_id: str | None,
                  rebalance_timeout_ms: int, client_id: str, client_host: str, subscribed_topic_names: list[str] | None,
                  subscribed_topic_regex: str | None, server_assignor: str | None,
                  owned: list[Msg] | None) -> Msg:
        joining = member_epoch == 0
        replaced: str | None = None
        if instance_id is None:
            member = self.members.get(member_id)
            if member is None:
                if not joining:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                     f"Member {member_id} is not a member of group {self.group_id}.")
                member = ConsumerMember(member_id)
            else:
                self._check_epoch(member, member_epoch, owned)
        else:
            existing = self.static_member(instance_id)
            if joining:
                if existing is None:
                    member = self.members.get(member_id) or ConsumerMember(member_id)
                    if member_id in self.members:
                        self._check_epoch(member, member_epoch, owned)
                else:
                    if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                        raise KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                         f"Static member {member_id} with instance id {instance_id} cannot join the "
                                         f"group because the instance id is owned by {existing.member_id} member.")
                    # The static member is back: a copy of it under its (maybe new) member id, epoch 0.
                    member = dataclasses.replace(existing, member_id=member_id, member_epoch=0,
                                                 previous_member_epoch=0, assigned=_copy_assignment(existing.assigned),
                                                 pending_revocation={})
                    replaced = existing.member_id
            else:
                if existing is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
                if existing.member_id != member_id:
                    raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                                     f"Static member {member_id} with instance id {instance_id} was fenced by member "
                                     f"{existing.member_id}.")
                self._check_epoch(existing, member_epoch, owned)
                member = existing

        updated = dataclasses.replace(
            member,
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=rack_id if rack_id is not None else member.rack_id,
            rebalance_timeout_ms=rebalance_timeout_ms if rebalance_timeout_ms != -1 else member.rebalance_timeout_ms,
            server_assignor=server_assignor if server_assignor is not None else member.server_assignor,
            subscribed_topic_names=(list(subscribed_topic_names) if subscribed_topic_names is not None
                                    else member.subscribed_topic_names),
            subscribed_topic_regex=(subscribed_topic_regex if subscribed_topic_regex is not None
                                    else member.subscribed_topic_regex),
            client_id=client_id, client_host=client_host,
        )
        # A new group moves away from epoch 0 on its first heartbeat, whatever the subscription (Kafka 4):
        # a member that joins with nothing to subscribe to yet gets epoch 1, a real member epoch.
        bump = (self.group_epoch == 0
                or sorted(updated.subscribed_topic_names) != sorted(member.subscribed_topic_names)
                or (updated.subscribed_topic_regex or None) != (member.subscribed_topic_regex or None))

        # The subscribed topics as they are about to be: updated in, the member it replaces out.
        gone = [self.members[i] for i in dict.fromkeys((updated.member_id, replaced)) if i in self.members]
        metadata = self._metadata_for(self.subscriptions.topics(self.coordinator.cluster, gone, updated))
        if metadata != self.subscription_metadata:
            self.subscription_metadata = metadata
            bump = True
        if bump:
            self.group_epoch += 1

        if replaced is not None:
            target = self.target.pop(replaced, {})
            self._drop_member(replaced)
            self.target[updated.member_id] = target
        self._put_member(updated)

        if self.group_epoch > self.assignment_epoch:
            self._compute_target_assignment()
        before = member
        reconciled = reconcile(updated, self.assignment_epoch, self.target.get(updated.member_id, {}), owned,
                               self.partition_epoch)
        if reconciled is not updated:
            self._put_member(reconciled)
            if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
                epoch = reconciled.member_epoch
                self.coordinator.timers.schedule(self._rebalance_key(reconciled.member_id),
                                                 max(reconciled.rebalance_timeout_ms, 0),
                                                 lambda: self._expire(reconciled.member_id, epoch))
            else:
                self.coordinator.timers.cancel(self._rebalance_key(reconciled.member_id))
        self._schedule_session_timeout(reconciled.member_id)

        response = Msg(error_code=ErrorCode.NONE, error_message=None, member_id=reconciled.member_id,
                       member_epoch=reconciled.member_epoch,
                       heartbeat_interval_ms=int(self.coordinator.setting("group.consumer.heartbeat.interval.ms")),
                       assignment=None)
        full = joining or (rebalance_timeout_ms != -1 and owned is not None
                           and (subscribed_topic_names is not None or subscribed_topic_regex is not None))
        if full or _copy_assignment(before.assigned) != _copy_assignment(reconciled.assigned):
            response.assignment = Msg(topic_partitions=[
                Msg(topic_id=t, partitions=sorted(ps)) for t, ps in sorted(reconciled.assigned.items(),
                                                                            key=lambda kv: str(kv[0])) if ps])
        return response

    def preferred_assignor(self) -> str:
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor is not None:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if counts:
            best = max(counts.values())
            return next(name for name, c in counts.items() if c == best)
        return str(self.coordinator.setting("group.consumer.assignors")).split(",")[0].strip()

    def _compute_target_assignment(self) -> None:
        name = self.preferred_assignor()
        topics = {tid: n for _, (tid, n) in self.subscription_metadata.items()}
        by_name = dict(self.subscription_metadata)
        members = []
        for m in self.members.values():
            ids = {by_name[t][0] for t in self._member_topics(m) if t in by_name}
            members.append(AssignMember(m.member_id, m.instance_id, ids))
        current = {mid: self.target.get(mid, {}) for mid in self.members}
        self.target = ASSIGNORS[name](members, topics, current)
        self.changed_members.update((mid, None) for mid, t in self.target.items() if current.get(mid) != t)
        self.assignment_epoch = self.group_epoch

    # -- leaving -----------------------------------------------------------------------------------
    def leave(self, member_id: str, instance_id: str | None, member_epoch: int) -> Msg:
        if instance_id is None:
            member = self.members.get(member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {self.group_id}.")
            self.fence(member)
            return Msg(error_code=ErrorCode.NONE, error_message=None, member_id=member_id, member_epoch=member_epoch,
                       heartbeat_interval_ms=0, assignment=None)
        member = self.static_member(instance_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {member_id} with instance id {instance_id} was fenced by member "
                             f"{member.member_id}.")
        if member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # Gone for a while: it keeps its assignment (its session timer keeps running).
            self._put_member(dataclasses.replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                                 pending_revocation={}))
            self.coordinator.timers.cancel(self._rebalance_key(member.member_id))
            return Msg(error_code=ErrorCode.NONE, error_message=None, member_id=member.member_id,
                       member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, heartbeat_interval_ms=0, assignment=None)
        self.fence(member)
        return Msg(error_code=ErrorCode.NONE, error_message=None, member_id=member_id, member_epoch=member_epoch,
                   heartbeat_interval_ms=0, assignment=None)

    def fence(self, member: ConsumerMember) -> None:
        """Remove a member (leave, session or rebalance timeout): its partitions are free, the epoch moves."""
        self._drop_member(member.member_id)
        self.target.pop(member.member_id, None)
        self._cancel_timers(member.member_id)
        self.subscription_metadata = self._metadata_for(self.subscribed_topic_names())
        self.group_epoch += 1
        self.coordinator.group_state_changed(self)

    def delete(self) -> None:
        for member_id in list(self.members):
            self._cancel_timers(member_id)
        self.dead = True
        self.coordinator.group_state_changed(self)

    # -- offsets -----------------------------------------------------------------------------------
    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, member_epoch: int,
                               api_version: int) -> None:
        if member_epoch < 0 and not self.members:
            return
        member = self.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        if api_version < 9:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                             "OffsetCommit version 9 or above must be used by members using the modern group protocol")
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.STALE_MEMBER_EPOCH,
                             f"The received member epoch {member_epoch} does not match the expected member epoch "
                             f"{member.member_epoch}.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member_id} is not a member of group {self.group_id}.")
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.STALE_MEMBER_EPOCH,
                             f"The received member epoch {member_epoch} does not match the expected member epoch "
                             f"{member.member_epoch}.")

    def validate_offset_delete(self) -> None:
        return None

    def validate_delete_group(self) -> None:
        if self.members:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP)

    def offset_base_time(self) -> Callable[[CommittedOffset], int] | None:
        return lambda o: o.commit_timestamp_ms

    # -- describe ----------------------------------------------------------------------------------
    def _named(self, assignment: Assignment) -> list[Msg]:
        topics_by_id = self.coordinator.cluster.topics_by_id
        out = []
        for topic_id, parts in sorted(assignment.items(), key=lambda kv: str(kv[0])):
            t = topics_by_id.get(topic_id)
            if t is not None and parts:
                out.append(Msg(topic_id=topic_id, topic_name=t.name, partitions=sorted(parts)))
        return out

    def describe(self, include_authorized_operations: bool) -> Msg:

        members = []
        for m in self.members.values():
            members.append(Msg(
                member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                client_id=m.client_id, client_host=m.client_host, subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=Msg(topic_partitions=self._named(m.assigned)),
                target_assignment=Msg(topic_partitions=self._named(self.target.get(m.member_id, {}))),
                member_type=CONSUMER_MEMBER_TYPE))
        return Msg(error_code=ErrorCode.NONE, error_message=None, group_id=self.group_id, group_state=self.state_name,
                   group_epoch=self.group_epoch, assignment_epoch=self.assignment_epoch,
                   assignor_name=self.preferred_assignor(), members=members,
                   authorized_operations=GROUP_AUTHORIZED_OPERATIONS if include_authorized_operations else INT32_MIN)

    def summary(self) -> GroupSummary:

        topics_by_id = self.coordinator.cluster.topics_by_id

        def names(a: Assignment) -> dict[str, list[int]]:
            return {topics_by_id[t].name: sorted(ps) for t, ps in a.items() if t in topics_by_id and ps}

        return GroupSummary(
            group_id=self.group_id, group_type="consumer", protocol_type="consumer", state=self.state_name,
            generation_or_epoch=self.group_epoch, protocol=self.preferred_assignor(), leader=None,
            members=[MemberSummary(m.member_id, m.instance_id, m.client_id, names(m.assigned), m.member_epoch)
                     for m in self.members.values()])


# -- the request, as the coordinator takes it -----------------------------------------------------------


def heartbeat_error(code: ErrorCode, message: str | None = None) -> Msg:
    return Msg(error_code=code, error_message=message, member_id=None, member_epoch=0, heartbeat_interval_ms=0,
               assignment=None)


def validate_heartbeat(req: Msg, api_version: int, assignors: list[str]) -> None:
    """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR,
    INVALID_REGULAR_EXPRESSION)."""
    epoch = req.member_epoch

    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    if (api_version >= 1 or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH) and not req.member_id:
        raise invalid("MemberId can't be empty.")
    if not req.group_id:
        raise invalid("GroupId can't be empty.")
    if req.instance_id is not None and not req.instance_id:
        raise invalid("InstanceId can't be empty.")
    if req.rack_id is not None and not req.rack_id:
        raise invalid("RackId can't be empty.")
    if epoch == 0:
        if req.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.topic_partitions is None or req.topic_partitions:
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and req.get("subscribed_topic_regex") is None:
            raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid("MemberEpoch is invalid.")
    if req.server_assignor is not None and req.server_assignor not in assignors:
        raise KafkaError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                         f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: "
                         f"{', '.join(assignors)}.")
    regex = req.get("subscribed_topic_regex")
    if regex:
        try:
            re.compile(regex)
        except re.error as exc:
            raise KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                             f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}.") from None
