"""The four record compression codecs, as Kafka's clients write them on the wire.

Sans-IO and bounded: `decompress` never returns more than `max_size` bytes and never lets a library
exception (zlib.error, lz4's RuntimeError, zstandard.ZstdError, snappy errors) or a MemoryError escape;
anything wrong becomes a DecodeError.

Formats (what Java kafka-clients and librdkafka produce, and what we write):
- gzip: RFC 1952 members (concatenated members are read one after the other; bytes after the last
  member that do not start a new member are ignored, as java.util.zip.GZIPInputStream does). A zlib
  stream is accepted too, as librdkafka's inflate does.
- snappy: the xerial block framing written by snappy-java's SnappyOutputStream (Java) and librdkafka:
  header b"\\x82SNAPPY\\x00", int32 version, int32 minimum compatible version, then blocks of
  [int32 compressed length, raw snappy block]. Raw snappy (no header) is read too. We write xerial
  framing with 32 KiB input blocks, as snappy-java does. The version fields are not checked (some
  producers write them little-endian).
- lz4: the LZ4 frame format (KIP-57), independent blocks, 64 KiB block size, no content size, no
  checksums, as Kafka's KafkaLZ4BlockOutputStream writes. Magic 0 message sets carry the broken header
  checksum of Kafka 0.8/0.9 (computed over the frame magic too): see `lz4_break_header_checksum` and
  `lz4_fix_header_checksum`, used by legacy.py.
- zstd: zstd frames, with or without the content size; several frames in a row are read one after the
  other. Decoding is streamed in small input steps so a bomb is stopped near `max_size`.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable

import lz4.frame
import snappy
import zstandard

from ..errors import CompressionError, DecodeError, EncodeError, LimitExceeded

__all__ = [
    "DEFAULT_MAX_SIZE",
    "XERIAL_MAGIC",
    "compress",
    "decompress",
    "lz4_break_header_checksum",
    "lz4_fix_header_checksum",
    "xxh32",
]

DEFAULT_MAX_SIZE = 256 * 1024 * 1024
"""Largest decompressed size accepted by default (256 MiB)."""

GZIP_LEVEL = 6  # java.util.zip.Deflater.DEFAULT_COMPRESSION, Kafka's default gzip level
LZ4_LEVEL = 9  # Kafka's default lz4 level (KIP-390)
ZSTD_LEVEL = 3  # Kafka's default zstd level (KIP-390)

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, compatible version
_XERIAL_VERSION = 1
_XERIAL_MIN_COMPATIBLE = 1
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size
_I32 = struct.Struct(">i")

_LZ4_MAGIC = b"\x04\x22\x4d\x18"

# Codec ids of the batch attributes (batch.Codec is the IntEnum; it imports this module, not back).
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
_ZSTD_INPUT_STEP = 1024  # a zstd RLE block turns 4 input bytes into <= 128 KiB: <= 32 MiB per step


# -- public API ---------------------------------------------------------------------------------


def compress(codec: int, data: bytes | bytearray | memoryview) -> bytes:
    """Compress `data` with `codec` (a batch.Codec) the way Kafka's Java client does; NONE copies."""
    codec = _codec(codec, EncodeError)
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    if codec == SNAPPY:
        return _snappy_compress_xerial(data)
    if codec == LZ4:
        return _lz4_compress(data)
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)


def decompress(
    codec: int, data: bytes | bytearray | memoryview, *, max_size: int = DEFAULT_MAX_SIZE
) -> bytes:
    """Decompress `data`; CompressionError if it is malformed or truncated, LimitExceeded if it is larger
    than `max_size` (both DecodeErrors)."""
    codec = _codec(codec, DecodeError)
    if codec == NONE:
        if len(data) > max_size:
            raise LimitExceeded(f"data of {len(data)} bytes exceeds the limit of {max_size} bytes")
        return bytes(data)
    decoder = _DECODERS[codec]
    try:
        return decoder(memoryview(data).cast("B"), max_size)
    except (LimitExceeded, CompressionError):
        raise
    except DecodeError as exc:
        raise CompressionError(str(exc)) from None
    except MemoryError:
        raise DecodeError(f"{_NAMES[codec]} data needs more memory than is available") from None
    except Exception as exc:  # lz4, snappy, zstandard and zlib raise their own exception types
        raise CompressionError(f"invalid {_NAMES[codec]} data: {exc}") from None


# -- helpers ------------------------------------------------------------------------------------


def _codec(codec: int, error: type[Exception]) -> int:
    if codec not in _NAMES:
        raise error(f"unknown compression codec {codec}")
    return int(codec)


def _too_large(codec: str, max_size: int) -> LimitExceeded:
    return LimitExceeded(f"{codec} data decompresses to more than the limit of {max_size} bytes")


# -- gzip ---------------------------------------------------------------------------------------


def _gzip_decompress(data: memoryview, max_size: int) -> bytes:
    out = bytearray()
    rest: bytes | memoryview = data
    first = True
    while first or (len(rest) >= 2 and rest[0] == 0x1F and rest[1] == 0x8B):
        first = False
        dec = zlib.decompressobj(wbits=47)  # 32 + 15: a gzip or zlib header, detected
        out += dec.decompress(rest, max_size + 1 - len(out))
        if len(out) > max_size:
            raise _too_large("gzip", max_size)
        if not dec.eof:
            raise DecodeError("gzip data is truncated")
        rest = dec.unused_data
    return bytes(out)


# -- snappy -------------------------------------------------------------------------------------


def _snappy_compress_xerial(data: bytes | bytearray | memoryview) -> bytes:
    view = memoryview(data).cast("B")
    out = bytearray(_XERIAL_HEADER.pack(XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_MIN_COMPATIBLE))
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = snappy.compress(bytes(view[start : start + _XERIAL_BLOCK_SIZE]))
        out += _I32.pack(len(block))
        out += block
    return bytes(out)


