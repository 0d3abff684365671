"""Fuzz tier: mutated requests of every served API and version, and mutated record batches of every codec,
sent through a live broker. Each must get an answer or a clean close within a bound, without a handler
failure (a traceback in the broker's log), and a normal client must still be served afterwards.

Seeds: for every served (API key, version) a valid request built from the specs (defaults), plus the
golden frames real clients sent (tests/data/frames: Produce with every codec, Fetch, Metadata, ...).
Mutations: bytes overwritten, flipped, inserted, deleted, the frame cut short, and 16/32-bit fields
overwritten with boundary values (a size or count of -1, 0x7fffffff, ...). Hypothesis runs derandomized
(a fixed seed, no example database), so CI sees the same examples every run.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mockbroker import dispatch
from mockbroker.connection import Connection
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.messages import encode_request
from mockbroker.protocol.primitives import Writer
from mockbroker.protocol.records.batch import Codec
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

pytestmark = pytest.mark.fuzz

FRAMES = Path(__file__).resolve().parents[1] / "data" / "frames"
ANSWER_BOUND_S = 30.0
# APIs whose answer may legitimately wait (a long-poll Fetch, a JoinGroup waiting for its group); a
# Produce with acks=0 is legitimately never answered.
MAY_WAIT = {1, 11}
BOUNDARY_INTS = [0, 1, -1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000]
METADATA_PROBE = {"topics": None, "allow_auto_topic_creation": False,
                  "include_topic_authorized_operations": False}


def _frame(api_key: int, version: int, body: dict[str, object], client_id: str = "fuzz") -> bytes:
    w = Writer()
    hdr.encode_request_header(hdr.RequestHeader(api_key, version, 7, client_id), w)
    encode_request(api_key, version, body, w)
    return bytes(w.getvalue())


def _seed_frames() -> list[bytes]:
    """Valid request frames (no size prefix): defaults for every served version, then golden frames."""
    seeds = []
    for api_key, lo, hi in dispatch.supported_versions():
        for version in range(lo, hi + 1):
            seeds.append(_frame(api_key, version, {}))
    for path in sorted(FRAMES.glob("*/*.bin")):
        seeds.append(path.read_bytes())
    return seeds


SEEDS = _seed_frames()
CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]


def _batch(codec: int) -> bytes:
    records = [(b"key-%d" % i, b"value-%d" % i * 8, [("h", b"x")]) for i in range(5)]
    return bytes(build_batch(records, codec=codec))


BATCHES = {codec: _batch(codec) for codec in CODECS}


# -- mutations ------------------------------------------------------------------------------------


@st.composite
def mutations(draw: st.DrawFn, size: int) -> list[tuple[str, int, int]]:
    """A few (kind, position, value) edits for a buffer of `size` bytes."""
    kinds = st.sampled_from(["set", "flip", "insert", "delete", "int16", "int32", "truncate"])
    edit = st.tuples(kinds, st.integers(0, max(size - 1, 0)), st.integers(0, 255))
    return draw(st.lists(edit, min_size=1, max_size=3))


def mutate(data: bytes, edits: list[tuple[str, int, int]], keep: int = 0) -> bytes:
    """Apply edits to data, leaving its first `keep` bytes alone."""
    buf = bytearray(data)
    for kind, pos, value in edits:
        if len(buf) <= keep:
            break
        pos = keep + pos % (len(buf) - keep)
        if kind == "set":
            buf[pos] = value
        elif kind == "flip":
            buf[pos] ^= 1 << (value % 8)
        elif kind == "insert":
            buf[pos:pos] = bytes([value]) * (1 + value % 8)
        elif kind == "delete":
            del buf[pos:pos + 1 + value % 8]
        elif kind == "truncate":
            del buf[pos:]
        else:
            n = 2 if kind == "int16" else 4
            chosen = BOUNDARY_INTS[value % len(BOUNDARY_INTS)]
            packed = struct.pack(">h" if n == 2 else ">i", _wrap(chosen, n))
            buf[pos:pos + n] = packed[: len(buf) - pos]
    return bytes(buf)


def _wrap(value: int, n: int) -> int:
    bits = 8 * n
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


# -- the live broker ------------------------------------------------------------------------------


class HandlerFailures(logging.Handler):
    """Collects the broker's 'handler ... failed' / encode failures: a bug, even when the client only
    sees a closed connection."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.failures: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.failures.append(record.getMessage())


