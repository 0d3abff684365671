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
    results = ctx.node.group_coordinator.delete_groups(list(req.groups_names))
    return Msg(throttle_time_ms=0, results=[Msg(group_id=g, error_code=code) for g, code in results])
