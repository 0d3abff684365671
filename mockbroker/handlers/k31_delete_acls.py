"""DeleteAcls (key 31), v1-v3: remove the ACL bindings each filter matches (mockbroker/security/acls.py).

As Kafka's AclApis and AclControlManager answer it, one result per filter, in order:
- no authorizer on the broker: SECURITY_DISABLED on every filter ("No Authorizer is configured.").
- a filter with an UNKNOWN element (a code Kafka does not know, or 0): the request does not parse in
  Kafka, so the connection is closed.
- otherwise NONE and the bindings it matched (each with NONE), all removed at once: a binding several
  filters of the request match is listed under each, as Kafka's AclControlManager answers.
- Authorization (with an authorizer, `authorize`): ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED).
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

API_KEY = ApiKey.DELETE_ACLS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER):
        return call(req)
    return Msg(throttle_time_ms=0, filter_results=[
        Msg(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED], matching_acls=[]) for _ in req.filters])


@handler(API_KEY, 1, 3, authorize=authorize)
def handle_delete_acls(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | CloseConnection:
    authorizer = ctx.node.security.authorizer
    if authorizer is None:
        return Msg(throttle_time_ms=0, filter_results=[
            Msg(error_code=ErrorCode.SECURITY_DISABLED, error_message="No Authorizer is configured.",
                matching_acls=[]) for _ in req.filters])
    filters = [filter_of(f) for f in req.filters]
    if any(f.unknown for f in filters):
        return CloseConnection("DeleteAcls: the filters contain UNKNOWN elements")
    matched = [authorizer.acls.find(acl_filter) for acl_filter in filters]
    for acl_filter in filters:
        authorizer.acls.delete(acl_filter)
    results = []
    for removed in matched:
        results.append(Msg(error_code=ErrorCode.NONE, error_message=None, matching_acls=[
            Msg(error_code=ErrorCode.NONE, error_message=None, resource_type=int(b.resource_type),
                resource_name=b.resource_name, pattern_type=int(b.pattern_type), principal=b.principal,
                host=b.host, operation=int(b.operation), permission_type=int(b.permission)) for b in removed]))
    return Msg(throttle_time_ms=0, filter_results=results)
