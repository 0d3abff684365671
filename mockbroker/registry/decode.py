"""Records read back through the registry: a key or value in Confluent's wire framing (magic byte 0, the
schema id as 4 bytes big-endian, then the payload) decoded with the schema of that id: Avro's binary
encoding on fastavro, JSON Schema's JSON text, Protobuf's message indexes and message (as
json_format.MessageToDict gives it). What is not framed so, or names an id the registry does not hold, or
does not decode, is left as its bytes (with `error` saying why, for the last two), never an exception."""

from __future__ import annotations

import importlib
import io
import json
import struct
from dataclasses import dataclass
from typing import Any

from mockbroker.extras import require
from mockbroker.inspection import RecordInfo
from mockbroker.registry.avro import fastavro_schema
from mockbroker.registry.model import SchemaRegistry

fastavro = require("fastavro", "the Schema Registry")


@dataclass(frozen=True)
class Decoded:
    """One key or value: `data` decoded (dicts, lists, ...) when `schema_id` is set, else the bytes as they are."""
    data: Any
    schema_id: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class DecodedRecord:
    """A record with its key and value decoded through the registry (`record` holds the bytes as stored)."""
    record: RecordInfo
    key: Decoded
    value: Decoded


def decoded_records(registry: SchemaRegistry, records: list[RecordInfo]) -> list[DecodedRecord]:
    return [DecodedRecord(r, decode(registry, r.key), decode(registry, r.value)) for r in records]


def decode(registry: SchemaRegistry, raw: bytes | None) -> Decoded:
    """`raw` decoded through the registry when it is framed with a schema id it holds (see the module)."""
    if raw is None or len(raw) < 5 or raw[0] != 0:
        return Decoded(raw)
    (schema_id,) = struct.unpack(">I", raw[1:5])
    schema = registry.schemas.get(schema_id)
    if schema is None:
        return Decoded(raw, error=f"schema {schema_id} is not in the registry")
    buffer = io.BytesIO(raw[5:])
    try:
        if schema.schema_type == "JSON":
            return Decoded(json.loads(raw[5:]), schema_id)
        if schema.schema_type == "PROTOBUF":
            return Decoded(_protobuf(schema, buffer), schema_id)
        avro: Any = schema  # its named types include the referenced schemas' (registry/references.py)
        parsed = fastavro_schema.parse_schema(avro.parsed, named_schemas=dict(avro.named))
        value = fastavro.schemaless_reader(buffer, parsed, None)
    except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError... on data not of the schema
        return Decoded(raw, error=f"does not decode with schema {schema_id}: {type(exc).__name__}: {exc}")
    if buffer.tell() != len(raw) - 5:
        return Decoded(raw, error=f"{len(raw) - 5 - buffer.tell()} bytes left over after schema {schema_id}")
    return Decoded(value, schema_id)


def _varint(buffer: io.BytesIO) -> int:
    """A zigzag varint, as Confluent writes the message indexes."""
    shift = result = 0
    while True:
        byte = buffer.read(1)
        if not byte:
            raise EOFError("truncated message indexes")
        result |= (byte[0] & 0x7F) << shift
        shift += 7
        if not byte[0] & 0x80:
            return (result >> 1) ^ -(result & 1)


def _protobuf(schema: Any, buffer: io.BytesIO) -> Any:
    """The message the indexes name (a path through the file's messages; [0] the first), as a dict."""
    count = _varint(buffer)
    indexes = [_varint(buffer) for _ in range(count)] if count else [0]
    pool = schema.pool()
    scope, name = schema.file.message_type, schema.file.package
    for index in indexes:
        message = scope[index]
        name = f"{name}.{message.name}" if name else message.name
        scope = message.nested_type
    message_factory = importlib.import_module("google.protobuf.message_factory")
    json_format = importlib.import_module("google.protobuf.json_format")
    value = message_factory.GetMessageClass(pool.FindMessageTypeByName(name)).FromString(buffer.read())
    return json_format.MessageToDict(value, preserving_proto_field_name=True)
