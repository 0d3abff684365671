"""Request header v0/v1/v2 and response header v0/v1, and which version each (api_key, version) uses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockbroker.protocol.errors import DecodeError, ProtocolError, UnsupportedVersion
from mockbroker.protocol.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api_key_version,
    request_header_version,
    response_header_version,
)
from mockbroker.protocol.primitives import Writer


def round_trip(header: RequestHeader, body: bytes = b"BODY") -> tuple[bytes, RequestHeader, bytes]:
    wire = encode_request_header(header).getvalue() + body
    parsed, reader = decode_request_header(wire)
    return wire, parsed, bytes(reader.raw(reader.remaining()))


def test_request_header_v0_has_no_client_id() -> None:
    # ControlledShutdown v0 is the one request that still uses header v0
    wire, parsed, rest = round_trip(RequestHeader(7, 0, 99, client_id="ignored"))
    assert wire == bytes.fromhex("0007 0000 00000063") + b"BODY"
    assert parsed.header_version == 0 and parsed.client_id is None and rest == b"BODY"


def test_request_header_v1_round_trips_with_client_id() -> None:
    wire, parsed, rest = round_trip(RequestHeader(3, 8, 7, client_id="app"))
    assert wire == bytes.fromhex("0003 0008 00000007 0003 617070") + b"BODY"
    assert (parsed.api_key, parsed.api_version, parsed.correlation_id) == (3, 8, 7)
    assert parsed.client_id == "app" and parsed.header_version == 1 and rest == b"BODY"


def test_request_header_null_client_id_is_int16_minus_one() -> None:
    for version, tail in ((8, ""), (9, "00")):  # v1 and v2
        wire, parsed, _rest = round_trip(RequestHeader(3, version, 1, client_id=None), b"")
        assert wire == bytes.fromhex(f"0003 {version:04x} 00000001 ffff {tail}")
        assert parsed.client_id is None


def test_request_header_v2_client_id_is_not_compact() -> None:
    # RequestHeader.json: ClientId has "flexibleVersions": "none" -- int16 length even in v2
    wire, parsed, rest = round_trip(RequestHeader(3, 12, 5, client_id="app"))
    assert wire == bytes.fromhex("0003 000c 00000005 0003 617070 00") + b"BODY"
    assert parsed.header_version == 2 and parsed.client_id == "app" and rest == b"BODY"


def test_request_header_v2_tagged_fields_are_kept() -> None:
    header = RequestHeader(18, 3, 1, client_id="c", tagged_fields=[(0, b"\x01\x02"), (5, b"")])
    wire, parsed, rest = round_trip(header)
    assert wire == bytes.fromhex("0012 0003 00000001 0001 63 02 00 02 0102 05 00") + b"BODY"
    assert parsed.tagged_fields == [(0, b"\x01\x02"), (5, b"")] and rest == b"BODY"
    assert encode_request_header(parsed).getvalue() + b"BODY" == wire


def test_request_header_of_unknown_api_version_uses_the_newest_rule() -> None:
    # An ApiVersions request from a newer client (v99) must still be parsed to answer it (KIP-511)
    wire = bytes.fromhex("0012 0063 00000001 0001 63 00") + b"BODY"
    parsed, reader = decode_request_header(wire)
    assert parsed.header_version == 2 and parsed.client_id == "c"
    assert bytes(reader.raw(reader.remaining())) == b"BODY"


def test_request_header_of_unknown_api_key_raises_unsupported_version() -> None:
    with pytest.raises(UnsupportedVersion):
        decode_request_header(bytes.fromhex("7fff 0000 00000001 ffff"))


@pytest.mark.parametrize("wire", ["", "00", "0012 00", "0012 0003 0000", "0012 0003 00000001 0005 61",
                                  "0012 0003 00000001 ffff", "0012 0003 00000001 ffff 01"])
def test_truncated_request_header_raises_decode_error(wire: str) -> None:
    with pytest.raises(DecodeError):
        decode_request_header(bytes.fromhex(wire))


def test_peek_reads_key_version_and_correlation_id_only() -> None:
    assert peek_api_key_version(bytes.fromhex("0001 000c 0000002a")) == (1, 12, 42)


def test_response_header_v0_is_only_the_correlation_id() -> None:
    wire = encode_response_header(42, 0).getvalue()
    assert wire == bytes.fromhex("0000002a")
    correlation_id, reader = decode_response_header(wire + b"X", 0)
    assert correlation_id == 42 and bytes(reader.raw(1)) == b"X"


def test_response_header_v1_adds_tagged_fields() -> None:
    wire = encode_response_header(42, 1).getvalue()
    assert wire == bytes.fromhex("0000002a 00")
    # tagged fields a peer sends in the response header are skipped
    correlation_id, reader = decode_response_header(bytes.fromhex("0000002a 01 03 01 ff") + b"X", 1)
    assert correlation_id == 42 and bytes(reader.raw(reader.remaining())) == b"X"


def test_encoders_append_to_a_given_writer() -> None:
    w = Writer()
    w.int8(1)
    encode_response_header(1, 1, w)
    encode_request_header(RequestHeader(3, 0, 2, client_id=""), w)
    assert w.getvalue() == bytes.fromhex("01 00000001 00 0003 0000 00000002 0000")


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions_response_always_uses_header_v0(version: int) -> None:
    assert response_header_version(18, version) == 0
    assert response_header_version(18, 99) == 0


# (api_key, version, request header version, response header version)
HEADER_VERSIONS = [
    (0, 0, 1, 0), (0, 8, 1, 0), (0, 9, 2, 1), (0, 13, 2, 1),  # Produce: flexible from 9
    (1, 11, 1, 0), (1, 12, 2, 1), (1, 18, 2, 1),  # Fetch: flexible from 12
    (3, 0, 1, 0), (3, 8, 1, 0), (3, 9, 2, 1), (3, 13, 2, 1),  # Metadata: flexible from 9
    (7, 0, 0, 0), (7, 1, 1, 0), (7, 3, 2, 1),  # ControlledShutdown v0: request header v0
    (10, 2, 1, 0), (10, 3, 2, 1),  # FindCoordinator: flexible from 3
    (11, 5, 1, 0), (11, 6, 2, 1),  # JoinGroup: flexible from 6
    (17, 1, 1, 0),  # SaslHandshake: never flexible
    (18, 0, 1, 0), (18, 2, 1, 0), (18, 3, 2, 0), (18, 4, 2, 0),  # ApiVersions: response header v0
    (36, 1, 1, 0), (36, 2, 2, 1),  # SaslAuthenticate: flexible from 2
    (68, 0, 2, 1), (92, 0, 2, 1),  # new APIs: flexible from the start
]


@pytest.mark.parametrize("api_key, version, request_hv, response_hv", HEADER_VERSIONS)
def test_header_version_table(api_key: int, version: int, request_hv: int, response_hv: int) -> None:
    assert request_header_version(api_key, version) == request_hv
    assert response_header_version(api_key, version) == response_hv


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=40))
def test_any_bytes_give_a_request_header_or_a_protocol_error(data: bytes) -> None:
    try:
        header, reader = decode_request_header(data)
    except ProtocolError:
        return
    assert 0 <= reader.pos <= len(data)
    assert request_header_version(header.api_key, header.api_version) == header.header_version


def _field_by_field(data: bytes) -> tuple[RequestHeader, int] | str:
    """The header as the field-by-field path reads it (its position after), or the error it raises."""
    from mockbroker.protocol.headers import _decode_request_header
    from mockbroker.protocol.primitives import Reader

    try:
        header, reader = _decode_request_header(Reader(data))
    except ProtocolError as exc:
        return f"{type(exc).__name__}: {exc}"
    return header, reader.pos


@settings(max_examples=400, deadline=None, database=None)
@given(st.sampled_from([0, 3, 7, 18, 75, 1000]), st.integers(-3, 20), st.integers(-2**31, 2**31 - 1),
       st.one_of(st.none(), st.text(max_size=12), st.binary(max_size=12)), st.booleans(), st.binary(max_size=8))
def test_the_one_unpack_header_reads_what_the_field_by_field_path_reads(api_key: int, version: int, correlation_id: int,
                                                                        client_id: str | bytes | None, tagged: bool,
                                                                        rest: bytes) -> None:
    """decode_request_header's fast path (the usual v1/v2 header in one unpack) gives the same header, position
    and errors as the field-by-field reader, for well-formed, odd and cut-off headers."""
    w = Writer()
    w.int16(api_key)
    w.int16(version)
    w.int32(correlation_id)
    if isinstance(client_id, bytes):  # raw bytes: invalid UTF-8 or a bogus length prefix
        w.raw(client_id)
    else:
        w.nullable_string(client_id)
    if tagged:
        w.raw(b"\x01\x00\x02ab")  # one tagged field
    data = w.getvalue() + rest
    for cut in (len(data), len(data) - len(rest), 12, 10, 9):
        frame = data[:cut]
        expected = _field_by_field(frame)
        try:
            header, reader = decode_request_header(bytearray(frame))
        except ProtocolError as exc:
            assert f"{type(exc).__name__}: {exc}" == expected
            continue
        assert (header, reader.pos) == expected
