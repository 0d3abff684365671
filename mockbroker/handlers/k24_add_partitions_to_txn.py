"""AddPartitionsToTxn (key 24), v0-v5 (state: mockbroker/state/txn/coordinator.py).

- v0-v3 (clients): one transaction, answered per topic and partition (results_by_topic_v3_and_below).
- v4+ (brokers in Kafka, any client here: there is no authorizer): a batch of transactions, answered per
  transaction (results_by_transaction), top-level error_code NONE. A transaction with verify_only only
  checks (KIP-890 part 1): NONE for each partition in the transaction, TRANSACTION_ABORTABLE for one that
  is not, or the transaction's error on every partition; without verify_only the partitions are added.
- As Kafka's KafkaApis: a partition of a topic or index that does not exist fails the whole transaction:
  UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for the others (nothing is added).
- The coordinator's error applies to every partition of the transaction: INVALID_PRODUCER_ID_MAPPING
  (unknown transactional id, or another producer id), PRODUCER_FENCED (another epoch; INVALID_PRODUCER_EPOCH
  before v2), CONCURRENT_TRANSACTIONS (markers still being written), INVALID_REQUEST (empty id).
- Authorization (with an authorizer, `authorize`): v0-v3 WRITE on the transactional id (every partition
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED), WRITE on each topic (the refused partitions
  TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED, nothing added); v4+ (a broker's
  request): CLUSTER_ACTION on the cluster (CLUSTER_AUTHORIZATION_FAILED).
- Error answer (fault injection): the top-level code.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, split
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.txn.metadata import fenced_for_version

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN

TopicPartition = tuple[str, int]


def _results(partitions: list[TopicPartition], errors: dict[TopicPartition, ErrorCode]) -> list[Msg]:
    by_topic: dict[str, list[Msg]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(Msg(partition_index=index, partition_error_code=errors[(topic, index)]))
    return [Msg(name=name, results_by_partition=parts) for name, parts in by_topic.items()]


def _handle_transaction(ctx: RequestContext, version: int, transactional_id: str, producer_id: int, epoch: int,
                        topics: list[Msg], verify_only: bool) -> list[Msg]:
    partitions = list(dict.fromkeys((t.name, index) for t in topics for index in t.partitions))
    missing = {tp for tp in partitions if ctx.cluster.partition(*tp) is None}
    if missing:
        errors = {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in missing else ErrorCode.OPERATION_NOT_ATTEMPTED
                  for tp in partitions}
        return _results(partitions, errors)
    misrouted = ctx.node.txn_coordinator_error(transactional_id)
    if misrouted is not None:
        return _results(partitions, dict.fromkeys(partitions, misrouted))
    coordinator = ctx.node.txn_coordinator
    if verify_only:
        return _results(partitions, coordinator.verify_partitions(transactional_id, producer_id, epoch, partitions))
    try:
        coordinator.add_partitions(transactional_id, producer_id, epoch, partitions,
                                   transaction_version=2 if version >= 5 and coordinator.transaction_version >= 2
                                   else 0)
        code = ErrorCode.NONE
    except KafkaError as exc:
        code = exc.code
    code = fenced_for_version(code, version, 2)
    return _results(partitions, dict.fromkeys(partitions, code))


def _partition_results(topics: list[Msg], code_of: dict[str, ErrorCode]) -> list[Msg]:
    return [Msg(name=t.name, results_by_partition=[Msg(partition_index=p, partition_error_code=code_of[t.name])
                                                   for p in t.partitions]) for t in topics]


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if header.api_version >= 4:
        if access.on_cluster(AclOperation.CLUSTER_ACTION):
            return call(req)
        return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results_by_transaction=[])
    topics = req.v3_and_below_topics
    if not access.may(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.v3_and_below_transactional_id):
        codes = {t.name: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for t in topics}
        return Msg(throttle_time_ms=0, results_by_topic_v3_and_below=_partition_results(topics, codes))
    allowed, refused = split(access, AclOperation.WRITE, topics, lambda t: t.name)
    if not refused:
        return call(req)
    codes = {t.name: ErrorCode.TOPIC_AUTHORIZATION_FAILED for t in refused}
    for t in allowed:
        if access.cluster.topic(t.name) is None:
            codes[t.name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            codes.setdefault(t.name, ErrorCode.OPERATION_NOT_ATTEMPTED)
    return Msg(throttle_time_ms=0, results_by_topic_v3_and_below=_partition_results(topics, codes))


@handler(API_KEY, 0, 5, authorize=authorize)
def handle_add_partitions_to_txn(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    if v < 4:
        results = _handle_transaction(ctx, v, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                                      req.v3_and_below_producer_epoch, req.v3_and_below_topics, False)
        return Msg(throttle_time_ms=0, results_by_topic_v3_and_below=results)
    out = []
    for txn in req.transactions:
        results = _handle_transaction(ctx, v, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics,
                                      txn.verify_only)
        out.append(Msg(transactional_id=txn.transactional_id, topic_results=results))
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, results_by_transaction=out)
