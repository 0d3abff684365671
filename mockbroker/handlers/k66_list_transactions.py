"""ListTransactions (key 66), v0-v2 (state: mockbroker/state/txn/coordinator.py).

Every transactional id the coordinator knows (sorted by id), as Kafka's listTransactionStates:
- state_filters: only those states; a name Kafka does not know is listed in unknown_state_filters (and,
  as in Kafka, matches nothing).
- producer_id_filters: only those producer ids.
- v1+ duration_filter >= 0: only transactions started more than that many ms ago (broker clock; a
  transactional id that never started one counts from -1, as in Kafka).
- v2+ transactional_id_pattern: a regular expression the whole id must match (null or empty: all); one
  that does not compile: INVALID_REGULAR_EXPRESSION.
Authorization (with an authorizer, `authorize`): only the transactional ids the principal may DESCRIBE.
Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

import re

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, then
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.inspection import list_transactions

API_KEY = ApiKey.LIST_TRANSACTIONS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    def edit(response: Msg) -> None:
        response.transaction_states = [s for s in response.transaction_states
                                       if access.may(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                                                     s.transactional_id)]

    return then(call(req), edit)


@handler(API_KEY, 0, 2, authorize=authorize)
def handle_list_transactions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    duration = req.duration_filter if v >= 1 else -1
    pattern = req.transactional_id_pattern if v >= 2 else None
    try:
        unknown, states = list_transactions(ctx.node.txn_coordinator, list(req.state_filters),
                                            list(req.producer_id_filters), duration, pattern or None)
    except re.error:
        return Msg(throttle_time_ms=0, error_code=ErrorCode.INVALID_REGULAR_EXPRESSION, unknown_state_filters=[],
                   transaction_states=[])
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, unknown_state_filters=unknown,
               transaction_states=[Msg(s) for s in states
                                   if ctx.node.txn_coordinator_error(s["transactional_id"]) is None])
