"""The records the real-client tests (tests/interop/test_clients_*.py) produce, and the checks on them.

Every client writes the same shape of data: keys (some null), values (some null, the others
compressible, so that clients which fall back to no compression when it does not pay still compress),
headers (some records without any, an empty value, a null value where the client can send one) and
explicit CreateTime timestamps, spread over three partitions. What landed is checked twice: in the
broker's log (broker.records / broker.batches, in-process brokers only) and in what the client's
consumer read back.
"""

from __future__ import annotations

import base64
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from mockbroker import MockBroker, dispatch
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import Codec
from tests.rawclient import RawClient

PARTITIONS = 3
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
# Explicit record timestamps: fixed, 1 s apart, far from the wall clock (so a record stamped by the
# client's clock could never pass for one of these).
BASE_TS = 1_600_000_000_000
CREATE_TIME = 0
CREATE_TOPICS = 19
FIND_COORDINATOR = 10


@dataclass(frozen=True, order=True)
class Rec:
    """One record as sent, as stored or as consumed (offset None: not assigned yet)."""

    partition: int
    offset: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp: int | None = None

    def __repr__(self) -> str:  # short enough to read in a failed assertion
        value = None if self.value is None else self.value[:24]
        return f"Rec(p{self.partition}@{self.offset} k={self.key!r} v={value!r} h={self.headers} ts={self.timestamp})"


@dataclass
class Target:
    """A running broker to test a client against: in-process (inspectable) or the CLI subprocess."""

    kind: str  # "inproc" | "cli"
    bootstrap: str
    broker: MockBroker | None  # None for the CLI broker

    def new_topic(self, name: str, partitions: int = PARTITIONS) -> str:
        """Create a topic and return its name (made unique on the session-wide CLI broker)."""
        if self.broker is not None:
            self.broker.create_topic(name, partitions)
            return name
        name = f"{name}-{uuid.uuid4().hex[:8]}"
        host, _, port = self.bootstrap.rpartition(":")
        with RawClient(host, int(port)) as c:
            body = {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                    "configs": []}
            [result] = c.request(CREATE_TOPICS, 5, {"topics": [body], "timeout_ms": 5000,
                                                    "validate_only": False}).topics
            assert result.error_code == ErrorCode.NONE, result
        return name



def dataset(tag: str, *, per_partition: int = 4, null_header_values: bool = True,
            timestamps: bool = True) -> list[Rec]:
    """Records round-robin over PARTITIONS partitions, in send order; offsets not assigned.

    Record i: partition i % 3; key null when i % 4 == 1; value null when i % 4 == 2; no headers when
    i % 5 == 4, else an index header, a tag header, an empty header value (i % 3 == 0) and a null
    header value (i % 4 == 3, if null_header_values); timestamp BASE_TS + i seconds.
    """
    out = []
    for i in range(per_partition * PARTITIONS):
        key = None if i % 4 == 1 else b"key-%d" % i
        value = None if i % 4 == 2 else b"%s value %03d: " % (tag.encode(), i) + b"compressible text " * 24
        headers: list[tuple[str, bytes | None]] = []
        if i % 5 != 4:
            headers = [("index", b"%d" % i), ("tag", tag.encode())]
            if i % 3 == 0:
                headers.append(("empty", b""))
            if null_header_values and i % 4 == 3:
                headers.append(("null", None))
        out.append(Rec(i % PARTITIONS, None, key, value, tuple(headers), BASE_TS + i * 1000 if timestamps else None))
    return out


def with_offsets(sent: Iterable[Rec], start: dict[int, int] | None = None) -> list[Rec]:
    """The records with the offsets a fresh partition gives them (in send order per partition)."""
    next_offset: dict[int, int] = defaultdict(int, start or {})
    out = []
    for r in sent:
        out.append(replace(r, offset=next_offset[r.partition]))
        next_offset[r.partition] += 1
    return out


