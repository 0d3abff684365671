"""The registry's records in its `_schemas` topic, as Confluent's Schema Registry writes them. No I/O: the
model (registry/model.py) journals each change as a (key, value) pair of JSON objects made here; `encode`
makes the record's bytes; registry/rebuild.py applies records read back.

Keys and values (Confluent's KafkaStore formats; a None value is a tombstone):
- SCHEMA  {"keytype": "SCHEMA", "subject", "version", "magic": 1} ->
          {"subject", "version", "id", "schema", "deleted"} (a soft-deleted version: deleted true;
          a permanently deleted one: a tombstone)
- CONFIG  {"keytype": "CONFIG", "subject": null or a subject, "magic": 0} -> {"compatibilityLevel"}
- MODE    {"keytype": "MODE", "subject": null or a subject, "magic": 0} -> {"mode"}
- DELETE_SUBJECT {"keytype": "DELETE_SUBJECT", "subject", "magic": 0} -> {"subject", "version"}: every
          version up to `version` soft-deleted
- NOOP    {"keytype": "NOOP", "magic": 0} -> null: written at start, as Confluent's KafkaStore writes one to
          know the end of the topic it must read; read and skipped
"""

from __future__ import annotations

import json
from typing import Any

TOPIC = "_schemas"
TOPIC_CONFIG = {"cleanup.policy": "compact"}
Record = tuple[dict[str, Any], dict[str, Any] | None]


def schema_key(subject: str, version: int) -> dict[str, Any]:
    return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}


def config_key(subject: str | None) -> dict[str, Any]:
    return {"keytype": "CONFIG", "subject": subject, "magic": 0}


def mode_key(subject: str | None) -> dict[str, Any]:
    return {"keytype": "MODE", "subject": subject, "magic": 0}


def delete_subject_key(subject: str) -> dict[str, Any]:
    return {"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0}


def noop_key() -> dict[str, Any]:
    return {"keytype": "NOOP", "magic": 0}


def encode(record: Record) -> tuple[bytes, bytes | None]:
    key, value = record
    return (json.dumps(key, separators=(",", ":")).encode(),
            json.dumps(value, separators=(",", ":")).encode() if value is not None else None)
