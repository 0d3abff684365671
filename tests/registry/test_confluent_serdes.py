"""confluent-kafka's JSON Schema and Protobuf serializers and deserializers through the registry beside the
broker: the serializer registers (schemaType JSON / PROTOBUF, a Protobuf schema as its base64 descriptor),
the deserializer fetches the writer's schema by id (`?format=serialized` for Protobuf) and reads the value
back; the registry serves the Protobuf schema as `.proto` text."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest

pytest.importorskip("jsonschema")
pytest.importorskip("httpx")
pytest.importorskip("google.protobuf")
from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from mockbroker import MockBroker  # noqa: E402

pytestmark = pytest.mark.mockbroker(schema_registry=True)

USER = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
                   "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                   "required": ["name"], "additionalProperties": False})
USER_PROTO = """syntax = "proto3";
package com.example;

message User {
  string name = 1;
  int32 age = 2;
  repeated string tags = 3;
  map<string, int64> scores = 4;
}
"""


def test_json_schema_round_trip(mockbroker: MockBroker) -> None:
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    context = SerializationContext("users", MessageField.VALUE)
    data = JSONSerializer(USER, client)({"name": "ada", "age": 36}, context)
    assert data is not None and data[0] == 0
    registered = client.get_latest_version("users-value")
    assert registered.schema.schema_type == "JSON" and struct.unpack(">I", data[1:5])[0] == registered.schema_id
    assert json.loads(registered.schema.schema_str or "") == json.loads(USER)
    assert JSONDeserializer(None, schema_registry_client=client)(data, context) == {"name": "ada", "age": 36}
    assert JSONDeserializer(USER)(data, context) == {"name": "ada", "age": 36}


def message_class(text: str, name: str) -> Any:
    """A generated-like message class for the `.proto` text, built in a pool of its own."""
    from google.protobuf import descriptor_pool, message_factory

    from mockbroker.registry.protobuf import parse

    pool = descriptor_pool.DescriptorPool()
    pool.Add(parse(text).file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def test_protobuf_round_trip(mockbroker: MockBroker) -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer

    user_class = message_class(USER_PROTO, "com.example.User")
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})
    context = SerializationContext("people", MessageField.VALUE)
    user = user_class(name="ada", age=36, tags=["x", "y"], scores={"a": 1})
    data = ProtobufSerializer(user_class, client, {"use.deprecated.format": False})(user, context)
    assert data is not None and data[0] == 0
    registered = client.get_latest_version("people-value")
    assert registered.schema.schema_type == "PROTOBUF" and struct.unpack(">I", data[1:5])[0] == registered.schema_id
    text = registered.schema.schema_str or ""
    assert "message User {" in text and "map<string, int64> scores = 4;" in text  # served as .proto text
    read = ProtobufDeserializer(user_class, {"use.deprecated.format": False}, client)(data, context)
    assert read == user
    # registering the same schema as text finds the same id
    from confluent_kafka.schema_registry import Schema

    assert client.register_schema("people-value", Schema(text, "PROTOBUF")) == registered.schema_id
