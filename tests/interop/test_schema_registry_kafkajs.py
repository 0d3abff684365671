"""KafkaJS's @kafkajs/confluent-schema-registry (npm, pinned in tests/interop/harness/node/package.json)
against the registry beside the broker (MockBroker(schema_registry=True)): it registers an Avro schema,
encodes values, a KafkaJS producer sends them and a KafkaJS consumer reads them back, and it decodes them
through the registry; confluent-kafka's Python serdes read what it wrote and write what it reads."""

from __future__ import annotations

import base64
import json
import struct
import uuid
from typing import Any

import pytest

pytest.importorskip("fastavro")
pytest.importorskip("httpx")
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from mockbroker import MockBroker  # noqa: E402
from tests.interop.clients import of_type, run_kafkajs  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.mockbroker(schema_registry=True)]

TIMEOUT_MS = 20_000
READING = {"type": "record", "name": "Reading", "namespace": "com.example", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "celsius", "type": "double"},
    {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []}]}


def readings(n: int) -> list[dict[str, Any]]:
    return [{"sensor": f"s-{i}", "celsius": 20.5 + i, "tags": ["a"] * (i % 3)} for i in range(n)]


def kafkajs_values(broker: MockBroker, topic: str, count: int) -> list[str]:
    """The values of topic as a KafkaJS consumer reads them (base64)."""
    lines = run_kafkajs("consume", {"bootstrap": broker.bootstrap_servers, "topic": topic, "until_end": True,
                                    "group_id": f"g-{topic}", "timeout_ms": TIMEOUT_MS})
    values = [line["value_b64"] for line in of_type(lines, "record")]
    assert len(values) == count
    return values


def test_kafkajs_registers_encodes_produces_consumes_decodes(mockbroker: MockBroker) -> None:
    topic = f"readings-{uuid.uuid4().hex[:8]}"
    want = readings(4)
    lines = run_kafkajs("sr-produce", {"bootstrap": mockbroker.bootstrap_servers, "registry": mockbroker.schema_registry_url,
                                       "topic": topic, "schema": json.dumps(READING), "values": want})
    [registered] = of_type(lines, "registered")
    assert of_type(lines, "done")[0]["sent"] == 4
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    latest = client.get_latest_version(f"{topic}-value")
    assert registered["id"] == registered["latest_id"] == latest.schema_id and latest.version == 1

    values = kafkajs_values(mockbroker, topic, 4)
    assert {struct.unpack(">bI", base64.b64decode(v)[:5]) for v in values} == {(0, latest.schema_id)}
    decoded = of_type(run_kafkajs("sr-decode", {"registry": mockbroker.schema_registry_url, "values_b64": values}),
                      "decoded")
    assert [d["value"] for d in decoded] == want and {d["schema_id"] for d in decoded} == {latest.schema_id}
    deserialize = AvroDeserializer(client)
    context = SerializationContext(topic, MessageField.VALUE)
    assert [deserialize(base64.b64decode(v), context) for v in values] == want  # Python reads KafkaJS's


def test_kafkajs_decodes_what_python_wrote_and_shares_its_id(mockbroker: MockBroker) -> None:
    topic = f"readings-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    serialize = AvroSerializer(client, json.dumps(READING))
    context = SerializationContext(topic, MessageField.VALUE)
    want = readings(2)
    written = [base64.b64encode(serialize(r, context)).decode() for r in want]
    python_id = client.get_latest_version(f"{topic}-value").schema_id
    decoded = of_type(run_kafkajs("sr-decode", {"registry": mockbroker.schema_registry_url, "values_b64": written}),
                      "decoded")
    assert [d["value"] for d in decoded] == want and {d["schema_id"] for d in decoded} == {python_id}
    # The same schema registered by KafkaJS under another subject is the same id; under its own subject,
    # again, no new version.
    lines = run_kafkajs("sr-call", {"registry": mockbroker.schema_registry_url, "calls": [
        {"op": "register", "subject": "other-value", "schema": json.dumps(READING)},
        {"op": "register", "subject": f"{topic}-value", "schema": json.dumps(READING)},
        {"op": "latest", "subject": "other-value"},
        {"op": "latest", "subject": "nobody-value"}]})
    results = of_type(lines, "result")
    assert [r["id"] for r in results] == [python_id] * 3
    [missing] = of_type(lines, "error")
    assert missing["op"] == "latest" and missing["status"] == 404
    assert client.get_versions(f"{topic}-value") == [1]


def test_kafkajs_with_basic_auth() -> None:
    with MockBroker(users={"alice": "wonder"}, schema_registry=True).run_in_thread() as broker:
        calls = [{"op": "register", "subject": "secure-value", "schema": json.dumps(READING)},
                 {"op": "latest", "subject": "secure-value"}]
        good = run_kafkajs("sr-call", {"registry": broker.schema_registry_url, "calls": calls,
                                       "auth": {"username": "alice", "password": "wonder"}})
        assert [r["id"] for r in of_type(good, "result")] == [1, 1]
        bad = run_kafkajs("sr-call", {"registry": broker.schema_registry_url, "calls": calls,
                                      "auth": {"username": "alice", "password": "nope"}})
        assert [e["status"] for e in of_type(bad, "error")] == [401, 401]
        assert [e["message"] for e in of_type(bad, "error")][0].endswith("Unauthorized")
