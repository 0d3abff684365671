"""JSON Schema in the registry (mockbroker/registry/json_schema.py): the meta-schema check, identity, and
Confluent's JSON Schema compatibility rules (open and closed content models, required, types narrowed and
widened, enums, unions), with Confluent's verbose messages."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("jsonschema")

from mockbroker.registry.json_schema import differences, parse  # noqa: E402
from mockbroker.registry.model import RegistryError, SchemaRegistry  # noqa: E402


def obj(closed: bool = False, required: tuple[str, ...] = (), **props: Any) -> str:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if closed:
        schema["additionalProperties"] = False
    if required:
        schema["required"] = list(required)
    return json.dumps(schema)


INT, NUM, STR = {"type": "integer"}, {"type": "number"}, {"type": "string"}


def test_a_schema_is_checked_against_its_meta_schema() -> None:
    reg = SchemaRegistry()
    assert reg.register("s", obj(a=INT), "JSON") == 1
    for bad in ['{"type": 5}', '{"properties": []}', "[1]", "{nope", '{"$schema": "http://example.com/x"}']:
        with pytest.raises(RegistryError) as caught:
            reg.register("s", bad, "JSON")
        assert caught.value.code == 42201, bad
    reg.set_compatibility("s", "NONE")
    assert reg.register("s", '{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}',
                        "JSON") == 2


def test_identity_is_the_type_and_the_json_with_sorted_keys() -> None:
    reg = SchemaRegistry(compatibility="NONE")
    first = reg.register("a", '{"type": "object", "properties": {"x": {"type": "string"}}}', "JSON")
    assert reg.register("b", '{"properties": {"x": {"type": "string"}},   "type": "object"}', "JSON") == first
    assert reg.register("c", '"string"', "AVRO") != reg.register("d", '{"type": "string"}', "JSON")
    assert reg.schema_body(first) == {"schema": '{"type":"object","properties":{"x":{"type":"string"}}}',
                                      "schemaType": "JSON"}
    assert reg.lookup("b", '{"type":"object","properties":{"x":{"type":"string"}}}', "JSON").version == 1


# (old, new, BACKWARD-compatible, the incompatible types Confluent names)
CASES = [
    (obj(True, a=INT), obj(True, a=INT, b=STR), True, []),  # optional property added to a closed model
    (obj(a=INT), obj(a=INT, b=STR), False, ["PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"]),
    (obj(a=INT), obj(a=INT, b={}), True, []),  # an empty schema added to an open model
    (obj(a=INT, b=STR), obj(a=INT), True, []),  # removed from an open model
    (obj(True, a=INT, b=STR), obj(True, a=INT), False, ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"]),
    (obj(a=INT), obj(a=NUM), True, []),  # integer widened to number
    (obj(a=NUM), obj(a=INT), False, ["TYPE_NARROWED"]),
    (obj(a=INT), obj(a=STR), False, ["TYPE_CHANGED"]),
    (obj(a=INT), obj(required=("a",), a=INT), False, ["REQUIRED_ATTRIBUTE_ADDED"]),
    (obj(a=INT), obj(required=("a",), a={"type": "integer", "default": 0}), True, []),
    (obj(required=("a",), a=INT), obj(a=INT), True, []),
    (obj(True, a=INT), obj(True, required=("b",), a=INT, b=STR), False,
     ["REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"]),
    (obj(True, a=INT), obj(a=INT), True, []),  # additionalProperties false -> allowed
    (obj(a=INT), obj(True, a=INT), False, ["ADDITIONAL_PROPERTIES_REMOVED"]),
    (json.dumps({"enum": ["A", "B"]}), json.dumps({"enum": ["A", "B", "C"]}), True, []),
    (json.dumps({"enum": ["A", "B"]}), json.dumps({"enum": ["A"]}), False, ["ENUM_ARRAY_NARROWED"]),
    (json.dumps(STR), json.dumps({"type": ["string", "null"]}), True, []),  # a union extended
    (json.dumps({"type": ["string", "null"]}), json.dumps(STR), False, ["TYPE_CHANGED"]),
    (json.dumps({"type": "string", "maxLength": 5}), json.dumps({"type": "string", "maxLength": 3}), False,
     ["MAX_LENGTH_DECREASED"]),
    (json.dumps({"type": "string", "maxLength": 5}), json.dumps(STR), True, []),
    (json.dumps({"type": "object", "properties": {"a": INT}, "additionalProperties": STR}),
     json.dumps({"type": "object", "properties": {"a": INT, "b": STR}, "additionalProperties": STR}), True, []),
    (json.dumps({"type": "object", "properties": {"a": INT}, "additionalProperties": STR}),
     json.dumps({"type": "object", "properties": {"a": INT, "b": INT}, "additionalProperties": STR}), False,
     ["TYPE_CHANGED", "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"]),
    (json.dumps({"type": "object", "properties": {"a": {"$ref": "#/definitions/n"}}, "definitions": {"n": INT}}),
     json.dumps({"type": "object", "properties": {"a": {"$ref": "#/definitions/n"}}, "definitions": {"n": STR}}),
     False, ["TYPE_CHANGED"]),
]


@pytest.mark.parametrize(("old", "new", "compatible", "types"), CASES)
def test_confluents_json_schema_rules(old: str, new: str, compatible: bool, types: list[str]) -> None:
    found = [d.type for d in differences(parse(old), parse(new)) if not d.compatible]
    assert found == types
    reg = SchemaRegistry()
    reg.register("s", old, "JSON")
    assert (reg.test_compatibility("s", new, None, "JSON") == []) is compatible


def test_forward_and_full_read_the_other_way() -> None:
    reg = SchemaRegistry(compatibility="FORWARD")
    reg.register("s", obj(a=NUM), "JSON")
    assert reg.test_compatibility("s", obj(a=INT), None, "JSON") == []  # old (number) reads new (integer)
    messages = reg.test_compatibility("s", obj(a=STR), None, "JSON")
    assert messages[0] == ('{errorType:"TYPE_CHANGED", description:"A type at path \'#/properties/a\' is '
                           'different between the old schema and the new schema"}')
    reg.set_compatibility("s", "FULL")
    assert reg.test_compatibility("s", obj(a=INT), None, "JSON") != []  # new (integer) does not read number


def test_a_schema_of_another_type_is_incompatible() -> None:
    reg = SchemaRegistry()
    reg.register("s", '"string"')
    with pytest.raises(RegistryError) as caught:
        reg.register("s", json.dumps(STR), "JSON")
    assert caught.value.status == 409 and "different schema type" in caught.value.message
