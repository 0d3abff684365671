"""CreateAcls (key 30), v1-v3: add ACL bindings to the authorizer (mockbroker/security/acls.py).

As Kafka's AclApis and AclControlManager answer it, one result per creation, in order:
- no authorizer on the broker: SECURITY_DISABLED on every creation ("No Authorizer is configured.").
- a creation with an UNKNOWN resource type, pattern type, operation or permission (a code Kafka does
  not know, or 0): the request does not parse in Kafka, so the connection is closed.
- INVALID_REQUEST with Kafka's message for a resource type ANY, a pattern type MATCH or ANY, an
  operation ANY, a permission ANY, an empty name, a CLUSTER resource not called "kafka-cluster", or a
  principal that is not TYPE:NAME.
- otherwise NONE; a binding that exists already is kept once.
- Authorization (with an authorizer, `authorize`): ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import CloseConnection, HandlerResult, handler
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    invalid_binding_reason,
    operation,
    pattern_type,
    permission,
    resource_type,
)

API_KEY = ApiKey.CREATE_ACLS


def binding_of(creation: Msg) -> AclBinding:
    return AclBinding(resource_type(creation.resource_type), creation.resource_name,
                      pattern_type(creation.resource_pattern_type), creation.principal, creation.host,
                      operation(creation.operation), permission(creation.permission_type))


def _unknown(b: AclBinding) -> bool:
    return b.resource_type is ResourceType.UNKNOWN or b.pattern_type is PatternType.UNKNOWN or \
        b.operation is AclOperation.UNKNOWN or b.permission is AclPermissionType.UNKNOWN


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER):
        return call(req)
    return Msg(throttle_time_ms=0, results=[Msg(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]) for _ in req.creations])


@handler(API_KEY, 1, 3, authorize=authorize)
def handle_create_acls(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | CloseConnection:
    authorizer = ctx.node.security.authorizer
    if authorizer is None:
        return Msg(throttle_time_ms=0, results=[
            Msg(error_code=ErrorCode.SECURITY_DISABLED, error_message="No Authorizer is configured.")
            for _ in req.creations])
    bindings = [binding_of(c) for c in req.creations]
    if any(_unknown(b) for b in bindings):
        return CloseConnection("CreateAcls: the creations contain UNKNOWN elements")
    results = []
    for binding in bindings:
        reason = invalid_binding_reason(binding)
        if reason is not None:
            results.append(Msg(error_code=ErrorCode.INVALID_REQUEST, error_message=reason))
            continue
        authorizer.acls.add(binding)
        results.append(Msg(error_code=ErrorCode.NONE, error_message=None))
    return Msg(throttle_time_ms=0, results=results)
