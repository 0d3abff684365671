"""JSON Schema schemas for the Schema Registry (schemaType "JSON"): parsing, identity, and Confluent's
compatibility rules for JSON Schema as a faithful subset.

`parse(text, referenced)` reads the schema's JSON and checks it against its meta-schema with the `jsonschema`
package (the draft its `$schema` names; draft 7 without one, as Confluent's default); InvalidSchema says why.
Identity is the JSON minified with its keys sorted, as for Avro (registry/avro.py); the text served back is
the first registered text, minified, its key order kept. `referenced` maps a reference's name (the `$ref`
target, registry/references.py) to the referenced schema's JSON, which `$ref`s to it resolve to.

`differences(original, update)` is Confluent's JSON Schema diff (its json-schema-provider's SchemaDiff): the
changes from `original` (the writer) to `update` (the reader), each a Difference (registry/differences.py)
with Confluent's type name and JSON path; the ones RULES does not call compatible are incompatibilities.
Compared: the kind of schema (object, array, string, number/integer, boolean, null, enum, combined
anyOf/oneOf/allOf and lists of types), an object's properties, required list and content model (open,
closed, partially open by additionalProperties or patternProperties), string lengths and pattern, number
bounds and multipleOf, array items and bounds, enum values, and local `$ref`s. Simplified: `not`, `const`, `dependencies`, `if/then/else`, tuple `items` and
`unevaluated*` are compared as equal-or-TYPE_CHANGED, and combined schemas match their subschemas greedily
(Confluent does a bipartite matching).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mockbroker.bounded_json import JsonLimitError, loads
from mockbroker.registry.avro import InvalidSchema
from mockbroker.registry.differences import Difference, Rules

MAX_DEPTH = 200
_COMPATIBLE = frozenset({
    "ID_CHANGED", "DESCRIPTION_CHANGED", "TITLE_CHANGED", "DEFAULT_CHANGED", "SCHEMA_REMOVED", "TYPE_EXTENDED",
    "MAX_LENGTH_INCREASED", "MAX_LENGTH_REMOVED", "MIN_LENGTH_DECREASED", "MIN_LENGTH_REMOVED", "PATTERN_REMOVED",
    "MAXIMUM_INCREASED", "MAXIMUM_REMOVED", "MINIMUM_DECREASED", "MINIMUM_REMOVED", "EXCLUSIVE_MAXIMUM_INCREASED",
    "EXCLUSIVE_MAXIMUM_REMOVED", "EXCLUSIVE_MINIMUM_DECREASED", "EXCLUSIVE_MINIMUM_REMOVED", "MULTIPLE_OF_REDUCED",
    "MULTIPLE_OF_REMOVED", "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", "REQUIRED_ATTRIBUTE_REMOVED",
    "MAX_PROPERTIES_INCREASED", "MAX_PROPERTIES_REMOVED", "MIN_PROPERTIES_DECREASED", "MIN_PROPERTIES_REMOVED",
    "ADDITIONAL_PROPERTIES_ADDED", "ADDITIONAL_PROPERTIES_EXTENDED", "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_"
    "CONTENT_MODEL", "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
    "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "MAX_ITEMS_INCREASED", "MAX_ITEMS_REMOVED",
    "MIN_ITEMS_DECREASED", "MIN_ITEMS_REMOVED", "UNIQUE_ITEMS_REMOVED", "ENUM_ARRAY_EXTENDED",
    "COMBINED_TYPE_EXTENDED", "PRODUCT_TYPE_NARROWED", "SUM_TYPE_EXTENDED", "NOT_TYPE_NARROWED"})

# Confluent's description of an incompatible change by its type: {path}; {reader}, {writer} as "new"/"old"
_KEYWORD = "The keyword at path '{path}' in the {reader} schema is not present in the {writer} schema"
_MORE = "The value at path '{path}' in the {reader} schema is more than its value in the {writer} schema"
_LESS = "The value at path '{path}' in the {reader} schema is less than its value in the {writer} schema"
_TYPE = "A type at path '{path}' is different between the {reader} schema and the {writer} schema"
_DESCRIPTIONS: dict[str, str] = {
    **dict.fromkeys(("MAXIMUM_ADDED", "MINIMUM_ADDED", "EXCLUSIVE_MAXIMUM_ADDED", "EXCLUSIVE_MINIMUM_ADDED",
                     "MULTIPLE_OF_ADDED", "MAX_LENGTH_ADDED", "MIN_LENGTH_ADDED", "PATTERN_ADDED",
                     "REQUIRED_ATTRIBUTE_ADDED", "MAX_PROPERTIES_ADDED", "MIN_PROPERTIES_ADDED", "MAX_ITEMS_ADDED",
                     "MIN_ITEMS_ADDED", "UNIQUE_ITEMS_ADDED", "ADDITIONAL_PROPERTIES_REMOVED"), _KEYWORD),
    **dict.fromkeys(("MIN_LENGTH_INCREASED", "MINIMUM_INCREASED", "EXCLUSIVE_MINIMUM_INCREASED",
                     "MIN_PROPERTIES_INCREASED", "MULTIPLE_OF_EXPANDED", "MIN_ITEMS_INCREASED"), _MORE),
    **dict.fromkeys(("MAX_LENGTH_DECREASED", "MAXIMUM_DECREASED", "MAX_ITEMS_DECREASED",
                     "EXCLUSIVE_MAXIMUM_DECREASED", "MAX_PROPERTIES_DECREASED"), _LESS),
    **dict.fromkeys(("PATTERN_CHANGED", "MULTIPLE_OF_CHANGED"),
                    "The value at path '{path}' is different between the {reader} and {writer} schema"),
    **dict.fromkeys(("ENUM_ARRAY_NARROWED", "SUM_TYPE_NARROWED", "ADDITIONAL_PROPERTIES_NARROWED"),
                    "An array or combined type at path '{path}' has fewer elements in the {reader} schema than "
                    "the {writer} schema"),
    "PRODUCT_TYPE_EXTENDED": "An array or combined type at path '{path}' has more elements in the {reader} schema "
                             "than the {writer} schema",
    **dict.fromkeys(("TYPE_CHANGED", "TYPE_NARROWED", "COMBINED_TYPE_CHANGED", "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
                     "ENUM_ARRAY_CHANGED"), _TYPE),
    "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL": "The {reader} schema has an open content model and has a property or "
                                            "item at path '{path}' which is missing in the {writer} schema",
    "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL": "The {reader} schema has an unopen content model and has a "
                                                       "required property at path '{path}' which is missing in the "
                                                       "{writer} schema",
    "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL": "The {reader} schema has a closed content model and is missing a "
                                                  "property or item present at path '{path}' in the {writer} schema",
    "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL": "A property or item is missing in the {reader} "
        "schema but present at path '{path}' in the {writer} schema and is not covered by its partially open "
        "content model",
    "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL": "The {reader} schema has a property or item at "
        "path '{path}' which is missing in the {writer} schema and is not covered by its partially open content "
        "model",
}
RULES = Rules(_COMPATIBLE, _DESCRIPTIONS)


@dataclass
class JsonSchema:
    """A parsed JSON Schema: its JSON, identity, the text served, and the referenced schemas' JSON by name."""
    raw: Any
    canonical: str
    text: str
    referenced: dict[str, Any] = field(default_factory=dict)
    schema_type: str = "JSON"


