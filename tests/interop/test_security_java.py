"""The Java client (kafka-clients 4.3.0) over SSL, mTLS (PEM keystore), SASL_PLAINTEXT and SASL_SSL with
PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (Kafka's unsecured login handler): produce, consume back, the
principal the broker saw; a wrong password or a token the broker refuses is a SaslAuthenticationException;
the AdminClient creates, lists and deletes SCRAM users, who then log in.

Each harness run is a JVM start, so cases run two at a time."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.security.oauth import OAuthConfig
from tests.interop.clients import of_type, require_java, run_java
from tests.interop.security_cases import (
    CASES,
    PASSWORD,
    USER,
    Case,
    Setup,
    principals_of_produce,
    secured_broker,
)

pytestmark = [pytest.mark.interop, pytest.mark.java]
TIMEOUT_MS = 20_000
LOGIN_MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
                 "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
                 "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def java_config(case: Case, setup: Setup, tmp: Path, user: str = USER, password: str = PASSWORD) -> dict[str, Any]:
    conf: dict[str, Any] = {"security.protocol": case.protocol}
    if case.tls:
        conf.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": setup.ca_file})
    if setup.client_cert is not None:
        keystore = tmp / "client-keystore.pem"  # a PEM keystore: the PKCS8 key, then the certificate
        keystore.write_bytes(setup.client_cert.key_pem + setup.client_cert.cert_pem)
        conf.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore)})
    if case.mechanism is not None:
        conf.update({"sasl.mechanism": case.mechanism,
                     "sasl.jaas.config": f'{LOGIN_MODULES[case.mechanism]} required username="{user}" '
                                         f'password="{password}";'})
    return conf


def produce_and_consume(case: Case, setup: Setup, tmp: Path) -> None:
    setup.broker.create_topic("secure")
    conf = java_config(case, setup, tmp)
    bootstrap = setup.broker.bootstrap_servers
    lines = run_java("produce", {"bootstrap": bootstrap, "topic": "secure", "sync": True, "config": conf,
                                 "records": [{"partition": 0, "key": "k", "value": f"v{i}"} for i in range(3)],
                                 "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert of_type(lines, "done") == [{"type": "done", "sent": 3, "failed": 0}], lines
    lines = run_java("consume", {"bootstrap": bootstrap, "topic": "secure", "until_end": True, "config": conf,
                                 "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert [r["value"] for r in of_type(lines, "record")] == ["v0", "v1", "v2"], lines
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


def test_java_client_over_every_security_protocol_and_mechanism(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    require_java()
    setups = []
    for i, case in enumerate(CASES):
        folder = tmp_path / str(i)
        folder.mkdir()
        setups.append((case, secured_broker(case, mockbroker_factory), folder))
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {str(case): pool.submit(produce_and_consume, case, setup, folder) for case, setup, folder in setups}
        failures = {}
        for name, future in futures.items():
            try:
                future.result()
            except Exception as exc:  # collect every case's failure, not only the first
                failures[name] = exc
    assert not failures, "\n\n".join(f"{name}: {exc}" for name, exc in failures.items())


@pytest.mark.parametrize("case", [Case("SASL_SSL", "SCRAM-SHA-512"), Case("SASL_PLAINTEXT", "PLAIN")], ids=str)
def test_java_wrong_password_is_a_sasl_authentication_exception(
        case: Case, mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    setup = secured_broker(case, mockbroker_factory)
    lines = run_java("produce", {"bootstrap": setup.broker.bootstrap_servers, "topic": "t", "sync": True,
                                 "config": java_config(case, setup, tmp_path, password="wrong"),
                                 "records": [{"value": "v"}], "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)
    errors = of_type(lines, "send_error") + of_type(lines, "fatal")
    assert errors and errors[0]["error"] == "SaslAuthenticationException", lines
    assert "Authentication failed" in errors[0]["message"]
    assert not setup.broker.received(0)


def test_java_admin_creates_lists_and_deletes_scram_users_who_then_log_in(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    case = Case("SASL_SSL", "SCRAM-SHA-256")
    setup = secured_broker(case, mockbroker_factory)
    admin_conf = java_config(case, setup, tmp_path)
    bootstrap = setup.broker.bootstrap_servers
    lines = run_java("admin", {"bootstrap": bootstrap, "config": admin_conf, "timeout_ms": TIMEOUT_MS, "ops": [
        {"op": "alterUserScramCredentials", "upsert": [
            {"user": "carol", "mechanism": "SCRAM-SHA-256", "password": "carol-pw", "iterations": 8192},
            {"user": "dave", "mechanism": "SCRAM-SHA-512", "password": "dave-pw"},
            {"user": "erin", "mechanism": "SCRAM-SHA-256", "password": "x", "iterations": 100}]},
        {"op": "describeUserScramCredentials"},
        {"op": "describeUserScramCredentials", "users": ["carol", "nobody"]},
    ]}, timeout=120)
    alter, all_users, some = of_type(lines, "result")
    assert alter["results"]["carol"] == "ok" and alter["results"]["dave"] == "ok"
    assert alter["results"]["erin"]["error"] == "UnacceptableCredentialException"
    assert all_users["users"] == {
        "alice": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096}, {"mechanism": "SCRAM-SHA-512", "iterations": 4096}],
        "carol": [{"mechanism": "SCRAM-SHA-256", "iterations": 8192}],
        "dave": [{"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}
    assert some["users"]["carol"] == [{"mechanism": "SCRAM-SHA-256", "iterations": 8192}]
    assert some["users"]["nobody"]["error"] == "ResourceNotFoundException"

    carol = java_config(case, setup, tmp_path, user="carol", password="carol-pw")
    lines = run_java("admin", {"bootstrap": bootstrap, "config": carol, "timeout_ms": TIMEOUT_MS,
                               "op": "alterUserScramCredentials",
                               "delete": [{"user": "dave", "mechanism": "SCRAM-SHA-512"}]}, timeout=120)
    assert of_type(lines, "result")[0]["results"] == {"dave": "ok"}, lines
    assert setup.broker.received(51)[-1].principal == "User:carol"
    assert setup.broker.security.credentials.scram_users() == ["alice", "carol"]


# OAUTHBEARER: the client's default login callback handler (OAuthBearerUnsecuredLoginCallbackHandler) makes an
# unsecured JWT (alg none) from these options; its lifetime is one hour on the client's (wall) clock.
OAUTH_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def java_oauth_config(protocol: str, broker: MockBroker, **claims: str) -> dict[str, Any]:
    options = " ".join(f'{name}="{value}"' for name, value in claims.items())
    conf: dict[str, Any] = {"security.protocol": protocol, "sasl.mechanism": "OAUTHBEARER",
                            "sasl.jaas.config": f"{OAUTH_LOGIN_MODULE} required {options};"}
    if protocol == "SASL_SSL":
        conf.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": broker.tls.ca_file})
    return conf


def oauth_produce_and_consume(broker: MockBroker, conf: dict[str, Any]) -> None:
    bootstrap = broker.bootstrap_servers
    lines = run_java("produce", {"bootstrap": bootstrap, "topic": "secure", "sync": True, "config": conf,
                                 "records": [{"partition": 0, "value": f"v{i}"} for i in range(3)],
                                 "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert of_type(lines, "done") == [{"type": "done", "sent": 3, "failed": 0}], lines
    lines = run_java("consume", {"bootstrap": bootstrap, "topic": "secure", "until_end": True, "config": conf,
                                 "timeout_ms": TIMEOUT_MS}, timeout=120)
    assert [r["value"] for r in of_type(lines, "record")] == ["v0", "v1", "v2"], lines


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_java_oauthbearer_with_the_unsecured_login_handler(
        protocol: str, mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_java()
    # The broker wants the "kafka" scope: the client's list claim (first character: the delimiter) gives it.
    broker = mockbroker_factory(security=protocol, oauth=OAuthConfig(required_scopes=["kafka"]),
                                sasl_mechanisms=["OAUTHBEARER"])
    broker.create_topic("secure")
    conf = java_oauth_config(protocol, broker, unsecuredLoginStringClaim_sub="svc-java",
                             unsecuredLoginListClaim_scope=",kafka,other")
    oauth_produce_and_consume(broker, conf)
    assert principals_of_produce(broker) == {"User:svc-java"}
    assert {r.principal for r in broker.received(1)} == {"User:svc-java"}  # 1 = Fetch
    assert {r.listener for r in broker.received(0)} == {protocol}


@pytest.mark.parametrize(("protocol", "refusal"), [("SASL_SSL", "expired"), ("SASL_PLAINTEXT", "scope")])
def test_java_oauthbearer_token_the_broker_refuses_is_a_sasl_authentication_exception(
        protocol: str, refusal: str, mockbroker_factory: Callable[..., MockBroker]) -> None:
    require_java()
    broker = mockbroker_factory(security=protocol, oauth=OAuthConfig(required_scopes=["kafka"]),
                                sasl_mechanisms=["OAUTHBEARER"])
    broker.create_topic("secure")
    if refusal == "expired":
        broker.clock.advance(7200)  # two hours ahead of the client: its one-hour token has expired
        conf = java_oauth_config(protocol, broker, unsecuredLoginStringClaim_sub="svc-java",
                                 unsecuredLoginListClaim_scope=",kafka")
        expected = '"status":"invalid_token"'
    else:
        conf = java_oauth_config(protocol, broker, unsecuredLoginStringClaim_sub="svc-java")
        expected = '"status":"insufficient_scope"'
    lines = run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": "secure", "sync": True,
                                 "config": conf, "records": [{"partition": 0, "value": "v"}],
                                 "timeout_ms": TIMEOUT_MS}, timeout=120, check=False)
    errors = of_type(lines, "send_error") + of_type(lines, "fatal")
    assert errors and errors[0]["error"] == "SaslAuthenticationException", lines
    assert expected in errors[0]["message"].replace(" ", ""), errors[0]
    assert not broker.received(0)
    assert not broker.records("secure")
