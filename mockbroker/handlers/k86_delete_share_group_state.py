"""DeleteShareGroupState (key 86), v0 (as Kafka 4.3): the share coordinator forgets a share partition's
state (KIP-932; Kafka's group coordinator sends it for DeleteShareGroupOffsets and DeleteGroups).
- Per partition: the state goes and a tombstone (with a ShareSnapshotKey) is written to
  __share_group_state (mockbroker/state/share/persisted.py); a share partition with no state answers
  success and writes nothing. The share partition, if live, goes too: a later fetch starts it again at the
  group's share.auto.offset.reset.
- Errors per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition that does not exist,
  INVALID_REQUEST for a negative partition, NOT_COORDINATOR on a node that does not lead the key's
  __share_group_state partition. No group id, no topics or a topic without partitions: an empty answer.
- Authorization (with an authorizer, `authorize`): CLUSTER_ACTION on the cluster, else every partition
  CLUSTER_AUTHORIZATION_FAILED.
- Error answer (fault injection, `error_response`): every partition named with the code.
Shared steps: mockbroker/handlers/support/share_state.py.
"""

from __future__ import annotations

from typing import Any

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.share_state import (
    authorize_cluster_action,
    known_partition,
    refuse_all,
    serve,
)
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.share.persisted import StateKey

API_KEY = ApiKey.DELETE_SHARE_GROUP_STATE


def error_fields(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return refuse_all(req, code, error_fields)


@handler(API_KEY, 0, 0, authorize=authorize_cluster_action(error_fields), error_response=error_response)
def handle_delete_share_group_state(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    share = ctx.node.share_coordinator

    def delete(key: StateKey, p: Any) -> dict[str, Any]:
        if share.store.delete(key, known=known_partition(ctx, key)):
            share.state_changed(key)
        return error_fields(ErrorCode.NONE, None)

    return serve(ctx, req, "delete share group state", delete, error_fields)
