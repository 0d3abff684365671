"""Raw-protocol tests of CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), v1-v3: Kafka's answers,
validation errors, SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without
ALTER / DESCRIBE on the cluster, and the connection Kafka closes for UNKNOWN codes."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import connect

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
TOPIC, GROUP, CLUSTER = 2, 3, 4
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
READ, WRITE, DESCRIBE, ALL = 3, 4, 8, 2
DENY, ALLOW = 2, 3
ADMIN = pytest.mark.mockbroker(super_users=["User:ANONYMOUS"])  # PLAINTEXT clients are User:ANONYMOUS


def creation(name: str, op: int = READ, *, rtype: int = TOPIC, pattern: int = LITERAL, principal: str = "User:alice",
             host: str = "*", permission: int = ALLOW) -> dict[str, Any]:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
            "host": host, "operation": op, "permission_type": permission}


def acl_filter(rtype: int = ANY, name: str | None = None, pattern: int = ANY, principal: str | None = None,
               host: str | None = None, op: int = ANY, permission: int = ANY) -> dict[str, Any]:
    return {"resource_type_filter": rtype, "resource_name_filter": name, "pattern_type_filter": pattern,
            "principal_filter": principal, "host_filter": host, "operation": op, "permission_type": permission}


@ADMIN
@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_describe_delete_round_trip(mockbroker: MockBroker, version: int) -> None:
    with connect(mockbroker) as c:
        resp = c.request(CREATE_ACLS, version, {"creations": [
            creation("orders"), creation("orders", WRITE), creation("ord", pattern=PREFIXED, permission=DENY),
            creation("billing", rtype=GROUP, principal="User:bob")]})
        assert [(r.error_code, r.error_message) for r in resp.results] == [(ErrorCode.NONE, None)] * 4
        described = c.request(DESCRIBE_ACLS, version, acl_filter(TOPIC, "orders", MATCH))
        assert described.error_code == ErrorCode.NONE
        got = {(r.resource_name, r.pattern_type, a.operation, a.permission_type)
               for r in described.resources for a in r.acls}
        assert got == {("orders", LITERAL, READ, ALLOW), ("orders", LITERAL, WRITE, ALLOW), ("ord", PREFIXED, READ, DENY)}
        assert [len(r.acls) for r in described.resources if r.resource_name == "orders"] == [2]
        deleted = c.request(DELETE_ACLS, version, {"filters": [acl_filter(TOPIC, "orders", LITERAL, op=WRITE),
                                                               acl_filter(principal="User:bob")]})
        first, second = deleted.filter_results
        assert first.error_code == ErrorCode.NONE
        assert [(m.resource_name, m.operation, m.principal, m.error_code) for m in first.matching_acls] == \
            [("orders", WRITE, "User:alice", ErrorCode.NONE)]
        assert [(m.resource_type, m.resource_name) for m in second.matching_acls] == [(GROUP, "billing")]
    assert len(mockbroker.acls()) == 2


@ADMIN
def test_create_acls_answers_kafkas_validation_errors_per_creation(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(CREATE_ACLS, 3, {"creations": [
            creation("t", rtype=ANY), creation("t", pattern=MATCH), creation("t", op=ANY),
            creation("t", permission=ANY), creation(""), creation("other", rtype=CLUSTER),
            creation("t", principal="alice"), creation("kafka-cluster", ALL, rtype=CLUSTER)]})
    codes = [(r.error_code, r.error_message) for r in resp.results]
    assert codes[:6] == [
        (ErrorCode.INVALID_REQUEST, "Invalid resourceType ANY"),
        (ErrorCode.INVALID_REQUEST, "Invalid patternType MATCH"),
        (ErrorCode.INVALID_REQUEST, "Invalid operation ANY"),
        (ErrorCode.INVALID_REQUEST, "Invalid permissionType ANY"),
        (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        (ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster")]
    assert codes[6] == (ErrorCode.INVALID_REQUEST, "Could not parse principal from `alice` (no colon is present "
                                                    "separating the principal type from the principal name)")
    assert codes[7] == (ErrorCode.NONE, None)
    assert [(b.resource_type.name, b.operation.name) for b in mockbroker.acls()] == [("CLUSTER", "ALL")]


@ADMIN
@pytest.mark.parametrize(("api_key", "body"), [
    (CREATE_ACLS, {"creations": [creation("t", op=0)]}),
    (CREATE_ACLS, {"creations": [creation("t", rtype=99)]}),
    (DESCRIBE_ACLS, acl_filter(pattern=0)),
    (DELETE_ACLS, {"filters": [acl_filter(permission=7)]}),
])
def test_unknown_codes_close_the_connection_as_kafka(mockbroker: MockBroker, api_key: int, body: dict[str, Any]) -> None:
    with connect(mockbroker) as c:
        c.send(api_key, 2, body)
        assert c.is_closed_by_peer()
    with connect(mockbroker) as c:  # the broker serves everyone else
        assert c.request(DESCRIBE_ACLS, 2, acl_filter()).error_code == ErrorCode.NONE


def test_without_authorizer_acl_apis_answer_security_disabled(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        described = c.request(DESCRIBE_ACLS, 3, acl_filter())
        assert (described.error_code, described.error_message) == (
            ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker")
        created = c.request(CREATE_ACLS, 3, {"creations": [creation("t")]})
        assert [r.error_code for r in created.results] == [ErrorCode.SECURITY_DISABLED]
        deleted = c.request(DELETE_ACLS, 3, {"filters": [acl_filter()]})
        assert [r.error_code for r in deleted.filter_results] == [ErrorCode.SECURITY_DISABLED]


@pytest.mark.mockbroker(acls=True)
def test_acl_apis_need_alter_and_describe_on_the_cluster(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert c.request(DESCRIBE_ACLS, 3, acl_filter()).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        created = c.request(CREATE_ACLS, 3, {"creations": [creation("t")]})
        assert [r.error_code for r in created.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
        deleted = c.request(DELETE_ACLS, 3, {"filters": [acl_filter()]})
        assert [r.error_code for r in deleted.filter_results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
        mockbroker.add_acl("User:ANONYMOUS", "ALTER", cluster=True)  # ALTER implies DESCRIBE
        assert c.request(CREATE_ACLS, 3, {"creations": [creation("t")]}).results[0].error_code == ErrorCode.NONE
        resources = c.request(DESCRIBE_ACLS, 3, acl_filter(TOPIC)).resources
        assert [(r.resource_name, [a.principal for a in r.acls]) for r in resources] == [("t", ["User:alice"])]


@pytest.mark.mockbroker(acls=True)
def test_cluster_apis_need_the_cluster_operations_and_describe_cluster_fills_them(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert c.request(50, 0, {"users": None}).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        altered = c.request(51, 0, {"deletions": [{"name": "bob", "mechanism": 1}], "upsertions": []})
        assert [(r.user, r.error_code) for r in altered.results] == [("bob", ErrorCode.CLUSTER_AUTHORIZATION_FAILED)]
        cluster = c.request(60, 0, {"include_cluster_authorized_operations": True})
        assert cluster.cluster_authorized_operations == 0
        mockbroker.add_acl("User:ANONYMOUS", ["DESCRIBE", "ALTER"], cluster=True)
        cluster = c.request(60, 0, {"include_cluster_authorized_operations": True})
        assert cluster.cluster_authorized_operations == (1 << DESCRIBE) | (1 << 7)
        assert c.request(50, 0, {"users": None}).error_code == ErrorCode.NONE


def test_without_authorizer_everything_stays_open(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        cluster = c.request(60, 0, {"include_cluster_authorized_operations": True})
        assert cluster.cluster_authorized_operations != 0
        assert c.request(50, 0, {"users": None}).error_code == ErrorCode.NONE


@ADMIN
def test_delete_acls_lists_a_binding_under_every_filter_that_matches_it(mockbroker: MockBroker) -> None:
    mockbroker.add_acl("User:alice", "READ", topic="orders")
    with connect(mockbroker) as c:
        deleted = c.request(DELETE_ACLS, 3, {"filters": [acl_filter(TOPIC), acl_filter(principal="User:alice")]})
    assert [[m.resource_name for m in r.matching_acls] for r in deleted.filter_results] == [["orders"], ["orders"]]
    assert mockbroker.acls() == []


@pytest.mark.mockbroker(acls=True)
def test_cluster_admin_apis_need_alter_or_describe_on_the_cluster(mockbroker: MockBroker) -> None:
    from mockbroker import dispatch

    dispatch.load_handlers()
    if any(dispatch.lookup(key) is None for key in (35, 43, 45, 46)):
        pytest.skip("ElectLeaders / partition reassignments / DescribeLogDirs are not served on this branch")
    denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    mockbroker.create_topic("t")
    with connect(mockbroker) as c:
        elected = c.request(43, 2, {"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0]}],
                                    "timeout_ms": 1000})
        assert elected.error_code == denied
        assert elected.replica_election_results[0].partition_result[0].error_code == denied
        altered = c.request(45, 0, {"timeout_ms": 1000, "topics": [{"name": "t", "partitions": [
            {"partition_index": 0, "replicas": [1]}]}]})
        assert (altered.error_code, altered.responses[0].partitions[0].error_code) == (denied, denied)
        assert c.request(46, 0, {"timeout_ms": 1000, "topics": None}).error_code == denied
        assert c.request(35, 4, {"topics": None}).error_code == denied
        assert c.request(35, 1, {"topics": None}).results == []  # before v3 no error code: nothing described
        mockbroker.add_acl("User:ANONYMOUS", "ALTER", cluster=True)  # ALTER implies DESCRIBE
        assert c.request(46, 0, {"timeout_ms": 1000, "topics": None}).error_code == ErrorCode.NONE
        assert c.request(35, 4, {"topics": None}).error_code == ErrorCode.NONE
