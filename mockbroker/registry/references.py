"""Schema references (Confluent's `references: [{name, subject, version}]`): a schema naming types that
another subject's version holds. Avro names the referenced schema's named types, JSON Schema `$ref`s the
reference's name, Protobuf imports it. No I/O and no registry here: the Reference value, reading it from a
request or a `_schemas` record, and finding who refers to a version; the model (registry/model.py) resolves
references to the schemas they name and refuses to delete a version something refers to (42206)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_REFERENCES = 1000


@dataclass(frozen=True)
class Reference:
    """One reference: the name the schema uses for it, and the subject and version it names."""
    name: str
    subject: str
    version: int

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


def read(raw: object) -> tuple[Reference, ...]:
    """References from a request body's or a record's `references` (absent or null: none); ValueError saying
    what is wrong otherwise. Version -1 is "latest", resolved when the schema is registered."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_REFERENCES:
        raise ValueError("references must be a list")
    found = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError("a reference must be an object with name, subject and version")
        name, subject, version = item.get("name"), item.get("subject"), item.get("version")
        if not isinstance(name, str) or not name or not isinstance(subject, str) or not subject:
            raise ValueError("a reference needs a name and a subject")
        if isinstance(version, bool) or not isinstance(version, int) or not (version == -1 or version >= 1):
            raise ValueError(f"reference {name!r} has an invalid version {version!r}")
        found.append(Reference(name, subject, version))
    if len({r.name for r in found}) != len(found):
        raise ValueError("two references have the same name")
    return tuple(found)


def identity(references: Iterable[Reference]) -> str:
    """The references' part of a schema's identity (the same text with other references is another schema)."""
    return "".join(f"\n{r.name}\0{r.subject}\0{r.version}" for r in references)


def referencing(references_by_id: dict[int, tuple[Reference, ...]], subject: str, version: int) -> list[int]:
    """The ids of the schemas that refer to the subject's version."""
    return sorted(i for i, refs in references_by_id.items() if any(r.subject == subject and r.version == version
                                                                   for r in refs))
