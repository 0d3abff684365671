"""DescribeTransactions (key 65), v0 (state: mockbroker/state/txn/coordinator.py).

One entry per transactional id asked, in request order: state name (Empty, Ongoing, PrepareCommit,
PrepareAbort, CompleteCommit, CompleteAbort), timeout, start time (-1 before the first transaction),
producer id and epoch, and the partitions of the current transaction (a group's offsets show as its
__consumer_offsets partition, as in Kafka). An unknown id: TRANSACTIONAL_ID_NOT_FOUND; an empty one:
INVALID_REQUEST.
Authorization (with an authorizer, `authorize`): DESCRIBE on each transactional id
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED); topics the principal may not DESCRIBE are left out.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.inspection import describe_transaction

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    ids = req.transactional_ids
    allowed = [i for i in ids if access.may(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, i)]
    errors = [Msg(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactional_id=i,
                  transaction_state="", transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                  producer_epoch=-1, topics=[])
              for i in ids if i not in allowed]

    def edit(response: Msg) -> None:
        for state in response.transaction_states:
            state.topics = [t for t in state.topics if access.may(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic)]
        response.transaction_states = list(response.transaction_states) + errors

    return then(call(with_list(req, "transactional_ids", allowed)), edit)


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_describe_transactions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    coordinator = ctx.node.txn_coordinator
    states = []
    for transactional_id in req.transactional_ids:
        d = describe_transaction(coordinator, transactional_id)
        misrouted = ctx.node.txn_coordinator_error(transactional_id)
        if misrouted is not None:
            d = {**describe_transaction(coordinator, ""), "transactional_id": transactional_id,
                 "error_code": misrouted}
        d["topics"] = [Msg(t) for t in d["topics"]]
        states.append(Msg(d))
    return Msg(throttle_time_ms=0, transaction_states=states)
