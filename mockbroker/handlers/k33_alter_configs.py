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
- Authorization (with an authorizer, `authorize`): ALTER_CONFIGS per resource: a topic on the topic
  (TOPIC_AUTHORIZATION_FAILED), a group on the group (GROUP_AUTHORIZATION_FAILED), any other resource on
  the cluster (CLUSTER_AUTHORIZATION_FAILED; handlers/support/config_resources.py).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.config_resources import (
    alter_resources,
    authorize_resources,
    check_broker_resource,
    unsupported_resource,
)
from mockbroker.handlers.support.constants import BROKER, TOPIC
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.ALTER_CONFIGS


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


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return authorize_resources(access, req, call, AclOperation.ALTER_CONFIGS, "responses", False)


@handler(API_KEY, 0, 2, authorize=authorize)
def handle_alter_configs(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    return alter_resources(ctx, req, _alter)
