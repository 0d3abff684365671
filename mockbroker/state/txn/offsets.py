"""Who may commit offsets inside a transaction (TxnOffsetCommit): Kafka's OffsetMetadataManager
.validateTransactionalOffsetCommit over the group coordinator's groups. No I/O."""

from __future__ import annotations

from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.groups.classic import ClassicGroup
from mockbroker.state.groups.states import ClassicState


def validate_transactional_commit(groups: Any, group_id: str, generation_id: int, member_id: str,
                                   group_instance_id: str | None) -> None:
    """Kafka's OffsetMetadataManager.validateTransactionalOffsetCommit, with the group's
    validateOffsetCommit(isTransactional = true): a commit without member and generation (TxnOffsetCommit
    v0-v2, or a producer given only the group id) is accepted even while the group has members, and no
    REBALANCE_IN_PROGRESS; a missing group with a generation, or a stale member epoch: ILLEGAL_GENERATION."""
    group = groups.groups.get(group_id)
    if group is None:
        if generation_id >= 0:
            raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
        groups.validate_offset_commit(group_id, generation_id, member_id, group_instance_id, 9)  # a simple group
        return
    if isinstance(group, ClassicGroup):
        if group.state == ClassicState.DEAD:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and group.state == ClassicState.EMPTY:
            return
        if generation_id >= 0 or member_id or group_instance_id is not None:
            group.validate_member(member_id, group_instance_id)
            if generation_id != group.generation_id:
                raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
        return
    try:
        # A KIP-848 group; version 9 skips the check only non-transactional commits get.
        group.validate_offset_commit(member_id, group_instance_id, generation_id, 9)
    except KafkaError as exc:
        if exc.code == ErrorCode.STALE_MEMBER_EPOCH:
            raise KafkaError(ErrorCode.ILLEGAL_GENERATION) from None
        raise
