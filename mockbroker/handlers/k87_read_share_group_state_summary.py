"""ReadShareGroupStateSummary (key 87), v0-v1 (as Kafka 4.3): a share partition's start offset and epochs
from the share coordinator (KIP-932; what DescribeShareGroupOffsets reads in Kafka).
- Per partition: state epoch, leader epoch and start offset (mockbroker/state/share/persisted.py); for a
  share partition never initialized start offset -1 and epochs 0, as Kafka answers. v1 adds
  DeliveryCompleteCount (KIP-1226): the offsets from the start offset whose records are acknowledged or
  archived, counted from the stored state batches (-1 for none).
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

API_KEY = ApiKey.READ_SHARE_GROUP_STATE_SUMMARY


def error_fields(code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "state_epoch": 0, "leader_epoch": 0, "start_offset": 0,
            "delivery_complete_count": -1}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return refuse_all(req, code, error_fields)


@handler(API_KEY, 0, 1, authorize=authorize_cluster_action(error_fields), error_response=error_response)
def handle_read_share_group_state_summary(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    store = ctx.node.share_coordinator.store

    def summary(key: StateKey, p: Any) -> dict[str, Any]:
        start, leader_epoch, state_epoch, done = store.summary(key, known=known_partition(ctx, key))
        return {"error_code": ErrorCode.NONE, "error_message": None, "state_epoch": state_epoch,
                "leader_epoch": leader_epoch, "start_offset": start, "delivery_complete_count": done}

    return serve(ctx, req, "read share group state summary", summary, error_fields)
