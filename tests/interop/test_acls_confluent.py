"""confluent-kafka (librdkafka) against Kafka's authorizer: an ACL-limited user gets
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED and TRANSACTIONAL_ID_AUTHORIZATION_FAILED for what
it may not use and works for what it may; librdkafka re-authenticates (KIP-368) when the broker answers
a session lifetime, and keeps working past the session's end."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

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
SASL_AUTHENTICATE = 36


def config(broker: MockBroker, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": USER, "sasl.password": PASSWORD, **extra}


def produce_one(broker: MockBroker, topic: str) -> KafkaError | None:
    outcome: list[KafkaError | None] = []
    producer = Producer(config(broker, **{"message.timeout.ms": 15000}))
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(30)
    assert len(outcome) == 1
    return outcome[0]


def consume_one(broker: MockBroker, group: str) -> tuple[bytes | None, KafkaError | None]:
    consumer = Consumer(config(broker, **{"group.id": group, "auto.offset.reset": "earliest"}))
    consumer.subscribe([ALLOWED])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                return None, msg.error()
            consumer.commit(msg, asynchronous=False)
            return msg.value(), None
        raise AssertionError("no record and no error within 30 s")
    finally:
        consumer.close()


def test_confluent_acl_limited_user_gets_authorization_errors(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = acl_broker(mockbroker_factory)
    err = produce_one(broker, FORBIDDEN)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, err
    assert produce_one(broker, ALLOWED) is None
    assert broker.records(FORBIDDEN) == []

    value, err = consume_one(broker, FORBIDDEN_GROUP)
    assert err is not None and err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, err
    assert consume_one(broker, ALLOWED_GROUP) == (b"v", None)
    assert broker.committed(ALLOWED_GROUP) == {(ALLOWED, 0): 1}

    producer = Producer(config(broker, **{"transactional.id": FORBIDDEN_TXN}))
    with pytest.raises(KafkaException) as failure:
        producer.init_transactions(30)
    assert failure.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    producer = Producer(config(broker, **{"transactional.id": ALLOWED_TXN}))
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(ALLOWED, b"t")
    producer.commit_transaction(30)
    assert [r.value for r in broker.records(ALLOWED) if not r.is_transactional or r.value] == [b"v", b"t"]


def test_librdkafka_reauthenticates_before_the_session_ends(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # A 3 s session (real time: librdkafka times re-authentication on its own clock); the producer keeps
    # producing for 9 s, so it must re-authenticate at least twice on the same connection.
    broker = mockbroker_factory(security="SASL_PLAINTEXT", users={USER: PASSWORD},
                                config={"connections.max.reauth.ms": 3000})
    broker.create_topic("reauth")
    producer = Producer(config(broker, **{"message.timeout.ms": 20000}))
    errors: list[KafkaError] = []
    sent = 0
    deadline = time.monotonic() + 9
    while time.monotonic() < deadline:
        producer.produce("reauth", b"%d" % sent, on_delivery=lambda err, msg: err and errors.append(err))
        sent += 1
        producer.flush(20)
        time.sleep(0.2)
    assert producer.flush(20) == 0
    assert errors == []
    assert len(broker.records("reauth")) == sent
    # On one connection: its first login and at least two re-authentications (SaslHandshake again).
    per_connection: dict[int, int] = {}
    for request in broker.received(SASL_AUTHENTICATE):
        per_connection[request.connection_id] = per_connection.get(request.connection_id, 0) + 1
    assert max(per_connection.values()) >= 3, per_connection
    produced_on = {r.connection_id for r in broker.received(0)}
    assert any(per_connection.get(c, 0) >= 3 for c in produced_on), (per_connection, produced_on)


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", users={"alice": "secret"}, acls=True)
def test_readme_acl_example(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders")
    mockbroker.create_topic("payroll")
    mockbroker.add_acl("User:alice", "WRITE", topic="orders")
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers,
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                         "sasl.username": "alice", "sasl.password": "secret"})
    errors = {}
    for topic in ("orders", "payroll"):
        producer.produce(topic, b"{}", on_delivery=lambda err, msg: errors.update({msg.topic(): err}))
    producer.flush(30)
    assert errors["orders"] is None
    assert errors["payroll"].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
