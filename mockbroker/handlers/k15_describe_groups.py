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
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 15


@handler(API_KEY, 0, 6)
def handle_describe_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    groups = ctx.node.group_coordinator.describe_groups(list(req.groups), header.api_version,
                                                          bool(req.include_authorized_operations))
    return Msg(throttle_time_ms=0, groups=groups)
