"""The authorizer's matching rules without sockets, as Kafka's StandardAuthorizer decides: patterns
(LITERAL, PREFIXED, the wildcard resource), principals and hosts (with their wildcards), implied
operations, DENY over ALLOW, super users, allow.everyone.if.no.acl.found, authorizeByResourceType,
authorized operations, and the filters of DescribeAcls / DeleteAcls (ANY, MATCH, exact)."""

from __future__ import annotations

import pytest

from mockbroker.security.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
    invalid_binding_reason,
)
from mockbroker.security.authorizer import Authorizer, parse_super_users

Op, P, R, T = AclOperation, AclPermissionType, ResourceType, PatternType
ALICE, BOB, HOST = "User:alice", "User:bob", "127.0.0.1"


def acl(name: str, op: Op = Op.READ, principal: str = ALICE, *, rtype: R = R.TOPIC, pattern: T = T.LITERAL,
        permission: P = P.ALLOW, host: str = "*") -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, permission)


def authorizer(*bindings: AclBinding, super_users: set[str] | None = None, allow_if_none: bool = False) -> Authorizer:
    auth = Authorizer(super_users=super_users, allow_everyone_if_no_acl_found=allow_if_none)
    for b in bindings:
        auth.acls.add(b)
    return auth


def may(auth: Authorizer, op: Op, name: str, principal: str = ALICE, rtype: R = R.TOPIC, host: str = HOST) -> bool:
    return auth.authorize(principal, host, op, rtype, name)


def test_literal_acl_allows_exactly_its_resource() -> None:
    auth = authorizer(acl("orders"))
    assert may(auth, Op.READ, "orders")
    assert not may(auth, Op.READ, "orders2")
    assert not may(auth, Op.READ, "order")
    assert not may(auth, Op.WRITE, "orders")
    assert not may(auth, Op.READ, "orders", rtype=R.GROUP)


def test_prefixed_acl_allows_every_name_starting_with_it() -> None:
    auth = authorizer(acl("orders-", pattern=T.PREFIXED))
    assert may(auth, Op.READ, "orders-eu")
    assert may(auth, Op.READ, "orders-")
    assert not may(auth, Op.READ, "orders")
    assert not may(auth, Op.READ, "xorders-eu")


def test_wildcard_resource_principal_and_host() -> None:
    auth = authorizer(acl("*", principal="User:*"))
    assert may(auth, Op.READ, "anything", principal=BOB)
    auth = authorizer(acl("orders", host="10.0.0.1"))
    assert not may(auth, Op.READ, "orders", host="127.0.0.1")
    assert may(auth, Op.READ, "orders", host="10.0.0.1")
    assert not may(authorizer(acl("orders", principal=BOB)), Op.READ, "orders")


def test_read_write_delete_alter_imply_describe_and_alter_configs_implies_describe_configs() -> None:
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert may(authorizer(acl("t", op)), Op.DESCRIBE, "t"), op
    for op in (Op.CREATE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS):
        assert not may(authorizer(acl("t", op)), Op.DESCRIBE, "t"), op
    assert may(authorizer(acl("t", Op.ALTER_CONFIGS)), Op.DESCRIBE_CONFIGS, "t")
    assert not may(authorizer(acl("t", Op.DESCRIBE_CONFIGS)), Op.ALTER_CONFIGS, "t")
    assert not may(authorizer(acl("t", Op.DESCRIBE)), Op.READ, "t")


def test_all_allows_every_operation() -> None:
    auth = authorizer(acl("t", Op.ALL))
    assert all(may(auth, op, "t") for op in (Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.DESCRIBE, Op.ALTER_CONFIGS))


def test_deny_wins_over_allow_and_implies_nothing() -> None:
    auth = authorizer(acl("*", Op.ALL), acl("secret", Op.READ, permission=P.DENY))
    assert not may(auth, Op.READ, "secret")
    assert may(auth, Op.DESCRIBE, "secret")  # a DENY of READ does not deny DESCRIBE
    assert may(auth, Op.READ, "public")
    auth = authorizer(acl("orders", Op.ALL), acl("ord", Op.ALL, pattern=T.PREFIXED, permission=P.DENY))
    assert not may(auth, Op.WRITE, "orders")
    auth = authorizer(acl("t", Op.READ), acl("t", Op.ALL, principal="User:*", permission=P.DENY, host=HOST))
    assert not may(auth, Op.READ, "t")


def test_no_acl_for_the_resource_falls_back_to_allow_everyone_if_no_acl_found() -> None:
    assert not may(authorizer(), Op.READ, "t")
    assert may(authorizer(allow_if_none=True), Op.READ, "t")
    # an ACL for someone else on the resource: denied even with allow.everyone.if.no.acl.found
    assert not may(authorizer(acl("t", principal=BOB), allow_if_none=True), Op.READ, "t")
    assert may(authorizer(acl("other", principal=BOB), allow_if_none=True), Op.READ, "t")


def test_super_users_may_do_everything_despite_deny() -> None:
    auth = authorizer(acl("t", Op.ALL, principal="User:*", permission=P.DENY), super_users={"User:admin"})
    assert may(auth, Op.DELETE, "t", principal="User:admin")
    assert not may(auth, Op.DELETE, "t")
    assert parse_super_users("User:a; User:b;") == {"User:a", "User:b"}


