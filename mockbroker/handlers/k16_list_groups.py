"""ListGroups (key 16), v0-v5: every group of the coordinator, classic, KIP-848 and share (KIP-932).

Each with its protocol type ("" for a simple group made by offset commits alone, "consumer" for KIP-848
groups, "share" for share groups), its state (v4+) and its type, "classic", "consumer" or "share" (v5+). Filters as Kafka: states_filter
(v4+, case-insensitive state names) and types_filter (v5+, case-insensitive; an unknown type matches no
group); empty filters list everything.
Authorization (with an authorizer, `authorize`): DESCRIBE on the cluster lists every group, else only
the groups the principal may DESCRIBE. Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, then
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.LIST_GROUPS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE):
        return call(req)

    def edit(response: Msg) -> None:
        response.groups = [g for g in response.groups
                           if access.may(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id)]

    return then(call(req), edit)


@handler(API_KEY, 0, 5, authorize=authorize)
def handle_list_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    groups = ctx.node.group_coordinator.list_groups(list(req.states_filter) if v >= 4 else [],
                                                      list(req.types_filter) if v >= 5 else [])
    groups += [Msg(group_id=g, protocol_type="share", group_state=state, group_type="share")
               for g, state in ctx.node.share_coordinator.list_groups(list(req.states_filter) if v >= 4 else [],
                                                                      list(req.types_filter) if v >= 5 else [])]
    # Each node lists the groups it coordinates (those of the __consumer_offsets partitions it leads).
    groups = [g for g in groups if ctx.node.group_coordinator_error(g.group_id) is None]
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, groups=groups)
