"""The group coordinator: classic groups (JoinGroup/SyncGroup), KIP-848 groups (consumer_groups.py) and
their committed offsets (offsets.py), as Kafka's GroupMetadataManager and OffsetMetadataManager behave.

No I/O and no asyncio here. A request that must wait (JoinGroup until the rebalance completes, SyncGroup
until the leader's assignment arrives) hands in a `respond` callback; the state calls it when the answer
is known — at once, or later from a state change or a timer. Timers run on the broker clock through the
scheduler (`call_at(due_ms, callback)`), so tests move time with `clock.advance()`.

Classic group state changes go through the table in group_states.py (`ClassicGroup._transition`), and
nowhere else.

One node is the coordinator of every group (FindCoordinator answers the node the client talks to), so
there is no partitioning of groups over __consumer_offsets and no loading.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import Reader
from mockbroker.state.group_states import ClassicEvent, ClassicState, can_rebalance, next_state
from mockbroker.state.offsets import DEFAULT_METADATA_MAX_BYTES, CommittedOffset, OffsetStore

if TYPE_CHECKING:
    from mockbroker.state.cluster import Cluster
    from mockbroker.state.consumer_groups import ConsumerGroup

Responder = Callable[[Msg], None]
CONSUMER_PROTOCOL_TYPE = "consumer"
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # Kafka's classicGroupNewMemberJoinTimeoutMs
INT32_MIN = -(2**31)
# AclOperation bits a group answers in DescribeGroups/ConsumerGroupDescribe: READ 3, DELETE 6, DESCRIBE 8.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)

# Broker settings the coordinator reads, with Kafka's defaults (ones the config registry does not know
# are read from the broker's unknown settings, so `config={"offsets.retention.check.interval.ms": ...}`
# works either way).
SETTINGS_DEFAULTS: dict[str, int | str] = {
    "group.initial.rebalance.delay.ms": 3000,
    "group.min.session.timeout.ms": 6000,
    "group.max.session.timeout.ms": 1800000,
    "offsets.retention.minutes": 10080,
    "offsets.retention.check.interval.ms": 600000,
    "offset.metadata.max.bytes": DEFAULT_METADATA_MAX_BYTES,
    "group.consumer.session.timeout.ms": 45000,
    "group.consumer.heartbeat.interval.ms": 5000,
    "group.consumer.assignors": "uniform,range",
}


class TimerLike(Protocol):
    def cancel(self) -> None: ...


class SchedulerLike(Protocol):
    def call_at(self, due_ms: int, callback: Callable[[], None]) -> Any: ...


class Timers:
    """Named one-shot timers on the scheduler: scheduling a name again replaces its timer."""

    def __init__(self, scheduler: SchedulerLike, clock: Clock) -> None:
        self.scheduler = scheduler
        self.clock = clock
        self._timers: dict[tuple[str, ...], TimerLike] = {}

    def schedule(self, key: tuple[str, ...], delay_ms: int, callback: Callable[[], None], *,
                 base_ms: int | None = None) -> int:
        """Run `callback` delay_ms after now (or after base_ms: a chain of timers keeps its own time even
        when a test moves the clock past several links at once). Returns the due time."""
        self.cancel(key)

        def fire() -> None:
            if self._timers.get(key) is timer:
                del self._timers[key]
                callback()

        due = (self.clock.now_ms() if base_ms is None else base_ms) + max(0, int(delay_ms))
        timer = self.scheduler.call_at(due, fire)
        self._timers[key] = timer
        return due

    def cancel(self, key: tuple[str, ...]) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def has(self, key: tuple[str, ...]) -> bool:
        return key in self._timers


def parse_subscription_topics(metadata: bytes) -> list[str]:
    """The topics of a consumer-protocol subscription (ConsumerProtocolSubscription, read as its v0
    prefix as Kafka does). DecodeError when the bytes are not one."""
    r = Reader(memoryview(metadata))
    r.int16()  # version
    n = r.int32()
    if n < 0:
        return []
    return [r.string() for _ in range(n)]


def join_error(code: ErrorCode, member_id: str = "") -> Msg:
    return Msg(error_code=code, generation_id=-1, protocol_type=None, protocol_name="", leader="",
               skip_assignment=False, member_id=member_id, members=[])


def sync_error(code: ErrorCode) -> Msg:
    return Msg(error_code=code, protocol_type=None, protocol_name=None, assignment=b"")


@dataclass
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    is_new: bool = False
    join_responder: Responder | None = field(default=None, repr=False)
    sync_responder: Responder | None = field(default=None, repr=False)

    @property
    def awaiting_join(self) -> bool:
        return self.join_responder is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_responder is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str | None:
        """The member's most preferred protocol among the candidates (its list is in preference order)."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        return None

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol_name:
                return meta
        return b""

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync


