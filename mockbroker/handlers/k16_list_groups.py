"""ListGroups (key 16), v0-v5: every group of the coordinator, classic and KIP-848.

Each with its protocol type ("" for a simple group made by offset commits alone, "consumer" for KIP-848
groups), its state (v4+) and its type, "classic" or "consumer" (v5+). Filters as Kafka: states_filter
(v4+, case-insensitive state names) and types_filter (v5+, case-insensitive; an unknown type matches no
group); empty filters list everything.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 16


@handler(API_KEY, 0, 5)
def handle_list_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    groups = ctx.node.group_coordinator.list_groups(list(req.states_filter) if v >= 4 else [],
                                                      list(req.types_filter) if v >= 5 else [])
    # Each node lists the groups it coordinates (those of the __consumer_offsets partitions it leads).
    groups = [g for g in groups if ctx.node.group_coordinator_error(g.group_id) is None]
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, groups=groups)
