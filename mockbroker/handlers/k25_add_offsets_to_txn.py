"""AddOffsetsToTxn (key 25), v0-v4 (state: mockbroker/state/txn.py).

The group's __consumer_offsets partition (Kafka's abs(groupId.hashCode) % offsets.topic.num.partitions)
joins the transaction, so a TxnOffsetCommit of that group may follow; its offsets reach the group with
the COMMIT marker. Errors as AddPartitionsToTxn: INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS, INVALID_REQUEST (empty transactional id).
Transaction version 2 clients skip this request: their TxnOffsetCommit v5 adds the partition itself.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.metadata import fenced_for_version

API_KEY = 25


@handler(API_KEY, 0, 4)
def handle_add_offsets_to_txn(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = ctx.node.txn_coordinator_error(req.transactional_id)
    if misrouted is not None:
        return Msg(throttle_time_ms=0, error_code=misrouted)
    try:
        ctx.node.txn_coordinator.add_offsets(req.transactional_id, req.producer_id, req.producer_epoch,
                                               req.group_id)
        code = ErrorCode.NONE
    except KafkaError as exc:
        code = exc.code
    return Msg(throttle_time_ms=0, error_code=fenced_for_version(code, header.api_version, 2))
