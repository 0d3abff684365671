"""LeaveGroup (key 13), v0-v5: members leave a classic group (and it rebalances).

- v0-v2: one member id; its error is the top-level error code.
- v3+ (KIP-345): a batch of members, each by member id and/or group.instance.id (an empty member id with an
  instance id removes that static member: the admin client's removeMembersFromConsumerGroup); one error
  per member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). v5 adds a reason (logged by Kafka, ignored here).
- A group that does not exist (or is a KIP-848 group): UNKNOWN_MEMBER_ID for every member, as Kafka.
- INVALID_GROUP_ID for an empty group id.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED,
  handlers/support/group_authorization.py).
- Error answer (fault injection, `error_response`): the top-level code, no members.
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

API_KEY = ApiKey.LEAVE_GROUP


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, members=[])


@handler(API_KEY, 0, 5, authorize=member_of_group, error_response=error_response)
def handle_leave_group(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.UNKNOWN_MEMBER_ID)  # a share group's id too
    if misrouted is not None:
        return Msg(throttle_time_ms=0, error_code=misrouted, members=[])
    if v < 3:
        members: list[tuple[str, str | None]] = [(req.member_id, None)]
    else:
        members = [(m.member_id, m.group_instance_id) for m in req.members]
    top, errors = ctx.node.group_coordinator.leave_group(req.group_id, members)
    if v < 3:
        code = top if top != ErrorCode.NONE else next((e for e in errors if e != ErrorCode.NONE), ErrorCode.NONE)
        return Msg(throttle_time_ms=0, error_code=code)
    if top != ErrorCode.NONE:
        return Msg(throttle_time_ms=0, error_code=top, members=[])
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, members=[
        Msg(member_id=member_id, group_instance_id=instance_id, error_code=code)
        for (member_id, instance_id), code in zip(members, errors, strict=True)])
