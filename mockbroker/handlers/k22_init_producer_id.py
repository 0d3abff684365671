"""InitProducerId (key 22), v0-v5 (v6, KIP-939's two-phase commit, is unstable in Kafka 4.3 and not served).

Without a transactional id (idempotent producers), as Kafka's TransactionCoordinator does: a fresh
producer id, unique for the broker's lifetime, with epoch 0 — also when the request names an
existing producer id and epoch (KIP-360): Kafka answers those with a new id, and the Java client bumps
an idempotent producer's epoch on its own side.
With a transactional id: see the transaction coordinator (not served yet: COORDINATOR_NOT_AVAILABLE
is never answered here; the request gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED-free behaviour once
transactions land).
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.headers import RequestHeader
from protocol.messages import Msg

from mockbroker.connection import RequestContext
from mockbroker.dispatch import handler

API_KEY = 22


@handler(API_KEY, 0, 5)
def handle_init_producer_id(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    if req.transactional_id is not None:
        # Transactions are not implemented yet (issue: transactions).
        return Msg(throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION, producer_id=-1, producer_epoch=-1)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=ctx.cluster.allocate_producer_id(),
               producer_epoch=0)
