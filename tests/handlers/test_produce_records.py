"""Raw-protocol tests of Produce's record validation: every record of every batch, for every codec, as
Kafka's LogValidator reads them (INVALID_RECORD for a record's structure, UNKNOWN_SERVER_ERROR for a
payload the codec cannot read, record_errors for per-record rules), and the bounds that keep one batch
from holding the event loop (mockbroker.max.records.per.batch, the decompressed size), checked by
counting the work the broker does and by the time it spends appending. Every test runs with each record
walker (the Python reference and the C accelerator)."""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import encode_varint
from mockbroker.protocol.records import compression
from mockbroker.protocol.records.batch import (
    ATTRIBUTES,
    BATCH_LENGTH,
    LAST_OFFSET_DELTA,
    MAX_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT,
    Codec,
    RecordBatch,
)
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.protocol.records.legacy import _encode_message, build_message_set
from mockbroker.server import MockBroker
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.configs import BROKER_CONFIGS
from mockbroker.state.log import validation
from tests.handlers.conftest import make_batch, produce
from tests.rawclient import RawClient
from tests.walkers import WALKER_PARAMS, walker

CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
API_VERSIONS = 18


def rec(offset_delta: int, *, key: bytes = b"\x01", value: bytes = b"\x01", headers: bytes = b"\x00") -> bytes:
    """A record from raw field bytes (key and value with their length varints)."""
    body = b"\x00\x00" + encode_varint(offset_delta) + key + value + headers
    return encode_varint(len(body)) + body


def batch_of(section: bytes, count: int, codec: Codec = Codec.NONE, *, last_offset_delta: int | None = None,
             compressed: bytes | None = None) -> bytearray:
    """A producer's batch (base offset 0) whose records section is `section` (compressed with `codec`, or
    `compressed` as given), declaring `count` records, with a valid CRC."""
    header = bytearray(build_batch([RecordInput(b"k", b"v")], codec=codec)[:RECORD_BATCH_OVERHEAD])
    payload = compression.compress(codec, section) if compressed is None else compressed
    out = header + payload
    struct.pack_into(">i", out, BATCH_LENGTH, len(out) - 12)
    struct.pack_into(">i", out, LAST_OFFSET_DELTA, count - 1 if last_offset_delta is None else last_offset_delta)
    struct.pack_into(">i", out, RECORDS_COUNT, count)
    RecordBatch(out).update_crc()
    return out


def assert_refused(broker: MockBroker, topic: str, p: Any, code: ErrorCode, *, log_start_offset: int = 0) -> None:
    assert (p.error_code, p.base_offset, p.log_start_offset) == (code, -1, log_start_offset)
    assert broker.batches(topic, 0) == []
    assert broker.offsets(topic, 0)["high_watermark"] == 0


