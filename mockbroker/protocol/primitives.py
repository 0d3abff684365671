"""Kafka's primitive wire types: a Reader over bytes and a Writer that builds frames.

Sans-IO: no sockets, no asyncio. Every read checks its length against the bytes left first, so a
malformed length becomes a DecodeError naming the field and the offset, never an IndexError, a
struct.error or a huge allocation.

Types covered (Kafka's names): int8, int16, int32, int64, uint16, uint32, float64, boolean, uuid,
(unsigned) varint, varlong (zigzag), string / nullable string / compact string, bytes / nullable bytes /
compact bytes, arrays and compact arrays (the caller reads the elements), tagged fields.

The Writer collects small writes in a bytearray and large buffers (record batches) as separate chunks,
so a Fetch response can hand stored batches to the transport without copying them (see `chunks()`).
"""

from __future__ import annotations

import struct
import uuid as _uuid
from collections.abc import Iterable

from .errors import DecodeError

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

ZERO_UUID = _uuid.UUID(int=0)

# Chunks at least this large are kept as separate views by Writer.write_raw instead of being copied.
ZERO_COPY_THRESHOLD = 4096


def zigzag_encode(value: int) -> int:
    """Signed -> unsigned (protobuf zigzag), for 64-bit values."""
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def encode_uvarint(value: int) -> bytes:
    """Unsigned LEB128 encoding of a non-negative integer."""
    if value < 0:
        raise ValueError(f"uvarint must be >= 0, got {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Zigzag + LEB128 (Kafka's varint / varlong)."""
    return encode_uvarint(zigzag_encode(value) & 0xFFFFFFFFFFFFFFFF)


def size_of_varint(value: int) -> int:
    return len(encode_varint(value))


class Reader:
    """Reads Kafka primitives from a bytes-like object, tracking a position.

    `field` context: the codec sets `reader.context` to the name of the field being read, so errors say
    which field was malformed.
    """

    __slots__ = ("buf", "pos", "end", "context")

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        if self.buf.format != "B" or self.buf.ndim != 1:
            self.buf = self.buf.cast("B")
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self.context = ""

    # -- helpers -------------------------------------------------------------------------------
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def error(self, message: str) -> DecodeError:
        where = f" in field {self.context!r}" if self.context else ""
        return DecodeError(f"{message}{where} at offset {self.pos}")

    def _need(self, n: int) -> None:
        if n < 0 or self.pos + n > self.end:
            raise self.error(f"need {n} bytes but only {self.end - self.pos} remain")

    # -- fixed-size ----------------------------------------------------------------------------
    def int8(self) -> int:
        pos = self.pos
        if pos + 1 > self.end:
            self._need(1)
        self.pos = pos + 1
        return _I8.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def boolean(self) -> bool:
        return self.int8() != 0

    def int16(self) -> int:
        pos = self.pos
        if pos + 2 > self.end:
            self._need(2)
        self.pos = pos + 2
        return _I16.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def uint16(self) -> int:
        pos = self.pos
        if pos + 2 > self.end:
            self._need(2)
        self.pos = pos + 2
        return _U16.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def int32(self) -> int:
        pos = self.pos
        if pos + 4 > self.end:
            self._need(4)
        self.pos = pos + 4
        return _I32.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def uint32(self) -> int:
        pos = self.pos
        if pos + 4 > self.end:
            self._need(4)
        self.pos = pos + 4
        return _U32.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def int64(self) -> int:
        pos = self.pos
        if pos + 8 > self.end:
            self._need(8)
        self.pos = pos + 8
        return _I64.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def float64(self) -> float:
        pos = self.pos
        if pos + 8 > self.end:
            self._need(8)
        self.pos = pos + 8
        return _F64.unpack_from(self.buf, pos)[0]  # type: ignore[no-any-return]

    def uuid(self) -> _uuid.UUID:
        self._need(16)
        v = _uuid.UUID(bytes=bytes(self.buf[self.pos : self.pos + 16]))
        self.pos += 16
        return v

    def raw(self, n: int) -> memoryview:
        """n bytes as a view into the input (no copy)."""
        pos = self.pos
        if n < 0 or pos + n > self.end:
            self._need(n)
        self.pos = pos + n
        return self.buf[pos : pos + n]

    # -- varints -------------------------------------------------------------------------------
    def uvarint(self, max_bytes: int = 5) -> int:
        """Unsigned varint; at most 5 bytes for 32-bit values, 10 for 64-bit."""
        buf = self.buf
        pos = self.pos
        if pos < self.end and buf[pos] < 0x80:  # one byte: most lengths, counts and tags
            self.pos = pos + 1
            return buf[pos]  # type: ignore[no-any-return]
        result = 0
        shift = 0
        for i in range(max_bytes):
            if self.pos >= self.end:
                raise self.error("varint runs past the end of the data")
            b = buf[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            del i
        raise self.error(f"varint longer than {max_bytes} bytes")

    def uvarlong(self) -> int:
        return self.uvarint(10)

    def varint(self) -> int:
        """Zigzag varint (32-bit)."""
        v = zigzag_decode(self.uvarint(5))
        if not -(2**31) <= v < 2**31:
            raise self.error(f"varint {v} out of int32 range")
        return v

    def varlong(self) -> int:
        v = zigzag_decode(self.uvarint(10))
        if not -(2**63) <= v < 2**63:
            raise self.error(f"varlong {v} out of int64 range")
        return v

    # -- strings and bytes ---------------------------------------------------------------------
    def _decode_str(self, n: int) -> str:
        # Malformed UTF-8 becomes U+FFFD, as Java's new String(bytes, UTF_8) in Kafka's readers does:
        # Kafka then answers the request (e.g. INVALID_TOPIC_EXCEPTION) instead of failing it.
        return str(self.raw(n), "utf-8", "replace")

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise self.error(f"non-nullable string has length {n}")
        return self._decode_str(n)

    def nullable_string(self) -> str | None:
        n = self.int16()
        if n < 0:
            if n != -1:
                raise self.error(f"string length {n} is negative")
            return None
        return self._decode_str(n)

    def compact_string(self) -> str:
        n = self.uvarint() - 1
        if n < 0:
            raise self.error("non-nullable compact string is null")
        return self._decode_str(n)

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        return self._decode_str(n)

    def bytes_(self) -> memoryview:
        n = self.int32()
        if n < 0:
            raise self.error(f"non-nullable bytes has length {n}")
        return self.raw(n)

    def nullable_bytes(self) -> memoryview | None:
        n = self.int32()
        if n < 0:
            if n != -1:
                raise self.error(f"bytes length {n} is negative")
            return None
        return self.raw(n)

    def compact_bytes(self) -> memoryview:
        n = self.uvarint() - 1
        if n < 0:
            raise self.error("non-nullable compact bytes is null")
        return self.raw(n)

    def compact_nullable_bytes(self) -> memoryview | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        return self.raw(n)

    # -- arrays --------------------------------------------------------------------------------
    def array_length(self, min_element_size: int = 1) -> int:
        """Length of a classic array (int32, -1 for null), checked against the bytes left."""
        n = self.int32()
        if n < -1:
            raise self.error(f"array length {n} is negative")
        if n > 0 and n * min_element_size > self.end - self.pos:
            raise self.error(f"array of {n} elements cannot fit in {self.end - self.pos} bytes")
        return n

    def compact_array_length(self, min_element_size: int = 1) -> int:
        """Length of a compact array (uvarint N+1, 0 for null -> -1)."""
        n = self.uvarint() - 1
        if n > 0 and n * min_element_size > self.end - self.pos:
            raise self.error(f"array of {n} elements cannot fit in {self.end - self.pos} bytes")
        return n

    # -- tagged fields -------------------------------------------------------------------------
    def tagged_fields(self) -> list[tuple[int, memoryview]]:
        """The raw tagged fields: a list of (tag, value bytes), tags strictly increasing."""
        count = self.uvarint()
        if not count:
            return []
        if count > self.end - self.pos:
            raise self.error(f"{count} tagged fields cannot fit in {self.end - self.pos} bytes")
        out: list[tuple[int, memoryview]] = []
        last = -1
        for _ in range(count):
            tag = self.uvarint()
            if tag <= last:
                raise self.error(f"tagged field {tag} out of order after {last}")
            last = tag
            size = self.uvarint()
            out.append((tag, self.raw(size)))
        return out


class Writer:
    """Builds an encoded message: small writes into a bytearray, large buffers kept as chunks."""

    __slots__ = ("_buf", "_chunks", "_size_done")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._chunks: list[bytes | bytearray | memoryview] = []
        self._size_done = 0

    def __len__(self) -> int:
        return self._size_done + len(self._buf)

    def int8(self, v: int) -> None:
        self._buf += _I8.pack(v)

    def boolean(self, v: bool) -> None:
        self._buf.append(1 if v else 0)

    def int16(self, v: int) -> None:
        self._buf += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self._buf += _U16.pack(v)

    def int32(self, v: int) -> None:
        self._buf += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self._buf += _U32.pack(v)

    def int64(self, v: int) -> None:
        self._buf += _I64.pack(v)

    def float64(self, v: float) -> None:
        self._buf += _F64.pack(v)

    def uuid(self, v: _uuid.UUID | None) -> None:
        self._buf += (v or ZERO_UUID).bytes

    def uvarint(self, v: int) -> None:
        buf = self._buf
        if v < 0:
            raise ValueError(f"uvarint must be >= 0, got {v}")
        while v >= 0x80:
            buf.append((v & 0x7F) | 0x80)
            v >>= 7
        buf.append(v)

    def varint(self, v: int) -> None:
        self.uvarint(zigzag_encode(v) & 0xFFFFFFFFFFFFFFFF)

    varlong = varint

    def raw(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes; large ones are kept as a separate chunk (no copy)."""
        if len(data) >= ZERO_COPY_THRESHOLD:
            if self._buf:
                self._chunks.append(self._buf)
                self._size_done += len(self._buf)
                self._buf = bytearray()
            self._chunks.append(data)
            self._size_done += len(data)
        else:
            self._buf += data

    def raw_chunks(self, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
        for c in chunks:
            self.raw(c)

    def string(self, v: str) -> None:
        b = v.encode()
        self._buf += _I16.pack(len(b))
        self._buf += b

    def nullable_string(self, v: str | None) -> None:
        if v is None:
            self._buf += b"\xff\xff"
        else:
            self.string(v)

    def compact_string(self, v: str) -> None:
        b = v.encode()
        self.uvarint(len(b) + 1)
        self._buf += b

    def compact_nullable_string(self, v: str | None) -> None:
        if v is None:
            self._buf.append(0)
        else:
            self.compact_string(v)

    def bytes_(self, v: bytes | bytearray | memoryview) -> None:
        self._buf += _I32.pack(len(v))
        self.raw(v)

    def nullable_bytes(self, v: bytes | bytearray | memoryview | None) -> None:
        if v is None:
            self._buf += b"\xff\xff\xff\xff"
        else:
            self.bytes_(v)

    def compact_bytes(self, v: bytes | bytearray | memoryview) -> None:
        self.uvarint(len(v) + 1)
        self.raw(v)

    def compact_nullable_bytes(self, v: bytes | bytearray | memoryview | None) -> None:
        if v is None:
            self._buf.append(0)
        else:
            self.compact_bytes(v)

    def array_length(self, n: int) -> None:
        self._buf += _I32.pack(n)

    def compact_array_length(self, n: int) -> None:
        self.uvarint(n + 1)

    def chunks(self) -> list[bytes | bytearray | memoryview]:
        """The encoded message as a list of buffers (for transport.writelines)."""
        out = list(self._chunks)
        if self._buf:
            out.append(self._buf)
        return out

    def getvalue(self) -> bytes:
        """The encoded message as one bytes object (copies the chunks)."""
        if not self._chunks:
            return bytes(self._buf)
        return b"".join([*self._chunks, self._buf])
