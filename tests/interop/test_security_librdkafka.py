"""librdkafka (confluent-kafka and kcat) over SSL, mTLS, SASL_PLAINTEXT and SASL_SSL with PLAIN and
SCRAM-SHA-256/512: produce, consume back, and the principal the broker saw; a wrong password ends in
librdkafka's authentication error, not a hang.

librdkafka before 2.6.1 puts the client nonce twice into its SCRAM client-final message
(confluentinc/librdkafka#4895); Kafka 4.x checks the nonce strictly (RFC 5802) and refuses it, and so
does mockbroker: with such a kcat the SCRAM cases must fail with the authentication error, as they do
against Kafka 4.3.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from mockbroker import MockBroker
from tests.interop.clients import run_kcat
from tests.interop.security_cases import (
    CASES,
    PASSWORD,
    USER,
    WRONG_PASSWORD_CASES,
    Case,
    Setup,
    principals_of_produce,
    secured_broker,
)

pytestmark = pytest.mark.interop


def kcat_librdkafka_version() -> tuple[int, ...]:
    out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=30).stdout
    found = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in found.groups()) if found else (0, 0, 0)


def librdkafka_config(case: Case, setup: Setup, password: str = PASSWORD) -> dict[str, str]:
    conf = {"bootstrap.servers": setup.broker.bootstrap_servers, "security.protocol": case.protocol}
    if case.tls:
        assert setup.ca_file is not None
        conf["ssl.ca.location"] = setup.ca_file
    if setup.client_cert is not None:
        conf["ssl.certificate.location"] = setup.client_cert.cert_file
        conf["ssl.key.location"] = setup.client_cert.key_file
    if case.mechanism is not None:
        conf.update({"sasl.mechanism": case.mechanism, "sasl.username": USER, "sasl.password": password})
    return conf


@pytest.mark.parametrize("case", CASES, ids=str)
def test_confluent_kafka_produces_and_consumes(case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    setup.broker.create_topic("secure")
    conf: dict[str, Any] = librdkafka_config(case, setup)
    producer = Producer(conf)
    for i in range(3):
        producer.produce("secure", key=b"k", value=b"v%d" % i)
    assert producer.flush(60) == 0
    consumer = Consumer({**conf, "group.id": "g", "enable.auto.commit": False})
    consumer.assign([TopicPartition("secure", 0, 0)])
    values = []
    deadline = time.monotonic() + 60
    while len(values) < 3 and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
    consumer.close()
    assert values == [b"v0", b"v1", b"v2"]
    assert [r.value for r in setup.broker.records("secure")] == values
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


@pytest.mark.parametrize("case", WRONG_PASSWORD_CASES, ids=str)
def test_confluent_kafka_wrong_password_is_an_authentication_error(
        case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    errors: list[KafkaError] = []
    producer = Producer({**librdkafka_config(case, setup, password="wrong"), "error_cb": errors.append})
    deadline = time.monotonic() + 60
    while not any(e.code() == KafkaError._AUTHENTICATION for e in errors) and time.monotonic() < deadline:
        producer.poll(0.2)
    auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert auth, errors
    assert "Authentication failed" in auth[0].str()
    assert not setup.broker.received(0)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_kcat_produces_and_consumes(case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    setup.broker.create_topic("secure")
    options = [x for key, value in librdkafka_config(case, setup).items() if key != "bootstrap.servers"
               for x in ("-X", f"{key}={value}")]
    bootstrap = ["-b", setup.broker.bootstrap_servers]
    if case.mechanism and case.mechanism.startswith("SCRAM") and kcat_librdkafka_version() < (2, 6, 1):
        out = run_kcat([*bootstrap, *options, "-L", "-m", "5"], timeout=60, check=False)
        assert out.returncode != 0  # as against Kafka 4.x: the doubled nonce is refused
        assert b"Authentication failed during authentication due to invalid credentials" in out.stderr
        return
    run_kcat([*bootstrap, *options, "-P", "-t", "secure", "-p", "0"], input="one\ntwo\n", timeout=60)
    out = run_kcat([*bootstrap, *options, "-C", "-t", "secure", "-p", "0", "-o", "beginning", "-e", "-q"],
                   timeout=60)
    assert out.stdout.decode().split() == ["one", "two"]
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


def test_kcat_wrong_password_fails(mockbroker_factory: Callable[..., MockBroker]) -> None:
    case = Case("SASL_SSL", "SCRAM-SHA-512")
    setup = secured_broker(case, mockbroker_factory)
    options = [x for key, value in librdkafka_config(case, setup, password="wrong").items()
               if key != "bootstrap.servers" for x in ("-X", f"{key}={value}")]
    out = run_kcat(["-b", setup.broker.bootstrap_servers, *options, "-L", "-m", "5"], timeout=60, check=False)
    assert out.returncode != 0
    assert b"Authentication failed" in out.stderr


@pytest.mark.mockbroker(security="SASL_SSL", users={"alice": "secret"})
def test_readme_security_example(mockbroker: MockBroker) -> None:
    """The README's Security example, as written there."""
    producer = Producer({
        "bootstrap.servers": mockbroker.bootstrap_servers,
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": mockbroker.tls.ca_file,     # the broker's throwaway CA
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "secret",
    })
    producer.produce("orders", b"{}")
    assert producer.flush(30) == 0
    assert {r.principal for r in mockbroker.received(0)} == {"User:alice"}   # 0 = Produce
