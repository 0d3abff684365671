"""InitProducerId (key 22), v0-v5 (v6, KIP-939's two-phase commit, is unstable in Kafka 4.3 and not served).

Without a transactional id (idempotent producers), as Kafka's TransactionCoordinator does: a fresh
producer id, unique for the broker's lifetime, with epoch 0 — also when the request names an
existing producer id and epoch (KIP-360): Kafka answers those with a new id, and the Java client bumps
an idempotent producer's epoch on its own side.
With a transactional id: the transaction coordinator (state/txn/coordinator.py, TxnCoordinator.init_producer_id): a
producer id per transactional id, the epoch bumped on each init (the previous instance is fenced), an
Ongoing transaction aborted first (CONCURRENT_TRANSACTIONS, the client retries), INVALID_REQUEST for an
empty id, INVALID_TRANSACTION_TIMEOUT above transaction.max.timeout.ms, the KIP-360 expected producer
id/epoch checks (v3+: a request naming only one of them is INVALID_REQUEST, as Kafka's KafkaApis), a
new producer id when the epoch is exhausted. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v4.
- Authorization (with an authorizer, `authorize`): WRITE on the transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED; with enable2Pc TWO_PHASE_COMMIT too); without one (an idempotent
  producer) IDEMPOTENT_WRITE on the cluster or WRITE on some topic (CLUSTER_AUTHORIZATION_FAILED).
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

API_KEY = ApiKey.INIT_PRODUCER_ID


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    txn = ResourceType.TRANSACTIONAL_ID
    if req.transactional_id is not None:
        if not access.may(AclOperation.WRITE, txn, req.transactional_id) or (
                req.get("enable2_pc") and not access.may(AclOperation.TWO_PHASE_COMMIT, txn, req.transactional_id)):
            return Msg(throttle_time_ms=0, error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producer_id=-1,
                       producer_epoch=-1)
    elif not access.on_cluster(AclOperation.IDEMPOTENT_WRITE) and not access.on_any(AclOperation.WRITE,
                                                                                    ResourceType.TOPIC):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1,
                   producer_epoch=-1)
    return call(req)


@handler(API_KEY, 0, 5, authorize=authorize)
def handle_init_producer_id(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    if req.transactional_id is not None:
        return _init_transactional(ctx, header.api_version, req)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=ctx.cluster.allocate_producer_id(),
               producer_epoch=0)


def _init_transactional(ctx: RequestContext, version: int, req: Msg) -> Msg:
    pid, epoch = (req.producer_id, req.producer_epoch) if version >= 3 else (-1, -1)
    misrouted = ctx.node.txn_coordinator_error(req.transactional_id)
    if misrouted is not None:
        return Msg(throttle_time_ms=0, error_code=misrouted, producer_id=-1, producer_epoch=-1)
    try:
        if (pid == -1) != (epoch == -1):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "producer id and epoch must both be set or both be -1")
        expected = None if pid == -1 else (pid, epoch)
        producer_id, producer_epoch = ctx.node.txn_coordinator.init_producer_id(
            req.transactional_id, req.transaction_timeout_ms, expected)
    except KafkaError as exc:
        code = fenced_for_version(exc.code, version, 4)
        return Msg(throttle_time_ms=0, error_code=code, producer_id=-1, producer_epoch=-1)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=producer_epoch)
