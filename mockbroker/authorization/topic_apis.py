"""Authorization of the APIs about topics, as Kafka's KafkaApis checks them (a refused topic gets
TOPIC_AUTHORIZATION_FAILED and is never looked at, so its existence is not disclosed):

- Produce: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition; an
  acks=0 request closes the connection), WRITE on each topic.
- Fetch: READ on each topic (a follower's fetch: CLUSTER_ACTION on the cluster).
- ListOffsets, OffsetForLeaderEpoch: DESCRIBE on each topic (OffsetForLeaderEpoch: CLUSTER_ACTION on
  the cluster covers all).
- Metadata: DESCRIBE on each topic; listing all topics leaves out the ones not described, naming one
  answers TOPIC_AUTHORIZATION_FAILED; auto-creating a topic needs CREATE on the cluster or the topic;
  topic and cluster authorized operations (v8+) when asked.
- DescribeTopicPartitions: as Metadata, without creation; authorized operations always.
- CreateTopics: CREATE on the cluster or the topic; DESCRIBE_CONFIGS on the topic for its configs
  (topic_config_error_code). DeleteTopics: DELETE (by id: DESCRIBE first, the name withheld).
  DeleteRecords: DELETE. CreatePartitions: ALTER. DescribeProducers: READ.
"""

from __future__ import annotations

from typing import Any

from mockbroker.authorization.access import NOT_REQUESTED, Access, Call, check, extend, then, with_list
from mockbroker.dispatch import CloseConnection, HandlerResult
from mockbroker.error_responses import error_response
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.security.acls import AclOperation, ResourceType

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
Op = AclOperation


def topic_name(access: Access, name: str | None, topic_id: Any) -> str | None:
    """A request topic's name: its name, or the name of its id (None: an id no topic has)."""
    if topic_id is not None and topic_id != ZERO_UUID:
        topic = access.cluster.topics_by_id.get(topic_id)
        return topic.name if topic is not None else None
    return name


def split(access: Access, op: Op, entries: list[Msg], name_of: Any) -> tuple[list[Msg], list[Msg]]:
    """(allowed, refused) request entries by `op` on their topic; an entry whose topic id is unknown is
    allowed through, for the handler to answer UNKNOWN_TOPIC_ID."""
    allowed: list[Msg] = []
    refused: list[Msg] = []
    for entry in entries:
        name = name_of(entry)
        (allowed if name is None or access.may(op, ResourceType.TOPIC, name) else refused).append(entry)
    return allowed, refused


