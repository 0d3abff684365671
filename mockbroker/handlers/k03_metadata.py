"""Metadata (key 3), v0-v13.

- Brokers: every running node (a stopped one is left out, as Kafka leaves out fenced brokers), with the advertised host/port of the listener this client connected to
  (a client on the "internal" listener learns internal addresses; one on "external", external ones).
- Topics: all of them when the request's topic list is null (v1+) or empty (v0); else the ones named
  (by name, or by topic id from v12: v10-v11 requests naming a topic by id get INVALID_REQUEST on every
  topic, as Kafka answers its InvalidRequestException; once a request names ids, its names are ignored).
  Each topic is answered once however often it is named. A topic that does not exist is created when
  auto creation is enabled on the broker and allowed by the request (always allowed before v4); otherwise
  UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for an id). Invalid names: INVALID_TOPIC_EXCEPTION.
  __consumer_offsets and __transaction_state are created as their coordinators create them
  (state/cluster/internal_topics.py: their partition counts and configs) and listed with is_internal=true.
  Unlike Kafka, an auto-created topic is answered at once with its leaders (Kafka answers
  LEADER_NOT_AVAILABLE first and the client asks again): creation here is immediate.
- Partitions: leader, leader epoch (v7+), replicas, ISR, offline replicas (v5+: replicas on stopped
  nodes). A partition with no leader (no live ISR member) answers LEADER_NOT_AVAILABLE with leader -1.
- Authorized operations (v8+): every operation when asked for, INT32_MIN when not.
- Authorization (with an authorizer, `authorize`): DESCRIBE on each topic; listing all topics leaves out
  the ones not described, naming one answers TOPIC_AUTHORIZATION_FAILED (zero id, nothing else of it);
  auto-creating a topic needs CREATE on the cluster or the topic; the topic and cluster authorized
  operations (v8+) are the principal's, when asked. The answer names only topics the request named: a
  v0 request whose every topic is refused gets those refusals, never every topic.
- Error answer (fault injection, `error_response`): the code at the top and on every topic named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    split,
    then,
    topic_name,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.brokers import brokers_for
from mockbroker.handlers.support.constants import CLUSTER_OPERATIONS, NOT_REQUESTED, TOPIC_OPERATIONS
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import INTERNAL_TOPICS, Cluster, Partition, Topic, validate_topic_name
from mockbroker.state.cluster.internal_topics import ensure_topic
from mockbroker.state.cluster.leadership import offline_replicas

API_KEY = ApiKey.METADATA


def partition_metadata(cluster: Cluster, p: Partition) -> Msg:
    """One partition as KRaftMetadataCache answers it: no leader, LEADER_NOT_AVAILABLE and leader -1."""
    offline = offline_replicas(cluster, p)
    return Msg(
        error_code=ErrorCode.NONE if p.leader_id >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
        partition_index=p.index,
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        offline_replicas=offline,
    )


def topic_metadata(cluster: Cluster, topic: Topic, version: int, include_ops: bool) -> Msg:
    return Msg(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.internal,
        partitions=[partition_metadata(cluster, p) for p in topic.partitions],
        topic_authorized_operations=TOPIC_OPERATIONS if include_ops else NOT_REQUESTED,
    )


def _error_topic(name: str | None, code: ErrorCode, topic_id=ZERO_UUID) -> Msg:  # type: ignore[no-untyped-def]
    return Msg(error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=[],
               topic_authorized_operations=NOT_REQUESTED)


def _invalid_request_response(requested: list[Msg]) -> Msg:
    """Kafka's answer to a v10/v11 request naming a topic by id or by a null name: its InvalidRequestException
    turned into a response (MetadataRequest.getErrorResponse), INVALID_REQUEST on every topic, no brokers."""
    return Msg(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, error_code=ErrorCode.NONE,
               cluster_authorized_operations=NOT_REQUESTED,
               topics=[_error_topic(e.name or "", ErrorCode.INVALID_REQUEST, e.topic_id) for e in requested])


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code at the top and on every topic named (MetadataRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, error_code=code,
               topics=[Msg(error_code=code, name=t.name, topic_id=t.topic_id, partitions=[])
                       for t in (req.topics or [])])


def _refused(name: str | None, topic_id: Any = ZERO_UUID) -> Msg:
    return Msg(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=topic_id, is_internal=False,
               partitions=[], topic_authorized_operations=NOT_REQUESTED)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    requested = req.topics
    all_topics = requested is None or (v == 0 and not requested)
    refused: list[Msg] = []
    describe = AclOperation.DESCRIBE
    # The topics the handler was asked about (None: every topic). The answer keeps only those: a v0
    # request whose every named topic is refused reaches the handler with an empty list, which at v0
    # means every topic (issue #33).
    asked: Callable[[Msg], bool] | None = None
    if all_topics:
        result = call(req)
    elif v < 12 and any(e.name is None or e.topic_id != ZERO_UUID for e in requested):
        return call(req)  # the handler's INVALID_REQUEST answer
    elif any(e.topic_id != ZERO_UUID for e in requested):
        ids = [e for e in requested if e.topic_id != ZERO_UUID]
        allowed, denied = split(access, describe, ids, lambda e: topic_name(access, None, e.topic_id))
        refused = [_refused(None, e.topic_id) for e in dict((e.topic_id, e) for e in denied).values()]
        ids_asked = {e.topic_id for e in allowed}
        asked = lambda t: t.topic_id in ids_asked  # noqa: E731
        result = call(with_list(req, "topics", allowed))
    else:
        allowed, denied = split(access, describe, requested, lambda e: e.name)
        refused = [_refused(name) for name in dict.fromkeys(e.name for e in denied)]
        creating = (v < 4 or bool(req.allow_auto_topic_creation)) and \
            bool(access.cluster.config.get("auto.create.topics.enable"))
        if creating and not access.on_cluster(AclOperation.CREATE):
            missing = [e for e in allowed if access.cluster.topic(e.name) is None]
            no_create = {e.name for e in missing if not access.may(AclOperation.CREATE, ResourceType.TOPIC, e.name)}
            allowed = [e for e in allowed if e.name not in no_create]
            refused = [_refused(name) for name in dict.fromkeys(e.name for e in missing
                                                                if e.name in no_create)] + refused
        names_asked = {e.name for e in allowed}
        asked = lambda t: t.name in names_asked  # noqa: E731
        result = call(with_list(req, "topics", allowed))

    def edit(response: Msg) -> None:
        topics = response.topics
        if all_topics:
            topics = [t for t in topics if access.may(describe, ResourceType.TOPIC, t.name)]
        elif asked is not None:
            topics = [t for t in topics if asked(t)]
        if req.get("include_topic_authorized_operations") and v >= 8:
            for t in topics:
                t.topic_authorized_operations = access.operations(ResourceType.TOPIC, t.name or "")
        response.topics = topics + refused
        if req.get("include_cluster_authorized_operations") and 8 <= v <= 10:
            response.cluster_authorized_operations = access.operations(ResourceType.CLUSTER, "kafka-cluster") \
                if access.on_cluster(describe) else 0

    return then(result, edit)


@handler(API_KEY, 0, 13, authorize=authorize, error_response=error_response)
def handle_metadata(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    cluster = ctx.cluster
    include_ops = bool(req.include_topic_authorized_operations)
    topics_out: list[Msg] = []
    requested = req.topics
    if requested is None or (v == 0 and not requested):
        topics_out = [topic_metadata(cluster, t, v, include_ops) for _, t in sorted(cluster.topics.items())]
    elif v < 12 and any(e.name is None or e.topic_id != ZERO_UUID for e in requested):
        return _invalid_request_response(requested)
    else:
        allow_create = v < 4 or bool(req.allow_auto_topic_creation)
        ids = [e.topic_id for e in requested if e.topic_id != ZERO_UUID]
        if ids:
            # As Kafka: once a request names topics by id, its names are ignored (and duplicates answered once).
            for topic_id in dict.fromkeys(ids):
                topic = cluster.topics_by_id.get(topic_id)
                if topic is None:
                    topics_out.append(_error_topic(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id))
                else:
                    topics_out.append(topic_metadata(cluster, topic, v, include_ops))
            requested = []
        for name in dict.fromkeys(e.name for e in requested):
            topic = cluster.topic(name)
            if topic is None:
                try:
                    validate_topic_name(name or "")
                    if name in INTERNAL_TOPICS and allow_create and cluster.config.get("auto.create.topics.enable"):
                        topic = ensure_topic(cluster, name)  # created as the coordinators create it
                    elif allow_create:
                        topic = cluster.maybe_auto_create(name)
                except KafkaError as exc:
                    topics_out.append(_error_topic(name, exc.code))
                    continue
            if topic is None:
                topics_out.append(_error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                topics_out.append(topic_metadata(cluster, topic, v, include_ops))
    return Msg(
        throttle_time_ms=0,
        brokers=brokers_for(ctx),
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        topics=topics_out,
        cluster_authorized_operations=CLUSTER_OPERATIONS if req.include_cluster_authorized_operations
        else NOT_REQUESTED,
        error_code=ErrorCode.NONE,
    )
