"""Protobuf in the registry (mockbroker/registry/protobuf.py): `.proto` text compiled by protoc and base64
descriptors, identity, the text rendering, and Confluent's Protobuf compatibility rules."""

from __future__ import annotations

import base64

import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("grpc_tools")

from mockbroker.registry.model import RegistryError, SchemaRegistry  # noqa: E402
from mockbroker.registry.protobuf import differences, parse, render  # noqa: E402


def proto(body: str, package: str = "a", extra: str = "") -> str:
    return f'syntax = "proto3";\npackage {package};\n{extra}\nmessage M {{\n{body}\n}}\n'


def test_text_and_descriptor_forms_are_one_schema_and_bad_text_is_42201() -> None:
    reg = SchemaRegistry()
    text = proto("int32 x = 1;\n  map<string, int64> m = 2;\n  optional string o = 3;\n  oneof k { string s = 4; }")
    first = reg.register("s", text, "PROTOBUF")
    assert reg.schema_body(first) == {"schema": text, "schemaType": "PROTOBUF"}
    as_descriptor = base64.b64encode(parse(text).file.SerializeToString()).decode()
    assert reg.register("t", as_descriptor, "PROTOBUF") == first
    assert reg.register("u", render(parse(text).file), "PROTOBUF") == first
    assert "oneof k {" in reg.schema(first).text and parse(reg.schema_body(first, "serialized")["schema"])
    for bad in [proto("Foo x = 1;"), "syntax = nope", proto("int32 x = 1;", extra='import "other.proto";')]:
        with pytest.raises(RegistryError) as caught:
            reg.register("s", bad, "PROTOBUF")
        assert caught.value.code == 42201, bad


# (old body, new body, BACKWARD-compatible, the incompatible types Confluent names)
CASES = [
    ("int32 x = 1;", "int32 x = 1;\n  string y = 2;", True, []),  # a field added
    ("int32 x = 1;\n  string y = 2;", "int32 x = 1;", True, []),  # a field removed
    ("int32 x = 1;", "int32 renamed = 1;", True, []),
    ("int32 x = 1;", "int64 x = 1;", True, []),  # the same varint group
    ("int32 x = 1;", "sint32 x = 1;", False, ["FIELD_SCALAR_KIND_CHANGED"]),
    ("string x = 1;", "bytes x = 1;", True, []),
    ("string x = 1;", "N x = 1;\n}\nmessage N {\n  int32 z = 1;", False, ["FIELD_KIND_CHANGED"]),
    ("int32 x = 1;", "repeated int32 x = 1;", False, ["FIELD_NUMERIC_LABEL_CHANGED"]),
    ("string x = 1;", "repeated string x = 1;", True, []),
    ("int32 x = 1;\n  int32 y = 2;", "oneof o {\n    int32 x = 1;\n    int32 y = 2;\n  }", False,
     ["MULTIPLE_FIELDS_MOVED_TO_ONEOF"]),
    ("int32 x = 1;", "oneof o {\n    int32 x = 1;\n    string s = 2;\n  }", True, []),
    ("oneof o {\n    int32 x = 1;\n    string s = 2;\n  }", "oneof o {\n    int32 x = 1;\n  }", False,
     ["ONEOF_FIELD_REMOVED"]),
    ("N n = 1;\n}\nmessage N {\n  int32 z = 1;", "N n = 1;\n}\nmessage N {\n  string z = 1;", False,
     ["FIELD_SCALAR_KIND_CHANGED", "FIELD_NAMED_TYPE_CHANGED"]),  # N compared once, through the field
    ("N n = 1;\n}\nmessage N {\n  int32 z = 1;", "O n = 1;\n}\nmessage O {\n  int32 z = 1;", False,
     ["FIELD_NAMED_TYPE_CHANGED", "MESSAGE_REMOVED"]),
    ("E e = 1;\n}\nenum E {\n  A = 0;", "E e = 1;\n}\nenum E {\n  A = 0;\n  B = 1;", True, []),
    ("int32 x = 1;", "int32 x = 1;\n}\nmessage Other {\n  int32 y = 1;", True, []),  # a message added
    ("int32 x = 1;\n}\nmessage Other {\n  int32 y = 1;", "int32 x = 1;", False, ["MESSAGE_REMOVED"]),
]


@pytest.mark.parametrize(("old", "new", "compatible", "types"), CASES)
def test_confluents_protobuf_rules(old: str, new: str, compatible: bool, types: list[str]) -> None:
    found = [d.type for d in differences(parse(proto(old)), parse(proto(new))) if not d.compatible]
    assert found == types
    reg = SchemaRegistry()
    reg.register("s", proto(old), "PROTOBUF")
    assert (reg.test_compatibility("s", proto(new), None, "PROTOBUF") == []) is compatible


def test_a_package_change_is_incompatible_and_forward_reads_the_other_way() -> None:
    assert [d.type for d in differences(parse(proto("int32 x = 1;")), parse(proto("int32 x = 1;", "b")))
            if not d.compatible] == ["PACKAGE_CHANGED"]
    reg = SchemaRegistry(compatibility="FORWARD")
    reg.register("s", proto("int32 x = 1;\n}\nmessage Other {\n  int32 y = 1;"), "PROTOBUF")
    assert reg.test_compatibility("s", proto("int32 x = 1;"), None, "PROTOBUF") == []  # removed: forward-fine
    messages = reg.test_compatibility("s", proto("sint32 x = 1;"), None, "PROTOBUF")
    assert messages[0].startswith('{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The old schema')
