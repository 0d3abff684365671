"""ACL bindings as Kafka has them, without I/O: the codes, a binding, a filter and the store of bindings.

- Codes (Kafka's org.apache.kafka.common.resource / acl enums, as they travel on the wire):
  ResourceType, PatternType, AclOperation, AclPermissionType. A code Kafka does not know is UNKNOWN.
- `AclBinding`: a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal, host,
  operation, ALLOW or DENY). A LITERAL name "*" is the wildcard resource; principal "User:*" and host
  "*" are the wildcards.
- `AclFilter` (CreateAcls' opposite: DescribeAcls and DeleteAcls) as Kafka's AclBindingFilter: ANY
  matches every value; a null name/principal/host matches all; pattern type ANY matches any pattern
  with exactly that name, MATCH every pattern that would apply to the name (the literal name, the
  literal "*", every prefix of it); an exact pattern type only that type.
- `AclStore`: the bindings in the order they were created, each once (creating an existing one is a
  success that adds nothing, as Kafka's AclControlManager). `on_change` (set by a data dir, storage/)
  is called after each change.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


WILDCARD_RESOURCE = "*"
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
CLUSTER_NAME = "kafka-cluster"  # the one name of the CLUSTER resource


def _code(enum_type: type[enum.IntEnum], value: int | str | enum.IntEnum) -> int:
    """A wire code or a name ("topic", "PREFIXED") -> the enum member's code; UNKNOWN (0) if not one."""
    if isinstance(value, str):
        try:
            return int(enum_type[value.strip().upper().replace("-", "_")])
        except KeyError:
            raise ValueError(f"{value!r} is not a {enum_type.__name__} "
                             f"(one of {', '.join(m.name for m in enum_type)})") from None
    try:
        return int(enum_type(int(value)))
    except ValueError:
        return 0


def resource_type(value: int | str) -> ResourceType:
    return ResourceType(_code(ResourceType, value))


def pattern_type(value: int | str) -> PatternType:
    return PatternType(_code(PatternType, value))


def operation(value: int | str) -> AclOperation:
    return AclOperation(_code(AclOperation, value))


def permission(value: int | str) -> AclPermissionType:
    return AclPermissionType(_code(AclPermissionType, value))


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def as_dict(self) -> dict[str, str]:
        return {"resource_type": self.resource_type.name, "resource_name": self.resource_name,
                "pattern_type": self.pattern_type.name, "principal": self.principal, "host": self.host,
                "operation": self.operation.name, "permission": self.permission.name}

    def applies_to(self, name: str) -> bool:
        """Does this binding's pattern cover a resource of its type called `name`?"""
        if self.pattern_type is PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD_RESOURCE)


def invalid_binding_reason(binding: AclBinding) -> str | None:
    """Why Kafka refuses to create this binding (INVALID_REQUEST), or None: first the broker's checks
    (AclApis: the CLUSTER resource's name, an empty name), then AclControlManager.validateNewAcl."""
    if binding.resource_type is ResourceType.CLUSTER and binding.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not binding.resource_name:
        return "Invalid empty resource name"
    if binding.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {binding.resource_type.name}"
    if binding.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {binding.pattern_type.name}"
    if binding.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {binding.operation.name}"
    if binding.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return f"Invalid permissionType {binding.permission.name}"
    if ":" not in binding.principal:
        return f"Could not parse principal from `{binding.principal}` (no colon is present separating the " \
               "principal type from the principal name)"
    return None


@dataclass(frozen=True)
class AclFilter:
    """Kafka's AclBindingFilter; None in a name, principal or host matches every value."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermissionType = AclPermissionType.ANY

    @property
    def unknown(self) -> bool:
        """A filter with an UNKNOWN element (Kafka refuses the request that carries it)."""
        return self.resource_type is ResourceType.UNKNOWN or self.pattern_type is PatternType.UNKNOWN or \
            self.operation is AclOperation.UNKNOWN or self.permission is AclPermissionType.UNKNOWN

    def matches(self, binding: AclBinding) -> bool:
        return self._matches_pattern(binding) and self._matches_entry(binding)

    def _matches_pattern(self, binding: AclBinding) -> bool:
        if self.resource_type is not ResourceType.ANY and self.resource_type != binding.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != binding.pattern_type:
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in (PatternType.ANY, binding.pattern_type):
            return self.resource_name == binding.resource_name
        return binding.applies_to(self.resource_name)  # MATCH

    def _matches_entry(self, binding: AclBinding) -> bool:
        return (self.principal is None or self.principal == binding.principal) and \
            (self.host is None or self.host == binding.host) and \
            (self.operation is AclOperation.ANY or self.operation == binding.operation) and \
            (self.permission is AclPermissionType.ANY or self.permission == binding.permission)


class AclStore:
    """The cluster's ACL bindings, in creation order, each once."""

    def __init__(self) -> None:
        self._bindings: dict[AclBinding, None] = {}
        self.on_change: Callable[[], None] | None = None  # a data dir's writer (mockbroker/storage)

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(list(self._bindings))

    def __len__(self) -> int:
        return len(self._bindings)

    def add(self, binding: AclBinding) -> None:
        """Store a binding (checked with invalid_binding_reason first); an existing one is kept as is."""
        if binding in self._bindings:
            return
        self._bindings[binding] = None
        if self.on_change is not None:
            self.on_change()

    def find(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [b for b in self._bindings if acl_filter.matches(b)]

    def delete(self, acl_filter: AclFilter) -> list[AclBinding]:
        """Remove and return every binding the filter matches."""
        removed = self.find(acl_filter)
        for binding in removed:
            del self._bindings[binding]
        if removed and self.on_change is not None:
            self.on_change()
        return removed

    def for_resource_type(self, rtype: ResourceType) -> list[AclBinding]:
        return [b for b in self._bindings if b.resource_type == rtype]
