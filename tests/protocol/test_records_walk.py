"""check_records: the structural walk over a v2 records section that Produce runs on every batch, in
both walkers (the Python reference and the C accelerator: every test runs against each).

Hand-built malformed bytes, one rule each (Kafka's DefaultRecord.readFrom and the batch record iterator),
the per-record findings (keyless records, timestamps out of bounds), the work bound (the walk stops at the
first error, counted in bytes read), and a property: the walk accepts exactly what decode_records decodes
with offset deltas 0..n-1.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.primitives import encode_uvarint, encode_varint
from mockbroker.protocol.records.builder import encode_record
from mockbroker.protocol.records.record import InvalidRecordError, decode_records
from tests.walkers import WALKER_PARAMS, Walker, walker


@pytest.fixture(params=WALKER_PARAMS)
def check_records(request: pytest.FixtureRequest) -> Walker:
    return walker(request.param)


def rec(body: bytes) -> bytes:
    """A record: its body with the length prefix."""
    return encode_varint(len(body)) + body


def body(offset_delta: int = 0, *, key: bytes = b"\x01", value: bytes = b"\x01", headers: bytes = b"\x00",
         timestamp_delta: bytes = b"\x00") -> bytes:
    """A record body from raw field bytes (key and value include their length varints)."""
    return b"\x00" + timestamp_delta + encode_varint(offset_delta) + key + value + headers


def section(n: int) -> bytes:
    return b"".join(encode_record(i, i, b"k%d" % i, b"v" * i, [("h", b"x")] if i % 2 else []) for i in range(n))


def fails(check_records: Walker, data: bytes, count: int, match: str) -> None:
    with pytest.raises(InvalidRecordError, match=match):
        check_records(data, count)


# -- what is accepted ---------------------------------------------------------------------------------------


def test_valid_records_pass_with_nothing_found(check_records: Walker) -> None:
    assert check_records(section(50), 50) == ([], 49)


def test_null_key_value_and_header_value_and_a_ten_byte_timestamp_delta_are_valid(check_records: Walker) -> None:
    header = b"\x02" + encode_varint(1) + b"h" + encode_varint(-1)  # 1 header: key "h", null value
    data = rec(body(0, key=encode_varint(-1), value=encode_varint(-1), headers=header,
                    timestamp_delta=encode_varint(-(2**63))))
    assert check_records(data, 1).errors == []


# -- structure: one rule each -------------------------------------------------------------------------------


def test_more_records_declared_than_held_is_premature_eof(check_records: Walker) -> None:
    fails(check_records, section(3), 4, "premature EOF")


def test_fewer_records_declared_than_held_leaves_records_remaining(check_records: Walker) -> None:
    fails(check_records, section(3), 2, "records still remaining")


def test_offset_delta_other_than_the_index_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0)) + rec(body(2)), 2, "offset delta 2 should be 1")


def test_record_length_past_the_data_is_invalid_record_size(check_records: Walker) -> None:
    fails(check_records, encode_varint(100) + body(0), 1, "Invalid record size: expected 100 bytes")


def test_record_length_longer_than_its_fields_is_invalid_record_size(check_records: Walker) -> None:
    b = body(0) + b"\x00\x00"
    fails(check_records, encode_varint(len(b)) + b, 1, "expected to read 8 bytes in record payload, but instead read 6")


def test_record_length_shorter_than_its_fields_is_invalid(check_records: Walker) -> None:
    b = body(0, key=encode_varint(2) + b"ab")
    fails(check_records, encode_varint(len(b) - 1) + b, 1, "invalid record structure|Invalid record size")


def test_record_body_below_six_bytes_is_invalid(check_records: Walker) -> None:
    fails(check_records, encode_varint(3) + b"\x00\x00\x00", 1, "declares 3 bytes")


def test_negative_record_length_is_invalid(check_records: Walker) -> None:
    fails(check_records, encode_varint(-5) + body(0), 1, "declares -5 bytes")


def test_key_longer_than_the_record_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, key=encode_varint(50) + b"ab")), 1, "key runs past the record")


def test_value_longer_than_the_record_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, value=encode_varint(50) + b"ab")), 1, "value runs past the record")


def test_negative_header_count_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, headers=encode_varint(-3))), 1, "invalid number of record headers -3")


def test_header_count_larger_than_the_record_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, headers=encode_varint(1000))), 1, "1000 is larger than the remaining size")


def test_negative_header_key_length_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, headers=b"\x02" + encode_varint(-2) + b"\x01")), 1, "negative header key size -2")


def test_header_value_longer_than_the_record_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, headers=b"\x02\x02h" + encode_varint(40) + b"x")), 1, "header runs past the record")


def test_varint_longer_than_five_bytes_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, key=b"\x80\x80\x80\x80\x80\x00")), 1, "varint too long")


def test_varint_beyond_32_bits_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, key=b"\xff\xff\xff\xff\x7f")), 1, "varint out of range")


def test_varlong_longer_than_ten_bytes_is_invalid(check_records: Walker) -> None:
    fails(check_records, rec(body(0, timestamp_delta=b"\x80" * 10 + b"\x00")), 1, "varint too long")


def test_record_cut_inside_a_varint_is_premature_eof(check_records: Walker) -> None:
    fails(check_records, b"\x80", 1, "premature EOF")


def test_record_errors_are_invalid_record_errors_that_are_decode_errors(check_records: Walker) -> None:
    with pytest.raises(DecodeError):
        check_records(b"", 1)


# -- per-record findings ------------------------------------------------------------------------------------


def test_keyless_records_are_found_when_keys_are_required(check_records: Walker) -> None:
    data = rec(body(0)) + rec(body(1, key=b"\x02k")) + rec(body(2))
    assert check_records(data, 3).errors == []
    assert check_records(data, 3, keys_required=True).errors == [(0, None), (2, None)]


def test_timestamp_deltas_out_of_bounds_are_found_with_their_delta(check_records: Walker) -> None:
    data = b"".join(rec(body(i, key=b"\x02k", timestamp_delta=encode_varint(d)))
                    for i, d in enumerate([0, -10, 5, 11]))
    assert check_records(data, 4, timestamp_deltas=(-5, 10)) == ([(1, -10), (3, 11)], 11)


def test_a_keyless_record_is_reported_for_its_key_before_its_timestamp(check_records: Walker) -> None:
    data = rec(body(0, timestamp_delta=encode_varint(99)))
    assert check_records(data, 1, keys_required=True, timestamp_deltas=(0, 0)).errors == [(0, None)]


# -- bounded work -------------------------------------------------------------------------------------------


class CountingBytes(bytes):
    """bytes that count the single bytes read from them."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        CountingBytes.reads += 1
        return super().__getitem__(index)


