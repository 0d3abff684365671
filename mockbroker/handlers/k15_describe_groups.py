"""DescribeGroups (key 15), v0-v6: classic groups, their state, protocol and members.

As Kafka: the protocol (protocol_data) and each member's metadata only when the group is Stable; members'
assignments always; group.instance.id from v4; authorized operations (v3+) when asked for (every group
operation: this broker has no ACLs), else INT32_MIN. A group that does not exist, or is not a classic group
(a KIP-848 group: use ConsumerGroupDescribe), is described as Dead with no members; from v6 (KIP-1043) it
also gets GROUP_ID_NOT_FOUND and a message ("Group g not found." / "Group g is not a classic group.").
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.error_responses import error_response
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 15


@handler(API_KEY, 0, 6)
def handle_describe_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = {g: code for g in req.groups if (code := ctx.node.group_coordinator_error(g)) is not None}
    served = ctx.node.group_coordinator.describe_groups([g for g in req.groups if g not in misrouted], v,
                                                        bool(req.include_authorized_operations))
    by_id = {g.group_id: g for g in served}
    groups = [by_id[g] if g not in misrouted else error_response(API_KEY, v, Msg(groups=[g]), misrouted[g]).groups[0]
              for g in req.groups]
    return Msg(throttle_time_ms=0, groups=groups)
