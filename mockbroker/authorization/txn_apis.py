"""Authorization of the producer and transaction APIs, as Kafka's KafkaApis checks them:

- InitProducerId: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED; with enable2Pc
  TWO_PHASE_COMMIT too); without one
  (an idempotent producer) IDEMPOTENT_WRITE on the cluster or WRITE on some topic
  (CLUSTER_AUTHORIZATION_FAILED).
- AddPartitionsToTxn v0-v3: WRITE on the transactional id (every partition
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED), WRITE on each topic (the refused partitions
  TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED, nothing added); v4+ (a broker's
  request): CLUSTER_ACTION on the cluster.
- AddOffsetsToTxn: WRITE on the transactional id, READ on the group. EndTxn: WRITE on the id.
- TxnOffsetCommit: WRITE on the id, READ on the group (every partition gets the error), READ on each topic.
- DescribeTransactions: DESCRIBE on each id; topics the principal may not DESCRIBE are left out.
  ListTransactions: only the ids the principal may DESCRIBE.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call, check, extend, then, with_list
from mockbroker.authorization.group_apis import topic_partition_errors
from mockbroker.authorization.topic_apis import split
from mockbroker.dispatch import HandlerResult
from mockbroker.error_responses import error_response
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import AclOperation, ResourceType

TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
Op = AclOperation
TXN = ResourceType.TRANSACTIONAL_ID


@check(22)
def init_producer_id(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if req.transactional_id is not None:
        if not access.may(Op.WRITE, TXN, req.transactional_id) or (
                req.get("enable2_pc") and not access.may(Op.TWO_PHASE_COMMIT, TXN, req.transactional_id)):
            return Msg(throttle_time_ms=0, error_code=TXN_DENIED, producer_id=-1, producer_epoch=-1)
    elif not access.on_cluster(Op.IDEMPOTENT_WRITE) and not access.on_any(Op.WRITE, ResourceType.TOPIC):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producer_id=-1,
                   producer_epoch=-1)
    return call(req)


def _partition_results(topics: list[Msg], code_of: dict[str, ErrorCode]) -> list[Msg]:
    return [Msg(name=t.name, results_by_partition=[Msg(partition_index=p, partition_error_code=code_of[t.name])
                                                   for p in t.partitions]) for t in topics]


@check(24)
def add_partitions_to_txn(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if header.api_version >= 4:
        if access.on_cluster(Op.CLUSTER_ACTION):
            return call(req)
        return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results_by_transaction=[])
    topics = req.v3_and_below_topics
    if not access.may(Op.WRITE, TXN, req.v3_and_below_transactional_id):
        codes = {t.name: TXN_DENIED for t in topics}
        return Msg(throttle_time_ms=0, results_by_topic_v3_and_below=_partition_results(topics, codes))
    allowed, refused = split(access, Op.WRITE, topics, lambda t: t.name)
    if not refused:
        return call(req)
    codes = {t.name: ErrorCode.TOPIC_AUTHORIZATION_FAILED for t in refused}
    for t in allowed:
        if access.cluster.topic(t.name) is None:
            codes[t.name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            codes.setdefault(t.name, ErrorCode.OPERATION_NOT_ATTEMPTED)
    return Msg(throttle_time_ms=0, results_by_topic_v3_and_below=_partition_results(topics, codes))


@check(25)
def add_offsets_to_txn(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.WRITE, TXN, req.transactional_id):
        return Msg(throttle_time_ms=0, error_code=TXN_DENIED)
    if not access.may(Op.READ, ResourceType.GROUP, req.group_id):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return call(req)


@check(26)
def end_txn(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.WRITE, TXN, req.transactional_id):
        return error_response(26, header.api_version, req, TXN_DENIED)
    return call(req)


@check(28)
def txn_offset_commit(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.WRITE, TXN, req.transactional_id):
        return Msg(throttle_time_ms=0, topics=topic_partition_errors(req.topics, TXN_DENIED))
    if not access.may(Op.READ, ResourceType.GROUP, req.group_id):
        return Msg(throttle_time_ms=0, topics=topic_partition_errors(req.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED))
    allowed, refused = split(access, Op.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = topic_partition_errors(refused, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@check(65)
def describe_transactions(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    ids = req.transactional_ids
    allowed = [i for i in ids if access.may(Op.DESCRIBE, TXN, i)]
    errors = [Msg(error_code=TXN_DENIED, transactional_id=i, transaction_state="", transaction_timeout_ms=0,
                  transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1, topics=[])
              for i in ids if i not in allowed]

    def edit(response: Msg) -> None:
        for state in response.transaction_states:
            state.topics = [t for t in state.topics if access.may(Op.DESCRIBE, ResourceType.TOPIC, t.topic)]
        response.transaction_states = list(response.transaction_states) + errors

    return then(call(with_list(req, "transactional_ids", allowed)), edit)


@check(66)
def list_transactions(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    def edit(response: Msg) -> None:
        response.transaction_states = [s for s in response.transaction_states
                                       if access.may(Op.DESCRIBE, TXN, s.transactional_id)]

    return then(call(req), edit)
