"""kafka-python and aiokafka against Kafka's authorizer: an ACL-limited user gets the client's
TopicAuthorizationFailedError, GroupAuthorizationFailedError and TransactionalIdAuthorizationFailed(Error)
for what it may not use and works for what it may."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import errors as aio_errors
from kafka import KafkaConsumer, KafkaProducer
from kafka import errors as kp_errors

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

pytestmark = pytest.mark.interop


def config(broker: MockBroker) -> dict[str, Any]:
    return {"bootstrap_servers": broker.bootstrap_servers, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN", "sasl_plain_username": USER, "sasl_plain_password": PASSWORD}


def test_kafka_python_acl_limited_user_gets_authorization_errors(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = acl_broker(mockbroker_factory)
    producer = KafkaProducer(**config(broker), max_block_ms=10000)
    with pytest.raises(kp_errors.TopicAuthorizationFailedError):
        producer.send(FORBIDDEN, b"v").get(timeout=30)
    producer.send(ALLOWED, b"v").get(timeout=30)
    producer.close(timeout=10)
    assert broker.records(FORBIDDEN) == []

    def consume(group: str) -> list[bytes]:
        consumer = KafkaConsumer(ALLOWED, **config(broker), group_id=group, auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=30000)
        try:
            values = [msg.value for msg in [next(consumer)]]
            consumer.commit()
            return values
        finally:
            consumer.close()

    with pytest.raises(kp_errors.GroupAuthorizationFailedError):
        consume(FORBIDDEN_GROUP)
    assert consume(ALLOWED_GROUP) == [b"v"]
    assert broker.committed(ALLOWED_GROUP) == {(ALLOWED, 0): 1}

    with pytest.raises(kp_errors.TransactionalIdAuthorizationFailedError):
        producer = KafkaProducer(**config(broker), transactional_id=FORBIDDEN_TXN, max_block_ms=10000)
        try:
            producer.init_transactions()
        finally:
            producer.close(timeout=5)
    producer = KafkaProducer(**config(broker), transactional_id=ALLOWED_TXN, max_block_ms=10000)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(ALLOWED, b"t")
    producer.commit_transaction()
    producer.close(timeout=10)
    assert [r.value for r in broker.records(ALLOWED) if r.value] == [b"v", b"t"]


async def test_aiokafka_acl_limited_user_gets_authorization_errors(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = acl_broker(mockbroker_factory)
    producer = AIOKafkaProducer(**config(broker), request_timeout_ms=10000)
    await producer.start()
    try:
        with pytest.raises(aio_errors.TopicAuthorizationFailedError):
            async with asyncio.timeout(30):
                await producer.send_and_wait(FORBIDDEN, b"v")
        await producer.send_and_wait(ALLOWED, b"v")
    finally:
        await producer.stop()
    assert broker.records(FORBIDDEN) == []

    async def consume(group: str) -> bytes | None:
        consumer = AIOKafkaConsumer(ALLOWED, **config(broker), group_id=group, auto_offset_reset="earliest",
                                    enable_auto_commit=False)
        await consumer.start()
        try:
            async with asyncio.timeout(30):
                msg = await consumer.getone()
            await consumer.commit()
            return msg.value
        finally:
            await consumer.stop()

    with pytest.raises(aio_errors.GroupAuthorizationFailedError):
        await consume(FORBIDDEN_GROUP)
    assert await consume(ALLOWED_GROUP) == b"v"
    assert broker.committed(ALLOWED_GROUP) == {(ALLOWED, 0): 1}

    forbidden = AIOKafkaProducer(**config(broker), transactional_id=FORBIDDEN_TXN)
    try:
        with pytest.raises(aio_errors.TransactionalIdAuthorizationFailed):
            async with asyncio.timeout(30):
                await forbidden.start()
    finally:
        await forbidden.stop()
    allowed = AIOKafkaProducer(**config(broker), transactional_id=ALLOWED_TXN)
    await allowed.start()
    try:
        async with allowed.transaction():
            await allowed.send_and_wait(ALLOWED, b"t")
    finally:
        await allowed.stop()
    assert [r.value for r in broker.records(ALLOWED) if r.value] == [b"v", b"t"]
