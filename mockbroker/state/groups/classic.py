"""A classic consumer group's requests (JoinGroup / SyncGroup / Heartbeat / LeaveGroup, offsets,
describe), as Kafka's GroupMetadataManager answers them; its state and the rebalance engine are
ClassicGroupState (classic_state.py).

No I/O and no asyncio here. A request that must wait (JoinGroup until the rebalance completes, SyncGroup
until the leader's assignment arrives) hands in a `respond` callback; the group calls it when the answer
is known — at once, or later from a state change or a timer. Timers run on the broker clock through the
coordinator's Timers, so tests move time with `clock.advance()`.

State changes go through the table in states.py (`ClassicGroupState._transition`), and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.classic_members import (
    ClassicMember,
    decode_assignment,
    inconsistent,
    join_error,
    sync_error,
)
from mockbroker.state.groups.classic_state import ClassicGroupState
from mockbroker.state.groups.common import (
    CONSUMER_PROTOCOL_TYPE,
    INT32_MIN,
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    GroupSummary,
    MemberSummary,
    Responder,
)
from mockbroker.state.groups.offsets import CommittedOffset
from mockbroker.state.groups.states import ClassicEvent, ClassicState
from mockbroker.state.seeding import random_uuid


class ClassicGroup(ClassicGroupState):
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
        new_member_id = f"{group_instance_id if group_instance_id is not None else client_id}-{random_uuid(self.coordinator.cluster.random)}"
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
        if inconsistent(protocol_type, self.protocol_type) or inconsistent(protocol_name, self.protocol_name):
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
            members=[MemberSummary(m.member_id, m.group_instance_id, m.client_id, decode_assignment(m.assignment),
                                   None) for m in self.members.values()],
        )
