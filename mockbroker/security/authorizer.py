"""Kafka's StandardAuthorizer (org.apache.kafka.metadata.authorizer), without I/O: may a principal from a
host perform an operation on a resource?

As StandardAuthorizerData decides it:
- a super user (`super.users`: "User:admin;User:ops") may do everything, whatever the ACLs say;
- the bindings that apply are those of the resource's type whose pattern covers the name (LITERAL: the
  name itself or "*"; PREFIXED: a prefix of the name), for the principal or "User:*", from the host or
  "*";
- a DENY binding for the operation (or ALL) wins over every ALLOW;
- an ALLOW binding for the operation or ALL allows; for DESCRIBE an ALLOW of READ, WRITE, DELETE or
  ALTER does too, for DESCRIBE_CONFIGS an ALLOW of ALTER_CONFIGS (a DENY implies nothing);
- no binding for the principal: denied if the resource has bindings for anyone, else
  `allow.everyone.if.no.acl.found` decides (false by default).

`authorize_by_resource_type` is the Authorizer interface's default: allowed if some ALLOW binding of
that type for the operation is not covered by a DENY (InitProducerId's "WRITE on any topic").
`authorized_operations` is the bit field of the operations Kafka lists for a resource type
(AclEntry.supportedOperations) that the principal may perform: the authorized-operations fields.
"""

from __future__ import annotations

from mockbroker.security.acls import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
)

AUTHORIZER_CLASS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                              AclOperation.ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})
_O = AclOperation
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS,
                         _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS, _O.IDEMPOTENT_WRITE,
                           _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE, _O.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
    ResourceType.USER: (_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS),
}


def parse_super_users(value: str | list[str] | None) -> set[str]:
    """Kafka's super.users: principals separated by semicolons (or a list)."""
    if value is None:
        return set()
    items = value if isinstance(value, list) else str(value).split(";")
    return {item.strip() for item in items if item.strip()}


def _grants(binding: AclBinding, op: AclOperation) -> bool:
    """Does this binding (of a matching principal and host) speak about `op`?"""
    if binding.operation is AclOperation.ALL or binding.operation == op:
        return True
    if binding.permission is not AclPermissionType.ALLOW:
        return False
    if op is AclOperation.DESCRIBE:
        return binding.operation in IMPLIES_DESCRIBE
    if op is AclOperation.DESCRIBE_CONFIGS:
        return binding.operation in IMPLIES_DESCRIBE_CONFIGS
    return False


class Authorizer:
    """The cluster's authorizer: its ACL bindings, super users and allow.everyone.if.no.acl.found."""

    def __init__(self, acls: AclStore | None = None, super_users: set[str] | None = None,
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.acls = acls if acls is not None else AclStore()
        self.super_users = set(super_users or ())
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    def _entry_matches(self, binding: AclBinding, principal: str, host: str) -> bool:
        return binding.principal in (principal, WILDCARD_PRINCIPAL) and binding.host in (host, WILDCARD_HOST)

    def authorize(self, principal: str, host: str, op: AclOperation, rtype: ResourceType, name: str) -> bool:
        if principal in self.super_users:
            return True
        found_resource_acls = False
        allowed = False
        for binding in self.acls.for_resource_type(rtype):
            if not binding.applies_to(name):
                continue
            found_resource_acls = True
            if not self._entry_matches(binding, principal, host) or not _grants(binding, op):
                continue
            if binding.permission is AclPermissionType.DENY:
                return False
            allowed = True
        if allowed:
            return True
        return False if found_resource_acls else self.allow_everyone_if_no_acl_found

    def authorize_by_resource_type(self, principal: str, host: str, op: AclOperation, rtype: ResourceType) -> bool:
        """May the principal perform `op` on some resource of the type (Authorizer.authorizeByResourceType)?"""
        if self.authorize(principal, host, op, rtype, "hardcode"):
            return True  # super users, a wildcard ALLOW, allow.everyone.if.no.acl.found
        deny: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allow: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        for binding in self.acls.for_resource_type(rtype):
            if not self._entry_matches(binding, principal, host):
                continue
            if binding.operation not in (op, AclOperation.ALL):
                continue
            if binding.permission is AclPermissionType.DENY:
                if binding.pattern_type is PatternType.LITERAL and binding.resource_name == WILDCARD_RESOURCE:
                    return False
                deny[binding.pattern_type].add(binding.resource_name)
            elif binding.pattern_type is PatternType.LITERAL and binding.resource_name == WILDCARD_RESOURCE:
                return True
            else:
                allow[binding.pattern_type].add(binding.resource_name)
        for ptype, names in allow.items():
            for name in names:
                if ptype is PatternType.LITERAL and name in deny[PatternType.LITERAL]:
                    continue
                if not any(name[:i] in deny[PatternType.PREFIXED] for i in range(1, len(name) + 1)):
                    return True
        return False

    def authorized_operations(self, principal: str, host: str, rtype: ResourceType, name: str) -> int:
        """The bit field (bit n = operation code n) of the type's operations the principal may perform."""
        field = 0
        for op in SUPPORTED_OPERATIONS[rtype]:
            if self.authorize(principal, host, op, rtype, name):
                field |= 1 << int(op)
        return field
