"""Every request and response of every API key, at every version the specs hold, round-trips.

Values come from hypothesis strategies derived from the spec tuples (tests/protocol/strategies.py).
Two properties per (api_key, kind, version):
- decode(encode(x)) == normalise(x): fields the version lacks take their defaults, tagged fields left
  out or at their default come back as the default, unknown tagged fields come back as they went in;
- encode(decode(b)) == b for b = encode(x): the decoder keeps everything the encoder wrote.
Both hold for a bug the encoder and decoder share; test_messages_wire.py pins the bytes themselves.

About 20 s for 8 examples per (api_key, kind, version); ROUND_TRIP_EXAMPLES=100 for a deeper run.
"""

from __future__ import annotations

import csv
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.protocol.messages import decode_request, decode_response, encode_request, encode_response
from tests.protocol.conftest import SHARED
from tests.protocol.strategies import all_combos, combo_id, message_strategy, normalise

COMBOS = all_combos()

ROUND_TRIP_SETTINGS = settings(
    max_examples=int(os.environ.get("ROUND_TRIP_EXAMPLES", "8")),  # raise it for a deeper run
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def encode(api_key: int, kind: str, version: int, value: Any) -> bytes:
    fn = encode_request if kind == "request" else encode_response
    return fn(api_key, version, value).getvalue()


def decode(api_key: int, kind: str, version: int, data: bytes) -> Any:
    fn = decode_request if kind == "request" else decode_response
    return fn(api_key, version, data)


def test_every_api_key_of_the_4_3_0_broker_is_covered() -> None:
    covered = {key for key, _kind, _version in COMBOS}
    if SHARED.exists():
        with open(SHARED / "api-keys-4.3.0.csv") as fh:
            wanted = {int(row["api_key"]) for row in csv.DictReader(fh)}
        assert wanted <= covered
    assert len(COMBOS) > 700


@pytest.mark.parametrize("combo", COMBOS, ids=combo_id)
@ROUND_TRIP_SETTINGS
@given(data=st.data())
def test_message_round_trips_at_every_version(combo: tuple[int, str, int], data: st.DataObject) -> None:
    api_key, kind, version = combo
    value = data.draw(message_strategy(api_key, kind, version), label="value")
    encoded = encode(api_key, kind, version, value)
    decoded = decode(api_key, kind, version, encoded)
    assert decoded == normalise(api_key, kind, version, value)
    assert encode(api_key, kind, version, decoded) == encoded


@pytest.mark.parametrize("combo", COMBOS, ids=combo_id)
def test_empty_message_round_trips_to_schema_defaults(combo: tuple[int, str, int]) -> None:
    api_key, kind, version = combo
    encoded = encode(api_key, kind, version, {})
    decoded = decode(api_key, kind, version, encoded)
    assert decoded == normalise(api_key, kind, version, {})
    assert encode(api_key, kind, version, decoded) == encoded


def test_decoded_records_are_a_view_into_the_input_not_a_copy() -> None:
    batch = bytes(range(40))
    value = {"acks": -1, "timeout_ms": 1000,
             "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}
    data = encode_request(0, 9, value).getvalue()
    records = decode_request(0, 9, data).topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview)
    assert records.obj is not None and bytes(records) == batch


def test_records_given_as_a_list_of_chunks_are_written_as_one_field() -> None:
    chunks: list[bytes | bytearray | memoryview] = [b"\x01" * 5000, memoryview(b"\x02" * 7),
                                                    bytearray(b"\x03" * 4096)]
    value = {"topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": chunks}]}]}
    joined = {"topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"".join(chunks)}]}]}
    for version in (3, 9):
        w = encode_request(0, version, value)
        assert w.getvalue() == encode_request(0, version, joined).getvalue()
        assert any(c is chunks[0] for c in w.chunks())  # large chunks are passed through, not copied