@pytest.fixture(autouse=True, params=WALKER_PARAMS)
def record_walker(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The broker's validation with one walker or the other (autouse: before `work` wraps it)."""
    monkeypatch.setattr(validation, "check_records", walker(request.param))
    return str(request.param)


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch, record_walker: str) -> Iterator[dict[str, list[Any]]]:
    """What the broker does per batch, recorded: the bytes each decompression returned, the records
    section each walk was given, and the wall time of each append (measured inside the broker)."""
    seen: dict[str, list[Any]] = {"decompressed": [], "walked": [], "append_seconds": []}
    decompress, check, append = compression.decompress, validation.check_records, Appender.append_records

    def counting_decompress(*args: Any, **kwargs: Any) -> bytes:
        out = decompress(*args, **kwargs)
        seen["decompressed"].append(len(out))
        return out

    def counting_check(data: bytes, count: int, **kwargs: Any) -> Any:
        seen["walked"].append((len(data), count))
        return check(data, count, **kwargs)

    def timed_append(self: Appender, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return append(self, *args, **kwargs)
        finally:
            seen["append_seconds"].append(time.perf_counter() - start)

    monkeypatch.setattr(compression, "decompress", counting_decompress)
    monkeypatch.setattr(validation, "check_records", counting_check)
    monkeypatch.setattr(Appender, "append_records", timed_append)
    yield seen


# -- the structure of the records: INVALID_RECORD, for every codec --------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_a_count_below_the_records_held_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                          codec: Codec) -> None:
    # A batch declaring one record that holds two: stored, its second record would overlap the next batch.
    mockbroker.create_topic("t")
    p = produce(client, "t", batch_of(rec(0) + rec(1), 1, codec))
    assert_refused(mockbroker, "t", p, ErrorCode.INVALID_RECORD)
    assert (p.record_errors, p.error_message) == ([], None)  # InvalidRecordException: no record errors


@pytest.mark.parametrize("codec", CODECS)
def test_a_count_above_the_records_held_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                          codec: Codec) -> None:
    mockbroker.create_topic("t")
    assert_refused(mockbroker, "t", produce(client, "t", batch_of(rec(0) + rec(1), 3, codec)),
                   ErrorCode.INVALID_RECORD)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("section", [
    pytest.param(rec(0) + rec(2), id="offset-deltas-not-sequential"),
    pytest.param(rec(0, key=b"\xff\xff\xff\xff\x7f") + rec(1), id="varint-out-of-range"),
    pytest.param(rec(0, key=b"\x80\x80\x80\x80\x80\x00") + rec(1), id="varint-too-long"),
    pytest.param(rec(0, headers=encode_varint(-1)) + rec(1), id="negative-header-count"),
    pytest.param(rec(0, key=encode_varint(40) + b"k") + rec(1), id="key-past-the-record"),
    pytest.param(rec(0, value=encode_varint(40) + b"v") + rec(1), id="value-past-the-record"),
    pytest.param(rec(0, headers=b"\x02" + encode_varint(-2) + b"\x01") + rec(1), id="negative-header-key"),
    pytest.param(rec(0)[:-1] + rec(1), id="record-cut-short"),
])
def test_malformed_records_are_invalid_record(mockbroker: MockBroker, client: RawClient, codec: Codec,
                                              section: bytes) -> None:
    mockbroker.create_topic("t")
    assert_refused(mockbroker, "t", produce(client, "t", batch_of(section, 2, codec)), ErrorCode.INVALID_RECORD)
    # The same partition still takes a good batch.
    assert produce(client, "t", batch_of(rec(0) + rec(1), 2, codec)).error_code == ErrorCode.NONE


@pytest.mark.parametrize("version", [3, 7, 9])
def test_malformed_records_are_refused_at_every_produce_version(mockbroker: MockBroker, client: RawClient,
                                                                version: int) -> None:
    mockbroker.create_topic("t")
    p = produce(client, "t", batch_of(rec(0) + rec(2), 2, Codec.GZIP), version=version)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert mockbroker.batches("t", 0) == []


# -- payloads the codec cannot read: UNKNOWN_SERVER_ERROR (Kafka's "Failed to decompress record stream") -----


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_garbage_compressed_payload_is_unknown_server_error(mockbroker: MockBroker, client: RawClient,
                                                            codec: Codec) -> None:
    mockbroker.create_topic("t")
    garbage = bytes(range(7, 250)) * 3
    p = produce(client, "t", batch_of(b"", 2, codec, compressed=garbage))
    assert_refused(mockbroker, "t", p, ErrorCode.UNKNOWN_SERVER_ERROR)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.ZSTD])
