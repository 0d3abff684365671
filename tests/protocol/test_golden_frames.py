"""Frames captured from real clients (tests/data/frames, see its README) decode, and re-encode exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockbroker.protocol.headers import decode_request_header, encode_request_header
from mockbroker.protocol.messages import decode_request, encode_request
from mockbroker.protocol.primitives import Writer
from mockbroker.protocol.records.batch import RecordBatch, iter_batches

FRAMES = Path(__file__).resolve().parents[1] / "data" / "frames"
CASES = sorted(FRAMES.glob("*/*.bin"))


def test_frames_from_every_python_client_are_present() -> None:
    clients = {p.parent.name for p in CASES}
    assert {"kafka-python", "aiokafka", "confluent-kafka"} <= clients


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_captured_frame_decodes_and_reencodes_byte_for_byte(path: Path) -> None:
    frame = path.read_bytes()
    header, reader = decode_request_header(frame)
    index = json.loads((path.parent / "INDEX.json").read_text())
    entry = next(f for f in index["frames"] if f["file"] == path.name)
    assert (header.api_key, header.api_version) == (entry["api_key"], entry["version"])
    request = decode_request(header.api_key, header.api_version, reader)
    assert reader.at_end(), "bytes left over after the body"
    w = Writer()
    encode_request_header(header, w)
    encode_request(header.api_key, header.api_version, request, w)
    assert w.getvalue() == frame


@pytest.mark.parametrize("path", [p for p in CASES if p.name.startswith("00_Produce")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_captured_produce_batches_validate_and_decode(path: Path) -> None:
    header, reader = decode_request_header(path.read_bytes())
    request = decode_request(header.api_key, header.api_version, reader)
    batches: list[RecordBatch] = []
    for topic in request.topic_data:
        for part in topic.partition_data:
            batches.extend(iter_batches(part.records))
    assert batches
    for batch in batches:
        batch.validate()
        records = batch.records()
        assert records and records[0].key == b"k"
        assert records[0].value is not None and records[0].value.startswith(b"v-")
