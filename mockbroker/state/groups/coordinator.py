"""The group coordinator: routes every group request to its classic group (classic.py) or KIP-848
group (consumer.py), keeps their committed offsets (offsets.py) and expires them, as Kafka's
GroupCoordinatorService / GroupMetadataManager / OffsetMetadataManager behave.

No I/O and no asyncio here; timers run on the broker clock (group_common.Timers).

One object holds every group of the cluster; which node serves a group (the leader of its
__consumer_offsets partition) is mockbroker/node.py's business, so a coordinator move needs no loading.
Offset and group changes are told to listeners (`offsets.listener`, `group_listener`), which write them
to __consumer_offsets (state/coordinators/log.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.classic import ClassicGroup
from mockbroker.state.groups.classic_members import join_error, sync_error
from mockbroker.state.groups.common import (
    CONSUMER_PROTOCOL_TYPE,
    GROUP_AUTHORIZED_OPERATIONS,
    INT32_MIN,
    SETTINGS_DEFAULTS,
    GroupSummary,
    Responder,
    SchedulerLike,
    Timers,
)
from mockbroker.state.groups.consumer import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    heartbeat_error,
    new_member_id,
    validate_heartbeat,
)
from mockbroker.state.groups.consumer_assignors import ASSIGNORS
from mockbroker.state.groups.offsets import CommittedOffset, OffsetStore
from mockbroker.state.groups.states import ClassicState

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster


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
        self.offsets = OffsetStore(changed=cluster.changes.notify)
        self._cleanup_scheduled = False
        # Told of each classic group state change and each consumer group change (state/coordinators/log.py
        # writes their records).
        self.group_listener: Callable[[Any], None] | None = None
        # Told of each consumer group loaded from __consumer_offsets (what its records hold was written).
        self.group_loaded: Callable[[Any], None] | None = None

    def group_state_changed(self, group: Any) -> None:
        self.cluster.changes.notify()  # the waits (mockbroker/waits.py) look again
        if self.group_listener is not None:
            self.group_listener(group)

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

        return consumer_group_heartbeat(self, req, api_version, client_id, client_host)

    def consumer_group_describe(self, group_ids: list[str], include_authorized_operations: bool) -> list[Msg]:

        return describe_consumer_groups(self, group_ids, include_authorized_operations)

    # -- inspection ------------------------------------------------------------------------------
    def summaries(self) -> list[GroupSummary]:
        return [g.summary() for _, g in sorted(self.groups.items())]

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        return {k: v.offset for k, v in self.fetch_all_offsets(group_id).items()}


# -- KIP-848 requests: routed here, because a classic group may be in the way -------------------------


def consumer_group_heartbeat(coordinator: GroupCoordinator, req: Msg, api_version: int, client_id: str,
                             client_host: str) -> Msg:
    assignors = [a.strip() for a in str(coordinator.setting("group.consumer.assignors")).split(",")
                 if a.strip() in ASSIGNORS]
    group = None
    try:
        validate_heartbeat(req, api_version, assignors)
        group_id = req.group_id
        epoch = req.member_epoch
        group = coordinator.groups.get(group_id)
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            if not isinstance(group, ConsumerGroup):
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, _not_found(group_id, group))
            return group.leave(req.member_id, req.instance_id, epoch)
        if isinstance(group, ClassicGroup):
            if epoch == 0 and group.is_empty():
                coordinator.remove_group(group_id)  # an empty classic group becomes a KIP-848 group
                group = None
            else:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, _not_found(group_id, group))
        if group is None:
            if epoch != 0:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, _not_found(group_id, None))
            group = ConsumerGroup(coordinator, group_id)
            coordinator.groups[group_id] = group
            coordinator.ensure_cleanup()
        assert isinstance(group, ConsumerGroup)
        return group.heartbeat(
            member_id=req.member_id or new_member_id(coordinator.cluster.random), member_epoch=epoch,
            instance_id=req.instance_id,
            rack_id=req.rack_id, rebalance_timeout_ms=req.rebalance_timeout_ms, client_id=client_id,
            client_host=client_host, subscribed_topic_names=req.subscribed_topic_names,
            subscribed_topic_regex=req.get("subscribed_topic_regex"), server_assignor=req.server_assignor,
            owned=req.topic_partitions)
    except KafkaError as exc:
        return heartbeat_error(exc.code, exc.message)
    finally:
        if isinstance(group, ConsumerGroup):
            coordinator.group_state_changed(group)  # its records (state/coordinators/consumer_group_log.py)


def _not_found(group_id: str, group: Any) -> str:
    if group is None:
        return f"Consumer group {group_id} not found."
    return f"Group {group_id} is not a consumer group."


def describe_consumer_groups(coordinator: GroupCoordinator, group_ids: list[str],
                             include_authorized_operations: bool) -> list[Msg]:
    out = []
    for group_id in group_ids:
        if not group_id:
            out.append(Msg(error_code=ErrorCode.INVALID_GROUP_ID, error_message=None, group_id=group_id,
                           group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=[],
                           authorized_operations=INT32_MIN))
            continue
        group = coordinator.groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            out.append(group.describe(include_authorized_operations))
        else:
            message = f"Group {group_id} not found." if group is None else f"Group {group_id} is not a consumer group."
            out.append(Msg(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id,
                           group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=[],
                           authorized_operations=INT32_MIN))
    return out
