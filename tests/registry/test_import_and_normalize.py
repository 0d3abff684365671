"""IMPORT mode with explicit ids and versions (Confluent's rules and codes), `normalize=true` on register and
lookup, and the `_schemas` records: DELETE_SUBJECT on a subject's soft delete and the NOOP record written
at start, as Confluent's registry writes them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.registry import store
from mockbroker.registry.model import RegistryError, SchemaRegistry
from mockbroker.registry.rebuild import replay


def schema(*names: str) -> str:
    return json.dumps({"type": "record", "name": "R",
                       "fields": [{"name": n, "type": "string", "default": ""} for n in names]})


def code(call: object, *args: object, **kwargs: object) -> int:
    with pytest.raises(RegistryError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value.code


def test_import_mode_takes_ids_and_versions_and_only_there() -> None:
    reg = SchemaRegistry()
    assert code(reg.register, "s", schema("a"), schema_id=100) == 42205  # not in import mode
    reg.set_mode(None, "IMPORT")
    assert code(reg.register, "s", schema("a")) == 42205  # import mode wants an id
    assert reg.register("s", schema("a"), schema_id=100, version=3) == 100
    assert reg.register("s", schema("a"), schema_id=100) == 100  # again: the same
    assert code(reg.register, "s", schema("a"), schema_id=7) == 42207  # the subject holds it under 100
    assert code(reg.register, "t", schema("b"), schema_id=100) == 42205  # 100 holds another schema
    assert reg.register("t", schema("a", "x"), schema_id=5, version=1) == 5
    assert code(reg.register, "t", schema("a", "y"), schema_id=6, version=1) == 42205  # version 1 taken
    assert reg.register("t", schema("a", "y"), schema_id=6) == 6  # without a version: the next one
    assert [v.version for v in reg.versions("s")] == [3] and [v.version for v in reg.versions("t")] == [1, 2]
    reg.set_mode(None, "READWRITE")
    assert reg.register("u", schema("z")) == 101  # ids go on past the highest imported
    assert code(reg.set_mode, None, "IMPORT") == 42205  # subjects exist
    assert reg.set_mode(None, "IMPORT", force=True) == "IMPORT"
    assert reg.set_mode("fresh", "IMPORT") == "IMPORT"
    again = SchemaRegistry()
    replay(again, [store.encode(r) for r in reg.journal])
    assert again.subjects == reg.subjects and again.next_id == reg.next_id and again.mode == "IMPORT"


def test_normalize_stores_the_canonical_form_and_finds_it() -> None:
    reg = SchemaRegistry()
    spaced = '{"name": "R", "type": "record", "fields": [{"type": "string", "name": "a"}]}'
    first = reg.register("s", spaced, normalize=True)
    assert reg.schema(first).text == '{"fields":[{"name":"a","type":"string"}],"name":"R","type":"record"}'
    assert reg.lookup("s", spaced, normalize=True).version == 1
    pytest.importorskip("grpc_tools")
    one = 'syntax = "proto3";\nmessage M {\n  string b = 2;\n  int32 a = 1;\n}\n'
    two = 'syntax = "proto3"; message M { int32 a = 1; string b = 2; }'
    proto_id = reg.register("p", one, "PROTOBUF", normalize=True)
    assert reg.schema(proto_id).text == 'syntax = "proto3";\nmessage M {\n  int32 a = 1;\n  string b = 2;\n}\n'
    assert reg.lookup("p", two, "PROTOBUF", normalize=True).version == 1
    assert code(reg.lookup, "p", one, "PROTOBUF") == 40403  # not normalized: field order is another schema


def test_a_subjects_soft_delete_is_one_delete_subject_record() -> None:
    reg = SchemaRegistry(compatibility="NONE")
    reg.register("s", schema("a"))
    reg.register("s", schema("b"))
    reg.journal.clear()
    reg.delete_subject("s")
    assert reg.journal == [(store.delete_subject_key("s"), {"subject": "s", "version": 2})]


@pytest.fixture
async def broker() -> AsyncIterator[MockBroker]:
    async with MockBroker(schema_registry=True) as running:
        yield running


async def test_a_noop_record_is_written_at_start(broker: MockBroker) -> None:
    records: list[Any] = broker.records(store.TOPIC)
    assert [(json.loads(r.key), r.value) for r in records] == [({"keytype": "NOOP", "magic": 0}, None)]