def parse(text: str, referenced: dict[str, Any] | None = None) -> JsonSchema:
    """The schema of `text`, checked against its meta-schema; InvalidSchema when it is not one."""
    from mockbroker.extras import require

    validators = require("jsonschema", "the Schema Registry's JSON Schema support").validators
    try:
        raw = loads(text, max_depth=MAX_DEPTH)
    except JsonLimitError as exc:
        raise InvalidSchema(f"Invalid schema: not JSON ({exc})") from None
    if not isinstance(raw, (dict, bool)):
        raise InvalidSchema("Invalid schema: a JSON Schema is an object or a boolean")
    try:
        validator = validators.validator_for(raw, default=validators.Draft7Validator)
        if isinstance(raw, dict) and "$schema" in raw and validators.validator_for(raw, default=None) is None:
            raise InvalidSchema(f"unknown $schema {raw['$schema']!r}")
        validator.check_schema(raw)
    except Exception as exc:  # jsonschema's SchemaError, or an unknown $schema
        raise InvalidSchema(f"Invalid JSON schema: {getattr(exc, 'message', exc)}") from None
    return JsonSchema(raw, json.dumps(raw, sort_keys=True, separators=(",", ":")),
                      json.dumps(raw, separators=(",", ":")), dict(referenced or {}))


_OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
                "maxProperties")
_ARRAY_KEYS = ("items", "minItems", "maxItems", "uniqueItems")
_STRING_KEYS = ("minLength", "maxLength", "pattern")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ANNOTATIONS = ("$id", "id", "title", "description", "default", "$schema", "definitions", "$defs", "examples",
                "$comment")


@dataclass
class _Differ:
    original_root: JsonSchema
    update_root: JsonSchema
    found: list[Difference] = field(default_factory=list)
    seen: set[tuple[int, int, str]] = field(default_factory=set)

    def add(self, kind: str, path: str) -> None:
        self.found.append(Difference(kind, path or "#/", RULES))

    def compatible_probe(self, original: Any, update: Any, path: str) -> tuple[bool, list[Difference]]:
        probe = _Differ(self.original_root, self.update_root, seen=set(self.seen))
        probe.compare(original, update, path)
        return all(d.compatible for d in probe.found), probe.found

    def resolve(self, schema: Any, root: JsonSchema) -> Any:
        for _ in range(32):  # a chain of $refs, bounded
            if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
                return schema
            schema = _lookup(schema["$ref"], root)
        return schema

    def compare(self, original: Any, update: Any, path: str) -> None:
        if original is None and update is None:
            return
        if original is None:
            return self.add("SCHEMA_ADDED", path)
        if update is None:
            return self.add("SCHEMA_REMOVED", path)
        original, update = self.resolve(original, self.original_root), self.resolve(update, self.update_root)
        key = (id(original), id(update), path)
        if key in self.seen:  # a recursive schema: already under way
            return
        self.seen.add(key)
        okind, ukind = _kind(original), _kind(update)
        if ukind == "combined" and okind != "combined":
            subs, criterion = _combined(update)
            if len(subs) == 1 or criterion in ("anyOf", "oneOf"):
                for sub in subs:
                    ok, found = self.compatible_probe(original, sub, path)
                    if ok:
                        self.found += found
                        if len(subs) > 1:
                            self.add("SUM_TYPE_EXTENDED", path)
                        return
        elif okind == "combined" and ukind != "combined":
            subs, _ = _combined(original)
            if len(subs) == 1:
                ok, found = self.compatible_probe(subs[0], update, path)
                if ok:
                    self.found += found
                    return
        if okind != ukind:
            if okind == "false" or ukind == "empty":
                return
            return self.add("TYPE_CHANGED", path)
        if not isinstance(original, dict) or not isinstance(update, dict):
            return
        for word, kind in (("$id", "ID_CHANGED"), ("title", "TITLE_CHANGED"), ("description", "DESCRIPTION_CHANGED"),
                           ("default", "DEFAULT_CHANGED")):
            if original.get(word) != update.get(word):
                self.add(kind, path)
        compare = getattr(self, f"compare_{okind}", None)
        if compare is not None:
            compare(original, update, path)
        elif okind == "other" and _strip(original) != _strip(update):
            self.add("TYPE_CHANGED", path)

    def compare_string(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        self.bound(original, update, path, "maxLength", "MAX_LENGTH")
        self.bound(original, update, path, "minLength", "MIN_LENGTH")
        if original.get("pattern") != update.get("pattern"):
            kind = "ADDED" if "pattern" not in original else "REMOVED" if "pattern" not in update else "CHANGED"
            self.add(f"PATTERN_{kind}", f"{path}/pattern")

    def compare_number(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        ointeger, uinteger = original.get("type") == "integer", update.get("type") == "integer"
        if ointeger != uinteger:
            self.add("TYPE_EXTENDED" if ointeger else "TYPE_NARROWED", path)
        self.bound(original, update, path, "maximum", "MAXIMUM")
        self.bound(original, update, path, "minimum", "MINIMUM")
        self.bound(original, update, path, "exclusiveMaximum", "EXCLUSIVE_MAXIMUM")
        self.bound(original, update, path, "exclusiveMinimum", "EXCLUSIVE_MINIMUM")
        old, new = original.get("multipleOf"), update.get("multipleOf")
        if old != new:
            if old is None or new is None:
                self.add(f"MULTIPLE_OF_{'ADDED' if old is None else 'REMOVED'}", f"{path}/multipleOf")
            elif new % old == 0:
                self.add("MULTIPLE_OF_EXPANDED", f"{path}/multipleOf")
            elif old % new == 0:
                self.add("MULTIPLE_OF_REDUCED", f"{path}/multipleOf")
            else:
                self.add("MULTIPLE_OF_CHANGED", f"{path}/multipleOf")

    def bound(self, original: dict[str, Any], update: dict[str, Any], path: str, word: str, name: str) -> None:
        old, new = original.get(word), update.get(word)
        if old == new or isinstance(old, bool) or isinstance(new, bool):  # draft 4's boolean exclusive* aside
            return
        if old is None or new is None:
            kind = "ADDED" if old is None else "REMOVED"
        else:
            kind = "INCREASED" if new > old else "DECREASED"
        self.add(f"{name}_{kind}", f"{path}/{word}")

    def compare_enum(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        old, new = _values(original["enum"]), _values(update["enum"])
        if old != new:
            kind = "EXTENDED" if new >= old else "NARROWED" if new <= old else "CHANGED"
            self.add(f"ENUM_ARRAY_{kind}", f"{path}/enum")

    def compare_array(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        self.bound(original, update, path, "maxItems", "MAX_ITEMS")
        self.bound(original, update, path, "minItems", "MIN_ITEMS")
        if bool(original.get("uniqueItems")) != bool(update.get("uniqueItems")):
            self.add("UNIQUE_ITEMS_ADDED" if update.get("uniqueItems") else "UNIQUE_ITEMS_REMOVED",
                     f"{path}/uniqueItems")
        old, new = original.get("items"), update.get("items")
        if isinstance(old, list) or isinstance(new, list):
            if old != new:
                self.add("TYPE_CHANGED", f"{path}/items")
        elif old is not None or new is not None:
            self.compare(old if old is not None else True, new if new is not None else True, f"{path}/items")

    def compare_combined(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        (olds, ocriterion), (news, ucriterion) = _combined(original), _combined(update)
        if ocriterion != ucriterion:
            return self.add("COMBINED_TYPE_CHANGED", path)
        if len(news) != len(olds):
            more = len(news) > len(olds)
            kind = ("PRODUCT_TYPE_EXTENDED" if more else "PRODUCT_TYPE_NARROWED") if ocriterion == "allOf" else (
                "SUM_TYPE_EXTENDED" if more else "SUM_TYPE_NARROWED")
            self.add(kind, path)
        unmatched = list(range(len(news)))
        for i, old in enumerate(olds):
            for j in unmatched:
                ok, found = self.compatible_probe(old, news[j], f"{path}/{ocriterion}/{i}")
                if ok:
                    self.found += found
                    unmatched.remove(j)
                    break
            else:
                if len(olds) <= len(news) or ocriterion == "allOf":
                    self.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path)
                    return

    def compare_object(self, original: dict[str, Any], update: dict[str, Any], path: str) -> None:
        oprops, uprops = original.get("properties", {}), update.get("properties", {})
        orequired, urequired = set(original.get("required", ())), set(update.get("required", ()))
        for name in oprops:
            if name in uprops and (name in orequired) != (name in urequired):
                if name in orequired:
                    self.add("REQUIRED_ATTRIBUTE_REMOVED", f"{path}/required/{name}")
                else:
                    self.add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if _has_default(uprops[name])
                             else "REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{name}")
        for name in sorted(set(oprops) | set(uprops)):
            where = f"{path}/properties/{name}"
            if name not in uprops:
                self.property_removed(oprops[name], update, name, where)
            elif name not in oprops:
                self.property_added(uprops[name], original, name, name in urequired, where)
            else:
                self.compare(oprops[name], uprops[name], where)
        opermits, upermits = original.get("additionalProperties", True) is not False, update.get(
            "additionalProperties", True) is not False
        oextra, uextra = _extra_schema(original), _extra_schema(update)
        where = f"{path}/additionalProperties"
        if opermits != upermits:
            self.add("ADDITIONAL_PROPERTIES_ADDED" if upermits else "ADDITIONAL_PROPERTIES_REMOVED", where)
        elif oextra is None and uextra is not None:
            self.add("ADDITIONAL_PROPERTIES_NARROWED", where)
        elif uextra is None and oextra is not None:
            self.add("ADDITIONAL_PROPERTIES_EXTENDED", where)
        elif oextra is not None:
            self.compare(oextra, uextra, where)
        self.bound(original, update, path, "maxProperties", "MAX_PROPERTIES")
        self.bound(original, update, path, "minProperties", "MIN_PROPERTIES")

    def property_removed(self, old: Any, update: dict[str, Any], name: str, where: str) -> None:
        if _open(update):
            return self.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL", where)
        partial = _partial(update, name)
        if partial is not None:
            ok, found = self.compatible_probe(old, partial, where)
            self.found += found
            return self.add(f"PROPERTY_REMOVED_{'IS' if ok else 'NOT'}_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        self.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL" if old is False
                 else "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where)

    def property_added(self, new: Any, original: dict[str, Any], name: str, required: bool, where: str) -> None:
        if _open(original):
            return self.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL" if _kind(new) == "empty"
                            else "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where)
        partial = _partial(original, name)
        if partial is not None:
            ok, found = self.compatible_probe(partial, new, where)
            self.found += found
            self.add(f"PROPERTY_ADDED_{'IS' if ok else 'NOT'}_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", where)
        if required:
            self.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL" if _has_default(new)
                     else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)
        else:
            self.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", where)


def _lookup(ref: str, root: JsonSchema) -> Any:
    """A `$ref`'s target: a JSON pointer in the schema itself, or a referenced schema (and a pointer in it)."""
    target, _, pointer = ref.partition("#")
    document = root.raw if not target else root.referenced.get(target)
    if document is None:
        return {"$ref": None, "unresolved": ref}  # compared as an opaque schema
    for part in [p for p in pointer.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(document, dict) and part in document:
            document = document[part]
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return {"$ref": None, "unresolved": ref}
    return document


def _kind(schema: Any) -> str:
    """The everit schema class Confluent's diff compares by: object, array, string, number, combined..."""
    if schema is True:
        return "empty"
    if schema is False:
        return "false"
    if not isinstance(schema, dict):
        return "other"
    if any(k in schema for k in ("anyOf", "oneOf", "allOf")) or isinstance(schema.get("type"), list):
        return "combined"
    if "enum" in schema:
        return "enum"
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return "number"
    if kind in ("object", "array", "string", "boolean", "null"):
        return str(kind)
    for name, words in (("object", _OBJECT_KEYS), ("array", _ARRAY_KEYS), ("string", _STRING_KEYS),
                        ("number", _NUMBER_KEYS)):
        if any(w in schema for w in words):
            return name
    if not _strip(schema):
        return "empty"
    return "other"


def _strip(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in _ANNOTATIONS}


def _combined(schema: dict[str, Any]) -> tuple[list[Any], str]:
    """A combined schema's subschemas and criterion; a list of types is an anyOf of one schema per type."""
    for criterion in ("anyOf", "oneOf", "allOf"):
        if criterion in schema:
            return list(schema[criterion]), criterion
    rest = {k: v for k, v in schema.items() if k != "type"}
    return [{**rest, "type": t} for t in schema["type"]], "anyOf"


def _values(values: list[Any]) -> set[str]:
    return {json.dumps(v, sort_keys=True) for v in values}


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def _extra_schema(schema: dict[str, Any]) -> Any:
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _open(schema: dict[str, Any]) -> bool:
    """An open content model: any further property, of any type (no patternProperties, no schema for them)."""
    return not schema.get("patternProperties") and _extra_schema(schema) is None and schema.get(
        "additionalProperties", True) is not False


def _partial(schema: dict[str, Any], name: str) -> Any:
    """The schema a partially open content model gives a property of this name, or None."""
    for pattern, sub in schema.get("patternProperties", {}).items():
        try:
            if re.search(pattern, name):
                return sub
        except re.error:
            continue
    return _extra_schema(schema)


def differences(original: JsonSchema, update: JsonSchema) -> list[Difference]:
    """Every change from `original` to `update`, compatible ones too (see the module's docstring)."""
    differ = _Differ(original, update)
    differ.compare(original.raw, update.raw, "#")
    return differ.found


def incompatibilities(reader: JsonSchema, writer: JsonSchema) -> list[Difference]:
    """The changes that keep `reader` from reading what `writer` wrote (Confluent: writer -> reader)."""
    return [d for d in differences(writer, reader) if not d.compatible]