def test_authorize_by_resource_type_as_kafka_default() -> None:
    def by_type(auth: Authorizer) -> bool:
        return auth.authorize_by_resource_type(ALICE, HOST, Op.WRITE, R.TOPIC)

    assert not by_type(authorizer())
    assert by_type(authorizer(acl("orders", Op.WRITE)))
    assert by_type(authorizer(acl("orders", Op.ALL)))
    assert not by_type(authorizer(acl("orders", Op.READ)))
    assert not by_type(authorizer(acl("orders", Op.WRITE), acl("orders", Op.WRITE, permission=P.DENY)))
    assert not by_type(authorizer(acl("orders", Op.WRITE), acl("or", Op.WRITE, pattern=T.PREFIXED, permission=P.DENY)))
    assert not by_type(authorizer(acl("orders", Op.WRITE), acl("*", Op.WRITE, permission=P.DENY)))
    assert by_type(authorizer(acl("orders", Op.WRITE), acl("other", Op.WRITE, permission=P.DENY)))
    assert by_type(authorizer(allow_if_none=True))


def test_authorized_operations_is_a_bit_field_of_the_types_operations() -> None:
    auth = authorizer(acl("t", Op.READ))
    assert auth.authorized_operations(ALICE, HOST, R.TOPIC, "t") == (1 << Op.READ) | (1 << Op.DESCRIBE)
    auth = authorizer(super_users={ALICE})
    assert auth.authorized_operations(ALICE, HOST, R.GROUP, "g") == sum(
        1 << op for op in (Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS))


@pytest.mark.parametrize(("acl_filter", "expected"), [
    (AclFilter(), {"lit", "pre", "star", "group"}),
    (AclFilter(R.TOPIC), {"lit", "pre", "star"}),
    (AclFilter(R.TOPIC, "orders", T.ANY), {"lit"}),
    (AclFilter(R.TOPIC, "orders", T.LITERAL), {"lit"}),
    (AclFilter(R.TOPIC, "orders", T.PREFIXED), set()),
    (AclFilter(R.TOPIC, "ord", T.PREFIXED), {"pre"}),
    (AclFilter(R.TOPIC, "orders", T.MATCH), {"lit", "pre", "star"}),
    (AclFilter(R.TOPIC, "other", T.MATCH), {"star"}),
    (AclFilter(R.ANY, None, T.LITERAL), {"lit", "star", "group"}),
    (AclFilter(principal=BOB), {"group"}),
    (AclFilter(operation=Op.WRITE), {"pre"}),
    (AclFilter(permission=P.DENY), {"star"}),
    (AclFilter(host="10.0.0.1"), set()),
])
def test_filters_match_as_kafka_acl_binding_filter(acl_filter: AclFilter, expected: set[str]) -> None:
    bindings = {"lit": acl("orders"), "pre": acl("ord", Op.WRITE, pattern=T.PREFIXED),
                "star": acl("*", permission=P.DENY), "group": acl("orders", principal=BOB, rtype=R.GROUP)}
    store = AclStore()
    for b in bindings.values():
        store.add(b)
    assert {k for k, b in bindings.items() if b in store.find(acl_filter)} == expected


def test_store_keeps_a_binding_once_and_deletes_what_a_filter_matches() -> None:
    store = AclStore()
    store.add(acl("a"))
    store.add(acl("a"))
    store.add(acl("b"))
    assert len(store) == 2
    assert store.delete(AclFilter(R.TOPIC, "a", T.LITERAL)) == [acl("a")]
    assert list(store) == [acl("b")]


def test_invalid_bindings_get_kafkas_reasons() -> None:
    assert invalid_binding_reason(acl("t")) is None
    assert invalid_binding_reason(acl("t", rtype=R.ANY)) == "Invalid resourceType ANY"
    assert invalid_binding_reason(acl("t", pattern=T.MATCH)) == "Invalid patternType MATCH"
    assert invalid_binding_reason(acl("t", Op.ANY)) == "Invalid operation ANY"
    assert invalid_binding_reason(acl("t", permission=P.ANY)) == "Invalid permissionType ANY"
    assert invalid_binding_reason(acl("", )) == "Invalid empty resource name"
    assert invalid_binding_reason(acl("x", rtype=R.CLUSTER)) == \
        "The only valid name for the CLUSTER resource is kafka-cluster"
    assert invalid_binding_reason(acl("kafka-cluster", rtype=R.CLUSTER)) is None
    # the broker's checks come before the controller's
    assert invalid_binding_reason(acl("", pattern=T.MATCH)) == "Invalid empty resource name"
    assert invalid_binding_reason(acl("x", rtype=R.CLUSTER, pattern=T.ANY)) == \
        "The only valid name for the CLUSTER resource is kafka-cluster"
    assert "principal" in (invalid_binding_reason(acl("t", principal="alice")) or "")


def test_the_authorizer_is_on_only_when_configured() -> None:
    from mockbroker.envconfig import build_settings
    from mockbroker.security.settings import authorizer_from_settings
    from mockbroker.server import MockBroker

    assert authorizer_from_settings({}, None, None) is None
    assert MockBroker().security.authorizer is None
    named = authorizer_from_settings({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                                      "super.users": "User:admin;User:ops"}, None, None)
    assert named is not None and named.super_users == {"User:admin", "User:ops"}
    assert not named.allow_everyone_if_no_acl_found
    short = MockBroker(super_users=["User:root"], config={"allow.everyone.if.no.acl.found": True}).security
    assert short.authorizer is not None and short.authorizer.super_users == {"User:root"}
    assert short.authorizer.allow_everyone_if_no_acl_found
    env = build_settings({"KAFKA_AUTHORIZER_CLASS_NAME": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                          "KAFKA_SUPER_USERS": "User:admin", "KAFKA_CONNECTIONS_MAX_REAUTH_MS": "5000"})
    assert env.unknown_line() is None
    security = MockBroker(**env.broker_kwargs()).security
    assert security.authorizer is not None and security.authorizer.super_users == {"User:admin"}
    assert security.max_reauth_ms == 5000
