"""Kafka's primitive types: varints, zigzag, strings, bytes, arrays, tagged fields, and their errors."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.messages import decode_request
from mockbroker.protocol.primitives import (
    ZERO_COPY_THRESHOLD,
    Reader,
    Writer,
    encode_uvarint,
    encode_varint,
    size_of_varint,
    zigzag_decode,
    zigzag_encode,
)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


# --- varints and zigzag --------------------------------------------------------------------

@pytest.mark.parametrize(
    "value, wire",
    [
        (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (-64, "7f"), (64, "8001"),
        (INT32_MAX, "feffffff0f"), (INT32_MIN, "ffffffff0f"),
    ],
)
def test_varint_boundary_values(value: int, wire: str) -> None:
    assert encode_varint(value).hex() == wire
    w = Writer()
    w.varint(value)
    assert w.getvalue().hex() == wire
    assert Reader(bytes.fromhex(wire)).varint() == value
    assert size_of_varint(value) == len(wire) // 2


@pytest.mark.parametrize(
    "value, wire",
    [
        (0, "00"), (-1, "01"), (INT32_MAX, "feffffff0f"), (INT32_MIN, "ffffffff0f"),
        (INT64_MAX, "feffffffffffffffff01"), (INT64_MIN, "ffffffffffffffffff01"),
    ],
)
def test_varlong_boundary_values(value: int, wire: str) -> None:
    w = Writer()
    w.varlong(value)
    assert w.getvalue().hex() == wire
    r = Reader(bytes.fromhex(wire))
    assert r.varlong() == value and r.at_end()


@pytest.mark.parametrize("value, wire", [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"),
                                         (2**32 - 1, "ffffffff0f")])
def test_unsigned_varint_values(value: int, wire: str) -> None:
    assert encode_uvarint(value).hex() == wire
    assert Reader(bytes.fromhex(wire)).uvarint() == value


@pytest.mark.parametrize("value, zz", [(0, 0), (-1, 1), (1, 2), (-2, 3), (INT32_MAX, 2**32 - 2),
                                       (INT32_MIN, 2**32 - 1), (INT64_MAX, 2**64 - 2), (INT64_MIN, 2**64 - 1)])
def test_zigzag_boundary_values(value: int, zz: int) -> None:
    assert zigzag_encode(value) == zz
    assert zigzag_decode(zz) == value


@settings(max_examples=300, deadline=None)
@given(st.integers(INT64_MIN, INT64_MAX))
def test_varlong_round_trips_every_int64(value: int) -> None:
    w = Writer()
    w.varlong(value)
    r = Reader(w.getvalue())
    assert r.varlong() == value and r.at_end()


@settings(max_examples=300, deadline=None)
@given(st.integers(INT32_MIN, INT32_MAX))
def test_varint_round_trips_every_int32(value: int) -> None:
    r = Reader(encode_varint(value))
    assert r.varint() == value and r.at_end()


def test_over_long_varints_are_rejected() -> None:
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        Reader(bytes.fromhex("8080808080 00")).uvarint()
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        Reader(bytes.fromhex("8080808080 00")).varint()
    with pytest.raises(DecodeError, match="longer than 10 bytes"):
        Reader(bytes.fromhex("80808080808080808080 00")).varlong()


def test_varint_out_of_range_is_rejected() -> None:
    with pytest.raises(DecodeError, match="out of int32 range"):
        Reader(bytes.fromhex("8080808010")).varint()  # 5 bytes, but 2**32 after zigzag
    with pytest.raises(DecodeError, match="out of int64 range"):
        Reader(bytes.fromhex("ffffffffffffffffff7f")).varlong()


def test_varint_running_past_the_end_is_rejected() -> None:
    for wire in ("", "80", "ffff"):
        with pytest.raises(DecodeError, match="past the end"):
            Reader(bytes.fromhex(wire)).uvarint()


def test_negative_uvarint_cannot_be_written() -> None:
    with pytest.raises(ValueError):
        Writer().uvarint(-1)
    with pytest.raises(ValueError):
        encode_uvarint(-1)


# --- fixed-size ---------------------------------------------------------------------------


def test_fixed_size_integers_are_big_endian() -> None:
    w = Writer()
    w.int8(-1)
    w.int16(0x0102)
    w.uint16(0xFFFE)
    w.int32(-2)
    w.uint32(0xFFFFFFFF)
    w.int64(INT64_MIN)
    w.float64(1.5)
    w.boolean(True)
    u = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
    w.uuid(u)
    w.uuid(None)
    wire = w.getvalue()
    assert wire.hex() == ("ff" "0102" "fffe" "fffffffe" "ffffffff" "8000000000000000" "3ff8000000000000" "01"
                          "0102030405060708090a0b0c0d0e0f10" + "00" * 16)
    r = Reader(wire)
    assert [r.int8(), r.int16(), r.uint16(), r.int32(), r.uint32(), r.int64(), r.float64(), r.boolean()] == [
        -1, 0x0102, 0xFFFE, -2, 0xFFFFFFFF, INT64_MIN, 1.5, True]
    assert r.uuid() == u and r.uuid() == uuid.UUID(int=0) and r.at_end()


def test_boolean_reads_any_nonzero_byte_as_true() -> None:
    assert Reader(b"\x02").boolean() is True
    assert Reader(b"\x00").boolean() is False


@pytest.mark.parametrize("method, size", [("int8", 1), ("int16", 2), ("uint16", 2), ("int32", 4),
                                          ("uint32", 4), ("int64", 8), ("float64", 8), ("uuid", 16)])
def test_short_fixed_size_read_raises_decode_error(method: str, size: int) -> None:
    r = Reader(b"\x00" * (size - 1))
    r.context = "the_field"
    with pytest.raises(DecodeError, match=f"need {size} bytes but only {size - 1} remain in field 'the_field'"):
        getattr(r, method)()


# --- strings and bytes --------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "a", "\u00e9\u4e2d\U0001f600", "x" * 127, "x" * 128, "y" * 300])
def test_compact_string_length_is_uvarint_of_utf8_length_plus_one(text: str) -> None:
    data = text.encode()
    w = Writer()
    w.compact_string(text)
    assert w.getvalue() == encode_uvarint(len(data) + 1) + data
    r = Reader(w.getvalue())
    assert r.compact_string() == text and r.at_end()


def test_string_encodings() -> None:
    w = Writer()
    w.string("ab")
    w.nullable_string(None)
    w.compact_nullable_string(None)
    w.compact_nullable_string("")
    w.bytes_(b"\x01")
    w.nullable_bytes(None)
    w.compact_bytes(b"\x02\x03")
    w.compact_nullable_bytes(None)
    wire = w.getvalue()
    assert wire.hex() == "00026162" "ffff" "00" "01" "0000000101" "ffffffff" "030203" "00"
    r = Reader(wire)
    assert r.string() == "ab" and r.nullable_string() is None
    assert r.compact_nullable_string() is None and r.compact_nullable_string() == ""
    assert bytes(r.bytes_()) == b"\x01" and r.nullable_bytes() is None
    assert bytes(r.compact_bytes()) == b"\x02\x03" and r.compact_nullable_bytes() is None and r.at_end()


@pytest.mark.parametrize("method, wire, message", [
    ("string", "ffff", "non-nullable string has length -1"),
    ("nullable_string", "fffe", "string length -2 is negative"),
    ("compact_string", "00", "non-nullable compact string is null"),
    ("bytes_", "ffffffff", "non-nullable bytes has length -1"),
    ("nullable_bytes", "fffffffe", "bytes length -2 is negative"),
    ("compact_bytes", "00", "non-nullable compact bytes is null"),
    ("string", "0005 6162", "need 5 bytes but only 2 remain"),
    ("compact_string", "06 6162", "need 5 bytes but only 2 remain"),
    ("bytes_", "7fffffff", "need 2147483647 bytes but only 0 remain"),
])
def test_bad_string_and_bytes_lengths_raise_decode_error(method: str, wire: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        getattr(Reader(bytes.fromhex(wire)), method)()


def test_non_utf8_string_decodes_with_replacement_characters_as_java_does() -> None:
    r = Reader(b"\x00\x00\x03\xff\xfe")
    r.pos = 2
    assert r.compact_string() == "\ufffd\ufffd"
    assert r.at_end()


def test_non_utf8_topic_name_in_a_message_decodes_with_replacement_characters() -> None:
    body = bytes.fromhex("00000001 0003 61ff62")  # MetadataRequest v0, one topic "a\xffb"
    assert decode_request(3, 0, body).topics[0].name == "a\ufffdb"


def test_bytes_are_views_into_the_input() -> None:
    data = bytearray(b"\x00\x00\x00\x03abc")
    view = Reader(data).bytes_()
    assert isinstance(view, memoryview)
    data[4] = ord("X")
    assert bytes(view) == b"Xbc"


# --- arrays and tagged fields -----------------------------------------------------------------


def test_array_lengths() -> None:
    w = Writer()
    w.array_length(3)
    w.array_length(-1)
    w.compact_array_length(3)
    w.compact_array_length(-1)
    assert w.getvalue().hex() == "00000003" "ffffffff" "04" "00"
    r = Reader(w.getvalue() + b"\x00" * 6)
    assert [r.array_length(), r.array_length(), r.compact_array_length(), r.compact_array_length()] == [
        3, -1, 3, -1]


def test_array_length_that_cannot_fit_raises_at_once() -> None:
    with pytest.raises(DecodeError, match="array of 3 elements cannot fit in 8 bytes"):
        Reader(bytes.fromhex("00000003") + b"\x00" * 8).array_length(min_element_size=4)
    with pytest.raises(DecodeError, match="array length -2 is negative"):
        Reader(bytes.fromhex("fffffffe")).array_length()
    with pytest.raises(DecodeError, match="cannot fit"):
        Reader(bytes.fromhex("ffffffff0f")).compact_array_length()


def test_tagged_fields_are_read_raw_in_order() -> None:
    r = Reader(bytes.fromhex("02 00 01 aa 05 00 ff"))
    assert [(t, bytes(v)) for t, v in r.tagged_fields()] == [(0, b"\xaa"), (5, b"")]
    assert r.remaining() == 1


@pytest.mark.parametrize("wire, message", [
    ("02 05 00 05 00", "tagged field 5 out of order after 5"),
    ("02 05 00 01 00", "tagged field 1 out of order after 5"),
    ("05 00 00", "5 tagged fields cannot fit in 2 bytes"),
    ("01 00 05 aa", "need 5 bytes but only 1 remain"),
])
def test_bad_tagged_fields_raise_decode_error(wire: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        Reader(bytes.fromhex(wire)).tagged_fields()


# --- the writer ---------------------------------------------------------------------------


def test_large_buffers_are_kept_as_chunks_without_copying() -> None:
    big = bytes(ZERO_COPY_THRESHOLD)
    w = Writer()
    w.int8(1)
    w.raw(big)
    w.int8(2)
    chunks = w.chunks()
    assert len(chunks) == 3 and chunks[1] is big
    assert len(w) == ZERO_COPY_THRESHOLD + 2
    assert w.getvalue() == b"\x01" + big + b"\x02"


def test_small_buffers_are_copied_into_one_chunk() -> None:
    w = Writer()
    w.raw(b"ab")
    w.raw_chunks([b"c", memoryview(b"d")])
    assert w.chunks() == [bytearray(b"abcd")] and w.getvalue() == b"abcd"


def test_reader_accepts_bytes_bytearray_and_memoryviews_of_other_formats() -> None:
    import array

    words = array.array("H", [0x0102])
    for data in (b"\x00\x07", bytearray(b"\x00\x07"), memoryview(b"\x00\x07")):
        assert Reader(data).int16() == 7
    assert Reader(memoryview(words)).remaining() == 2
    assert Reader(b"\x00\x01\x00\x02", pos=2).int16() == 2
    with pytest.raises(DecodeError):
        Reader(b"\x00\x01\x00\x02", end=3).int32()