def test_the_walk_stops_at_the_first_bad_record(check_records: Walker) -> None:
    # A bad first record (offset delta 7) followed by a million good ones: a handful of bytes are read.
    good = rec(body(0))
    data = CountingBytes(rec(body(7)) + good * 1_000_000)
    CountingBytes.reads = 0
    with pytest.raises(InvalidRecordError):
        check_records(data, 1_000_001)
    assert CountingBytes.reads < 20


def test_the_walk_reads_at_most_the_declared_count_of_records(check_records: Walker) -> None:
    # A count of 1 over a million records: one record is walked, then the bytes left over are an error.
    data = CountingBytes(rec(body(0)) * 1_000_000)
    CountingBytes.reads = 0
    with pytest.raises(InvalidRecordError, match="records still remaining"):
        check_records(data, 1)
    assert CountingBytes.reads < 20


# -- property: the walk agrees with the decoder -------------------------------------------------------------

records_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.binary(max_size=20)),
        st.one_of(st.none(), st.binary(max_size=200)),
        st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=10))), max_size=3),
        st.integers(-(2**63), 2**63 - 1),
    ),
    min_size=1,
    max_size=20,
)


def _agrees(check_records: Walker, data: bytes, count: int) -> None:
    try:
        decoded = decode_records(data, count)
        expected_ok = [r.offset_delta for r in decoded] == list(range(count))
    except DecodeError:
        expected_ok = False
    try:
        check_records(data, count)
        ok = True
    except InvalidRecordError:
        ok = False
    assert ok == expected_ok


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(records_strategy, st.randoms(use_true_random=False))
def test_the_walk_accepts_exactly_what_decodes_with_sequential_offsets(check_records: Walker, records: list,
                                                                      rnd: random.Random) -> None:  # type: ignore[type-arg]
    data = b"".join(encode_record(i, ts, k, v, h) for i, (k, v, h, ts) in enumerate(records))
    assert check_records(data, len(records)) == ([], max(ts for *_, ts in records))
    _agrees(check_records, data, len(records))
    _agrees(check_records, data, len(records) + 1)
    _agrees(check_records, data, len(records) - 1)
    for _ in range(10):  # mutations: a byte changed, bytes cut, a varint byte inserted
        mutated = bytearray(data)
        choice = rnd.randrange(3)
        pos = rnd.randrange(len(mutated))
        if choice == 0:
            mutated[pos] = rnd.randrange(256)
        elif choice == 1:
            del mutated[pos:pos + rnd.randrange(1, 4)]
        else:
            mutated[pos:pos] = encode_uvarint(rnd.choice([0x7F, 0x80, 2**31, 2**35]))
        _agrees(check_records, bytes(mutated), len(records))
