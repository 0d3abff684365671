"""JoinGroup (key 11), v0-v9: the classic group protocol's first step (state: mockbroker/state/groups/classic.py, routed by state/groups/coordinator.py).

As Kafka's group coordinator:
- INVALID_GROUP_ID for an empty group id; INVALID_SESSION_TIMEOUT outside the broker's
  group.min.session.timeout.ms..group.max.session.timeout.ms.
- v4+ (KIP-394): a join without member id gets MEMBER_ID_REQUIRED with the id to come back with.
- The request is parked until the rebalance completes: every known member rejoined, or the rebalance
  timeout (the largest of the members') passed on the broker clock, members that did not rejoin removed.
  A new empty group first waits group.initial.rebalance.delay.ms (Kafka's default 3000; extended while
  members keep arriving, up to the rebalance timeout).
- Protocol selection: among the protocols every member supports, the one most members prefer; a member
  that shares none with the group gets INCONSISTENT_GROUP_PROTOCOL. The first member to join leads.
- Static membership (v5+, group.instance.id): a known instance joining again replaces its old member id
  (the old one is FENCED_INSTANCE_ID) and, while the group is Stable and the selected protocol does not
  change, gets the current generation back without a rebalance (v9+: the leader gets the members and
  skip_assignment, KIP-814).
- v0 has no rebalance timeout: the session timeout is used (as Kafka's JoinGroupRequest does).
- Before v7 a null protocol name is sent as "".
- A JoinGroup for a non-empty KIP-848 group: INCONSISTENT_GROUP_PROTOCOL (Kafka can host classic members in
  a consumer group; this broker does not). An empty KIP-848 group becomes a classic group.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED,
  handlers/support/group_authorization.py).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code, generation -1.
"""

from __future__ import annotations

from collections.abc import Awaitable

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.group_members import client_host, park
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.common import Responder

API_KEY = ApiKey.JOIN_GROUP


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code with generation -1 and no member (JoinGroupRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, error_code=code, generation_id=-1, protocol_type=None, protocol_name="",
               leader="", skip_assignment=False, member_id="", members=[])


@handler(API_KEY, 0, 9, authorize=member_of_group, error_response=error_response)
def handle_join_group(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | Awaitable[Msg]:
    v = header.api_version

    def finish(response: Msg) -> Msg:
        response.throttle_time_ms = 0
        if v < 7 and response.get("protocol_name") is None:
            response.protocol_name = ""
        return response

    misrouted = group_api_error(ctx, req.group_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)  # a share group's id too
    if misrouted is not None:
        return finish(error_response(req, misrouted, v))

    def start(respond: Responder) -> None:
        ctx.node.group_coordinator.join_group(
            group_id=req.group_id, member_id=req.member_id, group_instance_id=req.group_instance_id,
            session_timeout_ms=req.session_timeout_ms,
            rebalance_timeout_ms=req.session_timeout_ms if v == 0 else req.rebalance_timeout_ms,
            protocol_type=req.protocol_type, protocols=[(p.name, bytes(p.metadata)) for p in req.protocols],
            client_id=header.client_id or "", client_host=client_host(ctx), api_version=v, respond=respond)

    return park(start, finish)
