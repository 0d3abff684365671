"""The four codecs in the framings Kafka's clients use, checked against kafka-python's codec helpers
(python-snappy, lz4, zstandard) and aiokafka's (cramjam), and against bombs and garbage."""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib

import lz4.frame
import pytest
import snappy
import zstandard
from aiokafka import codec as aio_codec
from kafka import codec as kp_codec

from mockbroker.protocol.errors import DecodeError, EncodeError
from mockbroker.protocol.records.batch import Codec
from mockbroker.protocol.records.compression import (
    XERIAL_MAGIC,
    compress,
    decompress,
    lz4_break_header_checksum,
    lz4_fix_header_checksum,
    xxh32,
)

COMPRESSED_CODECS = [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
PAYLOADS = {
    "empty": b"",
    "one-byte": b"x",
    "text": b"the quick brown fox " * 500,
    "random-100k": os.urandom(100_000),  # several xerial (32 KiB) and lz4 (64 KiB) blocks
}


@pytest.mark.parametrize("codec", list(Codec), ids=lambda c: c.name.lower())
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_compress_then_decompress_gives_the_input_back(codec: Codec, name: str) -> None:
    payload = PAYLOADS[name]
    assert decompress(codec, compress(codec, payload)) == payload


THEIR_DECODERS = {
    Codec.GZIP: (kp_codec.gzip_decode, aio_codec.gzip_decode),
    Codec.SNAPPY: (kp_codec.snappy_decode, aio_codec.snappy_decode),
    Codec.LZ4: (kp_codec.lz4_decode, aio_codec.lz4_decode),
    Codec.ZSTD: (kp_codec.zstd_decode, aio_codec.zstd_decode),
}
THEIR_ENCODERS = {
    Codec.GZIP: (kp_codec.gzip_encode, aio_codec.gzip_encode),
    Codec.SNAPPY: (kp_codec.snappy_encode, aio_codec.snappy_encode),
    Codec.LZ4: (kp_codec.lz4_encode, aio_codec.lz4_encode),
    Codec.ZSTD: (kp_codec.zstd_encode, aio_codec.zstd_encode),
}


@pytest.mark.parametrize("codec", COMPRESSED_CODECS, ids=lambda c: c.name.lower())
def test_our_output_decodes_with_kafka_python_and_aiokafka(codec: Codec) -> None:
    payload = PAYLOADS["random-100k"] + PAYLOADS["text"]
    ours = compress(codec, payload)
    for decode in THEIR_DECODERS[codec]:
        assert decode(ours) == payload


@pytest.mark.parametrize("codec", COMPRESSED_CODECS, ids=lambda c: c.name.lower())
def test_kafka_python_and_aiokafka_output_decodes_here(codec: Codec) -> None:
    payload = PAYLOADS["random-100k"] + PAYLOADS["text"]
    for encode in THEIR_ENCODERS[codec]:
        assert decompress(codec, encode(payload)) == payload


# -- snappy -------------------------------------------------------------------------------------


def test_our_snappy_is_xerial_framed_in_32k_blocks_like_snappy_java() -> None:
    payload = PAYLOADS["random-100k"]
    data = compress(Codec.SNAPPY, payload)
    assert data[:8] == XERIAL_MAGIC == b"\x82SNAPPY\x00"
    assert struct.unpack_from(">ii", data, 8) == (1, 1)  # version, minimum compatible version
    pos, blocks = 16, []
    while pos < len(data):
        (length,) = struct.unpack_from(">i", data, pos)
        blocks.append(snappy.decompress(data[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    assert [len(b) for b in blocks] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(blocks) == payload


def test_raw_snappy_without_xerial_header_decodes() -> None:
    payload = PAYLOADS["text"]
    assert decompress(Codec.SNAPPY, snappy.compress(payload)) == payload
    assert decompress(Codec.SNAPPY, kp_codec.snappy_encode(payload, xerial_compatible=False)) == payload


def test_xerial_with_little_endian_version_fields_decodes_as_clients_tolerate() -> None:
    payload = PAYLOADS["text"]
    block = snappy.compress(payload)
    data = XERIAL_MAGIC + struct.pack("<ii", 1, 1) + struct.pack(">i", len(block)) + block
    assert decompress(Codec.SNAPPY, data) == payload


def test_xerial_with_bad_block_length_raises() -> None:
    block = snappy.compress(b"abc")
    header = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for bad in (
        header + struct.pack(">i", len(block) + 1) + block,
        header + struct.pack(">i", -1) + block,
        header + b"\x00\x00",
    ):
        with pytest.raises(DecodeError):
            decompress(Codec.SNAPPY, bad)


def test_snappy_length_preamble_above_the_limit_raises_before_decompressing() -> None:
    bomb = b"\xff\xff\xff\xff\x0f" + b"\x00" * 10  # claims 4 GiB
    with pytest.raises(DecodeError, match="limit"):
        decompress(Codec.SNAPPY, bomb)
    xerial_bomb = XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", len(bomb)) + bomb
    with pytest.raises(DecodeError, match="limit"):
        decompress(Codec.SNAPPY, xerial_bomb)


# -- lz4 ----------------------------------------------------------------------------------------


def test_our_lz4_is_a_frame_with_independent_64k_blocks_and_no_content_size() -> None:
    data = compress(Codec.LZ4, PAYLOADS["random-100k"])
    info = lz4.frame.get_frame_info(data)
    assert data[:4] == b"\x04\x22\x4d\x18"
    assert not info["block_linked"]
    assert info["block_size"] == 64 * 1024
    assert info["content_size"] == 0  # not stored
    assert not info["content_checksum"] and not info["block_checksum"]


def test_lz4_frames_with_content_size_and_checksums_decode() -> None:
    payload = PAYLOADS["text"]
    data = lz4.frame.compress(payload, store_size=True, content_checksum=True, block_checksum=True)
    assert decompress(Codec.LZ4, data) == payload


def test_concatenated_lz4_frames_decode_one_after_the_other() -> None:
    assert decompress(Codec.LZ4, compress(Codec.LZ4, b"one") + compress(Codec.LZ4, b"two")) == b"onetwo"


def test_lz4_content_size_above_the_limit_raises() -> None:
    data = lz4.frame.compress(b"x" * 1000, store_size=True)
    with pytest.raises(DecodeError, match="limit"):
        decompress(Codec.LZ4, data, max_size=999)
    # a forged content size of 2**60 with a valid header checksum
    forged = bytearray(data)
    struct.pack_into("<Q", forged, 6, 2**60)
    forged = bytearray(lz4_fix_header_checksum(forged))
    with pytest.raises(DecodeError, match="limit"):
        decompress(Codec.LZ4, forged)


def test_xxh32_matches_known_vectors_and_the_lz4_frame_header_checksum() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"abc") == 0x32D153FF
    for options in ({}, {"store_size": True}, {"block_size": lz4.frame.BLOCKSIZE_MAX4MB}):
        frame = lz4.frame.compress(b"data", **options)  # type: ignore[arg-type]
        end = 6 + (8 if frame[4] & 0x08 else 0)
        assert frame[end] == (xxh32(frame[4:end]) >> 8) & 0xFF


def test_kafka_08_broken_lz4_header_checksum_is_what_kafka_python_writes_for_magic_0() -> None:
    class XxhashShim:  # kafka-python's lz4_encode_old_kafka needs the xxhash package: use ours
        @staticmethod
        def xxh32(data: bytes) -> object:
            class Digest:
                @staticmethod
                def digest() -> bytes:
                    return struct.pack(">I", xxh32(bytes(data)))

            return Digest()

    payload = PAYLOADS["text"]
    original = kp_codec.xxhash
    kp_codec.xxhash = XxhashShim
    try:
        theirs = kp_codec.lz4_encode_old_kafka(payload)
        ours = lz4_break_header_checksum(compress(Codec.LZ4, payload))
        assert kp_codec.lz4_decode_old_kafka(ours) == payload
    finally:
        kp_codec.xxhash = original
    with pytest.raises(DecodeError):
        decompress(Codec.LZ4, theirs)  # the broken checksum is rejected by a strict reader...
    assert decompress(Codec.LZ4, lz4_fix_header_checksum(theirs)) == payload  # ...and fixable
    assert lz4_fix_header_checksum(compress(Codec.LZ4, payload)) == compress(Codec.LZ4, payload)


# -- zstd ---------------------------------------------------------------------------------------


def test_zstd_frame_without_content_size_decodes() -> None:
    payload = PAYLOADS["text"]
    data = zstandard.ZstdCompressor(write_content_size=False).compress(payload)
    assert zstandard.get_frame_parameters(data).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(Codec.ZSTD, data) == payload


def test_zstd_written_by_a_streaming_writer_decodes() -> None:
    payload = PAYLOADS["random-100k"]
    out = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as writer:
        for i in range(0, len(payload), 7000):
            writer.write(payload[i : i + 7000])
    assert decompress(Codec.ZSTD, out.getvalue()) == payload


def test_concatenated_zstd_frames_decode_one_after_the_other() -> None:
    data = compress(Codec.ZSTD, b"one") + zstandard.ZstdCompressor(write_content_size=False).compress(b"two")
    assert decompress(Codec.ZSTD, data) == b"onetwo"


def test_truncated_zstd_frame_raises() -> None:
    data = zstandard.ZstdCompressor(write_checksum=True).compress(PAYLOADS["text"])
    for cut in (1, 4, len(data) // 2):
        with pytest.raises(DecodeError):
            decompress(Codec.ZSTD, data[:-cut])


# -- gzip ---------------------------------------------------------------------------------------


def test_concatenated_gzip_members_decode_and_trailing_garbage_is_ignored_like_java() -> None:
    data = gzip.compress(b"one") + gzip.compress(b"two")
    assert decompress(Codec.GZIP, data) == b"onetwo"
    assert decompress(Codec.GZIP, gzip.compress(b"one") + b"\x00\x00junk") == b"one"


def test_zlib_stream_decodes_as_librdkafka_accepts() -> None:
    assert decompress(Codec.GZIP, zlib.compress(b"zlib body")) == b"zlib body"


def test_truncated_gzip_raises() -> None:
    data = gzip.compress(PAYLOADS["text"])
    with pytest.raises(DecodeError, match="truncated"):
        decompress(Codec.GZIP, data[:-10])


# -- bombs and garbage --------------------------------------------------------------------------


@pytest.mark.parametrize("codec", COMPRESSED_CODECS, ids=lambda c: c.name.lower())
def test_output_above_max_size_raises_decode_error(codec: Codec) -> None:
    data = compress(codec, b"\x00" * (4 << 20))
    assert len(data) < 300_000
    with pytest.raises(DecodeError, match="limit"):
        decompress(codec, data, max_size=1 << 20)
    assert len(decompress(codec, data, max_size=4 << 20)) == 4 << 20


def test_zstd_bomb_stops_near_the_limit() -> None:
    # 256 MiB of zeros in a few kilobytes; decoding must stop soon after max_size, not inflate it all
    out = io.BytesIO()
    with zstandard.ZstdCompressor(level=1).stream_writer(out, closefd=False) as writer:
        chunk = b"\x00" * (1 << 20)
        for _ in range(256):
            writer.write(chunk)
    bomb = out.getvalue()
    assert len(bomb) < 50_000
    with pytest.raises(DecodeError, match="limit"):
        decompress(Codec.ZSTD, bomb, max_size=8 << 20)


GARBAGE = [b"", b"\x00", b"garbage" * 10, os.urandom(300), b"\xff" * 64]


@pytest.mark.parametrize("codec", COMPRESSED_CODECS, ids=lambda c: c.name.lower())
def test_garbage_raises_decode_error(codec: Codec) -> None:
    for data in GARBAGE:
        try:
            decompress(codec, data)
        except DecodeError:
            continue
        # raw snappy of a few bytes can be valid by chance (e.g. b"\x00" is the empty block)
        assert codec == Codec.SNAPPY and len(data) <= 1


@pytest.mark.parametrize("codec", COMPRESSED_CODECS, ids=lambda c: c.name.lower())
def test_every_truncation_raises_decode_error_or_decodes_a_prefix(codec: Codec) -> None:
    payload = PAYLOADS["text"]
    data = compress(codec, payload)
    for cut in range(len(data)):
        try:
            out = decompress(codec, data[:cut])
        except DecodeError:
            continue
        assert payload.startswith(out)


def test_unknown_codec_raises_decode_error_or_encode_error() -> None:
    with pytest.raises(DecodeError):
        decompress(5, b"x")
    with pytest.raises(EncodeError):
        compress(7, b"x")


def test_codec_none_copies_and_respects_max_size() -> None:
    assert decompress(Codec.NONE, memoryview(b"abc")) == b"abc"
    with pytest.raises(DecodeError):
        decompress(Codec.NONE, b"abcd", max_size=3)
