"""Avro schemas for the Schema Registry: parsing (on fastavro), identity, and Avro's schema resolution as
Confluent's compatibility checks use it, with the reasons its verbose mode gives.

`parse(text)` checks a schema with fastavro (InvalidSchema with the parser's reason when it fails) and gives
an AvroSchema: the parsed form, its named types, and `canonical`, the text the registry stores and compares.
Identity is the schema's JSON, minified with its keys sorted: whitespace and key order do not make a new
schema, but defaults, docs and aliases do (as Confluent's `AvroSchema.canonicalString`, Avro's
`Schema.toString`, keeps them; Avro's Parsing Canonical Form drops defaults, so two schemas that differ only
in a default would share an id there). `parsing_canonical_form` is kept for the fingerprint.

`incompatibilities(reader, writer)` is the Avro specification's resolution, the reader reading data the
writer wrote: each way it fails is an Incompatibility with Avro Java's error type names (READER_FIELD_MISSING_
DEFAULT_VALUE, TYPE_MISMATCH, NAME_MISMATCH, MISSING_ENUM_SYMBOLS, MISSING_UNION_BRANCH, FIXED_SIZE_MISMATCH)
and the path in the reader schema where it happened.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mockbroker.bounded_json import JsonLimitError, loads
from mockbroker.extras import require

fastavro_schema = require("fastavro", "the Schema Registry").schema

MAX_DEPTH = 200  # nesting of a schema's JSON: deeper is refused before it is parsed
PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
# writer type -> reader types that read it (the Avro specification's promotions)
PROMOTIONS: dict[str, frozenset[str]] = {
    "int": frozenset({"long", "float", "double"}),
    "long": frozenset({"float", "double"}),
    "float": frozenset({"double"}),
    "string": frozenset({"bytes"}),
    "bytes": frozenset({"string"}),
}


# Confluent's descriptions of each incompatibility; {reader} and {writer} become "new" or "old"
TEMPLATES = {
    "READER_FIELD_MISSING_DEFAULT_VALUE": "The field '{name}' at path '{path}' in the {reader} schema has no default "
                                          "value and is missing in the {writer} schema",
    "TYPE_MISMATCH": "The type (path '{path}') of a field in the {reader} schema does not match with the {writer} schema",
    "NAME_MISMATCH": "The name of the schema has changed (path '{path}')",
    "MISSING_ENUM_SYMBOLS": "The {reader} schema is missing enum symbols '{name}' at path '{path}' in the {writer} schema",
    "MISSING_UNION_BRANCH": "The {reader} schema is missing a type inside a union field at path '{path}' in the "
                            "{writer} schema",
    "FIXED_SIZE_MISMATCH": "The size of FIXED type field at path '{path}' in the {reader} schema does not match with "
                           "the {writer} schema",
}


class InvalidSchema(ValueError):
    """A schema text that is not JSON or not a valid Avro schema; the message says why."""


@dataclass
class AvroSchema:
    """A parsed schema: what fastavro made of it, its named types by full name, its identity (keys sorted)
    and the text served back (the first registered text, minified, its key order kept)."""
    parsed: Any
    named: dict[str, Any]
    canonical: str
    text: str
    schema_type: str = "AVRO"

    def parsing_canonical_form(self) -> str:
        return str(fastavro_schema.to_parsing_canonical_form(self.parsed))


def parse(text: str, referenced: Iterable[AvroSchema] = ()) -> AvroSchema:
    """The schema of `text` (Avro's JSON form), which may name the named types of the `referenced` schemas
    (Confluent's references); InvalidSchema when it is not one."""
    try:
        raw = loads(text, max_depth=MAX_DEPTH)
    except JsonLimitError as exc:
        raise InvalidSchema(f"Invalid schema: not JSON ({exc})") from None
    _check_shape(raw)
    named: dict[str, Any] = {}
    for other in referenced:
        named.update(other.named)
    try:
        parsed = fastavro_schema.parse_schema(raw, named_schemas=named, _write_hint=False)
    except Exception as exc:  # fastavro raises SchemaParseException, ValueError, TypeError, KeyError...
        raise InvalidSchema(f"Invalid schema {text[:200]}: {type(exc).__name__}: {exc}") from None
    if isinstance(raw, list) and len({json.dumps(b, sort_keys=True) for b in raw}) != len(raw):
        raise InvalidSchema("Invalid schema: a union holds the same branch twice")
    return AvroSchema(parsed, named, json.dumps(raw, sort_keys=True, separators=(",", ":")),
                      json.dumps(raw, separators=(",", ":")))


def _check_shape(schema: Any) -> None:
    """What Avro's own parser requires and fastavro lets pass: a record's fields, an enum's distinct symbols."""
    if isinstance(schema, list):
        for branch in schema:
            _check_shape(branch)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "error"):
            fields = schema.get("fields")
            if not isinstance(fields, list):
                raise InvalidSchema(f"Invalid schema: record {schema.get('name')!r} has no fields array")
            for f in fields:
                if not isinstance(f, dict) or "name" not in f or "type" not in f:
                    raise InvalidSchema(f"Invalid schema: a field of {schema.get('name')!r} lacks a name or type")
                _check_shape(f["type"])
        elif kind == "enum":
            symbols = schema.get("symbols")
            if not isinstance(symbols, list) or len(set(map(str, symbols))) != len(symbols):
                raise InvalidSchema(f"Invalid schema: enum {schema.get('name')!r} needs distinct symbols")
        elif kind == "array":
            _check_shape(schema.get("items"))
        elif kind == "map":
            _check_shape(schema.get("values"))
        elif isinstance(kind, (dict, list)):
            _check_shape(kind)


@dataclass(frozen=True)
class Incompatibility:
    """One way the reader cannot read the writer's data (Avro Java's SchemaIncompatibilityType names);
    `describe` gives Confluent's description, which names the reader and the writer as "new" or "old"."""
    error_type: str
    template: str  # Confluent's description with {reader} and {writer} for the schemas' roles
    path: str
    additional_info: str = ""

    def describe(self, reader: str, writer: str) -> str:
        return self.template.replace("{reader}", reader).replace("{writer}", writer)

    def message(self, reader: str, writer: str) -> str:
        """Confluent's verbose message for it, naming the schemas' roles ("new", "old")."""
        return (f"{{errorType:'{self.error_type}', description:'{self.describe(reader, writer)}', "
                f"additionalInfo:'{self.additional_info}'}}")


def _type_name(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        return str(schema["type"])
    return str(schema)


@dataclass
class _Checker:
    reader_named: dict[str, Any]
    writer_named: dict[str, Any]
    found: list[Incompatibility] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def resolve(self, schema: Any, named: dict[str, Any]) -> Any:
        """A named type's definition for a reference to it; dicts {"type": "int"} as "int"."""
        if isinstance(schema, str) and schema not in PRIMITIVES:
            return named.get(schema, schema)
        if isinstance(schema, dict) and schema.get("type") in PRIMITIVES:
            return schema["type"]  # logical types read as their underlying type, as Avro Java checks them
        return schema

    def fail(self, error_type: str, path: str, info: str, name: str = "") -> None:
        path = path or "/"
        self.found.append(Incompatibility(error_type, TEMPLATES[error_type].replace("{path}", path).replace(
            "{name}", name), path, info))

    def check(self, reader: Any, writer: Any, path: str) -> None:
        reader, writer = self.resolve(reader, self.reader_named), self.resolve(writer, self.writer_named)
        rtype, wtype = _type_name(reader), _type_name(writer)
        if wtype == "union":
            for i, branch in enumerate(writer):
                if rtype == "union":
                    if not self.some_branch_reads(reader, branch):
                        self.fail("MISSING_UNION_BRANCH", f"{path}/{i}", "reader union lacking writer type: "
                                  f"{_type_name(self.resolve(branch, self.writer_named)).upper()}")
                else:
                    self.check(reader, branch, path)
            return
        if rtype == "union":
            if not self.some_branch_reads(reader, writer):
                self.fail("MISSING_UNION_BRANCH", path, f"reader union lacking writer type: {wtype.upper()}")
            return
        if rtype != wtype:
            if rtype in PROMOTIONS.get(wtype, ()):
                return
            self.fail("TYPE_MISMATCH", path, f"reader type: {rtype.upper()} not compatible with writer type: "
                      f"{wtype.upper()}")
            return
        if rtype in PRIMITIVES:
            return
        if rtype in ("record", "enum", "fixed") and reader["name"].rsplit(".", 1)[-1] != writer["name"].rsplit(
                ".", 1)[-1] and writer["name"] not in reader.get("aliases", ()):
            self.fail("NAME_MISMATCH", f"{path}/name", f"expected: {writer['name']}")
            return
        if rtype == "record":
            self.check_record(reader, writer, path)
        elif rtype == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and "default" not in reader:
                symbols = f"[{', '.join(missing)}]"
                self.fail("MISSING_ENUM_SYMBOLS", f"{path}/symbols", symbols, symbols)
        elif rtype == "fixed":
            if reader["size"] != writer["size"]:
                self.fail("FIXED_SIZE_MISMATCH", f"{path}/size", f"expected: {writer['size']}, found: {reader['size']}")
        elif rtype == "array":
            self.check(reader["items"], writer["items"], f"{path}/items")
        elif rtype == "map":
            self.check(reader["values"], writer["values"], f"{path}/values")

    def check_record(self, reader: dict[str, Any], writer: dict[str, Any], path: str) -> None:
        pair = (reader["name"], writer["name"])
        if pair in self.seen:  # a recursive type: its check is already under way
            return
        self.seen.add(pair)
        writer_fields = {f["name"]: f for f in writer["fields"]}
        for i, rfield in enumerate(reader["fields"]):
            wfield = writer_fields.get(rfield["name"])
            if wfield is None:
                for alias in rfield.get("aliases", ()):
                    wfield = writer_fields.get(alias, wfield)
            if wfield is not None:
                self.check(rfield["type"], wfield["type"], f"{path}/fields/{i}/type")
            elif "default" not in rfield:
                self.fail("READER_FIELD_MISSING_DEFAULT_VALUE", f"{path}/fields/{i}", rfield["name"], rfield["name"])

    def some_branch_reads(self, reader_union: list[Any], writer: Any) -> bool:
        for branch in reader_union:
            probe = _Checker(self.reader_named, self.writer_named, seen=set(self.seen))
            probe.check(branch, writer, "")
            if not probe.found:
                return True
        return False


def incompatibilities(reader: AvroSchema, writer: AvroSchema) -> list[Incompatibility]:
    """How `reader` fails to read what `writer` wrote (empty: it reads it), by the Avro specification."""
    checker = _Checker(reader.named, writer.named)
    checker.check(reader.parsed, writer.parsed, "")
    return checker.found
