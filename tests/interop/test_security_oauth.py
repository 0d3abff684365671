"""SASL/OAUTHBEARER with real clients (Kafka's default unsecured JWTs): confluent-kafka and kcat
(enable.sasl.oauthbearer.unsecure.jwt), aiokafka and kafka-python (token providers), KafkaJS
(oauthBearerProvider), each over SASL_SSL and SASL_PLAINTEXT; the principal is the token's
subject. An expired token fails with the client's authentication error. kafka-python with a signed token
against a broker configured with Kafka's sasl.oauthbearer.* settings and a JWKS.

The Java client's OAUTHBEARER (its unsecured login handler) is in test_security_java.py."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider as AioTokenProvider
from aiokafka.helpers import create_ssl_context
from confluent_kafka import KafkaError, Producer
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka import KafkaProducer
from kafka.net.sasl.oauth import AbstractTokenProvider as KpTokenProvider

from mockbroker import MockBroker
from mockbroker.security.oauth import OAuthConfig, unsecured_token
from tests.interop.clients import of_type, run_kafkajs, run_kcat

pytestmark = pytest.mark.interop


def oauth_broker(factory: Callable[..., MockBroker], protocol: str = "SASL_SSL") -> MockBroker:
    broker = factory(security=protocol, oauth=OAuthConfig(), sasl_mechanisms=["OAUTHBEARER"])
    broker.create_topic("secure")
    return broker


def assert_produced_as(broker: MockBroker, principal: str, count: int) -> None:
    assert len(broker.records("secure")) == count
    assert {r.principal for r in broker.received(0)} == {principal}


@pytest.mark.parametrize("protocol", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_confluent_kafka_and_kcat_with_unsecured_jwts(protocol: str, mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = oauth_broker(mockbroker_factory, protocol)
    conf = {"security.protocol": protocol, "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "principal=svc-orders"}
    if protocol == "SASL_SSL":
        conf["ssl.ca.location"] = broker.tls.ca_file
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, **conf})
    producer.produce("secure", b"from confluent-kafka", partition=0)
    assert producer.flush(60) == 0
    options = [x for k, v in conf.items() for x in ("-X", f"{k}={v}")]
    run_kcat(["-b", broker.bootstrap_servers, *options, "-P", "-t", "secure", "-p", "0"], input="from kcat\n",
             timeout=60)
    assert_produced_as(broker, "User:svc-orders", 2)


def test_confluent_kafka_expired_token_is_an_authentication_error(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = oauth_broker(mockbroker_factory)
    broker.clock.advance(7200)  # the broker's clock is two hours ahead: librdkafka's one-hour token is expired
    errors: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_SSL",
                         "ssl.ca.location": broker.tls.ca_file, "sasl.mechanism": "OAUTHBEARER",
                         "enable.sasl.oauthbearer.unsecure.jwt": "true",
                         "sasl.oauthbearer.config": "principal=svc-orders", "error_cb": errors.append})
    deadline = time.monotonic() + 60
    while not any(e.code() == KafkaError._AUTHENTICATION for e in errors) and time.monotonic() < deadline:
        producer.poll(0.2)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth and "invalid_token" in auth[0].str(), errors
    assert not broker.received(0)


class _KpToken(KpTokenProvider):
    def __init__(self, token: str) -> None:
        self._token = token

    def token(self) -> str:
        return self._token


class _AioToken(AioTokenProvider):
    def __init__(self, token: str) -> None:
        self._token = token

    async def token(self) -> str:
        return self._token


@pytest.mark.parametrize("protocol", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_kafka_python_and_aiokafka_with_token_providers(protocol: str,
                                                        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = oauth_broker(mockbroker_factory, protocol)
    token = unsecured_token("svc-python", now_s=broker.clock.now_ms() / 1000)
    tls = protocol == "SASL_SSL"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, security_protocol=protocol,
                             ssl_cafile=broker.tls.ca_file if tls else None, sasl_mechanism="OAUTHBEARER",
                             sasl_oauth_token_provider=_KpToken(token))
    producer.send("secure", b"from kafka-python", partition=0).get(timeout=60)
    producer.close(timeout=30)

    async def aiokafka_send() -> None:
        aio = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, security_protocol=protocol,
                               ssl_context=create_ssl_context(cafile=broker.tls.ca_file) if tls else None,
                               sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=_AioToken(token))
        await aio.start()
        try:
            await aio.send_and_wait("secure", b"from aiokafka", partition=0)
        finally:
            await aio.stop()

    asyncio.run(aiokafka_send())
    assert_produced_as(broker, "User:svc-python", 2)


@pytest.mark.parametrize("protocol", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_kafkajs_with_an_unsecured_jwt(protocol: str, mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = oauth_broker(mockbroker_factory, protocol)
    token = unsecured_token("svc-node", now_s=broker.clock.now_ms() / 1000)
    client: dict[str, Any] = {"sasl": {"mechanism": "oauthbearer", "token": token}}
    if protocol == "SASL_SSL":
        client["ssl"] = {"ca": [broker.tls.ca_pem.decode()]}
    lines = run_kafkajs("produce", {"bootstrap": broker.bootstrap_servers, "client": client, "topic": "secure",
                                    "sync": True, "records": [{"partition": 0, "value": "from kafkajs"}]}, timeout=120)
    assert of_type(lines, "done") == [{"type": "done", "sent": 1, "failed": 0}], lines
    assert_produced_as(broker, "User:svc-node", 1)


def test_kafka_python_with_a_signed_token_and_the_brokers_jwks_settings(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    # The broker is configured as a Kafka broker is for an identity provider: sasl.oauthbearer.* settings and
    # a JWKS (here a file); the client hands over a token the provider signed.
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())) | {"kid": "idp-1"}
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [jwk]}))
    broker = mockbroker_factory(security="SASL_PLAINTEXT", config={
        "sasl.enabled.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.jwks.endpoint.url": (tmp_path / "jwks.json").as_uri(),
        "sasl.oauthbearer.expected.audience": "kafka"})
    broker.create_topic("secure")
    now = int(broker.clock.now_ms() / 1000)
    token = jwt.encode({"sub": "svc-signed", "aud": "kafka", "iat": now, "exp": now + 600}, key, algorithm="RS256",
                       headers={"kid": "idp-1"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=_KpToken(token))
    producer.send("secure", b"signed", partition=0).get(timeout=60)
    producer.close(timeout=30)
    assert_produced_as(broker, "User:svc-signed", 1)
