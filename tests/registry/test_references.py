"""Schema references (mockbroker/registry/references.py and the model): an Avro named type, a JSON Schema
`$ref` and a Protobuf import from another subject's version; the references in the bodies, the records and
the identity; /referencedby; deleting a referenced version refused with 42206; and confluent-kafka's
ProtobufSerializer registering an import as a reference."""

from __future__ import annotations

import json

import pytest

from mockbroker.registry import store
from mockbroker.registry.model import RegistryError, SchemaRegistry
from mockbroker.registry.rebuild import replay

ADDRESS = json.dumps({"type": "record", "name": "Address", "namespace": "com.example",
                      "fields": [{"name": "city", "type": "string"}]})
USER = json.dumps({"type": "record", "name": "User", "namespace": "com.example",
                   "fields": [{"name": "home", "type": "com.example.Address"}]})
REF = [{"name": "com.example.Address", "subject": "address", "version": 1}]


def code(call: object, *args: object, **kwargs: object) -> int:
    with pytest.raises(RegistryError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value.code


def test_an_avro_named_type_from_another_subject() -> None:
    reg = SchemaRegistry()
    address = reg.register("address", ADDRESS)
    assert code(reg.register, "user", USER) == 42201  # the type is unknown without the reference
    user = reg.register("user", USER, references=REF)
    assert user != address and reg.schema_body(user) == {"schema": USER.replace(" ", ""), "references": REF}
    assert reg.lookup("user", USER, references=REF).version == 1
    assert reg.lookup("user", USER, references=[{**REF[0], "version": -1}]).version == 1  # -1: the latest, 1
    assert reg.register("user", USER, references=[{**REF[0], "version": -1}]) == user
    assert reg.referenced_by("address", 1) == [user]
    assert reg.referenced_by("address", "latest") == [user]
    assert code(reg.delete_version, "address", 1) == 42206
    assert code(reg.delete_subject, "address") == 42206
    reg.delete_subject("user")
    assert reg.referenced_by("address", 1) == []  # a soft-deleted referrer does not hold it
    assert reg.delete_version("address", 1) == 1


@pytest.mark.parametrize("bad", [
    "x", [{"name": "a"}], [{"name": "a", "subject": "address", "version": 0}],
    [{"name": "a", "subject": "address", "version": "1"}], [{"name": "a", "subject": "nope", "version": 1}],
    [{"name": "a", "subject": "address", "version": 9}], REF + REF])
def test_bad_references_are_42201(bad: object) -> None:
    reg = SchemaRegistry()
    reg.register("address", ADDRESS)
    assert code(reg.register, "user", USER, references=bad) == 42201


def test_the_same_text_with_other_references_is_another_schema_and_records_keep_them() -> None:
    reg = SchemaRegistry(compatibility="NONE")
    reg.register("address", ADDRESS)
    reg.register("address", ADDRESS.replace("city", "town"))
    one = reg.register("user", USER, references=REF)
    two = reg.register("user", USER, references=[{**REF[0], "version": 2}])
    assert one != two
    (key, value), = [r for r in reg.journal if r[0] == store.schema_key("user", 2)]
    assert value is not None and value["references"] == [{**REF[0], "version": 2}]
    again = SchemaRegistry()
    replay(again, [store.encode(r) for r in reg.journal])
    assert again.ids == reg.ids and again.references == reg.references


def test_json_schema_ref_to_another_subject() -> None:
    pytest.importorskip("jsonschema")
    reg = SchemaRegistry()
    reg.register("point", json.dumps({"type": "object", "properties": {"x": {"type": "integer"}}}), "JSON")
    shape = json.dumps({"type": "object", "properties": {"at": {"$ref": "point.json"}}})
    ref = [{"name": "point.json", "subject": "point", "version": 1}]
    reg.register("shape", shape, "JSON", ref)
    reg.set_compatibility("point", "NONE")
    reg.register("point", json.dumps({"type": "object", "properties": {"x": {"type": "string"}}}), "JSON")
    # the referenced type changed between the versions: the diff follows the $ref into each
    messages = reg.test_compatibility("shape", shape, None, "JSON", [{**ref[0], "version": 2}])
    assert messages and "TYPE_CHANGED" in messages[0] and "#/properties/at/properties/x" in messages[0]


def test_protobuf_import_of_another_subject() -> None:
    pytest.importorskip("grpc_tools")
    reg = SchemaRegistry()
    reg.register("other.proto", 'syntax = "proto3";\npackage o;\nmessage Point { int32 x = 1; }\n', "PROTOBUF")
    text = 'syntax = "proto3";\nimport "other.proto";\nmessage Shape { o.Point at = 1; }\n'
    assert code(reg.register, "shape", text, "PROTOBUF") == 42201
    shape = reg.register("shape", text, "PROTOBUF", [{"name": "other.proto", "subject": "other.proto", "version": 1}])
    assert reg.referenced_by("other.proto", 1) == [shape]
    pool = reg.schemas[shape].pool()  # type: ignore[union-attr]
    assert pool.FindMessageTypeByName("Shape").fields_by_name["at"].message_type.full_name == "o.Point"


@pytest.mark.mockbroker(schema_registry=True)
def test_confluents_protobuf_serializer_registers_its_imports_as_references(mockbroker: object) -> None:
    pytest.importorskip("httpx")
    pytest.importorskip("grpc_tools")
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import descriptor_pool, message_factory

    from mockbroker.registry.protobuf import parse

    point = parse('syntax = "proto3";\npackage o;\nmessage Point { int32 x = 1; }\n').file
    point.name = "o/point.proto"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(point)
    shape = parse('syntax = "proto3";\nimport "o/point.proto";\nmessage Shape { o.Point at = 1; string s = 2; }\n',
                  {"o/point.proto": parse('syntax = "proto3";\npackage o;\nmessage Point { int32 x = 1; }\n')}).file
    shape.name = "shape.proto"
    pool.Add(shape)
    shape_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("Shape"))
    point_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("o.Point"))
    client = SchemaRegistryClient({"url": mockbroker.schema_registry_url})  # type: ignore[attr-defined]
    context = SerializationContext("shapes", MessageField.VALUE)
    value = shape_class(at=point_class(x=4), s="sq")
    data = ProtobufSerializer(shape_class, client, {"use.deprecated.format": False})(value, context)
    assert client.get_subjects() == ["o/point.proto", "shapes-value"]
    registered = client.get_latest_version("shapes-value")
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == [
        ("o/point.proto", "o/point.proto", 1)]
    assert ProtobufDeserializer(shape_class, {"use.deprecated.format": False}, client)(data, context) == value
