"""JoinGroup (key 11), v0-v9: the classic group protocol's first step (state: mockbroker/state/classic_group.py, routed by state/group_coordinator.py).

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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.error_responses import error_response
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.common import Responder

API_KEY = 11


def park(start: Callable[[Responder], None], finish: Callable[[Msg], Msg]) -> Msg | Awaitable[Msg]:
    """Run `start(respond)`; answer at once if it responded, else await the response it gives later."""
    future: asyncio.Future[Msg] = asyncio.get_running_loop().create_future()

    def respond(response: Msg) -> None:
        if not future.done():
            future.set_result(response)

    start(respond)
    if future.done():
        return finish(future.result())

    async def wait() -> Msg:
        return finish(await future)

    return wait()


def client_host(ctx: RequestContext) -> str:
    """The client address as Kafka's InetAddress.toString() prints it ("/127.0.0.1")."""
    return f"/{ctx.client_host}"


@handler(API_KEY, 0, 9)
def handle_join_group(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | Awaitable[Msg]:
    v = header.api_version

    def finish(response: Msg) -> Msg:
        response.throttle_time_ms = 0
        if v < 7 and response.get("protocol_name") is None:
            response.protocol_name = ""
        return response

    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return finish(error_response(API_KEY, v, req, misrouted))

    def start(respond: Responder) -> None:
        ctx.node.group_coordinator.join_group(
            group_id=req.group_id, member_id=req.member_id, group_instance_id=req.group_instance_id,
            session_timeout_ms=req.session_timeout_ms,
            rebalance_timeout_ms=req.session_timeout_ms if v == 0 else req.rebalance_timeout_ms,
            protocol_type=req.protocol_type, protocols=[(p.name, bytes(p.metadata)) for p in req.protocols],
            client_id=header.client_id or "", client_host=client_host(ctx), api_version=v, respond=respond)

    return park(start, finish)
