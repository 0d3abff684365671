"""kafka-python and aiokafka over SSL, mTLS, SASL_PLAINTEXT and SASL_SSL with PLAIN and SCRAM-SHA-256/512:
produce, consume back, the principal the broker saw; a wrong password ends in the client's
authentication error (SaslAuthenticationFailed), not a hang."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaConnectionError
from aiokafka.helpers import create_ssl_context
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition
from kafka.errors import KafkaError

from mockbroker import MockBroker
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


def kafka_python_config(case: Case, setup: Setup, password: str = PASSWORD) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap_servers": setup.broker.bootstrap_servers, "security_protocol": case.protocol}
    if case.tls:
        conf["ssl_cafile"] = setup.ca_file
    if setup.client_cert is not None:
        conf["ssl_certfile"] = setup.client_cert.cert_file
        conf["ssl_keyfile"] = setup.client_cert.key_file
    if case.mechanism is not None:
        conf.update(sasl_mechanism=case.mechanism, sasl_plain_username=USER, sasl_plain_password=password)
    return conf


def aiokafka_config(case: Case, setup: Setup, password: str = PASSWORD) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap_servers": setup.broker.bootstrap_servers, "security_protocol": case.protocol}
    if case.tls:
        context: ssl.SSLContext = create_ssl_context(
            cafile=setup.ca_file,
            certfile=setup.client_cert.cert_file if setup.client_cert else None,
            keyfile=setup.client_cert.key_file if setup.client_cert else None)
        conf["ssl_context"] = context
    if case.mechanism is not None:
        conf.update(sasl_mechanism=case.mechanism, sasl_plain_username=USER, sasl_plain_password=password)
    return conf


@pytest.mark.parametrize("case", CASES, ids=str)
def test_kafka_python_produces_and_consumes(case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    setup.broker.create_topic("secure")
    conf = kafka_python_config(case, setup)
    producer = KafkaProducer(**conf)
    for i in range(3):
        producer.send("secure", key=b"k", value=b"v%d" % i, partition=0).get(timeout=60)
    producer.close(timeout=30)
    consumer = KafkaConsumer(**conf, enable_auto_commit=False, consumer_timeout_ms=30000)
    consumer.assign([KpTopicPartition("secure", 0)])
    consumer.seek_to_beginning()
    values = []
    for msg in consumer:
        values.append(msg.value)
        if len(values) == 3:
            break
    consumer.close()
    assert values == [b"v0", b"v1", b"v2"]
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


@pytest.mark.parametrize("case", WRONG_PASSWORD_CASES, ids=str)
def test_kafka_python_wrong_password_is_an_authentication_error(
        case: Case, mockbroker_factory: Callable[..., MockBroker], caplog: pytest.LogCaptureFixture) -> None:
    setup = secured_broker(case, mockbroker_factory)
    caplog.set_level(logging.WARNING, logger="kafka")
    with pytest.raises(KafkaError) as failure:  # kafka-python: "Unable to bootstrap"; the cause is logged
        KafkaProducer(**kafka_python_config(case, setup, password="wrong"), bootstrap_timeout_ms=5000)
    text = str(failure.value) + caplog.text
    assert "SaslAuthenticationFailed" in text or "Authentication failed" in text, text
    assert not setup.broker.received(0)


@pytest.mark.parametrize("case", CASES, ids=str)
async def test_aiokafka_produces_and_consumes(case: Case, mockbroker_factory: Callable[..., MockBroker]) -> None:
    setup = secured_broker(case, mockbroker_factory)
    setup.broker.create_topic("secure")
    conf = aiokafka_config(case, setup)
    producer = AIOKafkaProducer(**conf)
    await producer.start()
    try:
        for i in range(3):
            await producer.send_and_wait("secure", key=b"k", value=b"v%d" % i, partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(**conf, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition("secure", 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        values: list[bytes | None] = []
        async with asyncio.timeout(60):
            while len(values) < 3:
                batch = await consumer.getmany(tp, timeout_ms=1000)
                values.extend(m.value for m in batch.get(tp, []))
    finally:
        await consumer.stop()
    assert values == [b"v0", b"v1", b"v2"]
    assert principals_of_produce(setup.broker) == {setup.expected_principal}


@pytest.mark.parametrize("case", WRONG_PASSWORD_CASES, ids=str)
async def test_aiokafka_wrong_password_is_an_authentication_error(
        case: Case, mockbroker_factory: Callable[..., MockBroker], caplog: pytest.LogCaptureFixture) -> None:
    setup = secured_broker(case, mockbroker_factory)
    caplog.set_level(logging.ERROR, logger="aiokafka")
    producer = AIOKafkaProducer(**aiokafka_config(case, setup, password="wrong"))
    try:
        async with asyncio.timeout(60):
            with pytest.raises(KafkaConnectionError):  # aiokafka's bootstrap error; the cause is logged
                await producer.start()
    finally:
        await producer.stop()
    assert "SaslAuthenticationFailed" in caplog.text and "Authentication failed" in caplog.text, caplog.text
    assert not setup.broker.received(0)