class ClassicGroup:
    group_type = "classic"

    def __init__(self, coordinator: GroupCoordinator, group_id: str) -> None:
        self.coordinator = coordinator
        self.group_id = group_id
        self.state = ClassicState.EMPTY
        self.previous_state = ClassicState.DEAD
        self.state_timestamp_ms = coordinator.clock.now_ms()
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicMember] = {}
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_join_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.new_member_added = False
        self.subscribed_topics: set[str] | None = None

    # -- the state table -------------------------------------------------------------------------
    def _transition(self, event: ClassicEvent) -> None:
        self.previous_state = self.state
        self.state = next_state(self.state, event)
        self.state_timestamp_ms = self.coordinator.clock.now_ms()

    def is_empty(self) -> bool:
        return self.state == ClassicState.EMPTY

    @property
    def state_name(self) -> str:
        return self.state.value

    # -- timers ----------------------------------------------------------------------------------
    @property
    def _timers(self) -> Timers:
        return self.coordinator.timers

    def _join_key(self) -> tuple[str, ...]:
        return ("classic-join", self.group_id)

    def _sync_key(self) -> tuple[str, ...]:
        return ("classic-sync", self.group_id)

    def _heartbeat_key(self, member_id: str) -> tuple[str, ...]:
        return ("classic-heartbeat", self.group_id, member_id)

    def _alive(self) -> bool:
        return self.coordinator.groups.get(self.group_id) is self

    def _schedule_heartbeat(self, member_id: str, timeout_ms: int) -> None:
        self._timers.schedule(self._heartbeat_key(member_id), timeout_ms,
                              lambda: self._expire_member_heartbeat(member_id))

    def reschedule_heartbeat(self, member: ClassicMember) -> None:
        self._schedule_heartbeat(member.member_id, member.session_timeout_ms)

    def cancel_all_timers(self) -> None:
        self._timers.cancel(self._join_key())
        self._timers.cancel(self._sync_key())
        for member_id in list(self.members) + list(self.pending_join_members):
            self._timers.cancel(self._heartbeat_key(member_id))

    # -- membership ------------------------------------------------------------------------------
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def _protocol_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.members.values():
            for name in set(m.protocol_names()):
                counts[name] = counts.get(name, 0) + 1
        return counts

    def supports_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        names = list(names)
        if self.state == ClassicState.EMPTY:
            return bool(protocol_type) and bool(names)
        counts = self._protocol_counts()
        return self.protocol_type == protocol_type and any(counts.get(n, 0) == len(self.members) for n in names)

    def select_protocol(self) -> str | None:
        """The protocol all members support that gets the most votes (each member votes for its most
        preferred candidate). Ties go to the protocol the earliest member voted for."""
        counts = self._protocol_counts()
        candidates = {n for n, c in counts.items() if c == len(self.members)}
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            if choice is not None:
                votes[choice] = votes.get(choice, 0) + 1
        if not votes:
            return None
        best = max(votes.values())
        return next(name for name, count in votes.items() if count == best)

    def has_all_members_joined(self) -> bool:
        return all(m.awaiting_join for m in self.members.values()) and not self.pending_join_members

    def _add(self, member: ClassicMember, responder: Responder | None) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        member.join_responder = responder
        self.pending_join_members.discard(member.member_id)

    def _remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
            if member.sync_responder is not None:
                # Not Kafka: a member removed by another connection (admin LeaveGroup) while its SyncGroup
                # is parked is told now instead of hanging until the client's request timeout.
                self._complete_sync(member, sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def _complete_join(self, member: ClassicMember, response: Msg) -> bool:
        responder = member.join_responder
        if responder is None:
            return False
        member.join_responder = None
        responder(response)
        return True

    def _complete_sync(self, member: ClassicMember, response: Msg) -> bool:
        responder = member.sync_responder
        if responder is None:
            return False
        member.sync_responder = None
        responder(response)
        return True

    def validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise KafkaError(ErrorCode.FENCED_INSTANCE_ID)
        if member_id not in self.members:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)

    def _member_list(self) -> list[Msg]:
        return [Msg(member_id=m.member_id, group_instance_id=m.group_instance_id,
                    metadata=m.metadata(self.protocol_name)) for m in self.members.values()]

    def _join_response(self, member_id: str, *, with_members: bool, leader: str | None = None,
                       skip_assignment: bool = False) -> Msg:
        return Msg(error_code=ErrorCode.NONE, generation_id=self.generation_id, protocol_type=self.protocol_type,
                   protocol_name=self.protocol_name, leader=self.leader_id if leader is None else leader,
                   skip_assignment=skip_assignment, member_id=member_id,
                   members=self._member_list() if with_members else [])

    def compute_subscribed_topics(self) -> set[str] | None:
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                topics.update(parse_subscription_topics(m.metadata(self.protocol_name)))
        except DecodeError:
            return None
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.state != ClassicState.EMPTY

    # -- JoinGroup -------------------------------------------------------------------------------
    def join(self, *, member_id: str, group_instance_id: str | None, session_timeout_ms: int,
             rebalance_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]], client_id: str,
             client_host: str, api_version: int, respond: Responder) -> None:
        if member_id == "":
            self._join_new_member(group_instance_id, session_timeout_ms, rebalance_timeout_ms, protocol_type,
                                  protocols, client_id, client_host, api_version, respond)
        else:
            self._join_existing_member(member_id, group_instance_id, session_timeout_ms, rebalance_timeout_ms,
                                       protocol_type, protocols, client_id, client_host, respond)

    def _join_new_member(self, group_instance_id: str | None, session_timeout_ms: int, rebalance_timeout_ms: int,
                         protocol_type: str, protocols: list[tuple[str, bytes]], client_id: str, client_host: str,
                         api_version: int, respond: Responder) -> None:
        if self.state == ClassicState.DEAD:
            respond(join_error(ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not self.supports_protocols(protocol_type, (n for n, _ in protocols)):
            respond(join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_member_id = f"{group_instance_id if group_instance_id is not None else client_id}-{uuid.uuid4()}"
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is not None:
                self._update_static_member(existing, new_member_id, group_instance_id, session_timeout_ms,
                                           rebalance_timeout_ms, protocols, api_version, respond)
            else:
                self._add_member_then_rebalance(new_member_id, group_instance_id, session_timeout_ms,
                                                rebalance_timeout_ms, protocol_type, protocols, client_id,
                                                client_host, respond)
            return
        if api_version >= 4:
            # KIP-394: the member must come back with the id we give it.
            self.pending_join_members.add(new_member_id)
            self._timers.schedule(self._heartbeat_key(new_member_id), session_timeout_ms,
                                  lambda: self._expire_member_heartbeat(new_member_id))
            respond(join_error(ErrorCode.MEMBER_ID_REQUIRED, new_member_id))
            return
        self._add_member_then_rebalance(new_member_id, None, session_timeout_ms, rebalance_timeout_ms,
                                        protocol_type, protocols, client_id, client_host, respond)

    def _join_existing_member(self, member_id: str, group_instance_id: str | None, session_timeout_ms: int,
                              rebalance_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                              client_id: str, client_host: str, respond: Responder) -> None:
        if self.state == ClassicState.DEAD:
            respond(join_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id))
            return
        if not self.supports_protocols(protocol_type, (n for n, _ in protocols)):
            respond(join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
            return
        if member_id in self.pending_join_members:
            self._add_member_then_rebalance(member_id, group_instance_id, session_timeout_ms, rebalance_timeout_ms,
                                            protocol_type, protocols, client_id, client_host, respond)
            return
        try:
            self.validate_member(member_id, group_instance_id)
        except KafkaError as exc:
            respond(join_error(exc.code, member_id))
            return
        member = self.members[member_id]
        if self.state == ClassicState.PREPARING_REBALANCE:
            self._update_member_then_rebalance(member, protocols, rebalance_timeout_ms, session_timeout_ms, respond)
        elif self.state == ClassicState.COMPLETING_REBALANCE:
            if member.matches(protocols):
                # The member lost our JoinGroup answer: the same answer again.
                respond(self._join_response(member_id, with_members=self.leader_id == member_id))
            else:
                self._update_member_then_rebalance(member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                                   respond)
        elif self.state == ClassicState.STABLE:
            if self.leader_id == member_id or not member.matches(protocols):
                # A leader's JoinGroup always rebalances (it may know of metadata changes).
                self._update_member_then_rebalance(member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                                   respond)
            else:
                respond(self._join_response(member_id, with_members=False))
        else:
            respond(join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))

    def _add_member_then_rebalance(self, member_id: str, group_instance_id: str | None, session_timeout_ms: int,
                                   rebalance_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                                   client_id: str, client_host: str, respond: Responder) -> None:
        member = ClassicMember(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                               session_timeout_ms, protocol_type, list(protocols), is_new=True)
        if self.state == ClassicState.PREPARING_REBALANCE and self.previous_state == ClassicState.EMPTY:
            self.new_member_added = True
        self._add(member, respond)
        # A new member cannot heartbeat while its JoinGroup is parked: time the join out instead.
        self._schedule_heartbeat(member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance_or_complete_join()

    def _update_member_then_rebalance(self, member: ClassicMember, protocols: list[tuple[str, bytes]],
                                      rebalance_timeout_ms: int, session_timeout_ms: int,
                                      respond: Responder | None) -> None:
        self._update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, respond)
        self._maybe_prepare_rebalance_or_complete_join()

    @staticmethod
    def _update_member(member: ClassicMember, protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                       session_timeout_ms: int, respond: Responder | None) -> None:
        member.protocols = list(protocols)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        member.join_responder = respond

    def _update_static_member(self, old_member_id: str, new_member_id: str, group_instance_id: str,
                              session_timeout_ms: int, rebalance_timeout_ms: int, protocols: list[tuple[str, bytes]],
                              api_version: int, respond: Responder) -> None:
        current_leader = self.leader_id
        new_member = self._replace_static_member(group_instance_id, old_member_id, new_member_id)
        self.reschedule_heartbeat(new_member)
        self._update_member(new_member, protocols, rebalance_timeout_ms, session_timeout_ms, respond)
        if self.state == ClassicState.STABLE:
            if (self.protocol_name or "") == self.select_protocol():
                # The static member is back with what it had: no rebalance, its old assignment stands.
                if api_version >= 9:
                    is_leader = self.leader_id == new_member_id
                    self._complete_join(new_member, self._join_response(new_member_id, with_members=is_leader,
                                                                        skip_assignment=is_leader))
                else:
                    self._complete_join(new_member, self._join_response(new_member_id, with_members=False,
                                                                        leader=current_leader or ""))
            else:
                self._maybe_prepare_rebalance_or_complete_join()
        elif self.state == ClassicState.COMPLETING_REBALANCE:
            # The leader may already have the old member id in its assignment: start over.
            self._prepare_rebalance()
        else:
            self._maybe_complete_join_phase()

    def _replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> ClassicMember:
        old = self.members.pop(old_member_id)
        self._timers.cancel(self._heartbeat_key(old_member_id))
        self._complete_join(old, Msg(error_code=ErrorCode.FENCED_INSTANCE_ID, generation_id=-1, protocol_type=None,
                                     protocol_name=None, leader="", skip_assignment=False, member_id=old_member_id,
                                     members=[]))
        self._complete_sync(old, sync_error(ErrorCode.FENCED_INSTANCE_ID))
        new = ClassicMember(new_member_id, old.group_instance_id, old.client_id, old.client_host,
                            old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type, list(old.protocols),
                            assignment=old.assignment)
        self.members[new_member_id] = new
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return new

    # -- the rebalance ---------------------------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self) -> None:
        if can_rebalance(self.state):
            self._prepare_rebalance()
        else:
            self._maybe_complete_join_phase()

    def _prepare_rebalance(self) -> None:
        if self.state == ClassicState.COMPLETING_REBALANCE:
            for m in self.members.values():
                m.assignment = b""
            self._propagate_assignment(ErrorCode.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration()
        initial = self.state == ClassicState.EMPTY
        if initial:
            delay = int(self.coordinator.setting("group.initial.rebalance.delay.ms"))
            remaining = max(self.rebalance_timeout_ms() - delay, 0)
            due = self._timers.schedule(self._join_key(), delay,
                                        lambda: self._try_complete_initial_rebalance(delay, remaining, due))
        self._transition(ClassicEvent.PREPARE_REBALANCE)
        if not initial:
            self._maybe_complete_join_else_schedule()

    def _maybe_complete_join_else_schedule(self) -> None:
        if self.has_all_members_joined():
            self._complete_join_phase()
        else:
            self._timers.schedule(self._join_key(), self.rebalance_timeout_ms(), self._complete_join_phase)

    def _try_complete_initial_rebalance(self, delay_ms: int, remaining_ms: int, fired_at: int) -> None:
        if not self._alive():
            return
        if self.new_member_added and remaining_ms != 0:
            # group.initial.rebalance.delay.ms: wait a little more for more members, up to the rebalance timeout.
            self.new_member_added = False
            initial_delay = int(self.coordinator.setting("group.initial.rebalance.delay.ms"))
            new_delay = min(initial_delay, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            due = self._timers.schedule(
                self._join_key(), new_delay,
                lambda: self._try_complete_initial_rebalance(new_delay, new_remaining, due), base_ms=fired_at)
        else:
            self._complete_join_phase()

    def _maybe_complete_join_phase(self) -> None:
        if self.state != ClassicState.PREPARING_REBALANCE:
            return
        if self.previous_state == ClassicState.EMPTY:
            return  # the initial rebalance ends with its delay
        if not self.has_all_members_joined():
            return
        self._complete_join_phase()

    def _complete_join_phase(self) -> None:
        self._timers.cancel(self._join_key())
        if not self._alive() or self.state != ClassicState.PREPARING_REBALANCE:
            return
        for member in [m for m in self.members.values() if not m.awaiting_join and m.group_instance_id is None]:
            self._remove(member.member_id)
            self._timers.cancel(self._heartbeat_key(member.member_id))
        if not self._maybe_elect_new_joined_leader() and self.members:
            # Nobody rejoined: wait another rebalance timeout (session timeouts remove the silent ones).
            self._timers.schedule(self._join_key(), self.rebalance_timeout_ms(), self._complete_join_phase)
            return
        self._init_next_generation()
        if self.state == ClassicState.EMPTY:
            return
        for member in list(self.members.values()):
            response = self._join_response(member.member_id, with_members=self.leader_id == member.member_id)
            self._complete_join(member, response)
            self.reschedule_heartbeat(member)
            member.is_new = False
            self.pending_sync_members.add(member.member_id)
        generation = self.generation_id
        self._timers.schedule(self._sync_key(), self.rebalance_timeout_ms(),
                              lambda: self._expire_pending_sync(generation))

    def _maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join:
            return True
        for m in self.members.values():
            if m.awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    def _init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self._transition(ClassicEvent.JOIN_COMPLETE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self._transition(ClassicEvent.JOIN_COMPLETE_EMPTY)
        self.pending_sync_members.clear()

    def _remove_sync_expiration(self) -> None:
        self.pending_sync_members.clear()
        self._timers.cancel(self._sync_key())

    def _expire_pending_sync(self, generation_id: int) -> None:
        if not self._alive() or generation_id != self.generation_id:
            return
        if self.state in (ClassicState.COMPLETING_REBALANCE, ClassicState.STABLE) and self.pending_sync_members:
            for member_id in list(self.pending_sync_members):
                self._remove(member_id)
                self._timers.cancel(self._heartbeat_key(member_id))
            self._prepare_rebalance()

    def _expire_member_heartbeat(self, member_id: str) -> None:
        if not self._alive() or self.state == ClassicState.DEAD:
            return
        if member_id in self.pending_join_members:
            self._remove(member_id)
            if self.state == ClassicState.PREPARING_REBALANCE and self.has_all_members_joined():
                self._complete_join_phase()
            return
        member = self.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        self._remove_member_and_update_group(member)

    def _remove_member_and_update_group(self, member: ClassicMember) -> None:
        self._complete_join(member, join_error(ErrorCode.UNKNOWN_MEMBER_ID))
        self._remove(member.member_id)
        if self.state in (ClassicState.STABLE, ClassicState.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join()
        elif self.state == ClassicState.PREPARING_REBALANCE and self.has_all_members_joined():
            self._complete_join_phase()

    def _propagate_assignment(self, error: ErrorCode) -> None:
        ok = error == ErrorCode.NONE
        for member in list(self.members.values()):
            response = Msg(error_code=error, protocol_type=self.protocol_type if ok else None,
                           protocol_name=self.protocol_name if ok else None, assignment=member.assignment)
            if self._complete_sync(member, response):
                self.reschedule_heartbeat(member)

    def _remove_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members.discard(member_id)
        if self.state in (ClassicState.COMPLETING_REBALANCE, ClassicState.STABLE):
            if not self.pending_sync_members:
                self._timers.cancel(self._sync_key())
        else:
            self._timers.cancel(self._sync_key())

    # -- SyncGroup -------------------------------------------------------------------------------
    def sync(self, *, generation_id: int, member_id: str, group_instance_id: str | None,
             protocol_type: str | None, protocol_name: str | None, assignments: dict[str, bytes],
             respond: Responder) -> None:
        error = self._validate_sync(generation_id, member_id, group_instance_id, protocol_type, protocol_name)
        if error is not None:
            respond(sync_error(error))
        elif self.state == ClassicState.PREPARING_REBALANCE:
            respond(sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
        elif self.state == ClassicState.COMPLETING_REBALANCE:
            member = self.members[member_id]
            member.sync_responder = respond
            self._remove_pending_sync_member(member_id)
            if self.leader_id == member_id:
                for m in self.members.values():
                    m.assignment = assignments.get(m.member_id, b"")
                self._propagate_assignment(ErrorCode.NONE)
                self._transition(ClassicEvent.ASSIGNMENT_SET)
        elif self.state == ClassicState.STABLE:
            self._remove_pending_sync_member(member_id)
            member = self.members[member_id]
            respond(Msg(error_code=ErrorCode.NONE, protocol_type=self.protocol_type, protocol_name=self.protocol_name,
                        assignment=member.assignment))
        else:
            respond(sync_error(ErrorCode.UNKNOWN_MEMBER_ID))

    def _member_generation_error(self, generation_id: int, member_id: str,
                                 group_instance_id: str | None) -> ErrorCode | None:
        """The checks SyncGroup and Heartbeat share, in Kafka's order: a dead group, an unknown or fenced
        member, a stale generation."""
        if self.state == ClassicState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            self.validate_member(member_id, group_instance_id)
        except KafkaError as exc:
            return exc.code
        if generation_id != self.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return None

    def _validate_sync(self, generation_id: int, member_id: str, group_instance_id: str | None,
                       protocol_type: str | None, protocol_name: str | None) -> ErrorCode | None:
        error = self._member_generation_error(generation_id, member_id, group_instance_id)
        if error is not None:
            return error
        if _inconsistent(protocol_type, self.protocol_type) or _inconsistent(protocol_name, self.protocol_name):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    # -- Heartbeat / LeaveGroup ------------------------------------------------------------------
    def heartbeat(self, generation_id: int, member_id: str, group_instance_id: str | None) -> ErrorCode:
        error = self._member_generation_error(generation_id, member_id, group_instance_id)
        if error is not None:
            return error
        if self.state == ClassicState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.reschedule_heartbeat(self.members[member_id])
        if self.state == ClassicState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """LeaveGroup for (member id, group instance id) pairs: (top-level error, one error per member)."""
        if self.state == ClassicState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        out: list[ErrorCode] = []
        left = False
        for member_id, instance_id in members:
            if member_id == "":
                # Removal by group.instance.id alone (the admin client's removeMembersFromConsumerGroup).
                if instance_id is not None and instance_id in self.static_members:
                    self._remove_current_member(self.static_members[instance_id])
                    out.append(ErrorCode.NONE)
                    left = True
                else:
                    out.append(ErrorCode.UNKNOWN_MEMBER_ID)
            elif member_id in self.pending_join_members:
                self._remove(member_id)
                self._timers.cancel(self._heartbeat_key(member_id))
                out.append(ErrorCode.NONE)
                left = True
            else:
                try:
                    self.validate_member(member_id, instance_id)
                except KafkaError as exc:
                    out.append(exc.code)
                    continue
                self._remove_current_member(member_id)
                out.append(ErrorCode.NONE)
                left = True
        if left:
            if self.state in (ClassicState.STABLE, ClassicState.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join()
            elif self.state == ClassicState.PREPARING_REBALANCE:
                self._maybe_complete_join_phase()
        return ErrorCode.NONE, out

    def _remove_current_member(self, member_id: str) -> None:
        member = self.members[member_id]
        self._timers.cancel(self._heartbeat_key(member_id))
        self._complete_join(member, join_error(ErrorCode.UNKNOWN_MEMBER_ID))
        self._remove(member_id)

    # -- offsets ---------------------------------------------------------------------------------
    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, generation_id: int,
                               api_version: int) -> None:
        if self.state == ClassicState.DEAD:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and self.state == ClassicState.EMPTY:
            return  # a simple (assign()+commit) commit, or the admin client's
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            self.validate_member(member_id, group_instance_id)
            if generation_id != self.generation_id:
                raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
        elif self.state != ClassicState.EMPTY:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        if self.state == ClassicState.COMPLETING_REBALANCE:
            raise KafkaError(ErrorCode.REBALANCE_IN_PROGRESS)

    def after_offset_commit(self, member_id: str) -> None:
        """An offset commit keeps a member's session alive (Stable and PreparingRebalance)."""
        if self.state in (ClassicState.STABLE, ClassicState.PREPARING_REBALANCE):
            member = self.members.get(member_id)
            if member is not None:
                self.reschedule_heartbeat(member)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.state == ClassicState.DEAD:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is in dead state.")

    def validate_offset_delete(self) -> None:
        if self.state == ClassicState.DEAD:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is in dead state.")
        if self.state != ClassicState.EMPTY:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP)

    def validate_delete_group(self) -> None:
        if self.state == ClassicState.DEAD:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {self.group_id} is in dead state.")
        if self.state != ClassicState.EMPTY:
            raise KafkaError(ErrorCode.NON_EMPTY_GROUP)

    def offset_base_time(self) -> Callable[[CommittedOffset], int] | None:
        """Kafka's offsetExpirationCondition: what an offset's retention counts from, or None when the
        group's offsets do not expire now."""
        if self.protocol_type:
            if self.state == ClassicState.EMPTY:
                stamp = self.state_timestamp_ms
                return lambda _o: stamp
            if (self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.subscribed_topics is not None
                    and self.state == ClassicState.STABLE):
                return lambda o: o.commit_timestamp_ms
            return None
        return lambda o: o.commit_timestamp_ms

    def delete(self) -> None:
        self.cancel_all_timers()
        for member in list(self.members.values()):
            self._complete_join(member, join_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member.member_id))
            self._complete_sync(member, sync_error(ErrorCode.COORDINATOR_NOT_AVAILABLE))
        self._transition(ClassicEvent.DELETE)

    # -- describe --------------------------------------------------------------------------------
    def describe(self) -> Msg:
        stable = self.state == ClassicState.STABLE
        members = []
        for m in self.members.values():
            members.append(Msg(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                               client_host=m.client_host,
                               member_metadata=m.metadata(self.protocol_name) if stable else b"",
                               member_assignment=m.assignment))
        return Msg(error_code=ErrorCode.NONE, error_message=None, group_id=self.group_id, group_state=self.state_name,
                   protocol_type=self.protocol_type or "", protocol_data=(self.protocol_name or "") if stable else "",
                   members=members, authorized_operations=INT32_MIN)

    def summary(self) -> GroupSummary:
        return GroupSummary(
            group_id=self.group_id, group_type="classic", protocol_type=self.protocol_type or "",
            state=self.state_name, generation_or_epoch=self.generation_id, protocol=self.protocol_name,
            leader=self.leader_id,
            members=[MemberSummary(m.member_id, m.group_instance_id, m.client_id, _decode_assignment(m.assignment),
                                   None) for m in self.members.values()],
        )


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def _decode_assignment(raw: bytes) -> dict[str, list[int]] | None:
    """A consumer-protocol assignment (ConsumerProtocolAssignment) as {topic: partitions}; None if the
    bytes are not one (another protocol type)."""
    if not raw:
        return {}
    try:
        r = Reader(memoryview(raw))
        r.int16()
        out: dict[str, list[int]] = {}
        for _ in range(max(r.int32(), 0)):
            topic = r.string()
            out[topic] = sorted(r.int32() for _ in range(max(r.int32(), 0)))
        return out
    except DecodeError:
        return None


@dataclass
class MemberSummary:
    member_id: str
    instance_id: str | None
    client_id: str
    assignment: dict[str, list[int]] | None  # topic -> partitions (classic: decoded consumer protocol)
    member_epoch: int | None  # KIP-848 members


@dataclass
class GroupSummary:
    group_id: str
    group_type: str  # "classic" or "consumer"
    protocol_type: str
    state: str
    generation_or_epoch: int  # classic generation id, KIP-848 group epoch
    protocol: str | None  # classic: the selected protocol; KIP-848: the assignor
    leader: str | None
    members: list[MemberSummary]



class GroupCoordinator:
    """Every group of the broker and their offsets. Methods are called on the broker's loop."""

    def __init__(self, cluster: Cluster, scheduler: SchedulerLike, clock: Clock,
                 pending_transactional_offsets: Callable[[str, str | None, int | None], bool] | None = None) -> None:
        """pending_transactional_offsets(group, topic, partition): whether an open transaction holds offsets
        of the group (of that partition; None: of any): those do not expire, nor does their group."""
        self.cluster = cluster
        self.clock = clock
        self.pending_transactional_offsets = pending_transactional_offsets or (lambda _g, _t, _p: False)
        self.timers = Timers(scheduler, clock)
        self.groups: dict[str, ClassicGroup | ConsumerGroup] = {}
        self.offsets = OffsetStore()
        self._cleanup_scheduled = False

    # -- settings --------------------------------------------------------------------------------
    def setting(self, key: str) -> Any:
        from mockbroker.state.configs import BROKER_CONFIGS

        default = SETTINGS_DEFAULTS[key]
        config = self.cluster.config
        if key in BROKER_CONFIGS:
            return config.get(key)
        raw = config.unknown.get(key)
        if raw is None:
            return default
        return int(raw) if isinstance(default, int) else str(raw)

    def validate_group_id(self, group_id: str | None) -> None:
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_GROUP_ID)

    # -- registry --------------------------------------------------------------------------------
    def classic_group(self, group_id: str) -> ClassicGroup | None:
        g = self.groups.get(group_id)
        return g if isinstance(g, ClassicGroup) else None

    def _new_classic_group(self, group_id: str) -> ClassicGroup:
        group = ClassicGroup(self, group_id)
        self.groups[group_id] = group
        self.ensure_cleanup()
        return group

    def remove_group(self, group_id: str) -> None:
        group = self.groups.pop(group_id, None)
        if group is not None:
            group.delete()

    # -- classic protocol ------------------------------------------------------------------------
    def join_group(self, *, group_id: str, member_id: str, group_instance_id: str | None, session_timeout_ms: int,
                   rebalance_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                   client_id: str, client_host: str, api_version: int, respond: Responder) -> None:
        if not group_id:
            respond(join_error(ErrorCode.INVALID_GROUP_ID, member_id))
            return
        if not (int(self.setting("group.min.session.timeout.ms")) <= session_timeout_ms
                <= int(self.setting("group.max.session.timeout.ms"))):
            respond(join_error(ErrorCode.INVALID_SESSION_TIMEOUT, member_id))
            return
        group = self.groups.get(group_id)
        if group is not None and not isinstance(group, ClassicGroup):
            if group.is_empty():
                self.remove_group(group_id)  # an empty KIP-848 group becomes a classic group
                group = None
            else:
                # Not served: classic members inside a KIP-848 group (Kafka's online migration).
                respond(join_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id))
                return
        if group is None:
            if member_id != "":
                respond(join_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id))
                return
            group = self._new_classic_group(group_id)
        group.join(member_id=member_id, group_instance_id=group_instance_id, session_timeout_ms=session_timeout_ms,
                   rebalance_timeout_ms=rebalance_timeout_ms, protocol_type=protocol_type, protocols=protocols,
                   client_id=client_id, client_host=client_host, api_version=api_version, respond=respond)

    def sync_group(self, *, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                   protocol_type: str | None, protocol_name: str | None, assignments: dict[str, bytes],
                   respond: Responder) -> None:
        if not group_id:
            respond(sync_error(ErrorCode.INVALID_GROUP_ID))
            return
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup) or group.is_empty():
            respond(sync_error(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        group.sync(generation_id=generation_id, member_id=member_id, group_instance_id=group_instance_id,
                   protocol_type=protocol_type, protocol_name=protocol_name, assignments=assignments, respond=respond)

    def heartbeat(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None) -> ErrorCode:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            return ErrorCode.UNKNOWN_MEMBER_ID
        return group.heartbeat(generation_id, member_id, group_instance_id)

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            return ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID] * len(members)
        return group.leave(members)

    # -- describe / list / delete ----------------------------------------------------------------
    def describe_groups(self, group_ids: list[str], version: int, include_authorized_operations: bool) -> list[Msg]:
        out = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if isinstance(group, ClassicGroup):
                described = group.describe()
                if version >= 3 and include_authorized_operations:
                    described.authorized_operations = GROUP_AUTHORIZED_OPERATIONS
                out.append(described)
                continue
            # Unknown, or not a classic group: Dead, and from v6 (KIP-1043) GROUP_ID_NOT_FOUND with a message.
            message = f"Group {group_id} not found." if group is None else f"Group {group_id} is not a classic group."
            out.append(Msg(error_code=ErrorCode.GROUP_ID_NOT_FOUND if version >= 6 else ErrorCode.NONE,
                           error_message=message if version >= 6 else None, group_id=group_id,
                           group_state=ClassicState.DEAD.value, protocol_type="", protocol_data="", members=[],
                           authorized_operations=INT32_MIN))
        return out

    def list_groups(self, states_filter: list[str], types_filter: list[str]) -> list[Msg]:
        states = {s.strip().lower() for s in states_filter}
        types = {t.strip().lower() for t in types_filter}
        out = []
        for group_id, group in self.groups.items():
            state = group.state_name
            if state == "Dead":
                continue
            if states and state.lower() not in states:
                continue
            if types and group.group_type not in types:
                continue
            protocol_type = (group.protocol_type or "") if isinstance(group, ClassicGroup) else CONSUMER_PROTOCOL_TYPE
            out.append(Msg(group_id=group_id, protocol_type=protocol_type, group_state=state,
                           group_type=group.group_type))
        return out

    def delete_groups(self, group_ids: list[str]) -> list[tuple[str, ErrorCode]]:
        out = []
        seen = set()
        for group_id in group_ids:
            if group_id in seen:
                continue
            seen.add(group_id)
            group = self.groups.get(group_id)
            if group is None:
                out.append((group_id, ErrorCode.GROUP_ID_NOT_FOUND))
                continue
            try:
                group.validate_delete_group()
            except KafkaError as exc:
                out.append((group_id, exc.code))
                continue
            self.offsets.delete_group(group_id)
            self.remove_group(group_id)
            out.append((group_id, ErrorCode.NONE))
        return out

    # -- offsets ---------------------------------------------------------------------------------
    def validate_offset_commit(self, group_id: str, generation_id: int, member_id: str,
                               group_instance_id: str | None, api_version: int) -> ClassicGroup | ConsumerGroup:
        """Who may commit (Kafka's OffsetMetadataManager.validateOffsetCommit); the group, created as a
        simple classic group for a commit outside group management (generation -1). The empty group id
        is a group like any other here, as Kafka keeps it for old clients."""
        group = self.groups.get(group_id)
        if group is None:
            if generation_id < 0:
                group = self._new_classic_group(group_id)
            elif api_version >= 9:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            else:
                raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
        group.validate_offset_commit(member_id, group_instance_id, generation_id, api_version)
        return group

    def commit_offset(self, group: ClassicGroup | ConsumerGroup, member_id: str, topic: str, partition: int,
                      offset: int, leader_epoch: int, metadata: str | None, retention_ms: int = -1) -> ErrorCode:
        if metadata is not None and len(metadata.encode()) > int(self.setting("offset.metadata.max.bytes")):
            return ErrorCode.OFFSET_METADATA_TOO_LARGE
        now = self.clock.now_ms()
        t = self.cluster.topic(topic)
        self.offsets.commit(group.group_id, topic, partition, CommittedOffset(
            offset, leader_epoch, metadata or "", now, None if retention_ms == -1 else now + retention_ms,
            t.topic_id if t is not None else None))
        return ErrorCode.NONE

    def after_offset_commit(self, group: ClassicGroup | ConsumerGroup, member_id: str) -> None:
        if isinstance(group, ClassicGroup):
            group.after_offset_commit(member_id)
        self.ensure_cleanup()

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> bool:
        """False when the group does not exist (its offsets are all unknown); raises for member errors."""
        group = self.groups.get(group_id)
        if group is None:
            return False
        try:
            group.validate_offset_fetch(member_id, member_epoch)
        except KafkaError as exc:
            if exc.code == ErrorCode.GROUP_ID_NOT_FOUND:
                return False
            raise
        return True

    def fetch_offset(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        value = self.offsets.get(group_id, topic, partition)
        if value is not None and not self._topic_still_exists(topic, value):
            self.offsets.delete(group_id, topic, partition)
            return None
        return value

    def fetch_all_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        out = {}
        for (topic, partition), value in self.offsets.group_offsets(group_id).items():
            if self._topic_still_exists(topic, value):
                out[(topic, partition)] = value
            else:
                self.offsets.delete(group_id, topic, partition)
        return out

    def _topic_still_exists(self, topic: str, value: CommittedOffset) -> bool:
        """Offsets of a deleted topic are gone (Kafka deletes them with its partitions); a topic deleted and
        created again under the same name has a new id."""
        if value.topic_id is None:
            return True
        t = self.cluster.topic(topic)
        return t is not None and t.topic_id == value.topic_id

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> list[ErrorCode]:
        """OffsetDelete: raises the group-level error; one code per (topic, partition)."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_GROUP_ID)
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        group.validate_offset_delete()
        out = []
        for topic, partition in partitions:
            if group.is_subscribed_to_topic(topic):
                out.append(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
            else:
                self.offsets.delete(group_id, topic, partition)
                out.append(ErrorCode.NONE)
        return out

    # -- retention -------------------------------------------------------------------------------
    def ensure_cleanup(self) -> None:
        if not self._cleanup_scheduled:
            self._cleanup_scheduled = True
            self.timers.schedule(("offsets-cleanup",), int(self.setting("offsets.retention.check.interval.ms")),
                                 self._periodic_cleanup)

    def _periodic_cleanup(self) -> None:
        self._cleanup_scheduled = False
        self.cleanup_expired()
        if self.groups or any(True for _ in self.offsets.groups()):
            self.ensure_cleanup()

    def cleanup_expired(self) -> None:
        """Kafka's cleanupGroupMetadata: expire offsets, then delete empty groups that have none left."""
        now = self.clock.now_ms()
        retention_ms = int(self.setting("offsets.retention.minutes")) * 60_000
        pending = self.pending_transactional_offsets
        for group_id in set(self.groups) | set(self.offsets.groups()):
            group = self.groups.get(group_id)

            def in_transaction(topic: str, partition: int, group_id: str = group_id) -> bool:
                return pending(group_id, topic, partition)

            if group is None:
                # Offsets without a group (not made by this coordinator): they expire from their commit time.
                self.offsets.expire(group_id, now, retention_ms, lambda o: o.commit_timestamp_ms, in_transaction)
                continue
            base = group.offset_base_time()
            if base is None:
                continue

            def keep(topic: str, partition: int, group: ClassicGroup | ConsumerGroup = group,
                     in_transaction: Callable[[str, int], bool] = in_transaction) -> bool:
                return group.is_subscribed_to_topic(topic) or in_transaction(topic, partition)

            if self.offsets.expire(group_id, now, retention_ms, base, keep) and group.is_empty() \
                    and not pending(group_id, None, None):
                self.remove_group(group_id)

    # -- KIP-848 ---------------------------------------------------------------------------------
    def consumer_group_heartbeat(self, req: Msg, api_version: int, client_id: str, client_host: str) -> Msg:
        from mockbroker.state.consumer_groups import consumer_group_heartbeat

        return consumer_group_heartbeat(self, req, api_version, client_id, client_host)

    def consumer_group_describe(self, group_ids: list[str], include_authorized_operations: bool) -> list[Msg]:
        from mockbroker.state.consumer_groups import describe_consumer_groups

        return describe_consumer_groups(self, group_ids, include_authorized_operations)

    # -- inspection ------------------------------------------------------------------------------
    def summaries(self) -> list[GroupSummary]:
        return [g.summary() for _, g in sorted(self.groups.items())]

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        return {k: v.offset for k, v in self.fetch_all_offsets(group_id).items()}
