"""A classic group's state and the rebalance it runs, as Kafka's ClassicGroup and the join-phase half of
GroupMetadataManager behave: members and static members, the protocol they agree on, the timers on the
broker clock (join, sync, heartbeats), preparing a rebalance, completing the join phase (the initial
rebalance delay included), new generations, and the expiry of members and pending syncs.

The requests a group answers (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, offsets, describe) are in
classic.py, on top of this. State changes go through states.py's table (`_transition`).
"""

from __future__ import annotations

from collections.abc import Iterable

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.classic_members import (
    ClassicMember,
    join_error,
    parse_subscription_topics,
    sync_error,
)
from mockbroker.state.groups.common import (
    CONSUMER_PROTOCOL_TYPE,
    GroupHost,
    Responder,
    Timers,
)
from mockbroker.state.groups.states import ClassicEvent, ClassicState, can_rebalance, next_state


class ClassicGroupState:
    group_type = "classic"

    def __init__(self, coordinator: GroupHost, group_id: str) -> None:
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
        self.coordinator.group_state_changed(self)

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
