"""The image tier (scripts/docker-test, marker docker_image): the Schema Registry the image serves on 8081,
used by the three registry clients the project tests, as a compose stack would use cp-schema-registry beside
Kafka. In one container: confluent-kafka's AvroSerializer registers, produces, and its consumer reads and
deserializes; Java's KafkaAvroSerializer 7.0.16 writes what Python reads; KafkaJS's confluent-schema-registry
registers, encodes, produces, and decodes. Every id the clients see is the registry's, and the records carry
Confluent's framing (magic 0, the schema id)."""

from __future__ import annotations

import base64
import json
import socket
import struct
import uuid
from typing import Any

import pytest

from tests.docker.test_image_run import IMAGE, container, health, logs, loopback_env, registry_up, wait_for

pytest.importorskip("fastavro")
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from tests.interop.clients import of_type, run_java, run_kafkajs  # noqa: E402

pytestmark = pytest.mark.docker_image
assert IMAGE  # test_image_run skips or fails the module without an image

REGISTRY = "http://127.0.0.1:8081"
USER = json.dumps({"type": "record", "name": "User", "namespace": "com.example",
                   "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
ORDER = json.dumps({"type": "record", "name": "Order", "namespace": "com.example",
                    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}]})


def read_values(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: list[bytes] = []
    try:
        for _ in range(240):  # a generous bound: 120 s of polls
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                values.append(msg.value() or b"")
            if len(values) == count:
                break
    finally:
        consumer.close()
    assert len(values) == count
    return values


def test_three_registry_clients_round_trip_through_the_images_registry_on_8081() -> None:
    with socket.socket() as probe:  # the host's network: the image's fixed port must be free here
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", 8081))
    env, port, _ = loopback_env()
    bootstrap = f"127.0.0.1:{port}"
    with container(env, registry_default=True) as cid:
        wait_for("healthy", lambda: health(cid) == "healthy")
        wait_for("the registry answering", lambda: registry_up(REGISTRY))
        client = SchemaRegistryClient({"url": REGISTRY})

        # confluent-kafka: register through the serializer, produce, consume, deserialize
        topic = f"users-{uuid.uuid4().hex[:8]}"
        users = [{"name": f"user-{i}", "age": 20 + i} for i in range(3)]
        serialize = AvroSerializer(client, USER)
        producer = Producer({"bootstrap.servers": bootstrap})
        for user in users:
            producer.produce(topic, value=serialize(user, SerializationContext(topic, MessageField.VALUE)))
        assert producer.flush(30) == 0
        user_id = client.get_latest_version(f"{topic}-value").schema_id
        values = read_values(bootstrap, topic, 3)
        assert {struct.unpack(">bI", v[:5]) for v in values} == {(0, user_id)}
        deserialize = AvroDeserializer(SchemaRegistryClient({"url": REGISTRY}))
        assert [deserialize(v, SerializationContext(topic, MessageField.VALUE)) for v in values] == users

        # Java's KafkaAvroSerializer writes (auto-registering), Python reads
        topic = f"orders-{uuid.uuid4().hex[:8]}"
        orders: list[dict[str, Any]] = [{"id": i, "item": f"item-{i}"} for i in range(3)]
        lines = run_java("avro-produce", {"bootstrap": bootstrap, "registry": REGISTRY, "topic": topic,
                                          "schema": ORDER, "values": orders})
        assert of_type(lines, "done") == [{"type": "done", "sent": 3}]
        order_id = client.get_latest_version(f"{topic}-value").schema_id
        values = read_values(bootstrap, topic, 3)
        assert {struct.unpack(">bI", v[:5]) for v in values} == {(0, order_id)}
        assert [deserialize(v, SerializationContext(topic, MessageField.VALUE)) for v in values] == orders

        # KafkaJS's confluent-schema-registry: registers the same User schema (same id), encodes, produces, decodes
        topic = f"people-{uuid.uuid4().hex[:8]}"
        lines = run_kafkajs("sr-produce", {"bootstrap": bootstrap, "registry": REGISTRY, "topic": topic,
                                           "schema": USER, "values": users})
        [registered] = of_type(lines, "registered")
        assert registered["id"] == user_id and of_type(lines, "done")[0]["sent"] == 3
        values = read_values(bootstrap, topic, 3)
        decoded = of_type(run_kafkajs("sr-decode", {"registry": REGISTRY, "values_b64": [
            base64.b64encode(v).decode() for v in values]}), "decoded")
        assert [d["value"] for d in decoded] == users
        assert "Traceback" not in logs(cid)
