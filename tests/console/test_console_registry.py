"""Records in the Schema Registry's wire format (magic 0, schema id, payload) through the console: the records
JSON adds `key_decoded` / `value_decoded` when the broker has a registry (http/decoded.py), and the console
shows the decoded data with its schema id, compact then pretty when expanded, the bytes under "hex", and the
reason beside the bytes when a framed value does not decode."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import struct
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest
from confluent_kafka import Producer

from mockbroker.http.decoded import jsonable
from tests.console.conftest import Console, served_console
from tests.console.test_console_reading import expect, goto_topic, row_at

ORDER = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"},
    {"name": "digest", "type": "bytes"}, {"name": "placed", "type": {"type": "int", "logicalType": "date"}}]}


@pytest.fixture
def registry_console() -> Iterator[Console]:
    with served_console(schema_registry=True) as c:
        yield c


def register(console: Console, subject: str, schema: dict[str, Any]) -> int:
    body = json.dumps({"schema": json.dumps(schema)}).encode()
    request = urllib.request.Request(f"{console.broker.schema_registry_url}/subjects/{subject}/versions", data=body,
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=30) as resp:
        schema_id: int = json.load(resp)["id"]
    return schema_id


def framed(schema_id: int, schema: dict[str, Any], value: dict[str, Any]) -> bytes:
    """A value as Confluent's Avro serializer writes it."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    return b"\x00" + struct.pack(">I", schema_id) + out.getvalue()


def produce(console: Console, topic: str, records: list[tuple[bytes | None, bytes | None]]) -> None:
    producer = Producer({"bootstrap.servers": console.broker.bootstrap_servers, "linger.ms": 0})
    for key, value in records:
        producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(30) == 0


def records_json(console: Console, topic: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{console.url}/topics/{topic}/records", timeout=30) as resp:
        got: list[dict[str, Any]] = json.load(resp)["records"]
    return got


def fill(console: Console) -> int:
    """orders: 0 an Avro value (key text), 1 plain text, 2 a framed value naming an unknown id, 3 a framed
    value too short for its schema; the schema's id."""
    console.broker.create_topic("orders")
    schema_id = register(console, "orders-value", ORDER)
    value = {"id": 7, "customer": "c-7", "digest": b"\x01\x02", "placed": datetime.date(2026, 11, 26)}
    produce(console, "orders", [(b"order-7", framed(schema_id, ORDER, value)), (b"plain", b"just text"),
                                (b"lost", b"\x00\x00\x00\x03\xe7{}"), (b"short", b"\x00" + struct.pack(">I", schema_id))])
    return schema_id


def test_the_records_json_adds_what_the_registry_decodes(registry_console: Console) -> None:
    schema_id = fill(registry_console)
    avro, plain, lost, short = records_json(registry_console, "orders")
    assert avro["value_decoded"] == {"schema_id": schema_id, "schema_type": "AVRO",
                                     "data": {"id": 7, "customer": "c-7", "digest": {"$bytes": "AQI="},
                                              "placed": "2026-11-26"}}
    assert avro["value_encoding"] == "base64" and "key_decoded" not in avro  # the bytes stay; a text key as it was
    assert "value_decoded" not in plain and plain["value"] == "just text"
    assert lost["value_decoded"] == {"schema_id": 999, "error": "schema 999 is not in the registry"}
    assert short["value_decoded"]["schema_id"] == schema_id
    assert short["value_decoded"]["error"].startswith(f"does not decode with schema {schema_id}")


def test_without_a_registry_nothing_is_added() -> None:
    with served_console() as console:
        console.broker.create_topic("t")
        produce(console, "t", [(b"\x00\x00\x00\x00\x01k", b"\x00\x00\x00\x00\x01\x02")])
        [record] = records_json(console, "t")
        assert "value_decoded" not in record and "key_decoded" not in record


def test_jsonable_keeps_json_and_spells_out_the_rest() -> None:
    assert jsonable({"a": [1, 2.5, None, True], 3: "x"}) == {"a": [1, 2.5, None, True], "3": "x"}
    assert jsonable(b"\xff") == {"$bytes": "/w=="}
    assert jsonable(datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)) == "2026-01-02T03:04:05+00:00"
    assert jsonable(decimal.Decimal("1.50")) == "1.50"
    assert jsonable(uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert jsonable(float("nan")) == "nan"


def test_the_console_shows_a_registry_value_decoded_with_its_schema_id(registry_console: Console,
                                                                      page: Any) -> None:
    schema_id = fill(registry_console)
    rows = goto_topic(page, registry_console, "orders")
    expect(rows).to_have_count(4)
    avro = row_at(page, 0)
    expect(avro.locator(".value .schema-id")).to_have_text(f"#{schema_id}")
    expect(avro.locator(".value code.data.json.decoded")).to_have_text(
        '{"id": 7, "customer": "c-7", "digest": {"$bytes": "AQI="}, "placed": "2026-11-26"}')
    expect(avro.locator(".value .hex")).to_have_count(0)
    avro.get_by_role("button", name="expand record 0-0").click()
    expect(avro.locator(".value pre.json.decoded")).to_contain_text('"id": 7,\n  "customer": "c-7"')
    expect(row_at(page, 1).locator(".value .text")).to_have_text("just text")
    expect(row_at(page, 1).locator(".schema-id")).to_have_count(0)
    lost = row_at(page, 2)
    expect(lost.locator(".value .hex")).to_have_text("00 00 00 03 e7 7b 7d")  # the bytes, and why
    expect(lost.locator(".value .decode-error")).to_have_text("schema 999: schema 999 is not in the registry")
    page.select_option("#f-format", "hex")  # asked for hex: the bytes as stored
    expect(row_at(page, 0).locator(".value .schema-id")).to_have_count(0)
    expect(row_at(page, 0).locator(".value pre.hex")).to_contain_text("00000000  00 00 00 00 01 0e")
