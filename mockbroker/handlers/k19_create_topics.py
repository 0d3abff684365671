"""CreateTopics (key 19), v0-v7.

As Kafka's controller answers it (ControllerApis.createTopics + ReplicationControlManager.createTopics):
- Each topic is checked in Kafka's order, with its messages (error_message from v1): the name
  (INVALID_TOPIC_EXCEPTION, also for a name colliding with an existing one over '.'/'_'), existence
  (TOPIC_ALREADY_EXISTS), the configs (INVALID_CONFIG: null value, unknown name, bad value), then either
  the manual assignments (INVALID_REQUEST unless num_partitions and replication_factor are -1;
  INVALID_REPLICA_ASSIGNMENT for an empty list, an unknown node, a node twice, unequal replica counts,
  indexes that are not 0..n-1) or num_partitions (INVALID_PARTITIONS if 0 or below -1) and
  replication_factor (INVALID_REPLICATION_FACTOR if 0, below -1, or above the node count); -1 takes
  the broker's num.partitions / default.replication.factor.
- A name given twice in one request: INVALID_REQUEST "Duplicate topic name." (one result for it, after
  the others, as Kafka lists them); __cluster_metadata: INVALID_REQUEST.
- More than 10,000 partitions over the whole request (num_partitions, -1 counting num.partitions, or
  the number of manual assignments; duplicates left out): every topic answers POLICY_VIOLATION
  "Excessively large number of partitions per request." and nothing is created, checked first.
- validate_only (v1+): every check, nothing created; the answer is the one a creation would get.
- v5+: a success carries num_partitions, replication_factor and every topic config (name, value,
  read_only false, config_source, is_sensitive false, sorted by name), as Kafka returns them; v7 adds
  the topic id (with validate_only Kafka returns a fresh random id that names nothing; so do we).
  Errors carry -1, -1 and no configs.
- Topics of one request are created one after the other, results in request order; timeout_ms is
  ignored (creation is immediate).
- Authorization (with an authorizer, `authorize`): CREATE on the cluster or the topic
  (TOPIC_AUTHORIZATION_FAILED); DESCRIBE_CONFIGS on the topic for its configs in the answer (else
  topic_config_error_code TOPIC_AUTHORIZATION_FAILED, no configs).
- Error answer (fault injection): the top-level code (the schema has none: refused when added).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.configs import TopicConfig, describe_topic_entries
from mockbroker.state.seeding import random_uuid

API_KEY = ApiKey.CREATE_TOPICS
METADATA_TOPIC = "__cluster_metadata"


def _error(name: str, code: ErrorCode, message: str | None) -> Msg:
    return Msg(name=name, topic_id=ZERO_UUID, error_code=code, error_message=message, topic_config_error_code=0,
               num_partitions=-1, replication_factor=-1, configs=[])


def _configs(config: TopicConfig) -> list[Msg]:
    return [Msg(name=e.name, value=e.value, read_only=e.read_only, config_source=int(e.source),
                is_sensitive=e.is_sensitive)
            for e in describe_topic_entries(config)]


def create_one(cluster: Cluster, t: Msg, validate_only: bool) -> Msg:
    """Create (or, validate_only, check) one CreatableTopic; its CreatableTopicResult."""
    configs: dict[str, Any] = {c.name: c.value for c in t.configs}
    assignments = [(a.partition_index, list(a.broker_ids)) for a in t.assignments]
    try:
        topic = cluster.create_topic(t.name, t.num_partitions, t.replication_factor, configs,
                                     validate_only=validate_only, assignments=assignments or None)
    except KafkaError as exc:
        return _error(t.name, exc.code, exc.message)
    if topic is not None:
        return Msg(name=topic.name, topic_id=topic.topic_id, error_code=ErrorCode.NONE, error_message=None,
                   topic_config_error_code=0, num_partitions=len(topic.partitions),
                   replication_factor=len(topic.partitions[0].replicas), configs=_configs(topic.config))
    # validate_only: what the creation would have made.
    if assignments:
        partitions, rf = len(assignments), len(assignments[0][1])
    else:
        partitions = t.num_partitions if t.num_partitions != -1 else int(cluster.config.get("num.partitions"))
        rf = (t.replication_factor if t.replication_factor != -1
              else int(cluster.config.get("default.replication.factor")))
    config = TopicConfig(cluster.config, TopicConfig.validate(configs))
    return Msg(name=t.name, topic_id=random_uuid(cluster.random), error_code=ErrorCode.NONE, error_message=None,
               topic_config_error_code=0, num_partitions=partitions, replication_factor=rf,
               configs=_configs(config))


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    denied = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if access.on_cluster(AclOperation.CREATE):
        allowed, refused = req.topics, list[Msg]()
    else:
        allowed, refused = split(access, AclOperation.CREATE, req.topics, lambda t: t.name)
    errors = [Msg(name=t.name, topic_id=ZERO_UUID, error_code=denied, error_message="Authorization failed.",
                  topic_config_error_code=denied, num_partitions=-1, replication_factor=-1, configs=[])
              for t in refused]

    def edit(response: Msg) -> None:
        for t in response.topics:
            if not access.may(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name):
                t.topic_config_error_code = denied
                t.configs = []
        response.topics = list(response.topics) + errors

    return then(call(with_list(req, "topics", allowed)) if allowed or not refused else
                Msg(throttle_time_ms=0, topics=[]), edit)


@handler(API_KEY, 0, 7, authorize=authorize)
def handle_create_topics(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    counts = Counter(t.name for t in req.topics)
    validate_only = bool(req.validate_only)
    results: list[Msg] = []
    try:
        cluster.check_partitions_per_request(sum(
            cluster.new_partition_count(t.num_partitions, len(t.assignments))
            for t in req.topics if counts[t.name] == 1 and t.name != METADATA_TOPIC))
    except KafkaError as exc:
        return Msg(throttle_time_ms=0, topics=[_error(t.name, exc.code, exc.message) for t in req.topics])
    for t in req.topics:
        if counts[t.name] > 1 or t.name == METADATA_TOPIC:
            continue
        results.append(create_one(cluster, t, validate_only))
    for name in dict.fromkeys(t.name for t in req.topics):
        if counts[name] > 1:
            results.append(_error(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
        elif name == METADATA_TOPIC:
            results.append(_error(name, ErrorCode.INVALID_REQUEST,
                                  f"Creation of internal topic {METADATA_TOPIC} is prohibited."))
    return Msg(throttle_time_ms=0, topics=results)
