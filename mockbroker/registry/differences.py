"""One change between two schemas as Confluent's JSON Schema and Protobuf diffs name it, shared by
registry/json_schema.py and registry/protobuf.py.

A `Difference` is a change from the original (writer) schema to the update (reader): Confluent's type name
(FIELD_REMOVED, MAX_LENGTH_DECREASED...) and the path it was found at. What varies between the schema types
is held by a `Rules`, which each type's module makes once: the set of type names that are compatible changes
(the rest are incompatibilities) and the description of each incompatible one in Confluent's verbose
compatibility answer. A description is a template over `{path}`, `{reader}`, `{writer}` ("new" or "old",
by the direction of the check) and `{type}`; a type without its own description takes the rules' `fallback`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_PLACEHOLDER = re.compile(r"\{(path|reader|writer|type)\}")


@dataclass(frozen=True)
class Rules:
    """One schema type's diff rules: which changes are compatible, and how the others are described."""
    compatible: frozenset[str]
    descriptions: Mapping[str, str] = field(default_factory=dict)
    fallback: str = ""


@dataclass(frozen=True)
class Difference:
    """One change from the original (writer) schema to the update (reader), by Confluent's type name."""
    type: str
    path: str
    rules: Rules = field(compare=False, repr=False)

    @property
    def compatible(self) -> bool:
        return self.type in self.rules.compatible

    def description(self, reader: str, writer: str) -> str:
        """The change described, naming the schemas' roles ("new", "old"); placeholders filled in one pass,
        so a path holding `{reader}` stays as it is."""
        values = {"path": self.path, "reader": reader, "writer": writer, "type": self.type}
        template = self.rules.descriptions.get(self.type, self.rules.fallback)
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)

    def message(self, reader: str, writer: str) -> str:
        """Confluent's verbose message: {errorType:"TYPE", description:"..."}."""
        return f'{{errorType:"{self.type}", description:"{self.description(reader, writer)}"}}'
