"""Records decoded through the broker's Schema Registry for the control API and the console: GET
/topics/{name}/records adds `key_decoded` / `value_decoded` to a record whose key or value is in Confluent's
wire format (magic byte 0, a 4-byte schema id, then the payload) when the broker has a registry
(MockBroker(schema_registry=...), the image's 8081). Decoding is registry/decode.py's (Avro, JSON Schema,
Protobuf); the bytes stay in `key` / `value` as before.

A decoded key or value is {"schema_id": N, "schema_type": "AVRO", "data": ...}: `data` made JSON-able (Avro's
bytes and fixed as {"$bytes": base64}, dates and times in ISO 8601, decimals and UUIDs as strings). One that
does not decode is {"schema_id": N, "error": "..."} (an id the registry does not hold, data not of the schema,
bytes left over): the console shows the raw bytes with the reason. A broker without a registry adds nothing,
and the registry's libraries are never imported for it."""

from __future__ import annotations

import base64
import datetime
import decimal
import uuid
from collections.abc import Callable
from typing import Any

from mockbroker.inspection import RecordInfo

Decoder = Callable[[RecordInfo], dict[str, Any]]


def registry_decoder(broker: Any) -> Decoder | None:
    """The decoder of `broker`'s registry (the fields to add to a record's JSON); None when it has none."""
    server = getattr(broker, "schema_registry", None)
    if server is None:
        return None
    from mockbroker.registry.decode import decode

    registry = server.registry

    def fields(record: RecordInfo) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part, raw in (("key", record.key), ("value", record.value)):
            if raw is None or len(raw) < 5 or raw[0] != 0:
                continue
            decoded = decode(registry, bytes(raw))
            if decoded.schema_id is None:
                out[f"{part}_decoded"] = {"schema_id": int.from_bytes(bytes(raw[1:5]), "big"),
                                          "error": decoded.error}
            else:
                schema = registry.schemas.get(decoded.schema_id)
                out[f"{part}_decoded"] = {"schema_id": decoded.schema_id,
                                          "schema_type": schema.schema_type if schema is not None else None,
                                          "data": jsonable(decoded.data)}
        return out

    return fields


def jsonable(value: Any) -> Any:
    """A decoded value as JSON can carry it (see the module's docstring)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    return repr(value)
