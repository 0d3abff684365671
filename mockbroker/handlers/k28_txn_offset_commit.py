"""TxnOffsetCommit (key 28), v0-v5 (state: mockbroker/state/txn/coordinator.py, the group in state/groups/classic.py or state/groups/consumer.py).

The offsets wait in the transaction and become the group's committed offsets (what OffsetFetch answers)
when the transaction commits; an abort drops them.

- Per partition, as Kafka's KafkaApis: a topic or partition that does not exist: UNKNOWN_TOPIC_OR_PARTITION;
  metadata longer than offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE.
- For every other partition, the first failing check's code (as Kafka's group coordinator):
  INVALID_GROUP_ID (empty group id); the transaction check of the group's __consumer_offsets partition —
  v5 (transaction version 2) adds it to the transaction, v0-v4 verify that AddOffsetsToTxn added it
  (INVALID_TXN_STATE before v4, TRANSACTION_ABORTABLE from v4), with INVALID_PRODUCER_ID_MAPPING,
  INVALID_PRODUCER_EPOCH for another epoch, CONCURRENT_TRANSACTIONS; then the group's member check
  (generation -1 with no member: a commit outside group management, the group is created; else
  UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS).
- Authorization (with an authorizer, `authorize`): WRITE on the transactional id, READ on the group (every
  partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED / GROUP_AUTHORIZATION_FAILED), READ on each topic
  (TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    extend,
    partition_errors,
    split,
    then,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.TXN_OFFSET_COMMIT


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return Msg(throttle_time_ms=0, topics=partition_errors(req.topics, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    if not access.may(AclOperation.READ, ResourceType.GROUP, req.group_id):
        return Msg(throttle_time_ms=0, topics=partition_errors(req.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED))
    allowed, refused = split(access, AclOperation.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = partition_errors(refused, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 5, authorize=authorize)
def handle_txn_offset_commit(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.GROUP_ID_NOT_FOUND)  # a share group's id too
    if misrouted is not None:
        return Msg(throttle_time_ms=0, topics=[
            Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, error_code=misrouted)
                                         for p in t.partitions]) for t in req.topics])
    errors: dict[tuple[str, int], ErrorCode] = {}
    offsets: list[tuple[str, int, int, int, str | None]] = []
    for t in req.topics:
        for p in t.partitions:
            if ctx.cluster.partition(t.name, p.partition_index) is None:
                errors[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                offsets.append((t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                                p.committed_metadata))
    if offsets:
        try:
            errors.update(ctx.node.txn_coordinator.txn_offset_commit(
                req.transactional_id, req.group_id, req.producer_id, req.producer_epoch, req.generation_id,
                req.member_id, req.group_instance_id, offsets, v))
        except KafkaError as exc:
            errors.update({(topic, index): exc.code for topic, index, *_ in offsets})
    topics = []
    for t in req.topics:
        parts = [Msg(partition_index=p.partition_index, error_code=errors[(t.name, p.partition_index)])
                 for p in t.partitions]
        topics.append(Msg(name=t.name, partitions=parts))
    return Msg(throttle_time_ms=0, topics=topics)
