"""EndTxn (key 26), v0-v5 (state: mockbroker/state/txn/coordinator.py).

Commit or abort the producer's transaction: PrepareCommit/PrepareAbort, a COMMIT/ABORT control batch
(transactional + control, one record: key version 0 and type, value version 0 and the coordinator epoch)
appended to every partition of the transaction through its log, then CompleteCommit/CompleteAbort. The
answer comes after the markers are written (Kafka answers once the decision is logged; the markers follow
at once here, so a read_committed reader sees the outcome as soon as EndTxn returns).

- v0-v4 (transaction version 1): the epoch must be the current one (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH
  before v2); a retry of a completed commit/abort is answered NONE; Empty, or the other outcome of a
  completed transaction: INVALID_TXN_STATE; markers still pending: CONCURRENT_TRANSACTIONS. producer_id
  and producer_epoch are not in the response.
- v5 (transaction version 2, KIP-890 part 2): every EndTxn bumps the epoch (the markers carry the bumped
  one) and the response names the producer id and epoch to continue with (a new producer id at epoch 0
  when the epoch is exhausted); an abort with nothing in the transaction is allowed; a retry is recognised
  by an epoch one below the current one.
- Authorization (with an authorizer, `authorize`): WRITE on the transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
- Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, error_response, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.metadata import fenced_for_version

API_KEY = ApiKey.END_TXN


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return error_response(API_KEY, header.api_version, req, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    return call(req)


@handler(API_KEY, 0, 5, authorize=authorize)
def handle_end_txn(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = ctx.node.txn_coordinator_error(req.transactional_id)
    if misrouted is not None:
        return Msg(throttle_time_ms=0, error_code=misrouted, producer_id=-1, producer_epoch=-1)
    try:
        producer_id, epoch = ctx.node.txn_coordinator.end_txn(
            req.transactional_id, req.producer_id, req.producer_epoch, bool(req.committed),
            transaction_version=2 if v >= 5 else 0)
    except KafkaError as exc:
        code = fenced_for_version(exc.code, v, 2)
        return Msg(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=epoch)
