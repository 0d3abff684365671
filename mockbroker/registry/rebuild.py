"""The registry rebuilt from its `_schemas` topic at start: each record (registry/store.py's formats, as
Confluent writes them) applied in offset order; a record it cannot read is logged and skipped, never fatal.
Ids go on counting from the highest one read, versions from each subject's highest."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from mockbroker.bounded_json import JsonLimitError, loads
from mockbroker.registry import contracts
from mockbroker.registry.model import RegistryError, SchemaRegistry, Version, identity
from mockbroker.registry.store import TOPIC

log = logging.getLogger("mockbroker.registry")


def replay(registry: SchemaRegistry, records: Iterable[tuple[bytes | None, bytes | None]]) -> int:
    """Apply the topic's records, oldest first; how many were skipped as unreadable (each logged)."""
    skipped = 0
    for raw_key, raw_value in records:
        try:
            key = loads(raw_key or b"")
            value = loads(raw_value) if raw_value is not None else None
            if not isinstance(key, dict) or not (value is None or isinstance(value, dict)):
                raise ValueError("not a JSON object")
            _apply(registry, key, value)
        except (JsonLimitError, ValueError, KeyError, TypeError, RegistryError) as exc:
            skipped += 1
            log.warning("schema registry: skipping a %s record it cannot read: %s", TOPIC, exc)
    registry.journal.clear()  # what was read back is in the topic already
    return skipped


def _apply(registry: SchemaRegistry, key: dict[str, Any], value: dict[str, Any] | None) -> None:
    kind, subject = key.get("keytype"), key.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise ValueError(f"subject {subject!r} is not a string")
    if kind == "SCHEMA" and subject is not None:
        _apply_schema(registry, subject, int(key["version"]), value)
    elif kind == "CONFIG":
        level = str(value["compatibilityLevel"]) if value is not None else None
        if subject is None:
            registry.compatibility = level  # None (a tombstone): back to the default level
        elif level is None:
            registry.subject_compatibility.pop(subject, None)
        else:
            registry.subject_compatibility[subject] = level
    elif kind == "MODE":
        mode = str(value["mode"]) if value is not None else None
        if subject is None:
            registry.mode = mode or "READWRITE"
        elif mode is None:
            registry.subject_mode.pop(subject, None)
        else:
            registry.subject_mode[subject] = mode
    elif kind == "DELETE_SUBJECT" and subject is not None:
        if value is not None:
            for v in registry.subjects.get(subject, []):
                if v.version <= int(value["version"]):
                    v.deleted = True
    elif kind != "NOOP":
        raise ValueError(f"unknown keytype {kind!r} (or no subject)")


def _apply_schema(registry: SchemaRegistry, subject: str, number: int, value: dict[str, Any] | None) -> None:
    versions = [v for v in registry.subjects.get(subject, []) if v.version != number]
    registry.version_high[subject] = max(registry.version_high.get(subject, 0), number)
    if value is not None:
        schema_id = int(value["id"])
        if schema_id not in registry.schemas:
            parsed, used = registry.parse_schema(value["schema"], value.get("schemaType", "AVRO"),
                                                 value.get("references"))
            contract = contracts.read(value)  # metadata and ruleSet (ValueError: skipped as unreadable)
            registry.schemas[schema_id] = parsed
            registry.ids.setdefault(identity(parsed, used) + contracts.identity(contract), schema_id)
            if used:
                registry.references[schema_id] = used
            if contract:
                registry.contracts[schema_id] = contract
        registry.next_id = max(registry.next_id, schema_id + 1)
        versions.append(Version(number, schema_id, bool(value.get("deleted", False))))
        versions.sort(key=lambda v: v.version)
    if versions:
        registry.subjects[subject] = versions
    else:
        registry.subjects.pop(subject, None)
    registry.forget_unused()
