"""What the share-state APIs share (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
DeleteShareGroupState, ReadShareGroupStateSummary: KIP-932's share coordinator, handlers k83-k87), as
Kafka's KafkaApis and ShareCoordinatorService serve them:

- Authorization: CLUSTER_ACTION on the cluster (they are broker-to-broker APIs); refused, every topic and
  partition named is answered CLUSTER_AUTHORIZATION_FAILED (`refuse_all`, `authorize`).
- An empty group id, no topics, or a topic with no partitions: an empty answer (no results), as Kafka's
  service answers.
- Each partition is one key "group:topicId:partition" of the share coordinator, served by the leader of its
  partition of __share_group_state (made on first use): on another node NOT_COORDINATOR ("Unable to ...:
  This is not the correct coordinator."). A negative partition: INVALID_REQUEST. Then the operation on the
  share coordinator's state (mockbroker/state/share/persisted.py), its KafkaError answered with Kafka's
  code and message.
- Results are grouped by topic id in the order the request names them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC, coordinator_node
from mockbroker.state.share.persisted import StateKey, coordinator_key

# Kafka's Errors.message() of the codes these APIs answer.
MESSAGES = {
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    ErrorCode.FENCED_LEADER_EPOCH: "The leader epoch in the request is older than the epoch on the broker.",
    ErrorCode.FENCED_STATE_EPOCH: "The share coordinator rejected the request because the share-group state "
                                  "epoch did not match.",
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests.",
    ErrorCode.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client "
                               "library or the message was sent to an incompatible broker. See the broker "
                               "logs for more details.",
    **AUTHORIZATION_MESSAGES,
}
NEGATIVE_PARTITION = "The partition id cannot be a negative number."

# The answer for one partition: the partition's result fields, or a KafkaError.
PartitionOp = Callable[[StateKey, Any], dict[str, Any]]
ErrorFields = Callable[[ErrorCode, str | None], dict[str, Any]]


def message_of(code: ErrorCode) -> str | None:
    return MESSAGES.get(code, code.name)


def refuse_all(req: Msg, code: ErrorCode, error_fields: ErrorFields, message: str | None = None) -> Msg:
    """Every topic and partition of the request answered `code` (Kafka's toGlobalErrorResponse)."""
    text = message if message is not None else message_of(code)
    return Msg(results=[Msg(topic_id=t.topic_id, partitions=[
        Msg(partition=p.partition, **error_fields(code, text)) for p in t.partitions]) for t in req.topics])


def authorize_cluster_action(error_fields: ErrorFields) -> Callable[[Access, RequestHeader, Msg, Call], HandlerResult]:
    """The APIs' check: CLUSTER_ACTION on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED."""

    def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
        if access.on_cluster(AclOperation.CLUSTER_ACTION):
            return call(req)
        return refuse_all(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_fields)

    return authorize


def known_partition(ctx: RequestContext, key: StateKey) -> bool:
    """Whether the key's topic (by id) exists with that partition."""
    topic = ctx.cluster.topics_by_id.get(key[1])
    return topic is not None and 0 <= key[2] < len(topic.partitions)


def serve(ctx: RequestContext, req: Msg, operation: str, op: PartitionOp, error_fields: ErrorFields) -> Msg:
    """Run `op` on every partition the request names, on this node's share coordinator."""
    if not req.group_id or not req.topics or any(not t.partitions for t in req.topics):
        return Msg(results=[])
    results: dict[Any, list[Msg]] = {}
    for t in req.topics:
        answers = results.setdefault(t.topic_id, [])
        for p in t.partitions:
            key: StateKey = (req.group_id, t.topic_id, p.partition)
            if coordinator_node(ctx.cluster, SHARE_STATE_TOPIC, coordinator_key(key)) != ctx.node.node_id:
                text = f"Unable to {operation}: {message_of(ErrorCode.NOT_COORDINATOR)}"
                answers.append(Msg(partition=p.partition, **error_fields(ErrorCode.NOT_COORDINATOR, text)))
            elif p.partition < 0:
                answers.append(Msg(partition=p.partition, **error_fields(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION)))
            else:
                try:
                    answers.append(Msg(partition=p.partition, **op(key, p)))
                except KafkaError as e:
                    code = ErrorCode(e.code)
                    answers.append(Msg(partition=p.partition, **error_fields(code, e.message or message_of(code))))
    return Msg(results=[Msg(topic_id=topic_id, partitions=parts) for topic_id, parts in results.items()])
