"""InitializeShareGroupState (key 83), v0 (as Kafka 4.3): the share coordinator starts a share partition's
state afresh (KIP-932; Kafka's group coordinator sends it when a share group first takes a partition, and
again with the next state epoch when AlterShareGroupOffsets moves it).
- Per partition: a new state at the state epoch and start offset given (-1: not initialized, the share
  partition's leader picks its start), no state batches, written as a ShareSnapshot record to
  __share_group_state (mockbroker/state/share/persisted.py). The share partition, if live, is made again
  from it on next use (records it held acquired are available again), as Kafka's fenced leader does.
- Errors per partition: FENCED_STATE_EPOCH for a state epoch below the stored one (-1 passes),
  UNKNOWN_TOPIC_OR_PARTITION for a topic id or partition that does not exist, INVALID_REQUEST for a
  negative partition, NOT_COORDINATOR on a node that does not lead the key's __share_group_state
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

API_KEY = ApiKey.INITIALIZE_SHARE_GROUP_STATE


def error_fields(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return refuse_all(req, code, error_fields)


@handler(API_KEY, 0, 0, authorize=authorize_cluster_action(error_fields), error_response=error_response)
def handle_initialize_share_group_state(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    share = ctx.node.share_coordinator

    def initialize(key: StateKey, p: Any) -> dict[str, Any]:
        share.store.initialize(key, p.state_epoch, p.start_offset, ctx.node.clock.now_ms(),
                               known=known_partition(ctx, key))
        share.state_changed(key)
        return error_fields(ErrorCode.NONE, None)

    return serve(ctx, req, "initialize share group state", initialize, error_fields)
