"""The Schema Registry's state, without I/O: subjects and their versions, schemas by global id, soft and
permanent deletes, compatibility levels and modes, global and per subject, as Confluent's Schema Registry
keeps them. Avro, JSON Schema and Protobuf schemas (registry/schemas.py picks each type's module); every refusal is a RegistryError carrying
Confluent's HTTP status and error code, which the HTTP app (registry/http.py) sends as it is.

- An identical schema (the same type and canonical text) has one id wherever it is registered; registering it again
  under a subject that holds it (not deleted) gives its id back and no new version.
- Versions count from 1 per subject and keep counting after deletes; a soft delete hides a version (or a
  whole subject) from reads without `deleted`, a permanent one removes what was soft-deleted first.
- Compatibility: the new schema against the latest live version (or all of them, _TRANSITIVE), BACKWARD:
  the new schema reads the old ones' data; FORWARD: the old ones read the new one's; FULL: both ways.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mockbroker.registry import contracts, store
from mockbroker.registry import references as refs
from mockbroker.registry import schemas as types
from mockbroker.registry.avro import InvalidSchema
from mockbroker.registry.contracts import Contract
from mockbroker.registry.references import Reference
from mockbroker.registry.schemas import ParsedSchema

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
MODES = ("READWRITE", "READONLY", "IMPORT")
MAX_VERSION = 2**31 - 1
SCHEMA_TYPES = types.TYPES


class RegistryError(Exception):
    """A refusal with Confluent's HTTP status and error code (40401 subject not found, ...)."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def invalid_schema(message: str) -> RegistryError:
    return RegistryError(422, 42201, message)


@dataclass
class Version:
    """One version of a subject: its number, the schema's id, and whether it was soft-deleted."""
    version: int
    schema_id: int
    deleted: bool = False


