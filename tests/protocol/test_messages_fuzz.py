"""Hostile bytes for every (api_key, kind, version): decode returns a value or raises a ProtocolError.

Never IndexError, struct.error, UnicodeDecodeError, MemoryError, RecursionError, ValueError or
OverflowError, and never a huge allocation. The inputs are random bytes, every truncation of a valid
encoding, and valid encodings with bytes flipped, inserted or overwritten by hostile lengths. Seeded, so
a failure names the same input on every run. The work is bounded by the inputs (some 80,000 decodes of
at most a few hundred bytes, about a second in all): no test here asserts timing, a decoder that loops
would show as a hung test.
"""

from __future__ import annotations

import random
import struct
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker.protocol.errors import DecodeError, ProtocolError
from mockbroker.protocol.messages import decode_request, decode_response, encode_request, encode_response
from tests.protocol.strategies import all_combos, random_message

COMBOS = all_combos()
SEED = 20240611
HOSTILE_LENGTHS = [
    b"\x7f\xff\xff\xff",  # int32 max (array / bytes length)
    b"\x80\x00\x00\x00",  # int32 min
    b"\xff\xff\xff\xfe",  # -2
    b"\x7f\xff",  # int16 max (string length)
    b"\xff\xfe",  # int16 -2
    b"\xff\xff\xff\xff\x0f",  # uvarint 2**32 - 1 (compact length)
    b"\x80\x80\x80\x80\x80\x01",  # over-long uvarint
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 10-byte uvarint
]


def decoder(kind: str) -> Callable[[int, int, bytes], Any]:
    return decode_request if kind == "request" else decode_response


def valid_encoding(api_key: int, kind: str, version: int, rng: random.Random) -> bytes:
    encode = encode_request if kind == "request" else encode_response
    return encode(api_key, version, random_message(api_key, kind, version, rng)).getvalue()


def mutations(data: bytes, rng: random.Random, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        b = bytearray(data)
        op = rng.randrange(4)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:  # flip a byte
            b[min(pos, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:  # overwrite with a hostile length
            h = rng.choice(HOSTILE_LENGTHS)
            b[pos : pos + len(h)] = h
        elif op == 2:  # insert random bytes
            b[pos:pos] = rng.randbytes(rng.randint(1, 4))
        else:  # delete a few bytes
            del b[pos : pos + rng.randint(1, 4)]
        out.append(bytes(b))
    return out


def decodes_or_raises_protocol_error(decode: Callable[[int, int, bytes], Any], api_key: int, version: int,
                                     data: bytes) -> None:
    try:
        decode(api_key, version, data)
    except ProtocolError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{type(exc).__name__}: {exc} decoding {api_key} v{version} from {data.hex()}")


def test_random_bytes_decode_or_raise_protocol_error_for_every_version() -> None:
    rng = random.Random(SEED)
    for api_key, kind, version in COMBOS:
        decode = decoder(kind)
        for _ in range(12):
            data = rng.randbytes(rng.choice([0, 1, 2, 3, 5, 8, 16, 40, 100]))
            decodes_or_raises_protocol_error(decode, api_key, version, data)


def test_every_truncation_of_a_valid_encoding_raises_decode_error() -> None:
    rng = random.Random(SEED + 1)
    for api_key, kind, version in COMBOS:
        decode = decoder(kind)
        data = valid_encoding(api_key, kind, version, rng)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(api_key, version, data[:cut])


def test_mutated_valid_encodings_decode_or_raise_protocol_error() -> None:
    rng = random.Random(SEED + 2)
    for api_key, kind, version in COMBOS:
        decode = decoder(kind)
        for _ in range(2):
            data = valid_encoding(api_key, kind, version, rng)
            for bad in mutations(data, rng, 20):
                decodes_or_raises_protocol_error(decode, api_key, version, bad)


@pytest.mark.parametrize(
    "api_key, version, body, what",
    [
        (3, 0, b"\x7f\xff\xff\xff", "array of int32 max elements"),  # Metadata v0 topics
        (3, 0, b"\x00\x00\x00\x01\x7f\xff", "string of 32767 bytes"),
        (3, 9, b"\xff\xff\xff\xff\x0f", "compact array of 2**32 - 2 elements"),
        (3, 9, b"\x02\xff\xff\xff\xff\x0f", "compact string of 2**32 - 2 bytes"),
        (0, 3, b"\xff\xff\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00"
               b"\x7f\xff\xff\xff", "records of int32 max bytes"),
        (36, 0, b"\x7f\xff\xff\xff", "bytes of int32 max bytes"),  # SaslAuthenticate auth_bytes
        (18, 3, b"\x01\x01\xff\xff\xff\xff\x0f", "2**32 - 1 tagged fields"),
        (18, 3, b"\x01\x01\x01\x05\xff\xff\xff\xff\x0f", "tagged field of 2**32 - 1 bytes"),
    ],
)
def test_huge_length_in_a_short_buffer_raises_without_allocating(api_key: int, version: int, body: bytes,
                                                                 what: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError):
            decode_request(api_key, version, body)
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, what


def test_decode_error_names_the_field_and_offset() -> None:
    with pytest.raises(DecodeError, match=r"array of 2147483647 elements.*field 'topics' at offset 4"):
        decode_request(3, 0, b"\x7f\xff\xff\xff")
    # a struct.error-sized read past the end: ProduceRequest v3 cut inside timeout_ms
    with pytest.raises(DecodeError, match=r"timeout_ms.*offset 4"):
        decode_request(0, 3, b"\xff\xff\x00\x01\x00\x00")


def test_bytes_after_a_complete_body_are_left_to_the_caller() -> None:
    from mockbroker.protocol.primitives import Reader

    body = encode_request(12, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"}).getvalue()
    r = Reader(body + b"\x00\x01")
    decode_request(12, 0, r)
    assert r.remaining() == 2
    assert struct.unpack(">h", bytes(r.raw(2)))[0] == 1
