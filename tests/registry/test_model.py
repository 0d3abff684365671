"""The registry's state (mockbroker/registry/model.py): ids shared across subjects, versions counting on past
deletes, soft then permanent deletes, levels and modes global and per subject, Confluent's error codes."""

from __future__ import annotations

import json

import pytest

from mockbroker.registry.model import RegistryError, SchemaRegistry


def schema(*names: str, record: str = "R") -> str:
    return json.dumps({"type": "record", "name": record,
                       "fields": [{"name": n, "type": "string", "default": ""} for n in names]})


def code(call: object, *args: object, **kwargs: object) -> int:
    with pytest.raises(RegistryError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value.code


def test_an_identical_schema_has_one_id_across_subjects_and_registers_once_per_subject() -> None:
    reg = SchemaRegistry()
    first = reg.register("a", schema("x"))
    assert reg.register("b", schema("x")) == first
    assert reg.register("a", json.dumps(json.loads(schema("x")), indent=4)) == first  # whitespace: the same
    assert [v.version for v in reg.versions("a")] == [1]
    second = reg.register("a", schema("x", "y"))
    assert second == first + 1
    assert reg.subjects_of(first) == [("a", 1), ("b", 1)]
    assert reg.lookup("b", schema("x")).version == 1
    assert code(reg.lookup, "b", schema("x", "y")) == 40403
    assert code(reg.lookup, "nope", schema("x")) == 40401


def test_versions_keep_counting_after_deletes_and_permanent_needs_soft_first() -> None:
    reg = SchemaRegistry(compatibility="NONE")
    reg.register("s", schema("a"))
    reg.register("s", schema("b"))
    assert code(reg.delete_version, "s", 2, permanent=True) == 40407
    assert reg.delete_version("s", 2) == 2
    assert code(reg.delete_version, "s", 2) == 40406
    assert [v.version for v in reg.versions("s")] == [1]
    assert [v.version for v in reg.versions("s", deleted=True)] == [1, 2]
    assert code(reg.version, "s", 2) == 40402 and reg.version("s", 2, deleted=True).version == 2
    assert reg.delete_version("s", 2, permanent=True) == 2
    reg.register("s", schema("c"))
    assert [v.version for v in reg.versions("s")] == [1, 3]
    assert code(reg.delete_subject, "s", permanent=True) == 40405
    assert reg.delete_subject("s") == [1, 3]
    assert code(reg.versions, "s") == 40401 and reg.subject_names() == [] and reg.subject_names(True) == ["s"]
    assert code(reg.delete_subject, "s") == 40404
    assert reg.delete_subject("s", permanent=True) == [1, 3]
    assert code(reg.schema, 1) == 40403  # no version holds it any more
    assert reg.register("s", schema("a")) == 4  # ids never come back; versions go on from the highest
    assert reg.version("s", "latest").version == 4


def test_levels_and_modes_are_global_with_subject_overrides() -> None:
    reg = SchemaRegistry()
    reg.register("s", schema("a"))
    incompatible = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    assert code(reg.register, "s", incompatible) == 409
    reg.set_compatibility("s", "none")
    assert reg.compatibility_of("s") == "NONE" and reg.compatibility_of(None) == "BACKWARD"
    assert reg.register("s", incompatible) == 2
    assert code(reg.set_compatibility, None, "SIDEWAYS") == 42203
    assert code(reg.set_compatibility, None, 3) == 42203
    reg.set_mode(None, "READONLY")
    assert code(reg.register, "t", schema("q")) == 42205
    assert code(reg.delete_subject, "s") == 42205
    reg.set_mode("t", "READWRITE")
    assert reg.register("t", schema("q")) == 3
    assert code(reg.set_mode, None, "IMPORT") == 42205  # subjects exist
    assert code(reg.set_mode, None, "SIDEWAYS") == 42204


@pytest.mark.parametrize("version", ["0", "-2", "2147483648", "x", "1.5", "", 0])
def test_a_version_outside_1_to_2_31_minus_1_is_42202(version: object) -> None:
    reg = SchemaRegistry()
    reg.register("s", schema("a"))
    assert code(reg.version, "s", version) == 42202
    assert reg.version("s", "-1").version == 1  # -1: the latest, as Confluent takes it


@pytest.mark.parametrize(("subject", "text", "schema_type", "expected"), [
    ("s", "{not json", "AVRO", 42201), ("s", None, "AVRO", 42201), ("s", '"int"', "PROTOBUF", 42201),
    ("s", '"int"', 7, 42201), ("", '"int"', "AVRO", 42208), ("a\x00b", '"int"', "AVRO", 42208),
])
def test_bad_registrations_get_confluent_codes(subject: str, text: object, schema_type: object,
                                               expected: int) -> None:
    assert code(SchemaRegistry().register, subject, text, schema_type) == expected