def test_truncated_compressed_payload_is_refused(mockbroker: MockBroker, client: RawClient, codec: Codec) -> None:
    mockbroker.create_topic("t")
    whole = compression.compress(codec, os.urandom(2000))
    p = produce(client, "t", batch_of(b"", 2, codec, compressed=whole[: len(whole) // 2]))
    assert_refused(mockbroker, "t", p, ErrorCode.UNKNOWN_SERVER_ERROR)


# -- bounds: mockbroker.max.records.per.batch and the decompressed size --------------------------------------


@pytest.mark.mockbroker(config={"mockbroker.max.records.per.batch": "10"})
@pytest.mark.parametrize("codec", CODECS)
def test_more_records_than_the_bound_is_message_too_large(mockbroker: MockBroker, client: RawClient,
                                                          codec: Codec) -> None:
    mockbroker.create_topic("t")
    p = produce(client, "t", make_batch(*[b"v"] * 11, codec=codec))
    assert_refused(mockbroker, "t", p, ErrorCode.MESSAGE_TOO_LARGE, log_start_offset=-1)
    assert produce(client, "t", make_batch(*[b"v"] * 10, codec=codec)).error_code == ErrorCode.NONE


@pytest.mark.mockbroker(config={"mockbroker.max.records.per.batch": "10"})
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_a_legacy_message_set_over_the_bound_is_message_too_large(mockbroker: MockBroker, client: RawClient,
                                                                  codec: Codec) -> None:
    # A magic-1 wrapper's inner messages count, as the records of a v2 batch do.
    mockbroker.create_topic("t")
    many = build_message_set([(b"k", b"v")] * 11, magic=1, codec=codec)
    p = produce(client, "t", many, version=2)
    assert (p.error_code, p.base_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)
    ok = build_message_set([(b"k", b"v")] * 10, magic=1, codec=codec)
    assert produce(client, "t", ok, version=2).error_code == ErrorCode.NONE


def test_a_magic_1_wrapper_of_two_million_messages_is_refused_before_they_are_parsed(
        mockbroker: MockBroker, client: RawClient, work: dict[str, list[Any]]) -> None:
    # The legacy bomb: one gzip wrapper around 2 million minimal v1 messages. The inner entries are
    # counted by hopping over their sizes; past the bound nothing is parsed or converted.
    mockbroker.create_topic("t")
    one = _encode_message(0, 1, 0, 0, None, None)
    wrapper = _encode_message(0, 1, Codec.GZIP, 0, None, compression.compress(Codec.GZIP, one * 2_000_000))
    p = produce(client, "t", wrapper, version=2)
    assert (p.error_code, p.base_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)
    assert mockbroker.batches("t", 0) == [] and work["walked"] == []
    # Measured in the broker: decompressing the 68 MB and counting the entries (parsing every message took
    # 6 s on a quiet machine).
    assert max(work["append_seconds"]) < 5.0


def test_a_zstd_bomb_of_two_million_records_is_refused_before_it_is_decompressed(
        mockbroker: MockBroker, client: RawClient, work: dict[str, list[Any]]) -> None:
    # ~1.5 KB on the wire, 2 million minimal records inside: refused on its declared count alone.
    mockbroker.create_topic("t", config={"cleanup.policy": "compact"})
    bomb = batch_of(rec(0) * 2_000_000, 2_000_000, Codec.ZSTD)
    assert len(bomb) < 4096
    p = produce(client, "t", bomb)
    assert_refused(mockbroker, "t", p, ErrorCode.MESSAGE_TOO_LARGE, log_start_offset=-1)
    assert work["decompressed"] == [] and work["walked"] == []


def test_a_batch_at_the_bound_is_walked_once_in_bounded_time(mockbroker: MockBroker, client: RawClient,
                                                             work: dict[str, list[Any]]) -> None:
    # The worst a batch may cost: mockbroker.max.records.per.batch (200,000) minimal keyed records, zstd, on a
    # compacted topic. Accepted, decompressed once, walked once, nothing built per record.
    mockbroker.create_topic("t", config={"cleanup.policy": "compact"})
    limit = int(BROKER_CONFIGS[validation.MAX_RECORDS_PER_BATCH].default)
    batch = batch_of(b"".join(rec(i, key=b"\x02k") for i in range(limit)), limit, Codec.ZSTD)
    p = produce(client, "t", batch)
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 0)
    assert mockbroker.offsets("t", 0)["high_watermark"] == limit
    assert len(work["decompressed"]) == 1 and [c for _, c in work["walked"]] == [limit]
    assert max(work["append_seconds"]) < 5.0


def test_a_bomb_declaring_one_record_is_refused_after_one_record(mockbroker: MockBroker, client: RawClient,
                                                                 work: dict[str, list[Any]]) -> None:
    # The same 2 million records behind a header that declares one (a compacted topic: before, every record
    # was decoded into an object first, for seconds). The walk reads the first record and stops there.
    mockbroker.create_topic("t", config={"cleanup.policy": "compact"})
    bomb = batch_of(rec(0, key=b"\x02k") * 2_000_000, 1, Codec.ZSTD)
    other = RawClient(mockbroker.host, mockbroker.port)
    try:
        client.send(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": bomb}]}]})
        # Another client is served meanwhile (its answer comes once the bomb's append is over).
        versions = other.request(API_VERSIONS, 3, {"client_software_name": "x", "client_software_version": "1"})
        assert versions.error_code == ErrorCode.NONE
        _, resp = client.recv(0, 9)
    finally:
        other.close()
    [p] = resp.responses[0].partition_responses
    assert_refused(mockbroker, "t", p, ErrorCode.INVALID_RECORD)
    [(size, count)] = work["walked"]
    assert (size, count) == (len(rec(0, key=b"\x02k")) * 2_000_000, 1)
    # The broker's own measure of the append: a generous bound (decoding every record took seconds).
    assert max(work["append_seconds"]) < 2.0


def test_a_payload_past_the_decompressed_bound_is_message_too_large(mockbroker: MockBroker, client: RawClient,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound is 256 MiB; lowered here so the test stays small: decompression stops there.
    monkeypatch.setattr(validation, "MAX_DECOMPRESSED_BYTES", 1 << 20)
    mockbroker.create_topic("t")
    big = batch_of(rec(0, value=encode_varint(3 << 20) + b"\x00" * (3 << 20)), 1, Codec.ZSTD)
    p = produce(client, "t", big)
    assert_refused(mockbroker, "t", p, ErrorCode.MESSAGE_TOO_LARGE, log_start_offset=-1)


# -- record_errors (Produce v8+) ----------------------------------------------------------------------------


def _client_log_append_time(batch: bytearray, max_timestamp: int) -> bytearray:
    out = bytearray(batch)
    attributes = struct.unpack_from(">h", out, ATTRIBUTES)[0] | 0x08
    struct.pack_into(">h", out, ATTRIBUTES, attributes)
    struct.pack_into(">q", out, MAX_TIMESTAMP, max_timestamp)
    RecordBatch(out).update_crc()
    return out


def test_a_producer_batch_marked_log_append_time_on_such_a_topic_is_invalid_timestamp(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("lat", config={"message.timestamp.type": "LogAppendTime"})
    data = _client_log_append_time(make_batch(b"a", b"b"), int(time.time() * 1000))
    p = produce(client, "lat", data)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_TIMESTAMP, -1)
    assert [e.batch_index for e in p.record_errors] == [0, 1]
    assert "Producer should not set timestamp type to LogAppendTime" in p.record_errors[0].batch_index_error_message
    assert p.error_message == "One or more records have been rejected due to invalid timestamp"


def test_a_producer_log_append_time_batch_on_a_create_time_topic_is_checked_against_the_bounds(
        mockbroker: MockBroker, client: RawClient) -> None:
    # Each record's timestamp is then the batch's max timestamp (Kafka's record iterator).
    mockbroker.create_topic("ct", config={"message.timestamp.after.max.ms": "60000"})
    late = int(time.time() * 1000) + 3_600_000
    p = produce(client, "ct", _client_log_append_time(make_batch(b"a", b"b"), late))
    assert p.error_code == ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in p.record_errors] == [0, 1]
    assert p.record_errors[1].batch_index_error_message.startswith(f"Timestamp {late} of message with offset 1")
    ok = _client_log_append_time(make_batch(b"a"), int(time.time() * 1000))
    assert produce(client, "ct", ok).error_code == ErrorCode.NONE


def test_keyless_records_in_a_compressed_batch_on_a_compacted_topic_are_named(mockbroker: MockBroker,
                                                                               client: RawClient) -> None:
    mockbroker.create_topic("c", config={"cleanup.policy": "compact"})
    data = build_batch([RecordInput(b"k", b"a"), RecordInput(None, b"b"), RecordInput(b"k", b"c")],
                       codec=Codec.ZSTD)
    p = produce(client, "c", data)
    assert (p.error_code, [e.batch_index for e in p.record_errors]) == (ErrorCode.INVALID_RECORD, [1])


# -- magic 0/1 (Produce v0-v2) ------------------------------------------------------------------------------


def _wrapper(inner: bytes) -> bytes:
    """A magic-1 gzip wrapper message around the message set `inner`."""
    return _encode_message(0, 1, Codec.GZIP, 0, None, compression.compress(Codec.GZIP, inner))


def test_a_compressed_message_inside_a_wrapper_is_invalid_record(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("t")
    wrapper = _wrapper(build_message_set([(b"k", b"v")], magic=1, codec=Codec.GZIP))
    p = produce(client, "t", wrapper, version=2)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert mockbroker.batches("t", 0) == []


def test_a_magic_0_message_inside_a_magic_1_wrapper_is_invalid_record(mockbroker: MockBroker,
                                                                      client: RawClient) -> None:
    mockbroker.create_topic("t")
    wrapper = _wrapper(build_message_set([(b"k", b"v")], magic=0))
    p = produce(client, "t", wrapper, version=2)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert mockbroker.batches("t", 0) == []


def test_a_wrapper_whose_payload_does_not_decompress_is_unknown_server_error(mockbroker: MockBroker,
                                                                             client: RawClient) -> None:
    # As a v2 batch's: Kafka's legacy reader throws a KafkaException for a payload its codec cannot read.
    mockbroker.create_topic("t")
    wrapper = _encode_message(0, 1, Codec.GZIP, 0, None, b"\x1f\x8b" + bytes(range(40)))
    p = produce(client, "t", wrapper, version=2)
    assert (p.error_code, p.base_offset) == (ErrorCode.UNKNOWN_SERVER_ERROR, -1)
    assert mockbroker.batches("t", 0) == []


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.ZSTD])
def test_a_wrong_max_timestamp_is_set_to_the_records_largest(mockbroker: MockBroker, client: RawClient,
                                                             codec: Codec) -> None:
    # LogValidator sets the batch's max timestamp from its records (CreateTime topic), so ListOffsets by
    # timestamp and the time index see the real one; a producer's LogAppendTime flag becomes CreateTime.
    mockbroker.create_topic("t")
    now = int(time.time() * 1000)
    wrong = bytearray(make_batch(b"a", b"b", timestamps=[now - 10, now], codec=codec))
    struct.pack_into(">q", wrong, MAX_TIMESTAMP, now - 500)
    RecordBatch(wrong).update_crc()
    assert produce(client, "t", wrong).error_code == ErrorCode.NONE
    flagged = _client_log_append_time(make_batch(b"c", timestamps=[now - 1000], codec=codec), now - 20)
    assert produce(client, "t", flagged).error_code == ErrorCode.NONE
    first, second = mockbroker.batches("t", 0)
    assert (first.max_timestamp, first.timestamp_type) == (now, 0)
    assert (second.max_timestamp, second.timestamp_type) == (now - 20, 0)
    assert all(RecordBatch(bytearray(b.raw)).is_valid() for b in (first, second))  # CRCs recomputed
