"""Heartbeat (key 12), v0-v4: a classic group member's session keeps going.

As Kafka: NONE in CompletingRebalance and Stable, REBALANCE_IN_PROGRESS in PreparingRebalance (the
member must rejoin; the session is still extended), UNKNOWN_MEMBER_ID (unknown group or member, Empty
group), FENCED_INSTANCE_ID (v3+: the group.instance.id now belongs to another member id),
ILLEGAL_GENERATION, INVALID_GROUP_ID. Without heartbeats (or commits) a member is removed once its
session.timeout.ms passes on the broker clock, and the group rebalances.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED,
  handlers/support/group_authorization.py).
- Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.HEARTBEAT


@handler(API_KEY, 0, 4, authorize=member_of_group)
def handle_heartbeat(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.UNKNOWN_MEMBER_ID)  # a share group's id too
    if misrouted is not None:
        return Msg(throttle_time_ms=0, error_code=misrouted)
    code = ctx.node.group_coordinator.heartbeat(req.group_id, req.generation_id, req.member_id,
                                                  req.group_instance_id)
    return Msg(throttle_time_ms=0, error_code=code)
