"""A secured cluster: every listener of every node honours its security protocol (SASL_SSL with SCRAM
here), and a client that follows a leader move lands on another node's secured listener."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from mockbroker import MockBroker

pytestmark = pytest.mark.interop


def test_every_node_of_a_sasl_ssl_cluster_authenticates_and_serves_across_a_leader_move(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(brokers=3, security="SASL_SSL", users={"alice": "secret"})
    assert broker.tls is not None and broker.tls.ca_file is not None
    assert [lst.security_protocol for lst in broker.cluster.listeners] == ["SASL_SSL"] * 3
    broker.create_topic("vault", partitions=1, replication_factor=3)
    conf = {"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(broker.tls.ca_file), "sasl.mechanism": "PLAIN", "sasl.username": "alice",
            "sasl.password": "secret"}
    producer = Producer({**conf, "enable.idempotence": True, "acks": "all"})
    first = broker.partition_state("vault", 0).leader
    producer.produce("vault", value=b"before", partition=0)
    assert producer.flush(30) == 0

    second = next(n for n in (1, 2, 3) if n != first)
    broker.move_leader("vault", 0, second)
    producer.produce("vault", value=b"after", partition=0)
    assert producer.flush(60) == 0

    assert [r.value for r in broker.records("vault")] == [b"before", b"after"]
    assert broker.partition_state("vault", 0).leader == second  # "after" went to the new leader's listener
    assert {r.principal for r in broker.received(api_key=0)} == {"User:alice"}
    consumer = Consumer({**conf, "group.id": "vault-reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("vault", 0, 0)])
        got: list[bytes] = []
        for _ in range(60):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            if len(got) == 2:
                break
        assert got == [b"before", b"after"]
    finally:
        consumer.close()
