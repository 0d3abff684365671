"""WriteShareGroupState (key 85), v0-v1 (as Kafka 4.3): a share partition's leader writes what changed of
its persisted state to the share coordinator (KIP-932).
- Per partition: the state batches given are laid over the stored ones (later wins where they overlap,
  nothing kept below the start offset), the start offset moves unless -1, the leader epoch is stored unless
  -1; written as a ShareUpdate record to __share_group_state, or as a full ShareSnapshot every
  share.coordinator.snapshot.update.records.per.snapshot (500) updates (mockbroker/state/share/persisted.py).
  The share partition, if live, is made again from the new state on next use. v1's DeliveryCompleteCount
  (KIP-1226) is read and not kept: ReadShareGroupStateSummary counts it from the batches.
- Errors per partition: INVALID_REQUEST for a share partition never initialized ("Write operation on
  uninitialized share partition not allowed.") or a negative partition, FENCED_LEADER_EPOCH /
  FENCED_STATE_EPOCH for an epoch below the stored one (-1 passes), UNKNOWN_TOPIC_OR_PARTITION for a topic
  id or partition that does not exist, NOT_COORDINATOR on a node that does not lead the key's
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

API_KEY = ApiKey.WRITE_SHARE_GROUP_STATE


def error_fields(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return refuse_all(req, code, error_fields)


@handler(API_KEY, 0, 1, authorize=authorize_cluster_action(error_fields), error_response=error_response)
def handle_write_share_group_state(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    share = ctx.node.share_coordinator

    def write(key: StateKey, p: Any) -> dict[str, Any]:
        batches = [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches]
        share.store.write(key, p.state_epoch, p.leader_epoch, p.start_offset, batches, ctx.node.clock.now_ms(),
                          known=known_partition(ctx, key))
        share.state_changed(key)
        return error_fields(ErrorCode.NONE, None)

    return serve(ctx, req, "write share group state", write, error_fields)
