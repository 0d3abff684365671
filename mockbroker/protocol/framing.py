"""Length-prefixed frames (int32 size, then the frame) out of a byte stream.

Sans-IO, in the style of h11, with two ways in:
- `feed(data)` the bytes as they arrive, in chunks of any size;
- or receive straight into the decoder's buffers, as asyncio.BufferedProtocol does: `get_buffer()` says
  where the next bytes go, `buffer_updated(n)` says how many arrived. A frame too large for the staging
  buffer is received directly into its own bytearray, so its bytes are copied once, by the kernel.
Then call `next_frame()` until it returns None (NEED_DATA).

The size prefix is checked against `max_frame_size` as soon as its 4 bytes are in, before anything is
allocated for the frame, so a hostile prefix costs nothing; a frame over 1 MiB gets a buffer that grows
as its bytes arrive (a prefix promising 100 MiB that never sends them costs 32 KiB).

Each frame is returned as its own bytearray (mutable: the broker stamps base offsets into the record
batches of a Produce request in place, without another copy). A frame received whole into a buffer of its
own (over 64 KiB, up to 1 MiB) may be received into the previous such frame's bytearray when nothing but the
decoder holds it any more (no reference, no view: CPython's reference count says so) and its allocation fits,
which saves allocating and zeroing a buffer per large Produce request; a frame still held anywhere is never
reused. A connection that received such a frame keeps that one buffer (up to 1.125 MiB) while it is open.
"""

from __future__ import annotations

import struct
import sys
from collections import deque

from .errors import DecodeError, FrameTooLarge

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024  # socket.request.max.bytes

_SIZE = struct.Struct(">i")
_REUSE = sys.implementation.name == "cpython"  # reference counts say who holds a buffer


class FrameDecoder:
    """Frames out of a byte stream: small ones cut from a staging buffer, large ones received in place."""

    __slots__ = ("max_frame_size", "_stage", "_start", "_end", "_frame", "_filled", "_size", "_frames",
                 "_queued", "_error", "_spare",
                 "_spare_cap")

    STAGE_SIZE = 64 * 1024  # size prefixes and frames up to this size are received here
    WHOLE_UP_TO = 1024 * 1024  # a frame up to this size gets its whole buffer at once (as Kafka's does)
    FIRST_CHUNK = 32 * 1024  # a larger frame's buffer starts this big and grows fourfold as it fills

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._stage = bytearray(self.STAGE_SIZE)
        self._start = 0  # first byte of _stage not yet cut into a frame
        self._end = 0  # end of the bytes received into _stage
        self._frame: bytearray | None = None  # a large frame being received into its own buffer
        self._filled = 0  # bytes of _frame received so far
        self._size = 0  # _frame's final size
        self._frames: deque[bytearray] = deque()  # whole frames not yet taken by next_frame()
        self._queued = 0  # bytes in _frames
        self._error: DecodeError | None = None  # a bad size prefix, raised by next_frame()
        self._spare: bytearray | None = None  # the last frame received whole into its own buffer
        self._spare_cap = 0  # the bytes allocated for _spare

    # -- receiving -----------------------------------------------------------------------------
    def get_buffer(self) -> memoryview:
        """Where the next received bytes go (asyncio.BufferedProtocol.get_buffer); never empty."""
        frame = self._frame
        if frame is not None:
            if self._filled == len(frame):  # grow towards the frame's size as its bytes arrive
                frame.extend(bytes(min(self._size, len(frame) * 4) - len(frame)))
            return memoryview(frame)[self._filled :]
        if self._end == len(self._stage):
            self._compact()
            if self._end == len(self._stage):  # only after an error: its bytes are never parsed
                self._start = self._end = 0
        return memoryview(self._stage)[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        """nbytes arrived in the buffer get_buffer() returned last."""
        if self._frame is not None:
            self._filled += nbytes
            if self._filled == self._size:
                self._push(self._frame)
                self._frame = None
            return
        self._end += nbytes
        self._cut()

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes as they arrived from a stream (copied into the decoder's buffers)."""
        view = memoryview(data).cast("B")
        while view.nbytes:
            buf = self.get_buffer()
            n = min(buf.nbytes, view.nbytes)
            buf[:n] = view[:n]
            del buf
            view = view[n:]
            self.buffer_updated(n)

    # -- frames ---------------------------------------------------------------------------------
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return self._queued + (self._end - self._start) + self._filled

    def next_frame(self) -> bytearray | None:
        """The next whole frame, or None if more bytes are needed. Raises on a bad size prefix."""
        if self._frames:
            frame = self._frames.popleft()
            self._queued -= len(frame)
            return frame
        if self._error is not None:
            raise self._error
        return None

    def _push(self, frame: bytearray) -> None:
        self._frames.append(frame)
        self._queued += len(frame)

    def _cut(self) -> None:
        """Cut every whole frame out of the staging buffer; start receiving a large one in place."""
        stage = self._stage
        while self._error is None and self._end - self._start >= 4:
            pos = self._start
            (size,) = _SIZE.unpack_from(stage, pos)
            if size < 0:
                self._error = DecodeError(f"negative frame size {size}")
            elif size > self.max_frame_size:
                self._error = FrameTooLarge(f"frame of {size} bytes is over the limit of {self.max_frame_size}")
            elif self._end - pos - 4 >= size:
                self._push(stage[pos + 4 : pos + 4 + size])
                self._start = pos + 4 + size
            elif size + 4 > len(stage):  # too large to stage: its own buffer, with what has arrived of it
                have = self._end - pos - 4
                if size <= self.WHOLE_UP_TO:
                    frame = self._whole(size)
                else:
                    frame = bytearray(min(size, max(have, self.FIRST_CHUNK)))
                frame[:have] = stage[pos + 4 : self._end]
                self._frame, self._filled, self._size = frame, have, size
                self._start = self._end = 0
                return
            else:  # a small frame not yet whole: make room for it behind what is there
                if pos + 4 + size > len(stage):
                    self._compact()
                return
        if self._start == self._end:
            self._start = self._end = 0

    def _whole(self, size: int) -> bytearray:
        """A bytearray of `size` bytes for a frame received whole: the spare one when only the decoder holds it
        and its allocation fits `size` without a realloc (its old bytes are all overwritten by the frame's
        before the frame is returned), else a new one with 1/8 of room to grow into (the next spare)."""
        spare, cap = self._spare, self._spare_cap
        if spare is not None and cap // 2 < size <= cap and sys.getrefcount(spare) == 3:  # _spare, spare, argument
            have = len(spare)
            if have > size:
                del spare[size:]  # CPython keeps the allocation down to half of it
            elif have < size:
                spare.extend(bytes(size - have))  # within the allocation: no realloc
            return spare
        cap = size + size // 8
        spare = bytearray(cap)
        del spare[size:]
        if _REUSE:
            self._spare, self._spare_cap = spare, cap
        return spare

    def _compact(self) -> None:
        if self._start:
            n = self._end - self._start
            self._stage[:n] = self._stage[self._start : self._end]
            self._start, self._end = 0, n


def frame(payload_chunks: list[bytes | bytearray | memoryview]) -> list[bytes | bytearray | memoryview]:
    """Prefix a message (given as chunks) with its int32 size."""
    total = sum(c.nbytes if isinstance(c, memoryview) else len(c) for c in payload_chunks)
    return [_SIZE.pack(total), *payload_chunks]
