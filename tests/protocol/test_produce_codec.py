"""The inline Produce codec (mockbroker/protocol/produce_codec.py) against the general codec: the same Msg (keys,
order, values, reader position) for every request it takes, None and the reader untouched for the rest; the same
bytes for every response it writes, nothing written for the rest."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockbroker.protocol.errors import ErrorCode, ProtocolError
from mockbroker.protocol.messages import Msg, decode_request, encode_request, encode_response
from mockbroker.protocol.primitives import Reader, Writer
from mockbroker.protocol.produce_codec import decode_produce_request, encode_produce_response

VERSIONS = st.integers(3, 12)
NAMES = st.text(max_size=8)
RECORDS = st.one_of(st.none(), st.binary(max_size=300))  # over 127 bytes: a two-byte length in flexible versions


def shape(value: Any) -> Any:
    """A decoded Msg with its key order made visible and views as bytes, for comparing."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, memoryview):
        return ("view", bytes(value))
    return value


def general(version: int, data: bytes) -> tuple[Any, int] | str:
    r = Reader(bytearray(data))
    try:
        m = decode_request(0, version, r)
    except ProtocolError as exc:
        return f"error: {exc}"
    return shape(m), r.pos


requests = st.fixed_dictionaries({
    "transactional_id": st.one_of(st.none(), NAMES),
    "acks": st.sampled_from([-1, 0, 1, 2, -32768, 32767]),
    "timeout_ms": st.integers(-2**31, 2**31 - 1),
    "topic_data": st.lists(st.fixed_dictionaries({
        "name": NAMES,
        "partition_data": st.lists(st.fixed_dictionaries({"index": st.integers(-2**31, 2**31 - 1),
                                                          "records": RECORDS}), max_size=3),
    }), max_size=3),
})


@settings(max_examples=300, deadline=None, database=None)
@given(VERSIONS, requests, st.binary(max_size=3))
def test_a_produce_request_reads_as_the_general_codec_reads_it(version: int, request: dict[str, Any],
                                                               trailing: bytes) -> None:
    data = encode_request(0, version, request).getvalue() + trailing
    r = Reader(bytearray(data))
    fast = decode_produce_request(version, r)
    assert fast is not None
    assert isinstance(fast, Msg) and all(isinstance(t, Msg) for t in fast.topic_data)
    assert (shape(fast), r.pos) == general(version, data)


@settings(max_examples=400, deadline=None, database=None)
@given(VERSIONS, requests, st.data())
def test_a_cut_or_damaged_request_is_left_to_the_general_codec_or_read_alike(version: int, request: dict[str, Any],
                                                                            data: st.DataObject) -> None:
    wire = bytearray(encode_request(0, version, request).getvalue())
    cut = data.draw(st.integers(0, len(wire)))
    wire = wire[:cut]
    for _ in range(data.draw(st.integers(0, 3))):
        if wire:
            wire[data.draw(st.integers(0, len(wire) - 1))] = data.draw(st.integers(0, 255))
    r = Reader(bytearray(wire))
    fast = decode_produce_request(version, r)
    if fast is None:
        assert r.pos == 0  # untouched: the general codec reads it from the start, with its errors
    else:
        assert (shape(fast), r.pos) == general(version, bytes(wire))


def test_v13_and_the_message_set_versions_go_to_the_general_codec() -> None:
    for version in (0, 1, 2, 13):
        body = {"acks": 1, "timeout_ms": 100, "topic_data": [{"name": "t", "topic_id": uuid.uuid4(),
                                                              "partition_data": [{"index": 0, "records": b"x"}]}]}
        r = Reader(bytearray(encode_request(0, version, body).getvalue()))
        assert decode_produce_request(version, r) is None and r.pos == 0


def test_a_tagged_field_on_the_wire_goes_to_the_general_codec() -> None:
    body = {"acks": 1, "timeout_ms": 100, "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"x"}],
                                                          "_unknown_tags": [(7, b"ab")]}]}
    data = encode_request(0, 9, body).getvalue()
    r = Reader(bytearray(data))
    assert decode_produce_request(9, r) is None and r.pos == 0
    assert general(9, data) != "error"


INT64 = st.integers(-2**63, 2**63 - 1)
partitions = st.fixed_dictionaries({
    "index": st.integers(-2**31, 2**31 - 1), "error_code": st.one_of(st.integers(-32768, 32767), st.sampled_from(ErrorCode)),
    "base_offset": INT64,
    "log_append_time_ms": INT64, "log_start_offset": INT64,
}, optional={"record_errors": st.just([]), "error_message": st.none()})
responses = st.fixed_dictionaries({
    "responses": st.lists(st.fixed_dictionaries({"name": NAMES, "partition_responses": st.lists(partitions, max_size=3)},
                                                optional={"topic_id": st.just(uuid.UUID(int=0))}), max_size=3),
}, optional={"throttle_time_ms": st.integers(-2**31, 2**31 - 1)})


def general_bytes(version: int, msg: dict[str, Any]) -> bytes:
    return encode_response(0, version, msg).getvalue()


@settings(max_examples=300, deadline=None, database=None)
@given(VERSIONS, responses)
def test_a_produce_answer_writes_the_general_codecs_bytes(version: int, msg: dict[str, Any]) -> None:
    w = Writer()
    w.raw(b"head")
    assert encode_produce_response(version, msg, w)
    assert w.getvalue() == b"head" + general_bytes(version, msg)


def handler_answer(**partition: Any) -> Msg:
    p = Msg(index=0, error_code=0, base_offset=5, log_append_time_ms=-1, log_start_offset=0, record_errors=[],
            error_message=None)
    p.update(partition)
    return Msg(responses=[Msg(name="t", topic_id=uuid.UUID(int=0), partition_responses=[p])], throttle_time_ms=0)


def test_answers_with_details_go_to_the_general_codec_and_nothing_is_written() -> None:
    unusual = [
        handler_answer(record_errors=[Msg(batch_index=0, batch_index_error_message="bad")], error_code=87),
        handler_answer(error_message="boom", error_code=87),
        handler_answer(current_leader=Msg(leader_id=2, leader_epoch=3), error_code=6),
        handler_answer(base_offset=1.5),  # not an integer: the general codec's error names the field
        handler_answer(error_code=None),
        handler_answer(base_offset=2**63),  # out of range: the general codec's error names the field
        Msg(handler_answer(), node_endpoints=[Msg(node_id=2, host="h", port=1, rack=None)]),
        Msg(handler_answer(), _unknown_tags=[(5, b"x")]),
    ]
    for version in range(3, 13):
        for msg in unusual:
            w = Writer()
            assert not encode_produce_response(version, msg, w)
            assert len(w) == 0
        assert encode_produce_response(version, handler_answer(), Writer())
    assert not encode_produce_response(13, handler_answer(), Writer())


def test_the_handlers_answer_takes_the_inline_path() -> None:
    """What k00_produce's handler answers (ErrorCode members as codes, the zero topic id) is written inline."""
    for version in range(3, 13):
        msg = handler_answer(error_code=ErrorCode.NONE)
        w = Writer()
        assert encode_produce_response(version, msg, w)
        assert w.getvalue() == general_bytes(version, msg)
    assert not encode_produce_response(2, handler_answer(), Writer())
