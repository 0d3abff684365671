"""SyncGroup (key 14), v0-v5: the leader's assignments go out to every member of the generation.

As Kafka's group coordinator: the leader's request stores the assignments (members it left out get an
empty one) and answers every parked SyncGroup of the generation; a follower's request parks until then
(CompletingRebalance) or gets its assignment at once (Stable). Errors: INVALID_GROUP_ID, UNKNOWN_MEMBER_ID
(unknown group or member, empty group), FENCED_INSTANCE_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS
(PreparingRebalance; a parked SyncGroup is answered so when a new rebalance starts).
v5+: protocol_type and protocol_name are required (INCONSISTENT_GROUP_PROTOCOL when missing, as Kafka's
KafkaApis) and must match the group's (INCONSISTENT_GROUP_PROTOCOL).
Members that never send their SyncGroup are removed after the rebalance timeout and the group rebalances.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED,
  handlers/support/group_authorization.py).
- Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from collections.abc import Awaitable

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.group_members import park
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.classic_members import sync_error
from mockbroker.state.groups.common import Responder

API_KEY = ApiKey.SYNC_GROUP


@handler(API_KEY, 0, 5, authorize=member_of_group)
def handle_sync_group(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | Awaitable[Msg]:
    v = header.api_version

    def finish(response: Msg) -> Msg:
        response.throttle_time_ms = 0
        return response

    if v >= 5 and (req.protocol_type is None or req.protocol_name is None):
        return finish(sync_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))

    misrouted = group_api_error(ctx, req.group_id, ErrorCode.UNKNOWN_MEMBER_ID)  # a share group's id too
    if misrouted is not None:
        return finish(sync_error(misrouted))

    def start(respond: Responder) -> None:
        ctx.node.group_coordinator.sync_group(
            group_id=req.group_id, generation_id=req.generation_id, member_id=req.member_id,
            group_instance_id=req.group_instance_id, protocol_type=req.protocol_type if v >= 5 else None,
            protocol_name=req.protocol_name if v >= 5 else None,
            assignments={a.member_id: bytes(a.assignment) for a in req.assignments}, respond=respond)

    return park(start, finish)
