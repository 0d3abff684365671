"""DescribeTransactions (key 65), v0 (state: mockbroker/state/txn.py).

One entry per transactional id asked, in request order: state name (Empty, Ongoing, PrepareCommit,
PrepareAbort, CompleteCommit, CompleteAbort), timeout, start time (-1 before the first transaction),
producer id and epoch, and the partitions of the current transaction (a group's offsets show as its
__consumer_offsets partition, as in Kafka). An unknown id: TRANSACTIONAL_ID_NOT_FOUND; an empty one:
INVALID_REQUEST.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.inspection import describe_transaction

API_KEY = 65


@handler(API_KEY, 0, 0)
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
