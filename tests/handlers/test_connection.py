"""Raw-protocol tests of one connection: answers in request order, what closes a connection (and that
the broker keeps serving everyone else), acks=0."""

from __future__ import annotations

import struct

import pytest

from mockbroker.dispatch import supported_versions
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import Writer
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA, PRODUCE, connect, make_batch, produce, produce_body
from tests.rawclient import RawClient


def _frame(api_key: int, version: int, correlation_id: int, body: bytes = b"") -> bytes:
    w = Writer()
    w.int16(api_key)
    w.int16(version)
    w.int32(correlation_id)
    w.nullable_string("raw")
    payload = w.getvalue() + body
    return struct.pack(">i", len(payload)) + payload


def _still_serving(broker: MockBroker) -> None:
    with connect(broker) as other:
        resp = other.request(METADATA, 12, {"topics": None})
        assert resp.brokers[0].node_id == broker.node_id


def test_pipelined_requests_are_answered_in_request_order(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("pipelined")
    frames = []
    expected = []
    for i in range(50):
        frames.append(client.encode(PRODUCE, 9, produce_body("pipelined", make_batch(b"v%d" % i)),
                                    correlation_id=1000 + 2 * i))
        expected.append((1000 + 2 * i, PRODUCE, 9))
        frames.append(client.encode(METADATA, 12, {"topics": [{"name": "pipelined"}]},
                                    correlation_id=1001 + 2 * i))
        expected.append((1001 + 2 * i, METADATA, 12))
    client.send_frame(b"".join(frames))
    offsets = []
    for cid, api_key, version in expected:
        got, resp = client.recv(api_key, version)
        assert got == cid
        if api_key == PRODUCE:
            p = resp.responses[0].partition_responses[0]
            assert p.error_code == ErrorCode.NONE
            offsets.append(p.base_offset)
        else:
            assert resp.topics[0].error_code == ErrorCode.NONE
    assert offsets == list(range(50))


@pytest.mark.mockbroker(max_request_size=1024 * 1024)
def test_size_prefix_over_the_limit_closes_before_the_body_is_sent(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    client.send_frame(struct.pack(">i", 2**31 - 1))  # a 2 GiB frame: only its size prefix is ever sent
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


@pytest.mark.mockbroker(max_request_size=1024 * 1024)
def test_frame_just_over_the_limit_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    client.send_frame(struct.pack(">i", 1024 * 1024 + 1))
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_negative_size_prefix_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    client.send_frame(struct.pack(">i", -5))
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_garbage_bytes_close_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    client.send_frame(b"\x00\x00\x00\x03abc")  # a 3-byte frame: not even a request header
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_unknown_api_key_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    client.send_frame(_frame(9999, 0, 1))
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_api_key_known_to_kafka_but_not_served_closes_the_connection(mockbroker: MockBroker,
                                                                    client: RawClient) -> None:
    served = {k for k, _, _ in supported_versions()}
    not_served = next(k for k in range(100) if k not in served)
    client.send_frame(_frame(not_served, 0, 1, b"\x00" * 16))
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


@pytest.mark.parametrize("version", [14, 99])
def test_unsupported_version_of_a_served_api_closes_the_connection(mockbroker: MockBroker, client: RawClient,
                                                                   version: int) -> None:
    w = Writer()
    hdr.encode_request_header(hdr.RequestHeader(METADATA, version, 1, "raw"), w)
    w.uvarint(1)  # topics: empty compact array
    w.boolean(True)
    w.boolean(False)
    w.uvarint(0)
    payload = w.getvalue()
    client.send_frame(struct.pack(">i", len(payload)) + payload)
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_body_that_does_not_decode_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    # Metadata v1: topics array of 5 entries, then nothing.
    client.send_frame(_frame(METADATA, 1, 1, struct.pack(">i", 5)))
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_truncated_produce_body_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    frame = client.encode(PRODUCE, 7, produce_body("t", make_batch(b"v")))
    cut = frame[4:-20]
    client.send_frame(struct.pack(">i", len(cut)) + cut)
    assert client.is_closed_by_peer()
    _still_serving(mockbroker)


def test_connection_closed_mid_frame_does_not_disturb_the_broker(mockbroker: MockBroker) -> None:
    c = connect(mockbroker)
    frame = c.encode(METADATA, 12, {"topics": None})
    c.send_frame(frame[: len(frame) // 2])
    c.close()
    _still_serving(mockbroker)


def test_acks_0_gets_no_response_but_records_are_appended(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("fire-and-forget")
    client.send(PRODUCE, 9, produce_body("fire-and-forget", make_batch(b"a", b"b"), acks=0))
    # The next request's answer is the first thing on the wire.
    resp = client.request(METADATA, 12, {"topics": [{"name": "fire-and-forget"}]})
    assert resp.topics[0].error_code == ErrorCode.NONE
    assert [r.value for r in mockbroker.records("fire-and-forget")] == [b"a", b"b"]
    assert produce(client, "fire-and-forget", make_batch(b"c")).base_offset == 2


def test_acks_0_with_a_partition_error_closes_the_connection(mockbroker: MockBroker, client: RawClient) -> None:
    client.send(PRODUCE, 9, produce_body("no-such-topic-acks0", make_batch(b"a"), acks=0))
    assert client.is_closed_by_peer(timeout=1)
