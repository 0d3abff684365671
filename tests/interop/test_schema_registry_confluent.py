"""confluent-kafka's Schema Registry client and Avro serdes against the registry beside the broker
(MockBroker(schema_registry=True)): register through the serializer, produce, consume, deserialize through
broker.schema_registry_url; an incompatible change refused with 409 through the client."""

from __future__ import annotations

import json
import struct
import uuid

import pytest

pytest.importorskip("fastavro")
pytest.importorskip("httpx")
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from mockbroker import MockBroker  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.mockbroker(schema_registry=True)]

USER = json.dumps({"type": "record", "name": "User", "namespace": "com.example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
USER_V2 = json.dumps({"type": "record", "name": "User", "namespace": "com.example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"},
    {"name": "email", "type": ["null", "string"], "default": None}]})
USER_BROKEN = json.dumps({"type": "record", "name": "User", "namespace": "com.example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "string"}]})


def test_avro_round_trip_through_the_registry(mockbroker: MockBroker) -> None:
    topic = f"users-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    serializer = AvroSerializer(client, USER)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers})
    users = [{"name": f"user-{i}", "age": 20 + i} for i in range(5)]
    for user in users:
        producer.produce(topic, value=serializer(user, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(15) == 0
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.version == 1 and json.loads(registered.schema.schema_str or "") == json.loads(USER)

    values = [r.value or b"" for r in mockbroker.records(topic)]
    assert len(values) == 5 and all(v[0] == 0 and struct.unpack(">I", v[1:5])[0] == registered.schema_id
                                     for v in values)  # Confluent's framing: magic 0, the schema id

    deserializer = AvroDeserializer(SchemaRegistryClient({"url": mockbroker.schema_registry_url}))
    consumer = Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    read = []
    try:
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                read.append(deserializer(msg.value(), SerializationContext(topic, MessageField.VALUE)))
            if len(read) == len(users):
                break
    finally:
        consumer.close()
    assert read == users


def test_evolution_through_the_client_and_a_409_for_an_incompatible_change(mockbroker: MockBroker) -> None:
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    first = client.register_schema("people-value", Schema(USER, "AVRO"))
    second = client.register_schema("people-value", Schema(USER_V2, "AVRO"))  # int->long, an optional field
    assert second != first and client.get_versions("people-value") == [1, 2]
    assert client.register_schema("other-value", Schema(USER, "AVRO")) == first  # one id across subjects
    assert client.test_compatibility("people-value", Schema(USER_BROKEN, "AVRO")) is False
    with pytest.raises(SchemaRegistryError) as caught:
        client.register_schema("people-value", Schema(USER_BROKEN, "AVRO"))
    assert caught.value.http_status_code == 409 and caught.value.error_code == 409
    assert client.get_compatibility("") == "BACKWARD"
    client.set_compatibility("people-value", "NONE")
    assert client.register_schema("people-value", Schema(USER_BROKEN, "AVRO")) > second
    assert client.lookup_schema("people-value", Schema(USER, "AVRO")).version == 1
    assert client.delete_version("people-value", 3) == 3
    assert client.delete_subject("people-value") == [1, 2]
    assert client.delete_subject("people-value", permanent=True) == [1, 2, 3]
    assert client.get_subjects() == ["other-value"]
    with pytest.raises(SchemaRegistryError) as caught:
        client.get_latest_version("people-value")
    assert caught.value.http_status_code == 404 and caught.value.error_code == 40401
