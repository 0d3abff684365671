"""The Java client (kafka-clients 4.3.0) against Kafka's authorizer: an ACL-limited user gets
TopicAuthorizationException, GroupAuthorizationException and TransactionalIdAuthorizationException for
what it may not use and works for what it may; the AdminClient creates, lists and deletes ACLs (and is
refused with ClusterAuthorizationException without ALTER on the cluster); the client re-authenticates
on the same connection when the broker answers a session lifetime (KIP-368)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mockbroker import MockBroker
from tests.interop.acl_cases import (
    ADMIN,
    ADMIN_PASSWORD,
    ALLOWED,
    ALLOWED_GROUP,
    ALLOWED_TXN,
    FORBIDDEN,
    FORBIDDEN_GROUP,
    FORBIDDEN_TXN,
    PASSWORD,
    USER,
    acl_broker,
)
from tests.interop.clients import of_type, require_java, run_java

pytestmark = [pytest.mark.interop, pytest.mark.java]
TIMEOUT_MS = 20_000


def sasl(user: str = USER, password: str = PASSWORD) -> dict[str, Any]:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                f'username="{user}" password="{password}";'}


def produce(broker: MockBroker, topic: str) -> list[dict[str, Any]]:
    return run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": topic, "sync": True,
                                "config": {**sasl(), "max.block.ms": 10000}, "records": [{"value": "v"}],
                                "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)


def test_java_acl_limited_user_gets_authorization_exceptions(mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_java()
    broker = acl_broker(mockbroker_factory)
    lines = produce(broker, FORBIDDEN)
    errors = of_type(lines, "send_error") + of_type(lines, "fatal")
    assert errors and errors[0]["error"] == "TopicAuthorizationException", lines
    assert broker.records(FORBIDDEN) == []
    assert of_type(produce(broker, ALLOWED), "done") == [{"type": "done", "sent": 1, "failed": 0}]

    def consume(group: str) -> list[dict[str, Any]]:
        return run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": ALLOWED, "subscribe": True,
                                    "config": {**sasl(), "group.id": group, "auto.offset.reset": "earliest"},
                                    "max_records": 1, "commit": True, "timeout_ms": TIMEOUT_MS},
                        timeout=120, check=False)

    lines = consume(FORBIDDEN_GROUP)
    assert [x["error"] for x in of_type(lines, "fatal")] == ["GroupAuthorizationException"], lines
    lines = consume(ALLOWED_GROUP)
    assert [r["value"] for r in of_type(lines, "record")] == ["v"], lines
    assert broker.committed(ALLOWED_GROUP) == {(ALLOWED, 0): 1}

    def txn(transactional_id: str) -> list[dict[str, Any]]:
        return run_java("txn", {"bootstrap": broker.bootstrap_servers, "transactional_id": transactional_id,
                                "config": {**sasl(), "max.block.ms": 10000},
                                "transactions": [{"records": [{"topic": ALLOWED, "value": "t"}]}],
                                "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)

    lines = txn(FORBIDDEN_TXN)
    errors = of_type(lines, "txn_error") + of_type(lines, "fatal")
    assert errors and errors[0]["error"] == "TransactionalIdAuthorizationException", lines
    lines = txn(ALLOWED_TXN)
    assert of_type(lines, "committed"), lines
    assert [r.value for r in broker.records(ALLOWED)] == [b"v", b"t"]


def test_java_admin_creates_lists_and_deletes_acls(mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_java()
    broker = acl_broker(mockbroker_factory)
    admin = sasl(ADMIN, ADMIN_PASSWORD)
    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "config": admin, "timeout_ms": TIMEOUT_MS,
                               "ops": [
        {"op": "createAcls", "acls": [
            {"resource_type": "TOPIC", "name": "reports-", "pattern": "PREFIXED", "principal": "User:bob",
             "operation": "READ"},
            {"resource_type": "GROUP", "name": "g", "principal": "User:bob", "operation": "ALL",
             "permission": "DENY", "host": "10.0.0.1"},
            {"resource_type": "CLUSTER", "name": "other", "principal": "User:bob", "operation": "ALTER"}]},
        {"op": "describeAcls", "filter": {"principal": "User:bob"}},
        {"op": "describeAcls", "filter": {"resource_type": "TOPIC", "name": "reports-eu", "pattern": "MATCH"}},
        {"op": "deleteAcls", "filters": [{"resource_type": "GROUP", "principal": "User:bob"}]},
        {"op": "describeAcls", "filter": {"principal": "User:bob"}},
    ]}, timeout=120)
    created, by_bob, matched, deleted, after = of_type(lines, "result")
    assert created["results"][:2] == ["ok", "ok"]
    assert created["results"][2]["error"] == "InvalidRequestException"
    assert {(a["resource_type"], a["name"], a["pattern"], a["operation"], a["permission"], a["host"])
            for a in by_bob["acls"]} == {("TOPIC", "reports-", "PREFIXED", "READ", "ALLOW", "*"),
                                        ("GROUP", "g", "LITERAL", "ALL", "DENY", "10.0.0.1")}
    assert [(a["name"], a["principal"]) for a in matched["acls"]] == [("reports-", "User:bob")]
    assert [(a["resource_type"], a["name"]) for a in deleted["results"][0]["deleted"]] == [("GROUP", "g")]
    assert [a["resource_type"] for a in after["acls"]] == ["TOPIC"]
    assert [(b.resource_type.name, b.principal) for b in broker.acls() if b.principal == "User:bob"] == [
        ("TOPIC", "User:bob")]

    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "config": sasl(), "timeout_ms": TIMEOUT_MS,
                               "ops": [{"op": "describeAcls"},
                                       {"op": "createAcls", "acls": [{"resource_type": "TOPIC", "name": "x",
                                                                      "principal": "User:alice",
                                                                      "operation": "ALL"}]}]}, timeout=120)
    refused = of_type(lines, "error") + of_type(lines, "result")
    assert refused[0]["error"] == "ClusterAuthorizationException", lines
    assert refused[1]["results"][0]["error"] == "ClusterAuthorizationException", lines


def test_java_client_reauthenticates_before_the_session_ends(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # A 3 s session (real time: the client times re-authentication on its own clock); the consumer polls
    # for 9 s, so it must re-authenticate on its fetch connection at least twice (KIP-368).
    require_java()
    broker = mockbroker_factory(security="SASL_PLAINTEXT", users={USER: PASSWORD},
                                config={"connections.max.reauth.ms": 3000})
    broker.create_topic("reauth")
    lines = run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": "reauth", "config": sasl(),
                                 "idle_ms": 9000, "poll_ms": 200, "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert of_type(lines, "done"), lines
    logins: dict[int, int] = {}
    for request in broker.received(36):  # SaslAuthenticate
        logins[request.connection_id] = logins.get(request.connection_id, 0) + 1
    fetched_on = {r.connection_id for r in broker.received(1)}
    assert any(logins.get(c, 0) >= 3 for c in fetched_on), (logins, fetched_on)
