"""AlterConfigs (key 33), v0-v2: the legacy API, where the configs given replace all of a resource's.

As Kafka answers it (the broker's ConfigAdminManager.preprocess, then the controller), one result per
resource in request order, error_message with Kafka's wording:
- A resource given twice: INVALID_REQUEST "Each resource must appear at most once." on both; a config
  key twice: INVALID_REQUEST "Error due to duplicate config keys"; a null value: INVALID_REQUEST
  "Null value not supported for : k".
- TOPIC (2): the topic's overrides become exactly the configs given (the others are deleted). Name ""
  is INVALID_REQUEST, an invalid name INVALID_TOPIC_EXCEPTION, an unknown or bad config INVALID_CONFIG
  ("Unknown topic config name: k", "Invalid value v for configuration k: ..."), then an unknown topic
  UNKNOWN_TOPIC_OR_PARTITION "The topic 't' does not exist.".
- BROKER (4): resource name "" sets the cluster-wide dynamic defaults, this node's id its per-broker
  dynamic configs (another id or a non-number: INVALID_REQUEST as Kafka words it). Only the configs Kafka
  can change at runtime among those this broker models (the log.* fallbacks of topic configs,
  message.max.bytes, compression.type, min.insync.replicas, producer.id.expiration.ms, ...) are accepted;
  anything else (read-only configs like num.partitions, and names this broker does not model) is
  INVALID_REQUEST "Cannot update these configs dynamically: Set(k)", and a bad value INVALID_REQUEST too,
  as Kafka does for broker resources. The values land in BrokerConfig and topics without an override
  follow them at once.
- BROKER_LOGGER (8) and unknown types: INVALID_REQUEST "Unknown resource type N" (as Kafka);
  CLIENT_METRICS (16) and GROUP (32): INVALID_REQUEST, since this broker does not store those configs.
- validate_only: every check, nothing changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.k32_describe_configs import BROKER, CLIENT_METRICS, GROUP, TOPIC
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 33


def duplicate_resources(resources: list[Msg]) -> set[tuple[int, str]]:
    """(type, name) pairs that appear more than once."""
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    return {key for key, n in counts.items() if n > 1}


def check_broker_resource(ctx: RequestContext, name: str) -> bool:
    """Validate a BROKER resource name for an alter; True when it names this node (per-broker), False
    for "" (the cluster-wide default)."""
    if not name:
        return False
    try:
        node_id = int(name)
    except ValueError:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}") from None
    if node_id != ctx.node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {ctx.node_id}, but received {name}")
    return True


def unsupported_resource(resource_type: int) -> KafkaError:
    if resource_type in (CLIENT_METRICS, GROUP):
        kind = "CLIENT_METRICS" if resource_type == CLIENT_METRICS else "GROUP"
        return KafkaError(ErrorCode.INVALID_REQUEST, f"mockbroker does not store {kind} configs")
    return KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource_type}")


def _alter(ctx: RequestContext, r: Msg, validate_only: bool) -> None:
    names = [c.name for c in r.configs]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [c.name for c in r.configs if c.value is None]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    configs = {c.name: c.value for c in r.configs}
    if r.resource_type == TOPIC:
        ctx.cluster.replace_topic_config(r.resource_name, configs, validate_only=validate_only)
    elif r.resource_type == BROKER:
        per_broker = check_broker_resource(ctx, r.resource_name)
        ctx.cluster.config.replace_dynamic(configs, per_broker=per_broker, validate_only=validate_only)
    else:
        raise unsupported_resource(r.resource_type)


def alter_resources(ctx: RequestContext, req: Msg, alter: Callable[[RequestContext, Msg, bool], None]) -> Msg:
    """The response of AlterConfigs / IncrementalAlterConfigs: `alter` applied to each resource, its
    KafkaError answered for that resource; a resource named twice is INVALID_REQUEST for both."""
    duplicates = duplicate_resources(req.resources)
    responses = []
    for r in req.resources:
        code, message = ErrorCode.NONE, None
        if (r.resource_type, r.resource_name) in duplicates:
            code, message = ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."
        else:
            try:
                alter(ctx, r, bool(req.validate_only))
            except KafkaError as exc:
                code, message = exc.code, exc.message
        responses.append(Msg(error_code=code, error_message=message, resource_type=r.resource_type,
                             resource_name=r.resource_name))
    return Msg(throttle_time_ms=0, responses=responses)


@handler(API_KEY, 0, 2)
def handle_alter_configs(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    return alter_resources(ctx, req, _alter)
