"""DeleteGroups (key 42), v0-v2: groups and their committed offsets go away.

As Kafka: only a group without members can be deleted (NON_EMPTY_GROUP otherwise), one that does not exist
gets GROUP_ID_NOT_FOUND; a name given twice is answered once. Share groups (KIP-932) too: an empty one goes
with its share partitions.
Authorization (with an authorizer, `authorize`): DELETE on each group (GROUP_AUTHORIZATION_FAILED).
Error answer (fault injection, `error_response`): the code on every group named.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, extend, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.DELETE_GROUPS


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every group named."""
    return Msg(throttle_time_ms=0, results=[Msg(group_id=g, error_code=code) for g in req.groups_names])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed = [g for g in req.groups_names if access.may(AclOperation.DELETE, ResourceType.GROUP, g)]
    errors = [Msg(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
              for g in req.groups_names if g not in allowed]
    if not errors:
        return call(req)
    return then(call(with_list(req, "groups_names", allowed)), extend("results", errors))


@handler(API_KEY, 0, 2, authorize=authorize, error_response=error_response)
def handle_delete_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = {g: code for g in req.groups_names if (code := ctx.node.group_coordinator_error(g)) is not None}
    results = dict(ctx.node.group_coordinator.delete_groups([g for g in req.groups_names if g not in misrouted]))
    share = ctx.node.share_coordinator
    for g in [g for g, code in results.items() if code == ErrorCode.GROUP_ID_NOT_FOUND and g in share.groups]:
        try:
            share.delete_group(g)
            results[g] = ErrorCode.NONE
        except KafkaError as e:
            results[g] = ErrorCode(e.code)
    results.update(misrouted)
    return Msg(throttle_time_ms=0, results=[Msg(group_id=g, error_code=results[g])
                                            for g in dict.fromkeys(req.groups_names)])
