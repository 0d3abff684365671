"""The registry's schema types side by side: AVRO (registry/avro.py), JSON (registry/json_schema.py) and
PROTOBUF (registry/protobuf.py). `parse` picks the type's parser, `incompatibilities` its compatibility
rules; each type's module is imported only when a schema of that type is met, so a registry serving Avro
alone never loads jsonschema or protobuf."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from mockbroker.extras import MissingExtraError
from mockbroker.registry.avro import AvroSchema, InvalidSchema

if TYPE_CHECKING:
    from mockbroker.registry.json_schema import JsonSchema
    from mockbroker.registry.protobuf import ProtobufSchema

    ParsedSchema = AvroSchema | JsonSchema | ProtobufSchema
else:
    ParsedSchema = Any

TYPES = ("AVRO", "JSON", "PROTOBUF")


class Problem(Protocol):
    """One incompatibility, as Confluent's verbose compatibility answer words it."""

    def message(self, reader: str, writer: str) -> str: ...


def parse(schema_type: str, text: str, referenced: dict[str, ParsedSchema] | None = None) -> ParsedSchema:
    """The schema of `text` as `schema_type`, with the schemas its references name (reference name -> schema);
    InvalidSchema when it is not one (or its type's package is not installed)."""
    referenced = referenced or {}
    try:
        if schema_type == "JSON":
            from mockbroker.registry import json_schema

            return json_schema.parse(text, {name: cast("JsonSchema", s).raw for name, s in referenced.items()
                                            if s.schema_type == "JSON"})
        if schema_type == "PROTOBUF":
            from mockbroker.registry import protobuf

            return protobuf.parse(text, {name: cast("ProtobufSchema", s) for name, s in referenced.items()
                                         if s.schema_type == "PROTOBUF"})
    except MissingExtraError as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from None
    from mockbroker.registry import avro

    return avro.parse(text, [cast(AvroSchema, s) for s in referenced.values() if s.schema_type == "AVRO"])


def normalize(schema: ParsedSchema) -> ParsedSchema:
    """The schema as `normalize=true` registers and looks it up: Avro and JSON Schema as their canonical text
    (keys sorted; their identity already is), Protobuf with its fields in number order (protobuf.normalized)."""
    if schema.schema_type == "PROTOBUF":
        from mockbroker.registry import protobuf

        return protobuf.normalized(cast("ProtobufSchema", schema))
    return replace(schema, text=schema.canonical)


def incompatibilities(reader: ParsedSchema, writer: ParsedSchema) -> list[Problem]:
    """How `reader` fails to read what `writer` wrote, by the rules of their type (empty: it reads it)."""
    if reader.schema_type == "JSON":
        from mockbroker.registry import json_schema

        return list(json_schema.incompatibilities(reader, writer))  # type: ignore[arg-type]
    if reader.schema_type == "PROTOBUF":
        from mockbroker.registry import protobuf

        return list(protobuf.incompatibilities(reader, writer))  # type: ignore[arg-type]
    from mockbroker.registry import avro

    return list(avro.incompatibilities(reader, writer))  # type: ignore[arg-type]
