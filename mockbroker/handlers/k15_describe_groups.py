"""DescribeGroups (key 15), v0-v6: classic groups, their state, protocol and members.

As Kafka: the protocol (protocol_data) and each member's metadata only when the group is Stable; members'
assignments always; group.instance.id from v4; authorized operations (v3+) when asked for (every group
operation: this broker has no ACLs), else INT32_MIN. A group that does not exist, or is not a classic group
(a KIP-848 group: use ConsumerGroupDescribe), is described as Dead with no members; from v6 (KIP-1043) it
also gets GROUP_ID_NOT_FOUND and a message ("Group g not found." / "Group g is not a classic group.").
- Authorization (with an authorizer, `authorize`): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED);
  the principal's authorized operations (v3+) when asked.
- Error answer (fault injection, a group not coordinated here: `error_response`): the code on every group.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.constants import NOT_REQUESTED
from mockbroker.handlers.support.group_authorization import described_groups
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.DESCRIBE_GROUPS


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every group named."""
    return Msg(throttle_time_ms=0, groups=[
        Msg(error_code=code, error_message=None, group_id=g, group_state="", protocol_type="", protocol_data="",
            members=[], authorized_operations=NOT_REQUESTED) for g in req.groups])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    with_ops = bool(req.get("include_authorized_operations")) and header.api_version >= 3
    return described_groups(access, header, req, call, "groups", with_ops)


@handler(API_KEY, 0, 6, authorize=authorize, error_response=error_response)
def handle_describe_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = {g: code for g in req.groups if (code := ctx.node.group_coordinator_error(g)) is not None}
    served = ctx.node.group_coordinator.describe_groups([g for g in req.groups if g not in misrouted], v,
                                                        bool(req.include_authorized_operations))
    by_id = {g.group_id: g for g in served}
    groups = [by_id[g] if g not in misrouted else error_response(Msg(groups=[g]), misrouted[g], v).groups[0]
              for g in req.groups]
    return Msg(throttle_time_ms=0, groups=groups)