def _snappy_uncompressed_length(block: memoryview) -> int:
    """The uvarint preamble of a raw snappy block: its uncompressed length (up to 2**32 - 1)."""
    result = 0
    for i in range(min(5, len(block))):
        b = block[i]
        result |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return result
    raise DecodeError("snappy block has no valid length preamble")


def _snappy_block(block: memoryview, budget: int, max_size: int) -> bytes:
    if _snappy_uncompressed_length(block) > budget:
        raise _too_large("snappy", max_size)
    return bytes(snappy.decompress(bytes(block)))


def _snappy_decompress(data: memoryview, max_size: int) -> bytes:
    if len(data) < _XERIAL_HEADER.size or data[:8] != XERIAL_MAGIC:
        return _snappy_block(data, max_size, max_size)
    out = bytearray()
    pos = _XERIAL_HEADER.size
    end = len(data)
    while pos < end:
        if end - pos < 4:
            raise DecodeError(f"xerial snappy block length truncated at offset {pos}")
        (length,) = _I32.unpack_from(data, pos)
        pos += 4
        if length < 0 or length > end - pos:
            raise DecodeError(f"xerial snappy block of {length} bytes at offset {pos} runs past the data")
        out += _snappy_block(data[pos : pos + length], max_size - len(out), max_size)
        pos += length
    return bytes(out)


# -- lz4 ----------------------------------------------------------------------------------------


def _lz4_compress(data: bytes | bytearray | memoryview) -> bytes:
    return bytes(
        lz4.frame.compress(
            data,
            compression_level=LZ4_LEVEL,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            block_checksum=False,
            store_size=False,
        )
    )


def _lz4_decompress(data: memoryview, max_size: int) -> bytes:
    out = bytearray()
    rest: bytes | memoryview = data
    while True:
        _lz4_check_content_size(rest, max_size - len(out), max_size)
        dec = lz4.frame.LZ4FrameDecompressor()
        out += dec.decompress(rest, max_length=max_size + 1 - len(out))
        if len(out) > max_size:
            raise _too_large("lz4", max_size)
        if not dec.eof:
            raise DecodeError("lz4 frame is truncated")
        rest = dec.unused_data or b""
        if not rest:
            return bytes(out)


def _lz4_descriptor_end(frame: bytes | bytearray | memoryview) -> int:
    """Index of the header checksum byte of an LZ4 frame (after FLG, BD and optional fields)."""
    if len(frame) < 7 or bytes(frame[:4]) != _LZ4_MAGIC:
        raise DecodeError("not an lz4 frame (bad magic or too short)")
    flg = frame[4]
    end = 6
    if flg & 0x08:  # content size present
        end += 8
    if flg & 0x01:  # dictionary id present
        end += 4
    if len(frame) <= end:
        raise DecodeError("lz4 frame descriptor is truncated")
    return end


def _lz4_check_content_size(frame: bytes | memoryview, budget: int, max_size: int) -> None:
    if len(frame) >= 15 and bytes(frame[:4]) == _LZ4_MAGIC and frame[4] & 0x08:
        (content_size,) = struct.unpack_from("<Q", frame, 6)
        if content_size > budget:
            raise _too_large("lz4", max_size)


def lz4_fix_header_checksum(frame: bytes | bytearray | memoryview) -> bytes:
    """Rewrite the header checksum of an LZ4 frame to the standard one (over FLG..end of descriptor).

    Kafka 0.8/0.9 computed it over the whole header including the 4 magic bytes; magic 0 message
    sets still carry that broken value. A frame with a correct checksum is returned unchanged.
    """
    end = _lz4_descriptor_end(frame)
    out = bytearray(frame)
    out[end] = (xxh32(bytes(out[4:end])) >> 8) & 0xFF
    return bytes(out)


def lz4_break_header_checksum(frame: bytes | bytearray | memoryview) -> bytes:
    """Rewrite the header checksum the way Kafka 0.8/0.9 did (over magic..end of descriptor)."""
    end = _lz4_descriptor_end(frame)
    out = bytearray(frame)
    out[end] = (xxh32(bytes(out[0:end])) >> 8) & 0xFF
    return bytes(out)


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (the hash of the LZ4 frame header checksum). Pure Python: meant for short inputs."""
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while i <= n - 16:
            for lane in range(4):
                (word,) = struct.unpack_from("<I", data, i)
                v[lane] = (_rotl((v[lane] + word * _P2) & _M32, 13) * _P1) & _M32
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        (word,) = struct.unpack_from("<I", data, i)
        h = (_rotl((h + word * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


# -- zstd ---------------------------------------------------------------------------------------


def _zstd_decompress(data: memoryview, max_size: int) -> bytes:
    if not data:
        raise DecodeError("zstd data is empty")
    dctx = zstandard.ZstdDecompressor()
    out = bytearray()
    pos = 0
    end = len(data)
    while pos < end:  # one zstd frame per iteration
        dec = dctx.decompressobj()
        while not dec.eof:
            if pos >= end:
                raise DecodeError("zstd frame is truncated")
            step = bytes(data[pos : pos + _ZSTD_INPUT_STEP])
            pos += len(step)
            out += dec.decompress(step)
            if len(out) > max_size:
                raise _too_large("zstd", max_size)
        pos -= len(dec.unused_data)
    return bytes(out)


_DECODERS: dict[int, Callable[[memoryview, int], bytes]] = {
    GZIP: _gzip_decompress,
    SNAPPY: _snappy_decompress,
    LZ4: _lz4_decompress,
    ZSTD: _zstd_decompress,
}
