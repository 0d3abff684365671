"""An ACL filter read from a request (DescribeAcls, and each filter of DeleteAcls)."""

from __future__ import annotations

from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import AclFilter, operation, pattern_type, permission, resource_type


def filter_of(req: Msg) -> AclFilter:
    """The AclFilter of a DescribeAcls request or of one DeleteAcls filter."""
    return AclFilter(resource_type(req.resource_type_filter), req.resource_name_filter,
                     pattern_type(req.pattern_type_filter), req.principal_filter, req.host_filter,
                     operation(req.operation), permission(req.permission_type))
