"""DescribeTopicPartitions (key 75), v0 (the Java AdminClient 4.x describeTopics uses it when served).

As a Kafka broker answers it (DescribeTopicPartitionsRequestHandler + KRaftMetadataCache):
- topics: the ones named (deduplicated, sorted by name), or every topic when the list is empty; with a
  cursor only names >= the cursor's topic. A named topic that does not exist:
  UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name), zero topic id, no
  partitions; with an empty list nothing is reported missing.
- partitions: leader, leader epoch, replicas, ISR, eligible_leader_replicas and last_known_elr (empty
  lists: no ELR here), offline_replicas (the replicas on stopped nodes); a partition without a leader:
  LEADER_NOT_AVAILABLE, leader -1.
- Pagination: at most min(response_partition_limit, 2000) partitions (at least 1) per response. When a
  topic's partitions do not all fit, next_cursor names that topic and the first partition left out;
  when the limit is used up exactly before the next topic, next_cursor names that topic at partition 0.
  The cursor's topic starts at the cursor's partition, the others at 0.
- A cursor whose topic is not among the topics named, or with a negative partition: INVALID_REQUEST on
  every topic named (Kafka fails the whole request).
- topic_authorized_operations: filled in always, as Kafka does: every topic operation without an
  authorizer; with one, the principal's operations on the topic.
- Authorization (with an authorizer, `authorize`), as DescribeTopicPartitionsRequestHandler: DESCRIBE on
  each topic. A named topic the principal may not describe is answered TOPIC_AUTHORIZATION_FAILED (zero
  topic id, not internal, no partitions; whether it exists is not disclosed), after the others; listing
  every topic leaves those topics out. The cursor is checked against the topics named before
  authorization; the cursor's partition applies only when its topic is authorized. Topics are filtered
  before pagination, so the partition limit and next_cursor count only what is answered.
- Error answer (fault injection): the top-level code (the schema has none: refused when added).
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.constants import NOT_REQUESTED, TOPIC_OPERATIONS
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import INTERNAL_TOPICS, Cluster, Topic, validate_topic_name
from mockbroker.state.cluster.leadership import offline_replicas

API_KEY = ApiKey.DESCRIBE_TOPIC_PARTITIONS
MAX_PARTITIONS = 2000  # max.request.partition.size.limit


def _partition_entries(cluster: Cluster, topic: Topic, start: int, limit: int) -> tuple[list[Msg], int]:
    """Partitions start.. of a topic, at most `limit`; and the next partition index (-1 if none left)."""
    upper = min(len(topic.partitions), start + limit)
    out = [
        Msg(error_code=ErrorCode.NONE if p.leader_id >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
            partition_index=p.index, leader_id=p.leader_id, leader_epoch=p.leader_epoch,
            replica_nodes=list(p.replicas), isr_nodes=list(p.isr), eligible_leader_replicas=[], last_known_elr=[],
            offline_replicas=offline_replicas(cluster, p))
        for p in topic.partitions[start:upper]
    ]
    return out, (upper if upper < len(topic.partitions) else -1)


def _missing(name: str) -> Msg:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except KafkaError:
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return Msg(error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
               partitions=[], topic_authorized_operations=NOT_REQUESTED)


def _refused(name: str) -> Msg:
    return Msg(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID, is_internal=False,
               partitions=[], topic_authorized_operations=NOT_REQUESTED)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    """DESCRIBE per topic, decided while the topics are chosen (not by editing the request: a request whose
    every named topic is refused must not become an empty list, which asks for every topic)."""
    return describe(access.cluster, req,
                    lambda name: access.may(AclOperation.DESCRIBE, ResourceType.TOPIC, name),
                    lambda name: access.operations(ResourceType.TOPIC, name))


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_describe_topic_partitions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    return describe(ctx.cluster, req, lambda name: True, None)


def describe(cluster: Cluster, req: Msg, may_describe: Callable[[str], bool],
             operations: Callable[[str], int] | None) -> Msg:
    """The answer, for a principal who may describe the topics `may_describe` accepts and whose operations
    on a topic `operations` gives (None, no authorizer: every operation on a topic that exists)."""
    cursor = req.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    fetch_all = not req.topics
    candidates = list(cluster.topics) if fetch_all else [t.name for t in req.topics]
    names = sorted({n for n in candidates if n >= cursor_topic})
    if cursor is not None and ((not fetch_all and cursor.topic_name not in names) or cursor.partition_index < 0):
        return Msg(throttle_time_ms=0, next_cursor=None, topics=[
            Msg(error_code=ErrorCode.INVALID_REQUEST, name=t.name, topic_id=ZERO_UUID, is_internal=False,
                partitions=[], topic_authorized_operations=NOT_REQUESTED)
            for t in req.topics])
    refused = [] if fetch_all else [_refused(n) for n in names if not may_describe(n)]
    names = [n for n in names if may_describe(n)]
    remaining = max(min(MAX_PARTITIONS, req.response_partition_limit), 1)
    topics_out: list[Msg] = []
    next_cursor: Msg | None = None
    for name in names:
        if remaining == 0:
            next_cursor = Msg(topic_name=name, partition_index=0)
            break
        topic = cluster.topic(name)
        if topic is None:
            if not fetch_all:
                missing = _missing(name)
                if operations is not None:  # Kafka fills in every answered topic's operations
                    missing.topic_authorized_operations = operations(name)
                topics_out.append(missing)
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        partitions, next_index = _partition_entries(cluster, topic, start, remaining)
        topics_out.append(Msg(error_code=ErrorCode.NONE, name=name, topic_id=topic.topic_id,
                              is_internal=topic.internal, partitions=partitions,
                              topic_authorized_operations=TOPIC_OPERATIONS if operations is None
                              else operations(name)))
        if next_index != -1:
            next_cursor = Msg(topic_name=name, partition_index=next_index)
            break
        remaining -= len(partitions)
    return Msg(throttle_time_ms=0, topics=topics_out + refused, next_cursor=next_cursor)
