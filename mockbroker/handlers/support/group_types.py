"""One group per id, of one type (Kafka's GroupMetadataManager): the classic and consumer-group APIs refuse
an id that names a share group (KIP-932), each with the code Kafka gives it:

    JoinGroup                                               INCONSISTENT_GROUP_PROTOCOL (member id "")
    SyncGroup, Heartbeat, LeaveGroup                        UNKNOWN_MEMBER_ID
    ConsumerGroupHeartbeat, OffsetCommit, TxnOffsetCommit,  GROUP_ID_NOT_FOUND ("Group <id> is not a consumer
    OffsetFetch, OffsetDelete                               group.")

ShareGroupHeartbeat refuses an id of a classic or consumer group the same way (GROUP_ID_NOT_FOUND, k76).
Looking never makes the share coordinator (a broker that never served a share group has none).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.protocol.errors import ErrorCode


def is_share_group(ctx: RequestContext, group_id: str | None) -> bool:
    """Whether group_id names a share group (without making the share coordinator)."""
    return bool(group_id) and ctx.node.share_coordinator_started and group_id in ctx.node.share_coordinator.groups


def group_api_error(ctx: RequestContext, group_id: str, if_share: ErrorCode) -> ErrorCode | None:
    """The code a classic or consumer-group API answers for group_id before anything else: NOT_COORDINATOR
    & co. when another node coordinates it (node.group_coordinator_error), `if_share` when it names a share
    group, None to go on."""
    misrouted = ctx.node.group_coordinator_error(group_id)
    if misrouted is not None:
        return misrouted
    return if_share if is_share_group(ctx, group_id) else None
