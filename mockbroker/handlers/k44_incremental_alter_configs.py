"""IncrementalAlterConfigs (key 44), v0-v1.

As Kafka answers it (the broker's ConfigAdminManager.preprocess, then the controller's
ConfigurationControlManager), one result per resource in request order. Each resource changes as a
whole or not at all:
- Operations: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3). APPEND/SUBTRACT only work on list
  configs (cleanup.policy) and start from Kafka's default when the topic has no setting (APPEND compact
  to an unset cleanup.policy gives "delete,compact"); on other configs: INVALID_CONFIG
  "Can't APPEND to key k because its type is not LIST.".
- INVALID_REQUEST for a resource given twice ("Each resource must appear at most once.", on both), a
  key given twice ("Error due to duplicate config keys"), a null value outside DELETE ("Null value not
  supported for : k"), an unknown operation ("Unknown operations type N").
- TOPIC (2): name "" is INVALID_REQUEST, an invalid name INVALID_TOPIC_EXCEPTION; the resulting configs
  are checked (INVALID_CONFIG: "Unknown topic config name: k", "Invalid value v for configuration k:
  ..."), then existence (UNKNOWN_TOPIC_OR_PARTITION "The topic 't' does not exist.").
- BROKER (4): name "" alters the cluster-wide dynamic defaults, this node's id the per-broker dynamic
  configs, with the same rules as AlterConfigs (k33_alter_configs): only configs Kafka can change at
  runtime, among those modelled; others are INVALID_REQUEST "Cannot update these configs dynamically:
  Set(k)". APPEND/SUBTRACT on a non-list broker config: INVALID_CONFIG as Kafka words it.
- BROKER_LOGGER (8): there are no loggers to change: the name must be this node's id (INVALID_REQUEST
  otherwise), SET needs one of Kafka's log levels (INVALID_CONFIG), DELETE of "root" and APPEND/SUBTRACT
  are INVALID_REQUEST; valid changes are accepted and have no effect.
- CLIENT_METRICS (16): a client telemetry subscription (KIP-714; state/client_metrics.py): metrics,
  interval.ms (100..3600000) and match, checked as Kafka's ClientMetricsConfigs (INVALID_REQUEST for an
  empty name, an unknown config or an interval out of range; INVALID_CONFIG for a bad match pattern);
  deleting every config removes the subscription. GROUP (32): the group configs of Kafka's GroupConfig
  (state/share/group_configs.py): INVALID_CONFIG for an unknown name, a value that does not parse or a
  share config outside the broker's group.share.* bounds; APPEND/SUBTRACT INVALID_CONFIG (no list configs);
  other types: INVALID_REQUEST "Unknown resource type N".
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
from mockbroker.handlers.support.constants import BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, TOPIC
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.configs import OP_APPEND, OP_DELETE, OP_SET, OP_SUBTRACT

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
LOG_LEVELS = ("DEBUG", "ERROR", "FATAL", "INFO", "TRACE", "WARN")


def _check_logger_ops(ctx: RequestContext, name: str, ops: list[tuple[str, int, str | None]]) -> None:
    try:
        node_id = int(name)
    except ValueError:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}") from None
    if node_id != ctx.node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected node id. Expected {ctx.node_id}, but received {name}")
    for logger, op, value in ops:
        if op == OP_SET:
            if value not in LOG_LEVELS:
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Cannot set the log level of {logger} to {value} as it is not a supported log "
                                 f"level. Valid log levels are {', '.join(LOG_LEVELS)}")
        elif op == OP_DELETE:
            if logger == "root":
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")
        elif op in (OP_APPEND, OP_SUBTRACT):
            verb = "APPEND" if op == OP_APPEND else "SUBTRACT"
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"{verb} operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")


def _alter(ctx: RequestContext, r: Msg, validate_only: bool) -> None:
    ops = [(c.name, c.config_operation, c.value) for c in r.configs]
    # The broker's preprocessing, for every resource type: duplicate keys, then null values.
    names = [n for n, _, _ in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [n for n, o, v in ops if o != OP_DELETE and v is None]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    if r.resource_type == TOPIC:
        ctx.cluster.alter_topic_config(r.resource_name, ops, validate_only=validate_only)
    elif r.resource_type == BROKER:
        per_broker = check_broker_resource(ctx, r.resource_name)
        ctx.cluster.config.alter_dynamic(ops, per_broker=per_broker, validate_only=validate_only)
    elif r.resource_type == BROKER_LOGGER:
        _check_logger_ops(ctx, r.resource_name, ops)
    elif r.resource_type == CLIENT_METRICS:
        ctx.cluster.client_metrics.alter(r.resource_name, ops, validate_only=validate_only)
    elif r.resource_type == GROUP:
        ctx.node.share_coordinator.group_configs.alter(r.resource_name, ops, validate_only=validate_only)
    else:
        raise unsupported_resource(r.resource_type)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return authorize_resources(access, req, call, AclOperation.ALTER_CONFIGS, "responses", False)


@handler(API_KEY, 0, 1, authorize=authorize)
def handle_incremental_alter_configs(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    return alter_resources(ctx, req, _alter)