@check(0)
def produce(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    if req.get("transactional_id") is not None and not access.may(Op.WRITE, ResourceType.TRANSACTIONAL_ID,
                                                                  req.transactional_id):
        if req.acks == 0:
            return CloseConnection("produce: transactional id not authorized")
        return error_response(0, v, req, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    allowed, refused = split(access, Op.WRITE, req.topic_data, lambda t: topic_name(access, t.name, t.get("topic_id")))
    if not refused:
        return call(req)
    result = call(with_list(req, "topic_data", allowed))
    if req.acks == 0:
        return CloseConnection("acks=0 produce to a topic not authorized")
    errors = error_response(0, v, with_list(req, "topic_data", refused), DENIED).responses
    return then(result, extend("responses", errors))


def _is_follower(req: Msg) -> bool:
    state = req.get("replica_state")
    replica = state.replica_id if state is not None and state.get("replica_id", -1) >= 0 else req.get("replica_id", -1)
    return replica is not None and replica >= 0


@check(1)
def fetch(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    if _is_follower(req):
        allowed, refused = (list[Msg](), req.topics) if not access.on_cluster(Op.CLUSTER_ACTION) else (req.topics, [])
    else:
        allowed, refused = split(access, Op.READ, req.topics, lambda t: topic_name(access, t.topic, t.get("topic_id")))
    if not refused:
        return call(req)
    errors = error_response(1, v, with_list(req, "topics", refused), DENIED).responses
    if not allowed and req.get("session_epoch", -1) in (0, -1):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=0, responses=errors)
    return then(call(with_list(req, "topics", allowed)), extend("responses", errors))


@check(2)
def list_offsets(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, Op.DESCRIBE, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = error_response(2, header.api_version, with_list(req, "topics", refused), DENIED).topics
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


def _metadata_error(name: str | None, topic_id: Any = ZERO_UUID) -> Msg:
    return Msg(error_code=DENIED, name=name, topic_id=topic_id, is_internal=False, partitions=[],
               topic_authorized_operations=NOT_REQUESTED)


@check(3)
def metadata(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    requested = req.topics
    all_topics = requested is None or (v == 0 and not requested)
    refused: list[Msg] = []
    if all_topics:
        result = call(req)
    elif v < 12 and any(e.name is None or e.topic_id != ZERO_UUID for e in requested):
        return call(req)  # the handler's INVALID_REQUEST answer
    elif any(e.topic_id != ZERO_UUID for e in requested):
        ids = [e for e in requested if e.topic_id != ZERO_UUID]
        allowed, denied = split(access, Op.DESCRIBE, ids, lambda e: topic_name(access, None, e.topic_id))
        refused = [_metadata_error(None, e.topic_id) for e in dict((e.topic_id, e) for e in denied).values()]
        result = call(with_list(req, "topics", allowed))
    else:
        allowed, denied = split(access, Op.DESCRIBE, requested, lambda e: e.name)
        refused = [_metadata_error(name) for name in dict.fromkeys(e.name for e in denied)]
        creating = (v < 4 or bool(req.allow_auto_topic_creation)) and \
            bool(access.cluster.config.get("auto.create.topics.enable"))
        if creating and not access.on_cluster(Op.CREATE):
            missing = [e for e in allowed if access.cluster.topic(e.name) is None]
            no_create = {e.name for e in missing if not access.may(Op.CREATE, ResourceType.TOPIC, e.name)}
            allowed = [e for e in allowed if e.name not in no_create]
            refused = [_metadata_error(name) for name in dict.fromkeys(e.name for e in missing
                                                                       if e.name in no_create)] + refused
        result = call(with_list(req, "topics", allowed))

    def edit(response: Msg) -> None:
        topics = response.topics
        if all_topics:
            topics = [t for t in topics if access.may(Op.DESCRIBE, ResourceType.TOPIC, t.name)]
        if req.get("include_topic_authorized_operations") and v >= 8:
            for t in topics:
                t.topic_authorized_operations = access.operations(ResourceType.TOPIC, t.name or "")
        response.topics = topics + refused
        if req.get("include_cluster_authorized_operations") and 8 <= v <= 10:
            response.cluster_authorized_operations = access.operations(ResourceType.CLUSTER, "kafka-cluster") \
                if access.on_cluster(Op.DESCRIBE) else 0

    return then(result, edit)


@check(75)
def describe_topic_partitions(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, denied = split(access, Op.DESCRIBE, req.topics, lambda e: e.name)
    refused = [Msg(error_code=DENIED, name=e.name, topic_id=ZERO_UUID, is_internal=False, partitions=[],
                   topic_authorized_operations=NOT_REQUESTED) for e in denied]
    all_topics = not req.topics

    def edit(response: Msg) -> None:
        topics = response.topics
        if all_topics:
            topics = [t for t in topics if access.may(Op.DESCRIBE, ResourceType.TOPIC, t.name)]
        for t in topics:
            t.topic_authorized_operations = access.operations(ResourceType.TOPIC, t.name or "")
        response.topics = list(topics) + refused

    return then(call(with_list(req, "topics", allowed)), edit)


@check(23)
def offset_for_leader_epoch(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.CLUSTER_ACTION):
        return call(req)
    allowed, refused = split(access, Op.DESCRIBE, req.topics, lambda t: t.topic)
    if not refused:
        return call(req)
    errors = [Msg(topic=t.topic, partitions=[Msg(error_code=DENIED, partition=p.partition, leader_epoch=-1,
                                                 end_offset=-1) for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@check(19)
def create_topics(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.CREATE):
        allowed, refused = req.topics, list[Msg]()
    else:
        allowed, refused = split(access, Op.CREATE, req.topics, lambda t: t.name)
    errors = [Msg(name=t.name, topic_id=ZERO_UUID, error_code=DENIED, error_message="Authorization failed.",
                  topic_config_error_code=DENIED, num_partitions=-1, replication_factor=-1, configs=[])
              for t in refused]

    def edit(response: Msg) -> None:
        for t in response.topics:
            if not access.may(Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name):
                t.topic_config_error_code = DENIED
                t.configs = []
        response.topics = list(response.topics) + errors

    return then(call(with_list(req, "topics", allowed)) if allowed or not refused else
                Msg(throttle_time_ms=0, topics=[]), edit)


@check(20)
def delete_topics(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    errors: list[Msg] = []
    if v >= 6:
        allowed = []
        for t in req.topics:
            by_id = t.topic_id != ZERO_UUID
            name = topic_name(access, t.name, t.topic_id)
            if name is None:
                allowed.append(t)
            elif by_id and not access.may(Op.DESCRIBE, ResourceType.TOPIC, name):
                errors.append(Msg(name=None, topic_id=t.topic_id, error_code=DENIED, error_message=None))
            elif not access.may(Op.DELETE, ResourceType.TOPIC, name):
                errors.append(Msg(name=name, topic_id=t.topic_id, error_code=DENIED, error_message=None))
            else:
                allowed.append(t)
        request = with_list(req, "topics", allowed)
    else:
        names = [n for n in req.topic_names if access.may(Op.DELETE, ResourceType.TOPIC, n)]
        errors = [Msg(name=n, topic_id=ZERO_UUID, error_code=DENIED, error_message=None)
                  for n in req.topic_names if n not in names]
        request = with_list(req, "topic_names", names)
    if errors and not (request.get("topics") or request.get("topic_names")):
        return Msg(throttle_time_ms=0, responses=errors)
    return then(call(request), extend("responses", errors))


@check(21)
def delete_records(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, Op.DELETE, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, low_watermark=-1,
                                               error_code=DENIED) for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@check(37)
def create_partitions(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, Op.ALTER, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, error_code=DENIED, error_message="The topic authorization is failed.")
              for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("results", errors))


@check(61)
def describe_producers(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, Op.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    message = "Topic authorization failed."
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p, error_code=DENIED, error_message=message,
                                               active_producers=[]) for p in t.partition_indexes])
              for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))
