"""ReadShareGroupState (key 84), v0 (as Kafka 4.3): a share partition's persisted state, as the share
coordinator holds it (KIP-932; the share partition's leader reads it when it takes the partition on).
- Per partition: state epoch, start offset and state batches (first and last offset, delivery state 0
  available / 2 acknowledged / 4 archived, delivery count), from mockbroker/state/share/persisted.py: what
  ShareSnapshot and ShareUpdate records of __share_group_state hold. A leader epoch above the stored one is
  stored (a ShareUpdate written), as Kafka's readStateAndMaybeUpdateLeaderEpoch.
- Errors per partition: INVALID_REQUEST for a share partition never initialized ("Read operation on
  uninitialized share partition not allowed.") or a negative partition, FENCED_LEADER_EPOCH for a leader
  epoch below the stored one (-1 too, as in Kafka), UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition
  that does not exist, NOT_COORDINATOR on a node that does not lead the key's __share_group_state
  partition. No group id, no topics or a topic without partitions: an empty answer.
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

API_KEY = ApiKey.READ_SHARE_GROUP_STATE


def error_fields(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "state_epoch": 0, "start_offset": 0, "state_batches": []}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return refuse_all(req, code, error_fields)


@handler(API_KEY, 0, 0, authorize=authorize_cluster_action(error_fields), error_response=error_response)
def handle_read_share_group_state(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    store = ctx.node.share_coordinator.store

    def read(key: StateKey, p: Any) -> dict[str, Any]:
        state = store.read(key, p.leader_epoch, known=known_partition(ctx, key))
        return {"error_code": ErrorCode.NONE, "error_message": None, "state_epoch": state.state_epoch,
                "start_offset": state.start_offset,
                "state_batches": [Msg(first_offset=f, last_offset=la, delivery_state=s, delivery_count=c)
                                  for f, la, s, c in state.batches]}

    return serve(ctx, req, "read share group state", read, error_fields)
