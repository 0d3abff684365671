"""Metadata (key 3), v0-v13.

- Brokers: every node, with the advertised host/port of the listener this client connected to
  (a client on the "internal" listener learns internal addresses; one on "external", external ones).
- Topics: all of them when the request's topic list is null (v1+) or empty (v0); else the ones named
  (by name, or by topic id from v10). A topic that does not exist is created when auto creation is
  enabled on the broker and allowed by the request (always allowed before v4); otherwise
  UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for an id). Invalid names: INVALID_TOPIC_EXCEPTION.
  Unlike Kafka, an auto-created topic is answered at once with its leaders (Kafka answers
  LEADER_NOT_AVAILABLE first and the client asks again): creation here is immediate.
- Partitions: leader, leader epoch (v7+), replicas, ISR, offline replicas (v5+).
- Authorized operations (v8+): every operation when asked for, INT32_MIN when not.
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.headers import RequestHeader
from protocol.messages import Msg
from protocol.primitives import ZERO_UUID

from mockbroker.connection import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.state.cluster import Topic, validate_topic_name

API_KEY = 3
NOT_REQUESTED = -2147483648
# AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
# DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def brokers_for(ctx: RequestContext) -> list[Msg]:
    out = []
    for node_id, node in sorted(ctx.cluster.nodes.items()):
        listener = next(
            (lst for lst in ctx.cluster.listeners if lst.node_id == node_id and lst.name == ctx.listener.name),
            None,
        )
        if listener is None:
            continue
        out.append(Msg(node_id=node_id, host=listener.public_host, port=listener.public_port, rack=node.rack))
    return out


def topic_metadata(topic: Topic, version: int, include_ops: bool) -> Msg:
    return Msg(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.internal,
        partitions=[
            Msg(
                error_code=ErrorCode.NONE,
                partition_index=p.index,
                leader_id=p.leader_id,
                leader_epoch=p.leader_epoch,
                replica_nodes=list(p.replicas),
                isr_nodes=p.isr,
                offline_replicas=[],
            )
            for p in topic.partitions
        ],
        topic_authorized_operations=TOPIC_OPERATIONS if include_ops else NOT_REQUESTED,
    )


def _error_topic(name: str | None, code: ErrorCode, topic_id=ZERO_UUID) -> Msg:  # type: ignore[no-untyped-def]
    return Msg(error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=[],
               topic_authorized_operations=NOT_REQUESTED)


@handler(API_KEY, 0, 13)
def handle_metadata(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    cluster = ctx.cluster
    include_ops = bool(req.include_topic_authorized_operations)
    topics_out: list[Msg] = []
    requested = req.topics
    if requested is None or (v == 0 and not requested):
        topics_out = [topic_metadata(t, v, include_ops) for _, t in sorted(cluster.topics.items())]
    else:
        allow_create = v < 4 or bool(req.allow_auto_topic_creation)
        for entry in requested:
            name = entry.name
            if not name and entry.topic_id != ZERO_UUID:
                topic = cluster.topics_by_id.get(entry.topic_id)
                if topic is None:
                    topics_out.append(_error_topic(None, ErrorCode.UNKNOWN_TOPIC_ID, entry.topic_id))
                else:
                    topics_out.append(topic_metadata(topic, v, include_ops))
                continue
            topic = cluster.topic(name)
            if topic is None:
                try:
                    validate_topic_name(name or "")
                    if allow_create:
                        topic = cluster.maybe_auto_create(name)
                except KafkaError as exc:
                    topics_out.append(_error_topic(name, exc.code))
                    continue
            if topic is None:
                topics_out.append(_error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                topics_out.append(topic_metadata(topic, v, include_ops))
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
