"""DescribeAcls (key 29), v1-v3: the ACL bindings a filter matches (mockbroker/security/acls.py).

As Kafka's AclApis answers it:
- no authorizer on the broker: SECURITY_DISABLED, "No Authorizer is configured on the broker".
- a filter with an UNKNOWN resource type, pattern type, operation or permission (a code Kafka does not
  know, or 0): the request does not parse in Kafka (DescribeAclsRequest's validation), so the
  connection is closed.
- the matching bindings grouped by resource pattern (type, name, pattern type), in creation order.
- DESCRIBE on the cluster is needed (CLUSTER_AUTHORIZATION_FAILED: mockbroker/authorization).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import CloseConnection, handler
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import AclBinding, AclFilter, operation, pattern_type, permission, resource_type

API_KEY = 29


def filter_of(req: Msg) -> AclFilter:
    """The AclFilter of a DescribeAcls request or of one DeleteAcls filter."""
    return AclFilter(resource_type(req.resource_type_filter), req.resource_name_filter,
                     pattern_type(req.pattern_type_filter), req.principal_filter, req.host_filter,
                     operation(req.operation), permission(req.permission_type))


def grouped(bindings: list[AclBinding]) -> list[Msg]:
    resources: dict[tuple[int, str, int], list[Msg]] = {}
    for b in bindings:
        resources.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            Msg(principal=b.principal, host=b.host, operation=int(b.operation), permission_type=int(b.permission)))
    return [Msg(resource_type=int(rtype), resource_name=name, pattern_type=int(ptype), acls=acls)
            for (rtype, name, ptype), acls in resources.items()]


@handler(API_KEY, 1, 3)
def handle_describe_acls(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | CloseConnection:
    authorizer = ctx.node.security.authorizer
    if authorizer is None:
        return Msg(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
                   error_message="No Authorizer is configured on the broker", resources=[])
    acl_filter = filter_of(req)
    if acl_filter.unknown:
        return CloseConnection("DescribeAcls: the filter contains UNKNOWN elements")
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None,
               resources=grouped(authorizer.acls.find(acl_filter)))