def by_partition(recs: Iterable[Rec]) -> dict[int, list[Rec]]:
    out: dict[int, list[Rec]] = defaultdict(list)
    for r in recs:
        out[r.partition].append(r)
    return {p: sorted(rs, key=lambda r: r.offset if r.offset is not None else -1) for p, rs in sorted(out.items())}


def assert_same_records(got: Iterable[Rec], sent: Iterable[Rec], *, timestamps: bool = True) -> None:
    """got (consumed or stored, with offsets) is exactly sent, at the offsets of a fresh topic.

    timestamps=False: the client could not set them; they are compared as "present" only.
    """
    expected = with_offsets(sent)
    got = list(got)
    if not timestamps:
        assert all(r.timestamp is not None and r.timestamp > 0 for r in got), got
        got = [replace(r, timestamp=None) for r in got]
        expected = [replace(r, timestamp=None) for r in expected]
    assert len(got) == len(expected), (len(got), len(expected))
    assert by_partition(got) == by_partition(expected)


def stored(broker: MockBroker, topic: str) -> list[Rec]:
    """What the broker's log holds for a topic (data records of every partition)."""
    return [Rec(r.partition, r.offset, r.key, r.value, tuple(r.headers), r.timestamp) for r in broker.records(topic)]


def assert_log(broker: MockBroker, topic: str, sent: list[Rec], codec: str | None, *, timestamps: bool = True) -> None:
    """The broker's log holds exactly `sent` (in order, CreateTime) in v2 batches of `codec` (None: any)."""
    assert_same_records(stored(broker, topic), sent, timestamps=timestamps)
    assert {r.timestamp_type for r in broker.records(topic)} == {CREATE_TIME}
    for p in {r.partition for r in sent}:
        batches = broker.batches(topic, p)
        assert batches and all(b.magic == 2 and not b.is_control for b in batches), batches
        if codec is not None:
            assert {b.codec for b in batches} == {Codec[codec.upper()]}, (topic, p, [b.codec for b in batches])


def librdkafka_lz4_off_reason() -> str | None:
    """Why librdkafka (confluent-kafka, kcat) sends lz4 batches uncompressed to this broker, or None.

    librdkafka enables its LZ4 feature only when the broker's ApiVersions lists FindCoordinator (key
    10; "Feature LZ4: FindCoordinator (0..32767) NOT supported by broker" in its `feature` debug log).
    Kafka always lists it; without it every lz4 batch silently goes out with no compression.
    """
    if FIND_COORDINATOR in {key for key, _, _ in dispatch.supported_versions()}:
        return None
    return ("deviation: ApiVersions lacks FindCoordinator (key 10), so librdkafka disables LZ4 and sends "
            "lz4 batches uncompressed; Kafka lists FindCoordinator and gets lz4 batches")


def offset_for_time(sent: list[Rec], partition: int, ts: int) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record of a partition with timestamp >= ts (None: none)."""
    for r in with_offsets(sent):
        if r.partition == partition and r.timestamp is not None and r.timestamp >= ts:
            assert r.offset is not None
            return r.offset, r.timestamp
    return None


# -- JSON records, as the Java and KafkaJS harnesses take and print them --------------------------

def to_json(r: Rec, *, topic: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"partition": r.partition, "key": _text(r.key), "value": _text(r.value),
                           "headers": [{"key": k, "value": _text(v)} for k, v in r.headers]}
    if r.timestamp is not None:
        out["timestamp"] = r.timestamp
    if topic is not None:
        out["topic"] = topic
    return out


def from_json(line: dict[str, Any]) -> Rec:
    """A harness "record" line as a Rec."""
    return Rec(line["partition"], line["offset"], _b64(line.get("key_b64")), _b64(line.get("value_b64")),
               tuple((h["key"], _b64(h.get("value_b64"))) for h in line.get("headers") or []), line.get("timestamp"))


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode()


def _b64(s: str | None) -> bytes | None:
    return None if s is None else base64.b64decode(s)
