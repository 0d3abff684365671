"""Avro schema evolution under each compatibility level, as Confluent's documentation describes the levels
(docs.confluent.io, "Schema Evolution and Compatibility"): BACKWARD lets consumers on the new schema read
data of the previous one (delete fields, add optional fields, i.e. with a default), FORWARD lets consumers
on the previous schema read the new one's data (add fields, delete optional fields), FULL both; the
_TRANSITIVE forms check against every earlier version, not only the latest; NONE checks nothing. Plus the
Avro specification's resolution rules the checker rests on: promotions, enum symbols, unions, names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockbroker.registry.avro import InvalidSchema, incompatibilities, parse
from mockbroker.registry.model import SchemaRegistry


def record(*fields: dict[str, Any], name: str = "User") -> str:
    return json.dumps({"type": "record", "name": name, "namespace": "com.example", "fields": list(fields)})


A = {"name": "a", "type": "int"}
B_DEFAULT = {"name": "b", "type": "string", "default": ""}
B_REQUIRED = {"name": "b", "type": "string"}
V1 = record(A)
ADD_OPTIONAL = record(A, B_DEFAULT)
ADD_REQUIRED = record(A, B_REQUIRED)
DROP_A = record(B_DEFAULT)

# (old, new, levels that allow it): what each level's documentation allows
EVOLUTIONS = [
    ("add a field with a default", V1, ADD_OPTIONAL, {"BACKWARD", "FORWARD", "FULL", "NONE"}),
    ("add a field without a default", V1, ADD_REQUIRED, {"FORWARD", "NONE"}),
    ("delete a field without a default", record(A, B_REQUIRED), V1, {"BACKWARD", "NONE"}),
    ("delete a field with a default", ADD_OPTIONAL, V1, {"BACKWARD", "FORWARD", "FULL", "NONE"}),
    ("promote int to long", V1, record({"name": "a", "type": "long"}), {"BACKWARD", "NONE"}),
    ("narrow long to int", record({"name": "a", "type": "long"}), V1, {"FORWARD", "NONE"}),
    ("change int to string", V1, record({"name": "a", "type": "string"}), {"NONE"}),
    ("string to bytes", record({"name": "a", "type": "string"}), record({"name": "a", "type": "bytes"}),
     {"BACKWARD", "FORWARD", "FULL", "NONE"}),
    ("rename the record", V1, record(A, name="Person"), {"NONE"}),
]


@pytest.mark.parametrize("level", ["NONE", "BACKWARD", "FORWARD", "FULL"])
@pytest.mark.parametrize(("what", "old", "new", "allowed"), EVOLUTIONS, ids=[e[0] for e in EVOLUTIONS])
def test_each_level_allows_what_confluent_documents(level: str, what: str, old: str, new: str,
                                                    allowed: set[str]) -> None:
    registry = SchemaRegistry(compatibility=level)
    registry.register("s", old)
    problems = registry.test_compatibility("s", new, None)
    assert (not problems) == (level in allowed), (what, level, problems)


def enum(*symbols: str, **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": "Colour", "symbols": list(symbols), **extra}


def test_enum_symbols_added_are_backward_and_removed_ones_are_forward() -> None:
    old, new = parse(json.dumps(enum("RED", "GREEN"))), parse(json.dumps(enum("RED", "GREEN", "BLUE")))
    assert incompatibilities(new, old) == []  # the new reader knows every old symbol
    [problem] = incompatibilities(old, new)  # the old reader meets BLUE
    assert problem.error_type == "MISSING_ENUM_SYMBOLS" and "BLUE" in problem.additional_info
    with_default = parse(json.dumps(enum("RED", "GREEN", default="RED")))
    assert incompatibilities(with_default, new) == []  # an unknown symbol reads as the default


def test_unions_need_a_branch_for_each_writer_type() -> None:
    nullable = parse('["null", "string"]')
    plain = parse('"string"')
    assert incompatibilities(nullable, plain) == []  # the reader's union has a string branch
    [problem] = incompatibilities(plain, nullable)  # a null written cannot be read as a string
    assert problem.error_type == "TYPE_MISMATCH"
    [problem] = incompatibilities(parse('["null", "int"]'), parse('["null", "string"]'))
    assert problem.error_type == "MISSING_UNION_BRANCH"
    assert incompatibilities(parse('["null", "long"]'), parse('["null", "int"]')) == []  # promoted in a union


def test_fixed_sizes_arrays_maps_and_recursive_records() -> None:
    [problem] = incompatibilities(parse('{"type": "fixed", "name": "F", "size": 4}'),
                                  parse('{"type": "fixed", "name": "F", "size": 8}'))
    assert problem.error_type == "FIXED_SIZE_MISMATCH"
    assert incompatibilities(parse('{"type": "array", "items": "long"}'), parse('{"type": "array", "items": "int"}')) == []
    [problem] = incompatibilities(parse('{"type": "map", "values": "int"}'), parse('{"type": "map", "values": "long"}'))
    assert problem.error_type == "TYPE_MISMATCH" and problem.path == "/values"
    node = {"type": "record", "name": "Node", "fields": [
        {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"], "default": None}]}
    node2 = {**node, "fields": [*node["fields"], {"name": "w", "type": "long", "default": 0}]}
    assert incompatibilities(parse(json.dumps(node2)), parse(json.dumps(node))) == []
    missing = {**node, "fields": [*node["fields"], {"name": "w", "type": "long"}]}
    [problem] = incompatibilities(parse(json.dumps(missing)), parse(json.dumps(node)))
    assert problem.error_type == "READER_FIELD_MISSING_DEFAULT_VALUE" and problem.path == "/fields/2"


def test_transitive_levels_check_every_earlier_version() -> None:
    v1 = record(A)
    v2 = record(A, B_DEFAULT)  # backward of v1
    v3 = record(A, B_REQUIRED)  # backward of v2 (b is there), not of v1 (b has no default there)
    for level, refused in (("BACKWARD", False), ("BACKWARD_TRANSITIVE", True)):
        registry = SchemaRegistry(compatibility=level)
        registry.register("s", v1)
        registry.register("s", v2)
        assert bool(registry.test_compatibility("s", v3, None)) == refused, level
    full = SchemaRegistry(compatibility="FULL_TRANSITIVE")
    full.register("s", v1)
    full.register("s", v2)
    problems = full.test_compatibility("s", v3, None)
    assert "{oldSchemaVersion: 1}" in problems and problems[-1] == "{validateFields: 'false', compatibility: 'FULL_TRANSITIVE'}"
    forward = SchemaRegistry(compatibility="FORWARD_TRANSITIVE")
    forward.register("s", record(A, B_DEFAULT))
    forward.register("s", record(A, {"name": "b", "type": "string", "default": "x"}))
    assert forward.test_compatibility("s", record(A), None) == []  # b deleted: every old reader has a default


@pytest.mark.parametrize("text", [
    "", "{", "42", '{"type": "record", "name": "R"}', '{"type": "recrd", "name": "R", "fields": []}',
    '{"type": "enum", "name": "E", "symbols": ["A", "A"]}', '["int", "int"]', '{"type": "fixed", "name": "F"}',
    '{"type": "record", "name": "R", "fields": [{"name": "x", "type": "Nope"}]}', "[" * 5000 + "]" * 5000,
])
def test_invalid_schemas_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(InvalidSchema) as caught:
        parse(text)
    assert str(caught.value).startswith("Invalid schema")


def test_identity_ignores_whitespace_and_key_order_but_not_defaults() -> None:
    one = parse('{"type":"record","name":"R","fields":[{"name":"x","type":"int","default":1}]}')
    same = parse('{ "fields": [ {"default": 1, "type": "int", "name": "x"} ], "name": "R", "type": "record" }')
    other = parse('{"type":"record","name":"R","fields":[{"name":"x","type":"int","default":2}]}')
    assert one.canonical == same.canonical != other.canonical
    assert one.parsing_canonical_form() == other.parsing_canonical_form()  # the fingerprint form drops defaults


def test_a_refusal_reads_as_confluents_in_both_directions() -> None:
    """The shape of Confluent's 409 details (as its registry answers; its documentation and users' reports
    quote it): each incompatibility, the old version and schema, then the level."""
    old = '{"type":"record","name":"compact_test","namespace":"io.confluent.examples","fields":[{"name":"seq","type":"int"}]}'
    new = json.dumps({"type": "record", "name": "compact_test", "namespace": "io.confluent.examples",
                      "fields": [{"name": "seq", "type": "int"}, {"name": "custid", "type": "int"}]})
    backward = SchemaRegistry()
    backward.register("avro-value", old)
    assert backward.test_compatibility("avro-value", new, None) == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'custid' at path '/fields/1' in the "
        "new schema has no default value and is missing in the old schema', additionalInfo:'custid'}",
        "{oldSchemaVersion: 1}", f"{{oldSchema: '{old}'}}", "{validateFields: 'false', compatibility: 'BACKWARD'}"]
    forward = SchemaRegistry(compatibility="FORWARD")
    forward.register("v", new)
    details = forward.test_compatibility("v", old, None)
    assert details[0] == ("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'custid' at path "
                          "'/fields/1' in the old schema has no default value and is missing in the new schema', "
                          "additionalInfo:'custid'}")
    typed = SchemaRegistry()
    typed.register("k", '"int"')
    assert typed.test_compatibility("k", '"boolean"', None)[0] == (
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/') of a field in the new schema does not match "
        "with the old schema', additionalInfo:'reader type: BOOLEAN not compatible with writer type: INT'}")
