"""DescribeAcls (key 29), v1-v3: the ACL bindings a filter matches (mockbroker/security/acls.py).

As Kafka's AclApis answers it:
- no authorizer on the broker: SECURITY_DISABLED, "No Authorizer is configured on the broker".
- a filter with an UNKNOWN resource type, pattern type, operation or permission (a code Kafka does not
  know, or 0): the request does not parse in Kafka (DescribeAclsRequest's validation), so the
  connection is closed.
- the matching bindings grouped by resource pattern (type, name, pattern type), in creation order.
- Authorization (with an authorizer, `authorize`): DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import CloseConnection, HandlerResult, handler
from mockbroker.handlers.support.acl_filters import filter_of
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import AclBinding

API_KEY = ApiKey.DESCRIBE_ACLS


def grouped(bindings: list[AclBinding]) -> list[Msg]:
    resources: dict[tuple[int, str, int], list[Msg]] = {}
    for b in bindings:
        resources.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            Msg(principal=b.principal, host=b.host, operation=int(b.operation), permission_type=int(b.permission)))
    return [Msg(resource_type=int(rtype), resource_name=name, pattern_type=int(ptype), acls=acls)
            for (rtype, name, ptype), acls in resources.items()]


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED], resources=[])


@handler(API_KEY, 1, 3, authorize=authorize)
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
