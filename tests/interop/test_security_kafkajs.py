"""KafkaJS over SSL, mTLS, SASL_PLAINTEXT and SASL_SSL with PLAIN and SCRAM-SHA-256/512 (its options given
straight to new Kafka({ssl, sasl})): produce, consume back in a group, the principal the broker saw; a
wrong password is KafkaJS's SASL authentication error, not a hang."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mockbroker import MockBroker
from tests.interop.clients import of_type, require_kafkajs, run_kafkajs
from tests.interop.security_cases import (
    CASES,
    PASSWORD,
    USER,
    Case,
    Setup,
    principals_of_produce,
    secured_broker,
)

pytestmark = pytest.mark.interop
TIMEOUT_MS = 20_000


def kafkajs_client(case: Case, setup: Setup, password: str = PASSWORD) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if case.tls:
        ssl: dict[str, Any] = {"ca": [setup.broker.tls.ca_pem.decode()]}
        if setup.client_cert is not None:
            ssl.update(cert=setup.client_cert.cert_pem.decode(), key=setup.client_cert.key_pem.decode())
        options["ssl"] = ssl
    if case.mechanism is not None:
        options["sasl"] = {"mechanism": case.mechanism.lower(), "username": USER, "password": password}
    return options


def produce_and_consume(case: Case, setup: Setup) -> None:
    setup.broker.create_topic("secure")
    client = kafkajs_client(case, setup)
    bootstrap = setup.broker.bootstrap_servers
    lines = run_kafkajs("produce", {"bootstrap": bootstrap, "client": client, "topic": "secure", "sync": True,
                                    "records": [{"partition": 0, "key": "k", "value": f"v{i}"} for i in range(3)],
                                    "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert of_type(lines, "done") == [{"type": "done", "sent": 3, "failed": 0}], lines
    lines = run_kafkajs("consume", {"bootstrap": bootstrap, "client": client, "topic": "secure", "group_id": "g",
                                    "until_end": True, "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert [r["value"] for r in of_type(lines, "record")] == ["v0", "v1", "v2"], lines
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


def test_kafkajs_over_every_security_protocol_and_mechanism(mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_kafkajs()
    setups = [(case, secured_broker(case, mockbroker_factory)) for case in CASES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {str(case): pool.submit(produce_and_consume, case, setup) for case, setup in setups}
        failures = {}
        for name, future in futures.items():
            try:
                future.result()
            except Exception as exc:  # collect every case's failure, not only the first
                failures[name] = exc
    assert not failures, "\n\n".join(f"{name}: {exc}" for name, exc in failures.items())


@pytest.mark.parametrize("case", [Case("SASL_SSL", "SCRAM-SHA-256"), Case("SASL_PLAINTEXT", "PLAIN")], ids=str)
def test_kafkajs_wrong_password_is_a_sasl_authentication_error(
        case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    lines = run_kafkajs("produce", {"bootstrap": setup.broker.bootstrap_servers, "topic": "t", "sync": True,
                                    "client": kafkajs_client(case, setup, password="wrong"),
                                    "records": [{"value": "v"}], "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)
    errors = of_type(lines, "send_error") + of_type(lines, "fatal")
    assert errors and errors[0].get("error") == "KafkaJSSASLAuthenticationError", lines
    assert "Authentication failed" in errors[0].get("message", ""), lines
    assert not setup.broker.received(0)
