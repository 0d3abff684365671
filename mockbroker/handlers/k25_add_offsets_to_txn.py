"""AddOffsetsToTxn (key 25), v0-v4 (state: mockbroker/state/txn/coordinator.py).

The group's __consumer_offsets partition (Kafka's abs(groupId.hashCode) % offsets.topic.num.partitions)
joins the transaction, so a TxnOffsetCommit of that group may follow; its offsets reach the group with
the COMMIT marker. Errors as AddPartitionsToTxn: INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS, INVALID_REQUEST (empty transactional id).
Transaction version 2 clients skip this request: their TxnOffsetCommit v5 adds the partition itself.
- Authorization (with an authorizer, `authorize`): WRITE on the transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (GROUP_AUTHORIZATION_FAILED).
- Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.metadata import fenced_for_version

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not access.may(AclOperation.READ, ResourceType.GROUP, req.group_id):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return call(req)


@handler(API_KEY, 0, 4, authorize=authorize)
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
