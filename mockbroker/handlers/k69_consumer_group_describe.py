"""ConsumerGroupDescribe (key 69), v0-v1: KIP-848 groups with their epochs, assignor and members.

Each member with its epoch, subscription (names and regex), current assignment and target assignment
(topic ids and names); v1 adds the member type (1: a consumer-protocol member). A group that does not
exist or is a classic group: GROUP_ID_NOT_FOUND with Kafka's message; an empty group id: INVALID_GROUP_ID.
Authorized operations when asked for: every group operation (no ACLs here).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.error_responses import error_response
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 69


@handler(API_KEY, 0, 1)
def handle_consumer_group_describe(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = {g: code for g in req.group_ids if (code := ctx.node.group_coordinator_error(g)) is not None}
    served = ctx.node.group_coordinator.consumer_group_describe([g for g in req.group_ids if g not in misrouted],
                                                                bool(req.include_authorized_operations))
    by_id = {g.group_id: g for g in served}
    groups = [by_id[g] if g not in misrouted
              else error_response(API_KEY, v, Msg(group_ids=[g]), misrouted[g]).groups[0] for g in req.group_ids]
    return Msg(throttle_time_ms=0, groups=groups)
