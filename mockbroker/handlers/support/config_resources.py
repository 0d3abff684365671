"""Config resources as AlterConfigs and IncrementalAlterConfigs alter them, and the authorization
check of the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs), as Kafka's
ConfigAdminManager and AuthHelper do.

Authorization (`authorize_resources`): DESCRIBE_CONFIGS (describe) or ALTER_CONFIGS (alter) per resource:
a topic on the topic (TOPIC_AUTHORIZATION_FAILED), a group on the group (GROUP_AUTHORIZATION_FAILED), a
broker, broker logger or client-metrics resource on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, extend, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES, CLIENT_METRICS, GROUP, TOPIC
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import CLUSTER_NAME


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


_CONFIG_RESOURCES = {TOPIC: (ResourceType.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                     GROUP: (ResourceType.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)}


def _config_denied(access: Access, op: AclOperation, resource: Msg) -> ErrorCode | None:
    rtype, code = _CONFIG_RESOURCES.get(resource.resource_type,
                                        (ResourceType.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED))
    name = CLUSTER_NAME if rtype is ResourceType.CLUSTER else resource.resource_name
    return None if access.may(op, rtype, name) else code


def authorize_resources(access: Access, req: Msg, call: Call, op: AclOperation, out_field: str,
                        with_configs: bool) -> HandlerResult:
    """`op` on each resource of the request; the refused ones answered in `out_field` (with empty configs
    when with_configs: DescribeConfigs), the others handed to the handler."""
    allowed, errors = [], []
    for resource in req.resources:
        code = _config_denied(access, op, resource)
        if code is None:
            allowed.append(resource)
            continue
        error = Msg(error_code=code, error_message=AUTHORIZATION_MESSAGES[code], resource_type=resource.resource_type,
                    resource_name=resource.resource_name)
        if with_configs:
            error.configs = []
        errors.append(error)
    if not errors:
        return call(req)
    if not allowed:
        return Msg(throttle_time_ms=0, **{out_field: errors})
    return then(call(with_list(req, "resources", allowed)), extend(out_field, errors))