@dataclass
class SchemaRegistry:
    """Every subject, schema, config and mode of one registry (see the module's docstring)."""
    compatibility: str | None = None  # the global level set through /config; None: default_compatibility
    mode: str = "READWRITE"
    default_compatibility: str = "BACKWARD"  # schema.compatibility.level (envregistry.py)
    mode_mutability: bool = True  # mode.mutability: False refuses PUT and DELETE /mode (42205)
    subjects: dict[str, list[Version]] = field(default_factory=dict)
    schemas: dict[int, ParsedSchema] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)  # identity (type, canonical text, references) -> id
    references: dict[int, tuple[Reference, ...]] = field(default_factory=dict)  # a schema's, by its id
    contracts: dict[int, Contract] = field(default_factory=dict)  # metadata/ruleSet (contracts.py), by id
    subject_compatibility: dict[str, str] = field(default_factory=dict)
    subject_mode: dict[str, str] = field(default_factory=dict)
    next_id: int = 1
    version_high: dict[str, int] = field(default_factory=dict)  # the highest version a subject ever had
    # each change as its `_schemas` record (registry/store.py), for the server to write and clear
    journal: list[store.Record] = field(default_factory=list)

    # -- reading -------------------------------------------------------------------------------
    def subject_names(self, deleted: bool = False) -> list[str]:
        return sorted(s for s, vs in self.subjects.items() if any(deleted or not v.deleted for v in vs))

    def versions(self, subject: str, deleted: bool = False) -> list[Version]:
        """The subject's versions (live ones, or all with `deleted`); 40401 when there are none."""
        found = [v for v in self.subjects.get(subject, []) if deleted or not v.deleted]
        if not found:
            raise subject_not_found(subject)
        return found

    def version(self, subject: str, version: str | int, deleted: bool = False) -> Version:
        """One version: a number, or "latest" / -1 (the latest live one); 40401, 40402 or 42202."""
        number = parse_version(version)
        versions = self.versions(subject, deleted=deleted)
        if number == -1:
            return versions[-1]
        for v in versions:
            if v.version == number:
                return v
        raise RegistryError(404, 40402, f"Version {number} not found.")

    def schema(self, schema_id: int) -> ParsedSchema:
        if schema_id not in self.schemas:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found")
        return self.schemas[schema_id]

    def subjects_of(self, schema_id: int, deleted: bool = False) -> list[tuple[str, int]]:
        """(subject, version) pairs that hold the schema; 40403 when it is unknown."""
        self.schema(schema_id)
        return [(s, v.version) for s, vs in sorted(self.subjects.items()) for v in vs
                if v.schema_id == schema_id and (deleted or not v.deleted)]

    def lookup(self, subject: str, text: str, schema_type: str = "AVRO", deleted: bool = False,
               references: object = None, normalize: bool = False, contract: object = None) -> Version:
        """The subject's version holding this schema (with this metadata and ruleSet when given, whatever
        they are when not); 40401 (no such subject) or 40403 (not under it)."""
        versions = self.versions(subject, deleted=deleted)
        parsed, used = self.parse_schema(text, schema_type, references, normalize)
        given = self.contract(contract)
        wanted = identity(parsed, used) + contracts.identity(given)
        for v in versions:
            held = identity(self.schemas[v.schema_id], self.references.get(v.schema_id, ()))
            if (self._key(v.schema_id) if given else held) == wanted:
                return v
        raise RegistryError(404, 40403, "Schema not found")

    @staticmethod
    def contract(body: object) -> Contract:
        """The metadata and ruleSet of a request body (registry/contracts.py); 42201 when malformed."""
        try:
            return contracts.read(body) if isinstance(body, dict) else {}
        except ValueError as exc:
            raise invalid_schema(f"Invalid schema: {exc}") from None

    def listing(self) -> list[dict[str, Any]]:
        """Every version of every subject, soft-deleted ones too: subject, version, id, schema, deleted."""
        return [{"subject": s, "version": v.version, "id": v.schema_id, "schema": self.schemas[v.schema_id].text,
                 "deleted": v.deleted} for s, vs in sorted(self.subjects.items()) for v in vs]

    def compatibility_of(self, subject: str | None) -> str:
        if subject is not None and subject in self.subject_compatibility:
            return self.subject_compatibility[subject]
        return self.compatibility or self.default_compatibility

    def mode_of(self, subject: str | None) -> str:
        if subject is not None and subject in self.subject_mode:
            return self.subject_mode[subject]
        return self.mode

    # -- registering -----------------------------------------------------------------------------
    def register(self, subject: str, text: str, schema_type: str = "AVRO", references: object = None,
                 normalize: bool = False, schema_id: int | None = None, version: int | None = None,
                 contract: object = None) -> int:
        """Register the schema under the subject (a new version unless it is there); its id. With `schema_id`
        or `version` (IMPORT mode only) those are the schema's id and version, and no compatibility is checked.
        42201 invalid (or a reference to nothing), 409 incompatible, 42205 the mode forbids it or the id or
        version holds another schema, 42207 the subject holds the schema under another id."""
        check_subject(subject)
        parsed, used = self.parse_schema(text, schema_type, references, normalize)
        versions = self.subjects.get(subject, [])
        latest = next((v.schema_id for v in reversed(versions) if not v.deleted), None)
        # `contract`: the body; its metadata and ruleSet, each the latest live version's when not given
        given = contracts.inherit(self.contract(contract), self.contracts.get(latest, {}) if latest else {})
        key = identity(parsed, used) + contracts.identity(given)
        existing = self.ids.get(key)
        for v in versions:  # the subject holds it already: its id back
            if not v.deleted and (v.schema_id == existing or v.schema_id == schema_id and self._key(v.schema_id) == key):
                if schema_id is not None and schema_id != v.schema_id:
                    raise RegistryError(422, 42207, f"Schema already registered with id {v.schema_id} instead of "
                                                    f"input id {schema_id}")
                return v.schema_id
        imported = schema_id is not None or version is not None
        self._check_register_mode(subject, imported)
        if not imported:
            problems = self.check(subject, parsed, [v for v in versions if not v.deleted])
            if problems:
                raise RegistryError(409, 409, f"Schema being registered is incompatible with an earlier schema "
                                              f"for subject \"{subject}\", details: [{', '.join(problems)}]")
        if schema_id is not None:
            if schema_id in self.schemas and self._key(schema_id) != key:
                raise RegistryError(422, 42205, f"Overwrite new schema with id {schema_id} is not permitted.")
            self.next_id = max(self.next_id, schema_id + 1)
        elif existing is None:
            schema_id, self.next_id = self.next_id, self.next_id + 1
        else:
            schema_id = existing
        if schema_id not in self.schemas:
            self.ids.setdefault(key, schema_id)
            self.schemas[schema_id] = parsed
            if used:
                self.references[schema_id] = used
            if given:
                self.contracts[schema_id] = given
        number = self._next_version(subject) if version is None else version
        if any(v.version == number for v in versions):
            raise RegistryError(422, 42205, f"Overwrite new schema with version {number} is not permitted.")
        added = Version(number, schema_id)
        self.subjects[subject] = sorted(versions + [added], key=lambda v: v.version)
        self._journal_version(subject, added)
        return schema_id

    def _key(self, schema_id: int) -> str:
        return (identity(self.schemas[schema_id], self.references.get(schema_id, ()))
                + contracts.identity(self.contracts.get(schema_id)))

    def _check_register_mode(self, subject: str, imported: bool) -> None:
        """Confluent's rule: READONLY refuses, an id or version needs IMPORT, and without one READWRITE."""
        mode = self.mode_of(subject)
        self._writable(subject)
        if imported and mode != "IMPORT":
            raise RegistryError(422, 42205, f"Subject {subject} is not in import mode")
        if not imported and mode != "READWRITE":
            raise RegistryError(422, 42205, f"Subject {subject} is not in read-write mode")

    def _journal_version(self, subject: str, v: Version) -> None:
        self.journal.append((store.schema_key(subject, v.version), {
            "subject": subject, "version": v.version, "id": v.schema_id, **self.schema_body(v.schema_id),
            "deleted": v.deleted}))

    def schema_body(self, schema_id: int, fmt: str | None = None) -> dict[str, Any]:
        """The schema as Confluent's bodies give it: its text (a Protobuf one as its base64 descriptor with
        `fmt` "serialized"), and its type unless it is Avro."""
        schema = self.schema(schema_id)
        text = schema.text
        if fmt == "serialized" and schema.schema_type == "PROTOBUF":
            text = schema.serialized()  # type: ignore[union-attr]
        body: dict[str, Any] = {"schema": text}
        if schema.schema_type != "AVRO":
            body["schemaType"] = schema.schema_type
        if self.references.get(schema_id):
            body["references"] = [r.body() for r in self.references[schema_id]]
        return body | self.contracts.get(schema_id, {})

    def _next_version(self, subject: str) -> int:
        """Versions keep counting past deleted ones (Confluent's next version after the highest it had)."""
        versions = self.subjects.get(subject, [])
        return max(self.version_high.get(subject, 0), versions[-1].version if versions else 0) + 1

    def check(self, subject: str, new: ParsedSchema, against: list[Version], level: str | None = None) -> list[str]:
        """Why `new` may not follow `against` (oldest first) under the subject's level; empty when it may."""
        level = level or self.compatibility_of(subject)
        if level == "NONE" or not against:
            return []
        olds = against if level.endswith("_TRANSITIVE") else against[-1:]
        base = level.removesuffix("_TRANSITIVE")
        messages: list[str] = []
        for old in reversed(olds):
            old_schema = self.schemas[old.schema_id]
            if old_schema.schema_type != new.schema_type:
                messages += ["Incompatible because of different schema type", f"{{oldSchemaVersion: {old.version}}}",
                             f"{{oldSchema: '{old_schema.text}'}}"]
                continue
            found: list[tuple[types.Problem, str, str]] = []
            if base in ("BACKWARD", "FULL"):  # the new schema reads the old one's data
                found += [(p, "new", "old") for p in types.incompatibilities(new, old_schema)]
            if base in ("FORWARD", "FULL"):  # the old schema reads the new one's
                found += [(p, "old", "new") for p in types.incompatibilities(old_schema, new)]
            messages += [problem.message(reader, writer) for problem, reader, writer in found]
            if found:
                messages += [f"{{oldSchemaVersion: {old.version}}}", f"{{oldSchema: '{old_schema.text}'}}"]
        if messages:
            messages.append(f"{{validateFields: 'false', compatibility: '{level}'}}")
        return messages

    def test_compatibility(self, subject: str, text: str, version: str | int | None,
                           schema_type: str = "AVRO", references: object = None) -> list[str]:
        """Why the schema would be refused against one version (or, None, the versions its level names)."""
        check_subject(subject)
        parsed, _ = self.parse_schema(text, schema_type, references)
        if version is None:
            live = [v for v in self.subjects.get(subject, []) if not v.deleted]
            return self.check(subject, parsed, live)
        one = self.version(subject, version)
        level = self.compatibility_of(subject).removesuffix("_TRANSITIVE")
        return self.check(subject, parsed, [one], level)

    # -- deleting ------------------------------------------------------------------------------
    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        """Soft-delete every version (or, permanent, remove a soft-deleted subject); the version numbers."""
        versions = self.subjects.get(subject, [])
        if not versions:
            raise subject_not_found(subject)
        if permanent:
            if any(not v.deleted for v in versions):
                raise RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being "
                                                f"permanently deleted")
            self.version_high[subject] = max(self.version_high.get(subject, 0), versions[-1].version)
            del self.subjects[subject]
            self.journal.extend((store.schema_key(subject, v.version), None) for v in versions)
            if self.subject_compatibility.pop(subject, None) is not None:
                self.journal.append((store.config_key(subject), None))
            if self.subject_mode.pop(subject, None) is not None:
                self.journal.append((store.mode_key(subject), None))
            self.forget_unused()
            return [v.version for v in versions]
        live = [v for v in versions if not v.deleted]
        if not live:
            raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete "
                                            f"permanently")
        self._writable(subject)
        self._unreferenced(subject, live)
        for v in live:
            v.deleted = True
        self.journal.append((store.delete_subject_key(subject), {"subject": subject, "version": live[-1].version}))
        return [v.version for v in live]

    def delete_version(self, subject: str, version: str | int, permanent: bool = False) -> int:
        number = parse_version(version)
        versions = self.subjects.get(subject, [])
        if not versions:
            raise subject_not_found(subject)
        if number == -1:
            live = [v for v in versions if not v.deleted]
            if not live:
                raise subject_not_found(subject)
            number = live[-1].version
        target = next((v for v in versions if v.version == number), None)
        if target is None:
            raise RegistryError(404, 40402, f"Version {number} not found.")
        if permanent:
            if not target.deleted:
                raise RegistryError(404, 40407, f"Subject '{subject}' Version {number} was not deleted first "
                                                f"before being permanently deleted")
            self.version_high[subject] = max(self.version_high.get(subject, 0), versions[-1].version)
            versions.remove(target)
            if not versions:
                del self.subjects[subject]
            self.journal.append((store.schema_key(subject, number), None))
            self.forget_unused()
            return number
        if target.deleted:
            raise RegistryError(404, 40406, f"Subject '{subject}' Version {number} was soft deleted.Set "
                                            f"permanent=true to delete permanently")
        self._writable(subject)
        self._unreferenced(subject, [target])
        target.deleted = True
        self._journal_version(subject, target)
        return number

    def forget_unused(self) -> None:
        """A schema no version holds any more (all permanently deleted) leaves the id table; ids never return."""
        used = {v.schema_id for vs in self.subjects.values() for v in vs}
        for schema_id in [i for i in self.schemas if i not in used]:
            key = self._key(schema_id)
            del self.schemas[schema_id]
            self.references.pop(schema_id, None)
            self.contracts.pop(schema_id, None)
            if self.ids.get(key) == schema_id:  # (an imported id may share its schema with another id)
                del self.ids[key]

    def _writable(self, subject: str) -> None:
        if self.mode_of(subject) == "READONLY":
            raise RegistryError(422, 42205, f"Subject {subject} is in read-only mode")

    # -- configs and modes ---------------------------------------------------------------------
    def set_compatibility(self, subject: str | None, level: object) -> str:
        if not isinstance(level, str) or level.upper() not in LEVELS:
            raise RegistryError(422, 42203, "Invalid compatibility level. Valid values are none, backward, "
                                            "forward, full, backward_transitive, forward_transitive, and "
                                            "full_transitive")
        if subject is None:
            self.compatibility = level.upper()
        else:
            check_subject(subject)
            self.subject_compatibility[subject] = level.upper()
        self.journal.append((store.config_key(subject), {"compatibilityLevel": level.upper()}))
        return level.upper()

    def delete_compatibility(self, subject: str | None) -> str:
        """Drop the subject's level (or the global one: back to the default level); the level it had."""
        level = self.compatibility_of(subject)
        if subject is None:
            if self.compatibility is not None:
                self.compatibility = None
                self.journal.append((store.config_key(None), None))
        elif self.subject_compatibility.pop(subject, None) is not None:
            self.journal.append((store.config_key(subject), None))
        return level

    def delete_mode(self, subject: str | None) -> str:
        """Drop the subject's mode (or reset the global one to READWRITE); the mode it had."""
        self._mode_mutable()
        mode = self.mode_of(subject)
        if subject is None:
            self.mode = "READWRITE"
            self.journal.append((store.mode_key(None), {"mode": "READWRITE"}))
        elif self.subject_mode.pop(subject, None) is not None:
            self.journal.append((store.mode_key(subject), None))
        return mode

    def _mode_mutable(self) -> None:
        if not self.mode_mutability:
            raise RegistryError(422, 42205, "Mode changes are not allowed")

    def set_mode(self, subject: str | None, mode: object, force: bool = False) -> str:
        """Set the global or the subject's mode; IMPORT only where no live schema is yet (or with `force`)."""
        self._mode_mutable()
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise RegistryError(422, 42204, f"Invalid mode. Valid values are {', '.join(MODES)}")
        if mode.upper() == "IMPORT" and self.mode_of(subject) != "IMPORT" and not force and (
                self.subject_names() if subject is None else subject in self.subject_names()):
            raise RegistryError(422, 42205, "Cannot import since found existing subjects")
        if subject is None:
            self.mode = mode.upper()
        else:
            check_subject(subject)
            self.subject_mode[subject] = mode.upper()
        self.journal.append((store.mode_key(subject), {"mode": mode.upper()}))
        return mode.upper()

    def parse_schema(self, text: object, schema_type: object, references: object = None,
                     normalize: bool = False) -> tuple[ParsedSchema, tuple[Reference, ...]]:
        """The schema (normalized: registry/schemas.py's `normalize`), and its references with "latest" (-1)
        resolved; 42201 when either is invalid."""
        if schema_type not in SCHEMA_TYPES:
            raise invalid_schema(f"Invalid schema type {schema_type!r}: mockbroker's registry serves "
                                 f"{', '.join(SCHEMA_TYPES)}")
        if not isinstance(text, str):
            raise invalid_schema("Invalid schema: the schema must be a string")
        try:
            used = self._resolve_latest(refs.read(references))
            parsed = types.parse(schema_type, text, self.referenced(used))
            return (types.normalize(parsed) if normalize else parsed), used
        except (InvalidSchema, ValueError) as exc:
            raise invalid_schema(str(exc) if isinstance(exc, InvalidSchema) else f"Invalid schema: {exc}") from None

    def _resolve_latest(self, references: tuple[Reference, ...]) -> tuple[Reference, ...]:
        return tuple(Reference(r.name, r.subject, self.version(r.subject, -1).version) if r.version == -1 else r
                     for r in references)

    def referenced(self, references: tuple[Reference, ...], depth: int = 0) -> dict[str, ParsedSchema]:
        """The schemas the references name, by reference name, with theirs (transitively); 42201 for a
        reference to a subject version that is not there (or soft-deleted)."""
        found: dict[str, ParsedSchema] = {}
        for r in references:
            try:
                schema_id = self.version(r.subject, r.version).schema_id
            except RegistryError:
                raise invalid_schema(f"Invalid schema: reference {r.name!r} names subject {r.subject!r} version "
                                     f"{r.version}, which is not there") from None
            if depth < 32:
                found.update(self.referenced(self.references.get(schema_id, ()), depth + 1))
            found[r.name] = self.schemas[schema_id]
        return found

    def referenced_by(self, subject: str, version: str | int) -> list[int]:
        """The ids of the schemas that refer to the subject's version (held by a live version)."""
        number = self.version(subject, version).version
        live = {v.schema_id for vs in self.subjects.values() for v in vs if not v.deleted}
        return [i for i in refs.referencing(self.references, subject, number) if i in live]

    def _unreferenced(self, subject: str, versions: list[Version]) -> None:
        for v in versions:
            if not v.deleted and self.referenced_by(subject, v.version):
                raise RegistryError(422, 42206, f"One or more references exist to the schema "
                                                f"{{magic=1,keytype=SCHEMA,subject={subject},version={v.version}}}.")


def identity(schema: ParsedSchema, references: tuple[Reference, ...] = ()) -> str:
    """What makes two schemas one id: their type, canonical text and references."""
    kind = "" if schema.schema_type == "AVRO" else f"{schema.schema_type} "
    return kind + schema.canonical + refs.identity(references)


def parse_version(version: str | int) -> int:
    """A version as a number: 1..2^31-1, or "latest" / -1 (as -1); 42202 otherwise."""
    if version == "latest":
        return -1
    try:
        number = int(version)
    except (TypeError, ValueError):
        number = 0
    if isinstance(version, str) and not version.lstrip("-").isdigit():
        number = 0
    if number != -1 and not 1 <= number <= MAX_VERSION:
        raise RegistryError(422, 42202, f"The specified version '{version}' is not a valid version id. Allowed "
                                        f"values are between [1, 2^31-1] and the string \"latest\"")
    return number


def check_subject(subject: str) -> None:
    """Subject names: not empty, no control characters (Confluent refuses them as invalid subjects)."""
    if not subject or any(ord(c) < 0x20 or ord(c) == 0x7F for c in subject):
        raise RegistryError(422, 42208, f"Invalid subject {json.dumps(subject)}")
