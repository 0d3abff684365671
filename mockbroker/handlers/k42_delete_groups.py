"""DeleteGroups (key 42), v0-v2: groups and their committed offsets go away.

As Kafka: only a group without members can be deleted (NON_EMPTY_GROUP otherwise), one that does not exist
gets GROUP_ID_NOT_FOUND; a name given twice is answered once.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 42


@handler(API_KEY, 0, 2)
def handle_delete_groups(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = {g: code for g in req.groups_names if (code := ctx.node.group_coordinator_error(g)) is not None}
    results = dict(ctx.node.group_coordinator.delete_groups([g for g in req.groups_names if g not in misrouted]))
    results.update(misrouted)
    return Msg(throttle_time_ms=0, results=[Msg(group_id=g, error_code=results[g])
                                            for g in dict.fromkeys(req.groups_names)])
