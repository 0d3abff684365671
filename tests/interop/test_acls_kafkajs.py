"""KafkaJS against Kafka's authorizer: an ACL-limited user gets TOPIC_AUTHORIZATION_FAILED and
TRANSACTIONAL_ID_AUTHORIZATION_FAILED (KafkaJS's error types) for a forbidden topic and transactional id,
a crashed consumer for a forbidden group, and works for what it may use."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker import MockBroker
from tests.interop.acl_cases import (
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
from tests.interop.clients import of_type, require_kafkajs, run_kafkajs

pytestmark = pytest.mark.interop
TIMEOUT_MS = 20_000
CLIENT = {"sasl": {"mechanism": "plain", "username": USER, "password": PASSWORD}, "retry": {"retries": 1}}


def error_types(lines: list[dict[str, Any]]) -> str:
    """Every error line, as text (KafkaJS nests the protocol error in a cause or a message)."""
    return json.dumps([x for x in lines if "error" in x])


def test_kafkajs_acl_limited_user_gets_authorization_errors(mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_kafkajs()
    broker = acl_broker(mockbroker_factory)
    bootstrap = broker.bootstrap_servers

    def produce(topic: str) -> list[dict[str, Any]]:
        return run_kafkajs("produce", {"bootstrap": bootstrap, "client": CLIENT, "topic": topic, "sync": True,
                                       "records": [{"value": "v"}], "timeout_ms": TIMEOUT_MS}, timeout=120,
                           check=False)

    assert "TOPIC_AUTHORIZATION_FAILED" in error_types(produce(FORBIDDEN))
    assert of_type(produce(ALLOWED), "done") == [{"type": "done", "sent": 1, "failed": 0}]
    assert broker.records(FORBIDDEN) == []

    def consume(group: str) -> list[dict[str, Any]]:
        return run_kafkajs("consume", {"bootstrap": bootstrap, "client": CLIENT, "topic": ALLOWED, "group_id": group,
                                       "until_end": True, "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)

    # KafkaJS turns a FindCoordinator refused with GROUP_AUTHORIZATION_FAILED into its "Failed to find group
    # coordinator" (cluster.findGroupCoordinatorMetadata hides the code), then the consumer crashes.
    crashes = of_type(consume(FORBIDDEN_GROUP), "crash")
    assert [(c["error"], c["retriable"]) for c in crashes] == [("KafkaJSGroupCoordinatorNotFound", False)], crashes
    # With DESCRIBE on the group (FindCoordinator answers) but no READ, JoinGroup is refused, and said so.
    broker.add_acl(f"User:{USER}", "DESCRIBE", group=FORBIDDEN_GROUP)
    assert "GROUP_AUTHORIZATION_FAILED" in error_types(consume(FORBIDDEN_GROUP))
    lines = consume(ALLOWED_GROUP)
    assert [r["value"] for r in of_type(lines, "record")] == ["v"], lines

    def txn(transactional_id: str) -> list[dict[str, Any]]:
        return run_kafkajs("txn", {"bootstrap": bootstrap, "client": CLIENT, "transactional_id": transactional_id,
                                   "transactions": [{"records": [{"topic": ALLOWED, "value": "t"}]}],
                                   "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)

    # The same for the transaction coordinator: with no DESCRIBE on the id, FindCoordinator is refused and
    # KafkaJS says "Failed to find group coordinator"; with DESCRIBE but no WRITE, InitProducerId answers
    # TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which KafkaJS reports as it is.
    errors = of_type(txn(FORBIDDEN_TXN), "txn_error")
    assert [e["error"] for e in errors] == ["KafkaJSGroupCoordinatorNotFound"], errors
    broker.add_acl(f"User:{USER}", "DESCRIBE", transactional_id=FORBIDDEN_TXN)
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in error_types(txn(FORBIDDEN_TXN))
    assert of_type(txn(ALLOWED_TXN), "committed"), lines
    assert [r.value for r in broker.records(ALLOWED) if r.value] == [b"v", b"t"]
