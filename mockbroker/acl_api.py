"""The ACL part of MockBroker's API (`broker.acl_admin`; MockBroker's methods of the same names call it):
add, list and remove the authorizer's ACL bindings from a test, on the broker's loop.

    broker = MockBroker(acls=True, super_users=["User:admin"])
    broker.add_acl("User:alice", "READ", topic="orders")
    broker.add_acl("User:alice", ["READ", "DESCRIBE"], group="billing-", pattern="PREFIXED")
    broker.add_acl("User:*", "WRITE", topic="*", permission="DENY", host="10.0.0.1")
    broker.acls()                                  # [AclBinding(...), ...]
    broker.remove_acls(principal="User:alice")     # the removed bindings

Names are Kafka's (READ, WRITE, ..., ALL; TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN,
USER; LITERAL, PREFIXED; ALLOW, DENY), in any case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.security.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    invalid_binding_reason,
    operation,
    pattern_type,
    permission,
    resource_type,
)

if TYPE_CHECKING:
    from mockbroker.loop_hop import LoopHop
    from mockbroker.security import BrokerSecurity
    from mockbroker.security.authorizer import Authorizer


def resource_of(topic: str | None, group: str | None, transactional_id: str | None, cluster: bool,
                rtype: str | None, name: str | None) -> tuple[str | None, str | None]:
    """(resource type, name) from the keyword that names the resource."""
    given: list[tuple[str | None, str | None]] = [(t, n) for t, n in (("TOPIC", topic), ("GROUP", group), ("TRANSACTIONAL_ID", transactional_id))
             if n is not None]
    if cluster:
        given.append(("CLUSTER", CLUSTER_NAME))
    if rtype is not None or name is not None:
        given.append((rtype, name))
    if len(given) > 1:
        raise ValueError("name one resource: topic=, group=, transactional_id=, cluster=True or resource_type=/name=")
    return given[0] if given else (None, None)


def binding_from(principal: str, op: str, *, topic: str | None = None, group: str | None = None,
                 transactional_id: str | None = None, cluster: bool = False, resource_type_name: str | None = None,
                 name: str | None = None, pattern: str = "LITERAL", allow: str = "ALLOW",
                 host: str = "*") -> AclBinding:
    rtype, rname = resource_of(topic, group, transactional_id, cluster, resource_type_name, name)
    if rtype is None or rname is None:
        raise ValueError("name the resource: topic=, group=, transactional_id=, cluster=True or resource_type= and name=")
    binding = AclBinding(resource_type(rtype), rname, pattern_type(pattern), principal, host, operation(op),
                         permission(allow))
    reason = invalid_binding_reason(binding)
    if reason is not None:
        raise ValueError(reason)
    return binding


def bindings_from(principal: str, operations: str | list[str], *, topic: str | None = None,
                  group: str | None = None, transactional_id: str | None = None, cluster: bool = False,
                  resource_type_name: str | None = None, name: str | None = None, pattern: str = "LITERAL",
                  allow: str = "ALLOW", host: str = "*") -> list[AclBinding]:
    """One checked binding per operation (a name or a list of names) for principal on one resource: what
    add_acl adds, here and on a remote cluster (mockbroker/remote/access.py)."""
    ops = [operations] if isinstance(operations, str) else list(operations)
    return [binding_from(principal, op, topic=topic, group=group, transactional_id=transactional_id, cluster=cluster,
                         resource_type_name=resource_type_name, name=name, pattern=pattern, allow=allow, host=host)
            for op in ops]


class AclAdmin:
    """broker.add_acl / remove_acls / acls, on the authorizer of the broker's security."""

    def __init__(self, security: BrokerSecurity, hop: LoopHop) -> None:
        self.security = security
        self._hop = hop  # runs each call on the broker's loop

    def _authorizer(self) -> Authorizer:
        authorizer = self.security.authorizer
        if authorizer is None:
            raise ValueError("this broker has no authorizer: start it with acls=True, super_users=[...] or "
                             "config={'authorizer.class.name': ...}")
        return authorizer

    def add_acl(self, principal: str, operation: str | list[str], *, topic: str | None = None,
                group: str | None = None, transactional_id: str | None = None, cluster: bool = False,
                resource_type: str | None = None, name: str | None = None, pattern: str = "LITERAL",
                permission: str = "ALLOW", host: str = "*") -> list[AclBinding]:
        """Add ACL bindings (one per operation) for principal ("User:alice", "User:*") on one resource."""
        bindings = bindings_from(principal, operation, topic=topic, group=group, transactional_id=transactional_id,
                                 cluster=cluster, resource_type_name=resource_type, name=name, pattern=pattern,
                                 allow=permission, host=host)
        authorizer = self._authorizer()

        def add() -> None:
            for binding in bindings:
                authorizer.acls.add(binding)

        self._hop.call(add)
        return bindings

    def remove_acls(self, principal: str | None = None, operation: str = "ANY", *, topic: str | None = None,
                    group: str | None = None, transactional_id: str | None = None, cluster: bool = False,
                    resource_type: str | None = None, name: str | None = None, pattern: str = "ANY",
                    permission: str = "ANY", host: str | None = None) -> list[AclBinding]:
        """Remove the bindings a filter matches (Kafka's DeleteAcls filter; no argument: all of them)."""
        acl_filter = filter_from(principal, operation, topic=topic, group=group, transactional_id=transactional_id,
                                 cluster=cluster, resource_type_name=resource_type, name=name, pattern=pattern,
                                 allow=permission, host=host)
        authorizer = self._authorizer()
        return self._hop.call(authorizer.acls.delete, acl_filter)

    def acls(self) -> list[AclBinding]:
        """Every ACL binding, in the order they were created."""
        authorizer = self._authorizer()
        return self._hop.call(lambda: list(authorizer.acls))


def filter_from(principal: str | None = None, op: str = "ANY", *, topic: str | None = None, group: str | None = None,
                transactional_id: str | None = None, cluster: bool = False, resource_type_name: str | None = None,
                name: str | None = None, pattern: str = "ANY", allow: str = "ANY", host: str | None = None) -> AclFilter:
    rtype, rname = resource_of(topic, group, transactional_id, cluster, resource_type_name, name)
    return AclFilter(resource_type(rtype or "ANY"), rname, pattern_type(pattern), principal, host, operation(op),
                     permission(allow))