@pytest.fixture(scope="module")
def broker() -> Iterator[MockBroker]:
    with MockBroker(port=0, config={"group.initial.rebalance.delay.ms": 0}).run_in_thread() as b:
        b.create_topic("fuzz", 2)
        yield b


@pytest.fixture(scope="module")
def failures() -> Iterator[HandlerFailures]:
    handler = HandlerFailures()
    logger = logging.getLogger("mockbroker")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def _connection(broker: MockBroker, local_port: int) -> Connection | None:
    for conn in list(broker._connections):
        if conn.ctx is not None and conn.ctx.client_port == local_port:
            return conn
    return None


def send_and_judge(broker: MockBroker, payload: bytes) -> str:
    """Send one framed payload on a fresh connection: 'answer', 'closed', 'waiting' (a parked Fetch or
    JoinGroup) or 'silent' (a Produce with acks=0, answered by no response). Fails on anything else
    within ANSWER_BOUND_S."""
    api_key = struct.unpack(">h", payload[:2])[0] if len(payload) >= 2 else -1
    with socket.create_connection((broker.host, broker.port), timeout=ANSWER_BOUND_S) as sock:
        local_port = sock.getsockname()[1]
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        sock.settimeout(0.05)
        deadline = time.monotonic() + ANSWER_BOUND_S
        handled_at: float | None = None
        while True:
            try:
                head = sock.recv(4)
                return "answer" if head else "closed"
            except ConnectionResetError:
                return "closed"
            except TimeoutError:
                pass
            conn = _connection(broker, local_port)
            if conn is not None and conn._busy and api_key in MAY_WAIT:
                return "waiting"
            if conn is not None and api_key == 0 and handled_at is None and any(
                    r.connection_id == conn.ctx.connection_id for r in broker.received(0)):
                handled_at = time.monotonic()
            if handled_at is not None and not conn_busy(conn) and time.monotonic() - handled_at > 0.5:
                return "silent"
            assert time.monotonic() < deadline, \
                f"no answer nor close within {ANSWER_BOUND_S}s: {payload[:64].hex()}"


def conn_busy(conn: Connection | None) -> bool:
    return conn is not None and conn._busy


def assert_still_served(broker: MockBroker) -> None:
    with RawClient(broker.host, broker.port, timeout=ANSWER_BOUND_S) as c:
        resp = c.request(3, 12, METADATA_PROBE)
        assert any(t.name == "fuzz" for t in resp.topics)


def fuzz_settings(max_examples: int) -> settings:
    # No shrinking: a failure is reported as found (shrinking a live-broker example can take minutes).
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])


@fuzz_settings(2500)
@given(data=st.data())
def test_mutated_requests_get_an_answer_or_a_clean_close(broker: MockBroker, failures: HandlerFailures,
                                                         data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    # Mostly the body (after api key and version), sometimes the header too.
    keep = data.draw(st.sampled_from([4, 4, 4, 0]), label="keep")
    payload = mutate(seed, data.draw(mutations(len(seed)), label="edits"), keep=keep)
    send_and_judge(broker, payload)
    assert failures.failures == [], failures.failures
    assert_still_served(broker)


def _produce_frame(records: bytes, version: int) -> bytes:
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "fuzz", "partition_data": [{"index": 0, "records": records}]}]}
    return _frame(0, version, body)


@fuzz_settings(1000)
@given(data=st.data())
def test_mutated_batches_of_every_codec_are_answered(broker: MockBroker, failures: HandlerFailures,
                                                     data: st.DataObject) -> None:
    codec = data.draw(st.sampled_from(CODECS), label="codec")
    batch = BATCHES[codec]
    # Keep the base offset (8 bytes) so most edits land in the header fields and the records.
    records = mutate(batch, data.draw(mutations(len(batch)), label="edits"), keep=8)
    version = data.draw(st.sampled_from([3, 9, 11]), label="version")
    with RawClient(broker.host, broker.port, timeout=ANSWER_BOUND_S) as c:
        c.send_frame(struct.pack(">i", len(frame := _produce_frame(records, version))) + frame)
        c.recv_frame()  # an answer (an error code or an offset), never a close
        # A consumer reading the partition from the start is still answered.
        c.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                          "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                          "forgotten_topics_data": [],
                          "topics": [{"topic": "fuzz", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                                       "partition_max_bytes": 1 << 20,
                                                                       "current_leader_epoch": -1,
                                                                       "log_start_offset": -1}]}]})
    assert failures.failures == [], failures.failures
