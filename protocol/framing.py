"""Length-prefixed frames (int32 size, then the frame) out of a byte stream fed in arbitrary chunks.

Sans-IO, in the style of h11: `feed(data)` the bytes as they arrive, then call `next_frame()` until it
returns None (NEED_DATA). The size prefix is checked against `max_frame_size` as soon as its 4 bytes
are in, before anything is allocated for the frame, so a hostile prefix costs nothing.

Each frame is returned as its own bytearray (mutable: the broker stamps base offsets into the record
batches of a Produce request in place, without another copy).
"""

from __future__ import annotations

import struct

from .errors import DecodeError, FrameTooLarge

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024  # socket.request.max.bytes

_SIZE = struct.Struct(">i")


class FrameDecoder:
    __slots__ = ("max_frame_size", "_buf", "_pos")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._pos = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._pos and self._pos == len(self._buf):
            self._buf.clear()
            self._pos = 0
        self._buf += data

    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return len(self._buf) - self._pos

    def next_frame(self) -> bytearray | None:
        """The next whole frame, or None if more bytes are needed. Raises on a bad size prefix."""
        buf = self._buf
        pos = self._pos
        if len(buf) - pos < 4:
            self._compact()
            return None
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            raise DecodeError(f"negative frame size {size}")
        if size > self.max_frame_size:
            raise FrameTooLarge(f"frame of {size} bytes is over the limit of {self.max_frame_size}")
        end = pos + 4 + size
        if len(buf) < end:
            self._compact()
            return None
        frame = buf[pos + 4 : end]
        self._pos = end
        return frame

    def _compact(self) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0


def frame(payload_chunks: list[bytes | bytearray | memoryview]) -> list[bytes | bytearray | memoryview]:
    """Prefix a message (given as chunks) with its int32 size."""
    total = sum(c.nbytes if isinstance(c, memoryview) else len(c) for c in payload_chunks)
    return [_SIZE.pack(total), *payload_chunks]
