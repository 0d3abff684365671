"""Length-prefixed frames out of a byte stream, whatever the chunking, with a size limit checked first."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from mockbroker.protocol.errors import DecodeError, FrameTooLarge
from mockbroker.protocol.framing import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, frame

PAYLOADS = [b"", b"a", b"hello", bytes(range(256)) * 3, b"\x00" * 4, b"x" * 70000]


def framed(payloads: list[bytes]) -> bytes:
    return b"".join(b"".join(bytes(c) for c in frame([p])) for p in payloads)


def drain(decoder: FrameDecoder) -> list[bytes]:
    out = []
    while (f := decoder.next_frame()) is not None:
        out.append(bytes(f))
    return out


def test_frame_prefixes_the_total_size_of_the_chunks() -> None:
    chunks = frame([b"ab", bytearray(b"c"), memoryview(b"defg")])
    assert b"".join(bytes(c) for c in chunks) == b"\x00\x00\x00\x07abcdefg"
    assert frame([]) == [b"\x00\x00\x00\x00"]


def test_frames_fed_one_byte_at_a_time() -> None:
    decoder = FrameDecoder()
    got: list[bytes] = []
    stream = framed(PAYLOADS[:5])
    for i in range(len(stream)):
        decoder.feed(stream[i : i + 1])
        got.extend(drain(decoder))
    assert got == PAYLOADS[:5]
    assert decoder.buffered() == 0


@pytest.mark.parametrize("seed", range(20))
def test_frames_fed_in_random_chunk_splits(seed: int) -> None:
    rng = random.Random(seed)
    payloads = [rng.randbytes(rng.choice([0, 1, 3, 50, 5000])) for _ in range(rng.randint(1, 12))]
    stream = framed(payloads)
    decoder = FrameDecoder()
    got: list[bytes] = []
    pos = 0
    while pos < len(stream):
        n = rng.choice([1, 2, 3, 4, 5, 7, 64, 4096, 100000])
        decoder.feed(memoryview(stream)[pos : pos + n])
        pos += n
        got.extend(drain(decoder))
    assert got == payloads


def test_many_frames_in_one_chunk() -> None:
    decoder = FrameDecoder()
    payloads = [bytes([i]) * i for i in range(200)]
    decoder.feed(framed(payloads) + b"\x00\x00")  # plus half of the next size prefix
    assert drain(decoder) == payloads
    assert decoder.buffered() == 2
    decoder.feed(b"\x00\x01Z")
    assert drain(decoder) == [b"Z"]


def test_frames_are_mutable_and_independent_of_the_stream_buffer() -> None:
    decoder = FrameDecoder()
    decoder.feed(framed([b"abc", b"def"]))
    first = decoder.next_frame()
    assert isinstance(first, bytearray)
    first[0] = ord("X")
    assert decoder.next_frame() == bytearray(b"def")
    assert first == bytearray(b"Xbc")


def test_size_above_max_raises_frame_too_large_before_the_body_arrives() -> None:
    decoder = FrameDecoder(max_frame_size=1000)
    decoder.feed(b"\x00\x00\x03\xe8")  # exactly the limit is fine
    assert decoder.next_frame() is None
    decoder = FrameDecoder(max_frame_size=1000)
    decoder.feed(b"\x00\x00\x03")
    assert decoder.next_frame() is None  # the prefix is not complete yet
    decoder.feed(b"\xe9")  # 1001: only the 4 prefix bytes, no body
    with pytest.raises(FrameTooLarge, match="1001"):
        decoder.next_frame()


def test_negative_size_raises_decode_error() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"\xff\xff\xff\xfe")
    with pytest.raises(DecodeError, match="negative"):
        decoder.next_frame()


def test_frame_too_large_is_a_decode_error() -> None:
    assert issubclass(FrameTooLarge, DecodeError)


def test_hostile_prefix_never_allocates() -> None:
    decoder = FrameDecoder()  # 100 MiB default limit
    assert decoder.max_frame_size == DEFAULT_MAX_FRAME_SIZE == 100 * 1024 * 1024
    tracemalloc.start()
    try:
        decoder.feed(b"\x7f\xff\xff\xff")
        with pytest.raises(FrameTooLarge):
            decoder.next_frame()
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_a_frame_just_under_the_limit_waits_for_its_body_without_allocating_it() -> None:
    decoder = FrameDecoder()
    tracemalloc.start()
    try:
        decoder.feed((DEFAULT_MAX_FRAME_SIZE).to_bytes(4, "big"))
        assert decoder.next_frame() is None
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def receive(decoder: FrameDecoder, stream: bytes, chunk: int) -> list[bytes]:
    """Feed a stream the way asyncio.BufferedProtocol does: into get_buffer(), at most chunk bytes a time."""
    frames: list[bytes] = []
    pos = 0
    while pos < len(stream):
        buf = decoder.get_buffer()
        assert buf.nbytes > 0
        n = min(buf.nbytes, chunk, len(stream) - pos)
        buf[:n] = stream[pos : pos + n]
        del buf
        decoder.buffer_updated(n)
        pos += n
        frames.extend(bytes(f) for f in drain(decoder))
    return frames


@pytest.mark.parametrize("chunk", [1, 7, 4096, 65536, 1 << 20])
def test_frames_received_in_place_match_the_stream(chunk: int) -> None:
    rng = random.Random(chunk)
    payloads = [rng.randbytes(rng.choice([0, 1, 100, 70_000, 1_100_000])) for _ in range(12)]
    assert receive(FrameDecoder(), framed(payloads), chunk) == payloads


def test_a_large_frame_is_received_into_its_own_buffer() -> None:
    decoder = FrameDecoder()
    payload = bytes(range(256)) * 1024  # 256 KiB: over the staging buffer
    decoder.feed(framed([payload])[:100])  # the prefix and the first 96 bytes, through the staging buffer
    buf = decoder.get_buffer()
    assert buf.nbytes == len(payload) - 96  # the rest of this frame, and nothing of the next
    buf[:] = payload[96:]
    target = buf.obj
    del buf
    decoder.buffer_updated(len(payload) - 96)
    frame = decoder.next_frame()
    assert frame is target and frame == payload  # the bytes landed where the frame is: no copy after receipt


def test_a_frame_over_a_mebibyte_grows_its_buffer_as_bytes_arrive() -> None:
    decoder = FrameDecoder()
    size = 8 * 1024 * 1024
    decoder.feed(size.to_bytes(4, "big"))
    assert decoder.get_buffer().nbytes == FrameDecoder.FIRST_CHUNK
    decoder.feed(bytes(FrameDecoder.FIRST_CHUNK))
    assert decoder.get_buffer().nbytes == 3 * FrameDecoder.FIRST_CHUNK  # grown fourfold, not to 8 MiB


def test_a_large_frame_nothing_holds_any_more_is_reused_for_the_next_one() -> None:
    decoder = FrameDecoder()
    rng = random.Random(5)
    first, smaller, larger = rng.randbytes(200_000), rng.randbytes(150_000), rng.randbytes(220_000)
    decoder.feed(framed([first]))
    frame = decoder.next_frame()
    assert frame == first
    address = id(frame)
    del frame  # handled: nothing holds it
    for payload in (smaller, larger):
        stream = framed([payload])
        tracemalloc.start()
        try:
            decoder.feed(stream)
            frame = decoder.next_frame()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert frame == payload and id(frame) == address  # the same bytearray, every old byte overwritten
        assert peak < 100_000  # no buffer of the frame's size (the larger grows within the first's allocation)
        del frame


@pytest.mark.parametrize("hold", ["frame", "view"])
def test_a_large_frame_still_held_is_never_reused(hold: str) -> None:
    decoder = FrameDecoder()
    rng = random.Random(6)
    first, second = rng.randbytes(200_000), rng.randbytes(200_000)
    decoder.feed(framed([first]))
    frame = decoder.next_frame()
    assert frame is not None
    held: object = frame if hold == "frame" else memoryview(frame)[1000:2000]  # e.g. a stored batch's view
    del frame
    decoder.feed(framed([second]))
    assert decoder.next_frame() == second
    assert bytes(held) == (first if hold == "frame" else first[1000:2000])  # untouched by the next frame
