"""Records read back through the registry (broker.decoded_records, broker.schemas; registry/decode.py):
Confluent's framing decoded with the schema of its id; what is not framed, or names an unknown id, or does
not decode, left as bytes with the reason."""

from __future__ import annotations

import io
import json
import struct

import fastavro
import pytest
from confluent_kafka import Producer

from mockbroker import MockBroker
from tests.registry.test_ways_in import register

SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def framed(schema_id: int, value: dict[str, int]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(json.loads(SCHEMA)), value)
    return b"\x00" + struct.pack(">I", schema_id) + out.getvalue()


@pytest.mark.mockbroker(schema_registry=True)
def test_decoded_records_and_schemas(mockbroker: MockBroker) -> None:
    schema_id = register(mockbroker.schema_registry_url, "t-value", SCHEMA)["id"]
    mockbroker.create_topic("t")
    good = framed(schema_id, {"a": 7})
    values = [good, b"plain text", b"\x00\x00\x00\x00\x63abc", good[:-1], good + b"\x01", None]
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers})
    for value in values:
        producer.produce("t", key=b"k", value=value)
    assert producer.flush(15) == 0
    decoded = mockbroker.decoded_records("t")
    assert [d.record.value for d in decoded] == values
    assert decoded[0].value.data == {"a": 7} and decoded[0].value.schema_id == schema_id
    assert decoded[0].key.data == b"k" and decoded[0].key.schema_id is None
    assert decoded[1].value.data == b"plain text" and decoded[1].value.error is None
    assert decoded[2].value.error == "schema 99 is not in the registry"
    assert decoded[3].value.error is not None and decoded[3].value.error.startswith("does not decode")
    assert decoded[4].value.error == f"1 bytes left over after schema {schema_id}"
    assert decoded[5].value.data is None
    assert mockbroker.schemas() == [{"subject": "t-value", "version": 1, "id": schema_id,
                                     "schema": json.dumps(json.loads(SCHEMA), separators=(",", ":")),
                                     "deleted": False}]


def test_without_a_registry_they_say_so(mockbroker: MockBroker) -> None:
    with pytest.raises(RuntimeError, match="schema_registry=True"):
        mockbroker.schemas()
    with pytest.raises(RuntimeError, match="schema_registry=True"):
        mockbroker.decoded_records("t")


def test_json_and_protobuf_values_decode_too() -> None:
    pytest.importorskip("jsonschema")
    pytest.importorskip("grpc_tools")
    from mockbroker.registry.decode import decode
    from mockbroker.registry.model import SchemaRegistry

    reg = SchemaRegistry()
    json_id = reg.register("j", '{"type": "object"}', "JSON")
    assert decode(reg, b"\x00" + struct.pack(">I", json_id) + b'{"a": 1}').data == {"a": 1}
    text = 'syntax = "proto3";\nmessage A { int32 x = 1; }\nmessage B { string s = 1; message C { int64 n = 1; } }\n'
    proto_id = reg.register("p", text, "PROTOBUF")
    from google.protobuf import message_factory

    pool = reg.schemas[proto_id].pool()  # type: ignore[union-attr]
    c = message_factory.GetMessageClass(pool.FindMessageTypeByName("B.C"))(n=7)
    framed = b"\x00" + struct.pack(">I", proto_id) + bytes([4, 2, 0]) + c.SerializeToString()  # indexes [1, 0]
    assert decode(reg, framed).data == {"n": "7"}
    a = message_factory.GetMessageClass(pool.FindMessageTypeByName("A"))(x=3)
    assert decode(reg, b"\x00" + struct.pack(">I", proto_id) + b"\x00" + a.SerializeToString()).data == {"x": 3}
    assert decode(reg, b"\x00" + struct.pack(">I", proto_id) + b"\x02\x09").error is not None
