"""DescribeConfigs (key 32), v0-v4.

As Kafka's ConfigHelper answers it:
- TOPIC (2): every topic config this broker models, sorted by name, with its value, config_source
  (TOPIC_CONFIG for the topic's own setting, else where the broker setting it falls back to comes from:
  DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, or DEFAULT_CONFIG),
  read_only false, is_sensitive false. include_synonyms (v1+) lists the topic setting, then the broker
  synonym in each layer where it is set, Kafka's default last (none for log.retention.ms, log.roll.ms,
  log.roll.jitter.ms, log.flush.interval.ms, whose Kafka default is null). An invalid name:
  INVALID_TOPIC_EXCEPTION with Kafka's message; an unknown topic: UNKNOWN_TOPIC_OR_PARTITION (no message).
- BROKER (4): resource name = this node's id: every broker config modelled, read_only unless Kafka can
  change it dynamically; name "": the cluster-wide dynamic defaults only (empty until AlterConfigs sets
  some). Another id: INVALID_REQUEST "Unexpected broker id, expected N or empty string, but received M";
  not a number: INVALID_REQUEST "Broker id must be an integer, but it is: x".
- BROKER_LOGGER (8): no loggers to show: an empty list for this node's id; Kafka's INVALID_REQUEST for
  an empty name or another id. CLIENT_METRICS (16): the subscription's interval.ms, match and metrics
  (CLIENT_METRICS_CONFIG where set, else DEFAULT_CONFIG with Kafka's default; a name never set shows the
  defaults, as in Kafka). GROUP (32): every group config of Kafka's GroupConfig (GROUP_CONFIG where the
  group sets it, else DEFAULT_CONFIG with the broker's group.share.* value or Kafka's default;
  state/share/group_configs.py). Both: Kafka's INVALID_REQUEST for an empty name.
- Any other resource type fails the whole request, as in Kafka: INVALID_REQUEST on every resource.
- configuration_keys: null or empty = all; else only the keys named (unknown keys are left out).
- v0: is_default = (source is DEFAULT_CONFIG), the field's meaning (Kafka's broker leaves it false).
- v3+: config_type; include_documentation is honoured with a null documentation.
- Authorization (with an authorizer, `authorize`): DESCRIBE_CONFIGS per resource: a topic on the topic
  (TOPIC_AUTHORIZATION_FAILED), a group on the group (GROUP_AUTHORIZATION_FAILED), any other resource on
  the cluster (CLUSTER_AUTHORIZATION_FAILED; handlers/support/config_resources.py).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.config_resources import authorize_resources
from mockbroker.handlers.support.constants import (
    BROKER,
    BROKER_LOGGER,
    CLIENT_METRICS,
    KNOWN_RESOURCE_TYPES,
    TOPIC,
)
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.client_metrics import INTERVAL_MS
from mockbroker.state.cluster.cluster import validate_topic_name
from mockbroker.state.configs import (
    ConfigEntry,
    ConfigSource,
    ConfigType,
    describe_broker_entries,
    describe_topic_entries,
)

API_KEY = ApiKey.DESCRIBE_CONFIGS

INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library "
                           "or the message was sent to an incompatible broker. See the broker logs for more details.")


def parse_broker_id(name: str) -> int:
    try:
        return int(name)
    except ValueError:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}") from None


def _entry(e: ConfigEntry, include_synonyms: bool) -> Msg:
    return Msg(
        name=e.name,
        value=e.value,
        read_only=e.read_only,
        is_default=e.source == ConfigSource.DEFAULT_CONFIG,
        config_source=int(e.source),
        is_sensitive=e.is_sensitive,
        synonyms=[Msg(name=n, value=val, source=int(src)) for n, val, src in e.synonyms] if include_synonyms else [],
        config_type=int(e.type),
        documentation=None,
    )


def _entries(ctx: RequestContext, resource_type: int, name: str) -> list[ConfigEntry]:
    """The configs of one resource, or KafkaError with Kafka's code and message."""
    cluster = ctx.cluster
    if resource_type == TOPIC:
        validate_topic_name(name)
        topic = cluster.topic(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return describe_topic_entries(topic.config)
    if resource_type == BROKER:
        if not name:
            return describe_broker_entries(cluster.config, per_broker=False)
        if parse_broker_id(name) != ctx.node_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.node_id} or empty "
                             f"string, but received {name}")
        return describe_broker_entries(cluster.config, per_broker=True)
    if resource_type == BROKER_LOGGER:
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        if parse_broker_id(name) != ctx.node_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unexpected broker id, expected {ctx.node_id} but received {name}")
        return []
    if resource_type == CLIENT_METRICS:
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Client metrics subscription name must not be empty")
        return [ConfigEntry(key, value, ConfigSource.CLIENT_METRICS_CONFIG if is_set else ConfigSource.DEFAULT_CONFIG,
                            ConfigType.INT if key == INTERVAL_MS else ConfigType.LIST)
                for key, value, is_set in cluster.client_metrics.configs_of(name)]
    return ctx.node.share_coordinator.group_configs.describe(name)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return authorize_resources(access, req, call, AclOperation.DESCRIBE_CONFIGS, "results", True)


@handler(API_KEY, 0, 4, authorize=authorize)
def handle_describe_configs(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    if any(r.resource_type not in KNOWN_RESOURCE_TYPES for r in req.resources):
        return Msg(throttle_time_ms=0, results=[
            Msg(error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_MESSAGE,
                resource_type=r.resource_type, resource_name=r.resource_name, configs=[])
            for r in req.resources])
    include_synonyms = v >= 1 and bool(req.include_synonyms)
    results = []
    for r in req.resources:
        try:
            entries = _entries(ctx, r.resource_type, r.resource_name)
        except KafkaError as exc:
            results.append(Msg(error_code=exc.code, error_message=exc.message, resource_type=r.resource_type,
                               resource_name=r.resource_name, configs=[]))
            continue
        keys = r.configuration_keys
        if keys:
            wanted = set(keys)
            entries = [e for e in entries if e.name in wanted]
        results.append(Msg(error_code=ErrorCode.NONE, error_message=None, resource_type=r.resource_type,
                           resource_name=r.resource_name,
                           configs=[_entry(e, include_synonyms) for e in entries]))
    return Msg(throttle_time_ms=0, results=results)
