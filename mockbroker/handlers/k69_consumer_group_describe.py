"""ConsumerGroupDescribe (key 69), v0-v1: KIP-848 groups with their epochs, assignor and members.

Each member with its epoch, subscription (names and regex), current assignment and target assignment
(topic ids and names); v1 adds the member type (1: a consumer-protocol member). A group that does not
exist or is a classic group: GROUP_ID_NOT_FOUND with Kafka's message; an empty group id: INVALID_GROUP_ID.
Authorized operations when asked for: every group operation (no ACLs here).
- Authorization (with an authorizer, `authorize`): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED);
  the principal's authorized operations when asked.
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

API_KEY = ApiKey.CONSUMER_GROUP_DESCRIBE


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every group named."""
    return Msg(throttle_time_ms=0, groups=[
        Msg(error_code=code, error_message=None, group_id=g, group_state="", group_epoch=0, assignment_epoch=0,
            assignor_name="", members=[], authorized_operations=NOT_REQUESTED) for g in req.group_ids])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return described_groups(access, header, req, call, "group_ids", bool(req.get("include_authorized_operations")))


@handler(API_KEY, 0, 1, authorize=authorize, error_response=error_response)
def handle_consumer_group_describe(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = {g: code for g in req.group_ids if (code := ctx.node.group_coordinator_error(g)) is not None}
    served = ctx.node.group_coordinator.consumer_group_describe([g for g in req.group_ids if g not in misrouted],
                                                                bool(req.include_authorized_operations))
    by_id = {g.group_id: g for g in served}
    groups = [by_id[g] if g not in misrouted
              else error_response(Msg(group_ids=[g]), misrouted[g], v).groups[0] for g in req.group_ids]
    return Msg(throttle_time_ms=0, groups=groups)
