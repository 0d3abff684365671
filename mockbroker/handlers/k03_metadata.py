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
  (state/internal_topics.py: their partition counts and configs) and listed with is_internal=true.
  Unlike Kafka, an auto-created topic is answered at once with its leaders (Kafka answers
  LEADER_NOT_AVAILABLE first and the client asks again): creation here is immediate.
- Partitions: leader, leader epoch (v7+), replicas, ISR, offline replicas (v5+: replicas on stopped
  nodes). A partition with no leader (no live ISR member) answers LEADER_NOT_AVAILABLE with leader -1.
- Authorized operations (v8+): every operation when asked for, INT32_MIN when not.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import INTERNAL_TOPICS, Cluster, Partition, Topic, validate_topic_name
from mockbroker.state.cluster.internal_topics import ensure_topic
from mockbroker.state.cluster.leadership import offline_replicas

API_KEY = 3
NOT_REQUESTED = -2147483648
# AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def brokers_for(ctx: RequestContext, include_stopped: bool = False) -> list[Msg]:
    """The running nodes (and the stopped ones when asked) with their address on the client's listener."""
    out = []
    for node_id, node in sorted(ctx.cluster.nodes.items()):
        if not node.alive and not include_stopped:
            continue
        listener = next(
            (lst for lst in ctx.cluster.listeners if lst.node_id == node_id and lst.name == ctx.listener.name),
            None,
        )
        if listener is None:
            continue
        out.append(Msg(node_id=node_id, host=listener.public_host, port=listener.public_port, rack=node.rack))
    return out


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


@handler(API_KEY, 0, 13)
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
