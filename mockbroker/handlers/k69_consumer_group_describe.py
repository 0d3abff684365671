"""ConsumerGroupDescribe (key 69), v0-v1: KIP-848 groups with their epochs, assignor and members.

Each member with its epoch, subscription (names and regex), current assignment and target assignment
(topic ids and names); v1 adds the member type (1: a consumer-protocol member). A group that does not
exist or is a classic group: GROUP_ID_NOT_FOUND with Kafka's message; an empty group id: INVALID_GROUP_ID.
Authorized operations when asked for: every group operation (no ACLs here).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 69


@handler(API_KEY, 0, 1)
def handle_consumer_group_describe(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    groups = ctx.node.group_coordinator.consumer_group_describe(list(req.group_ids),
                                                                  bool(req.include_authorized_operations))
    return Msg(throttle_time_ms=0, groups=groups)
