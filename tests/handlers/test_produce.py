"""Raw-protocol tests of Produce (0): offsets, the stored bytes, legacy message sets, and every error
Kafka's broker answers for a bad append (KafkaApis, ProduceRequest.validateRecords, UnifiedLog,
LogValidator), per partition."""

from __future__ import annotations

import struct
import time
import uuid

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import Codec, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch, build_control_batch
from mockbroker.protocol.records.legacy import build_message_set
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    PRODUCE,
    fetch,
    make_batch,
    produce,
    produce_body,
    records_of,
    with_header,
)
from tests.rawclient import RawClient

FROZEN_MS = 1_700_000_000_000


def _patched(batch: bytearray, fmt: str, offset: int, value: int) -> bytearray:
    """The batch with one header field changed and the CRC recomputed."""
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    RecordBatch(out).update_crc()
    return out


def _now_ms() -> int:
    return int(time.time() * 1000)


def _assert_not_appended(broker: MockBroker, topic: str, partition: int = 0) -> None:
    assert broker.offsets(topic, partition)["high_watermark"] == 0
    assert broker.batches(topic, partition) == []


# -- offsets and stored bytes ----------------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 7, 9, 13])
def test_base_offsets_are_assigned_in_order(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    topic = mockbroker.create_topic("ordered")
    topic_id = topic.topic_id if version >= 13 else None
    offsets = []
    for values in ([b"a", b"b"], [b"c"], [b"d", b"e", b"f"]):
        p = produce(client, "ordered", make_batch(*values), version=version, topic_id=topic_id)
        assert p.error_code == ErrorCode.NONE
        assert p.log_append_time_ms == -1
        if version >= 5:
            assert p.log_start_offset == 0
        if version >= 8:
            assert (p.record_errors, p.error_message) == ([], None)
        offsets.append(p.base_offset)
    assert offsets == [0, 2, 3]
    assert [(r.offset, r.value) for r in mockbroker.records("ordered")] == list(
        enumerate([b"a", b"b", b"c", b"d", b"e", b"f"]))


def test_v13_response_names_the_topic_by_id(mockbroker: MockBroker, client: RawClient) -> None:
    topic = mockbroker.create_topic("ided")
    resp = client.request(PRODUCE, 13, produce_body("", make_batch(b"x"), topic_id=topic.topic_id))
    [t] = resp.responses
    assert t.topic_id == topic.topic_id
    assert t.partition_responses[0].error_code == ErrorCode.NONE


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_stored_batch_is_the_sent_bytes_with_base_offset_and_leader_epoch(mockbroker: MockBroker,
                                                                          client: RawClient, codec: Codec) -> None:
    mockbroker.create_topic("bytes")
    first = make_batch(b"one", b"two", codec=codec)
    second = make_batch(b"three", codec=codec, producer_id=4000, producer_epoch=0, base_sequence=0)
    assert produce(client, "bytes", first).base_offset == 0
    assert produce(client, "bytes", second).base_offset == 2
    stored = mockbroker.batches("bytes")
    assert [b.raw for b in stored] == [with_header(first, base_offset=0, leader_epoch=0),
                                       with_header(second, base_offset=2, leader_epoch=0)]
    for b in stored:
        assert RecordBatch(b.raw).is_valid()
        assert (b.partition_leader_epoch, b.codec) == (0, codec)
    # Fetch hands back exactly those bytes.
    assert bytes(fetch(client, "bytes", 0).records) == stored[0].raw + stored[1].raw


def test_leader_epoch_stamped_is_the_partitions_epoch(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("epoch")
    mockbroker._call(lambda: setattr(mockbroker.cluster.partition("epoch", 0).log, "leader_epoch", 4))
    produce(client, "epoch", make_batch(b"x", partition_leader_epoch=99))
    assert mockbroker.batches("epoch")[0].partition_leader_epoch == 4


# -- legacy message sets (Produce v0-v2) -----------------------------------------------------------


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (2, 0)])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_legacy_message_sets_are_appended_as_one_v2_batch(mockbroker: MockBroker, client: RawClient, version: int,
                                                          magic: int, codec: Codec) -> None:
    mockbroker.create_topic("legacy")
    ts = _now_ms()
    for base in (0, 3):
        data = build_message_set([(b"k1", b"v1", ts), (b"k2", None, ts + 1), (None, b"v3", ts + 2)],
                                 magic=magic, codec=codec)
        p = produce(client, "legacy", data, version=version)
        assert (p.error_code, p.base_offset) == (ErrorCode.NONE, base)
        if version >= 2:
            assert p.log_append_time_ms == -1
    [b0, b1] = mockbroker.batches("legacy")
    assert (b0.magic, b0.base_offset, b0.last_offset, b0.producer_id, b0.codec) == (2, 0, 2, -1, codec)
    assert (b1.base_offset, b1.last_offset) == (3, 5)
    recs = mockbroker.records("legacy")
    assert [(r.offset, r.key, r.value) for r in recs[:3]] == [(0, b"k1", b"v1"), (1, b"k2", None), (2, None, b"v3")]
    expected_ts = [ts, ts + 1, ts + 2] if magic == 1 else [-1, -1, -1]
    assert [r.timestamp for r in recs[:3]] == expected_ts


def test_legacy_message_set_with_a_bad_crc_is_corrupt(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("legacy-crc")
    data = bytearray(build_message_set([(b"k", b"v", 1)], magic=1))
    data[-1] ^= 0xFF
    assert produce(client, "legacy-crc", bytes(data), version=2).error_code == ErrorCode.CORRUPT_MESSAGE
    _assert_not_appended(mockbroker, "legacy-crc")


@pytest.mark.parametrize("version", [3, 7, 9])
def test_magic_1_message_set_in_v3_and_later_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                               version: int) -> None:
    mockbroker.create_topic("magic1")
    p = produce(client, "magic1", build_message_set([(b"k", b"v", 1)], magic=1), version=version)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    _assert_not_appended(mockbroker, "magic1")


# -- corrupt and invalid batches -------------------------------------------------------------------


def test_bad_crc_is_corrupt_message(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("crc")
    data = make_batch(b"value")
    data[-1] ^= 0x01
    p = produce(client, "crc", data)
    assert (p.error_code, p.base_offset, p.log_start_offset, p.error_message) == (
        ErrorCode.CORRUPT_MESSAGE, -1, -1, None)
    _assert_not_appended(mockbroker, "crc")


def test_batch_length_below_the_header_size_is_corrupt_message(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("short-length")
    data = make_batch(b"value")
    struct.pack_into(">i", data, 8, 30)  # a 42-byte batch: shorter than its own header
    assert produce(client, "short-length", bytes(data[:42])).error_code == ErrorCode.CORRUPT_MESSAGE
    struct.pack_into(">i", data, 8, 5)  # below any message format's minimum
    assert produce(client, "short-length", bytes(data[:17])).error_code == ErrorCode.CORRUPT_MESSAGE
    _assert_not_appended(mockbroker, "short-length")


def test_unknown_magic_is_corrupt_message(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("magic7")
    data = make_batch(b"value")
    data[16] = 7
    assert produce(client, "magic7", bytes(data)).error_code == ErrorCode.CORRUPT_MESSAGE
    _assert_not_appended(mockbroker, "magic7")


@pytest.mark.parametrize("keep", [60, 40, 11, 0])
def test_truncated_batch_in_v3_and_later_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                           keep: int) -> None:
    # Kafka's batch iterator stops at bytes that do not hold a whole batch, so a v3+ request whose only
    # batch is cut short has no batch at all (ProduceRequest.validateRecords: INVALID_RECORD).
    mockbroker.create_topic("truncated")
    data = make_batch(b"value" * 20)
    p = produce(client, "truncated", bytes(data[:keep]))
    assert (p.error_code, p.base_offset, p.log_start_offset) == (ErrorCode.INVALID_RECORD, -1, -1)
    _assert_not_appended(mockbroker, "truncated")


def test_partial_batch_after_a_whole_one_is_ignored(mockbroker: MockBroker, client: RawClient) -> None:
    # Kafka trims bytes after the last whole batch (UnifiedLog.trimInvalidBytes) and appends the rest.
    mockbroker.create_topic("trailing")
    whole = make_batch(b"kept")
    p = produce(client, "trailing", bytes(whole) + bytes(make_batch(b"cut")[:30]))
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 0)
    assert [b.raw for b in mockbroker.batches("trailing")] == [with_header(whole, leader_epoch=0)]


def test_base_offset_not_zero_is_invalid_record(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("base")
    p = produce(client, "base", make_batch(b"x", base_offset=5))
    assert (p.error_code, p.base_offset, p.error_message) == (ErrorCode.INVALID_RECORD, -1, None)
    assert p.log_start_offset == 0
    _assert_not_appended(mockbroker, "base")


@pytest.mark.parametrize("count", [0, 1, 3])
def test_record_count_not_matching_the_offset_range_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                                      count: int) -> None:
    mockbroker.create_topic("count")
    data = _patched(make_batch(b"a", b"b"), ">i", 57, count)  # last offset delta 1: two offsets
    p = produce(client, "count", data)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    _assert_not_appended(mockbroker, "count")


def test_control_batch_from_a_client_is_invalid_record(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("control")
    data = build_control_batch(1, producer_id=5000, producer_epoch=0, coordinator_epoch=0,
                               timestamp_ms=_now_ms())
    assert produce(client, "control", data).error_code == ErrorCode.INVALID_RECORD
    _assert_not_appended(mockbroker, "control")


def test_producer_id_without_a_sequence_is_invalid_record(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("noseq")
    data = make_batch(b"x", producer_id=5000, producer_epoch=0, base_sequence=-1)
    assert produce(client, "noseq", data).error_code == ErrorCode.INVALID_RECORD
    _assert_not_appended(mockbroker, "noseq")


@pytest.mark.parametrize("version", [3, 9])
def test_two_batches_in_one_v3_request_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                         version: int) -> None:
    mockbroker.create_topic("two")
    p = produce(client, "two", bytes(make_batch(b"a")) + bytes(make_batch(b"b")), version=version)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    _assert_not_appended(mockbroker, "two")


@pytest.mark.parametrize("records", [b"", None])
def test_no_records_in_v3_and_later_is_invalid_record(mockbroker: MockBroker, client: RawClient,
                                                      records: bytes | None) -> None:
    mockbroker.create_topic("empty")
    assert produce(client, "empty", records).error_code == ErrorCode.INVALID_RECORD
    _assert_not_appended(mockbroker, "empty")


@pytest.mark.parametrize(("version", "code"), [(3, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
                                               (6, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
                                               (7, ErrorCode.NONE)])
def test_zstd_needs_produce_v7(mockbroker: MockBroker, client: RawClient, version: int, code: ErrorCode) -> None:
    mockbroker.create_topic("zstd")
    assert produce(client, "zstd", make_batch(b"z", codec=Codec.ZSTD), version=version).error_code == code


def test_batch_over_max_message_bytes_is_message_too_large(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("small", config={"max.message.bytes": "200"})
    big = make_batch(b"x" * 200)
    p = produce(client, "small", big)
    assert (p.error_code, p.base_offset, p.log_start_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1, -1)
    _assert_not_appended(mockbroker, "small")
    fits = next(b for n in range(200) if len(b := make_batch(b"x" * n)) == 200)
    assert produce(client, "small", fits).error_code == ErrorCode.NONE


# -- unknown topics and partitions -----------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 3, 9, 12])
def test_unknown_topic_is_unknown_topic_or_partition_and_not_created(mockbroker: MockBroker, client: RawClient,
                                                                     version: int) -> None:
    records = make_batch(b"x") if version >= 3 else build_message_set([(None, b"x")], magic=0)
    p = produce(client, "never-created", records, version=version)
    assert (p.error_code, p.base_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    assert mockbroker.topics() == []


@pytest.mark.parametrize("partition", [2, -1])
def test_partition_out_of_range_is_unknown_topic_or_partition(mockbroker: MockBroker, client: RawClient,
                                                              partition: int) -> None:
    mockbroker.create_topic("two-parts", 2)
    p = produce(client, "two-parts", make_batch(b"x"), partition=partition)
    assert (p.index, p.error_code) == (partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def test_v13_unknown_topic_id_is_unknown_topic_id(client: RawClient) -> None:
    missing = uuid.uuid4()
    resp = client.request(PRODUCE, 13, produce_body("", make_batch(b"x"), topic_id=missing))
    [t] = resp.responses
    assert t.topic_id == missing
    assert t.partition_responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_v13_partition_out_of_range_is_unknown_topic_or_partition(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    topic = mockbroker.create_topic("ided-parts")
    p = produce(client, "", make_batch(b"x"), version=13, partition=1, topic_id=topic.topic_id)
    assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


# -- record-level validation (record_errors) -------------------------------------------------------


@pytest.mark.parametrize("version", [7, 9])
def test_timestamp_too_far_in_the_future_is_invalid_timestamp(mockbroker: MockBroker, client: RawClient,
                                                              version: int) -> None:
    mockbroker.create_topic("future", config={"message.timestamp.after.max.ms": "60000"})
    now = _now_ms()
    data = make_batch(b"ok", b"late", b"later", timestamps=[now, now + 3_600_000, now + 7_200_000])
    p = produce(client, "future", data, version=version)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_TIMESTAMP, -1)
    if version >= 8:
        assert [e.batch_index for e in p.record_errors] == [1, 2]
        assert p.record_errors[0].batch_index_error_message.startswith(
            f"Timestamp {now + 3_600_000} of message with offset 1 is out of range.")
        assert p.error_message == "One or more records have been rejected due to invalid timestamp"
        assert p.log_start_offset == 0
    _assert_not_appended(mockbroker, "future")


def test_timestamp_too_old_is_invalid_timestamp(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("past", config={"message.timestamp.before.max.ms": "60000"})
    now = _now_ms()
    p = produce(client, "past", make_batch(b"old", b"new", timestamps=[now - 86_400_000, now]))
    assert p.error_code == ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in p.record_errors] == [0]
    _assert_not_appended(mockbroker, "past")


def test_records_without_a_timestamp_are_not_checked(mockbroker: MockBroker, client: RawClient) -> None:
    # LogValidator checks CreateTime timestamps only when the record has one (not NO_TIMESTAMP, -1).
    mockbroker.create_topic("no-ts", config={"message.timestamp.before.max.ms": "60000"})
    p = produce(client, "no-ts", make_batch(b"a", b"b", timestamps=[-1, -1]))
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 0)
    p = produce(client, "no-ts", build_message_set([(None, b"v0")], magic=0), version=1)
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, 2)


def test_keyless_record_on_a_compacted_topic_is_invalid_record(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("compacted", config={"cleanup.policy": "compact"})
    data = make_batch(b"a", b"b", b"c", b"d", key=None)
    p = produce(client, "compacted", data)
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert [e.batch_index for e in p.record_errors] == [0, 1, 2, 3]
    msg = "Compacted topic cannot accept message without key in topic partition compacted-0."
    assert all(e.batch_index_error_message == msg for e in p.record_errors)
    # Kafka's message names the count and shows the first three record errors.
    assert p.error_message == (
        "One or more records have been rejected due to 4 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=0, message='{msg}'), RecordError(batchIndex=1, "
        f"message='{msg}'), RecordError(batchIndex=2, message='{msg}')]")
    _assert_not_appended(mockbroker, "compacted")
    assert produce(client, "compacted", make_batch(b"keyed")).error_code == ErrorCode.NONE


def test_key_and_timestamp_errors_together_are_invalid_timestamp(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("both", config={"cleanup.policy": "compact",
                                            "message.timestamp.after.max.ms": "60000"})
    now = _now_ms()
    data = build_batch([RecordInput(None, b"a", (), now), RecordInput(b"k", b"b", (), now + 3_600_000)])
    p = produce(client, "both", data)
    # Record 0 has no key, record 1 a future timestamp (a record gets its key error first).
    assert p.error_code == ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in p.record_errors] == [0, 1]


# -- acks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("acks", [2, -2, 5])
def test_invalid_acks_is_invalid_required_acks(mockbroker: MockBroker, client: RawClient, acks: int) -> None:
    mockbroker.create_topic("acks")
    p = produce(client, "acks", make_batch(b"x"), acks=acks)
    assert (p.error_code, p.base_offset, p.log_start_offset) == (ErrorCode.INVALID_REQUIRED_ACKS, -1, -1)
    _assert_not_appended(mockbroker, "acks")


@pytest.mark.parametrize("acks", [1, -1])
def test_acks_1_and_all_are_answered_with_the_offset(mockbroker: MockBroker, client: RawClient, acks: int) -> None:
    mockbroker.create_topic("acks-ok")
    assert produce(client, "acks-ok", make_batch(b"x"), acks=acks).base_offset == 0


# -- several partitions ----------------------------------------------------------------------------


def test_one_bad_partition_does_not_fail_the_others(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("mixed", 3)
    corrupt = make_batch(b"bad")
    corrupt[-1] ^= 0x01
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": "mixed", "partition_data": [
            {"index": 0, "records": make_batch(b"good-0")},
            {"index": 1, "records": corrupt},
            {"index": 2, "records": make_batch(b"x", base_offset=3)},
            {"index": 7, "records": make_batch(b"no-such-partition")},
        ]},
        {"name": "absent", "partition_data": [{"index": 0, "records": make_batch(b"no-such-topic")}]},
        {"name": "mixed-too", "partition_data": []},
    ]}
    resp = client.request(PRODUCE, 9, body)
    codes = {(t.name, p.index): (p.error_code, p.base_offset) for t in resp.responses for p in t.partition_responses}
    assert codes == {
        ("mixed", 0): (ErrorCode.NONE, 0),
        ("mixed", 1): (ErrorCode.CORRUPT_MESSAGE, -1),
        ("mixed", 2): (ErrorCode.INVALID_RECORD, -1),
        ("mixed", 7): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("absent", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    assert [r.value for r in mockbroker.records("mixed")] == [b"good-0"]


# -- LogAppendTime ---------------------------------------------------------------------------------


@pytest.mark.mockbroker(clock=Clock(start_ms=FROZEN_MS, frozen=True))
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_log_append_time_topic_stamps_the_broker_time(mockbroker: MockBroker, client: RawClient,
                                                      codec: Codec) -> None:
    mockbroker.create_topic("lat", config={"message.timestamp.type": "LogAppendTime"})
    sent = make_batch(b"a", b"b", timestamps=[1000, 2000], codec=codec)
    p = produce(client, "lat", sent)
    assert (p.error_code, p.base_offset, p.log_append_time_ms) == (ErrorCode.NONE, 0, FROZEN_MS)
    [b] = mockbroker.batches("lat")
    stored = RecordBatch(b.raw)
    assert stored.is_valid()
    assert (stored.timestamp_type, stored.max_timestamp, stored.base_timestamp) == (1, FROZEN_MS, 1000)
    assert [r.timestamp for r in records_of(fetch(client, "lat").records)] == [FROZEN_MS, FROZEN_MS]
    # Only the timestamp type bit, the max timestamp and the CRC differ from what was sent.
    expected = bytearray(with_header(sent, leader_epoch=0))
    struct.pack_into(">h", expected, 21, RecordBatch(sent).attributes | 0x08)
    struct.pack_into(">q", expected, 35, FROZEN_MS)
    RecordBatch(expected).update_crc()
    assert b.raw == bytes(expected)


def test_create_time_topic_answers_log_append_time_minus_one(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("ct")
    p = produce(client, "ct", make_batch(b"a", timestamps=[1234]))
    assert p.log_append_time_ms == -1
    assert mockbroker.batches("ct")[0].timestamp_type == 0


def _two_partitions(client: RawClient, first: bytes, second: bytes) -> list[int]:
    resp = client.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": "kept", "partition_data": [{"index": 0, "records": first}, {"index": 1, "records": second}]}]})
    return [p.error_code for p in resp.responses[0].partition_responses]


def test_a_small_accepted_batch_does_not_keep_its_large_request_frame_alive(mockbroker: MockBroker,
                                                                            client: RawClient) -> None:
    """100 bytes accepted next to 2 MiB refused (over max.message.bytes) in one request: the log keeps a
    copy of the 100 bytes, not a view holding the whole 2 MiB frame (issue #20, defect 4)."""
    mockbroker.create_topic("kept", partitions=2)
    small, huge = make_batch(b"v"), make_batch(b"x" * (2 * 1024 * 1024))
    assert _two_partitions(client, small, huge) == [ErrorCode.NONE, ErrorCode.MESSAGE_TOO_LARGE]
    [stored] = mockbroker._call(lambda: list(mockbroker.cluster.partition("kept", 0).log.batches))
    assert stored.size == len(small)
    assert len(stored.data.obj) < len(huge)  # a view of the log's own chunk (a copy), not of the 2 MiB frame
    assert [r.value for r in mockbroker.records("kept", 0)] == [b"v"]


def test_stored_batches_are_copies_in_their_logs_own_chunks(mockbroker: MockBroker, client: RawClient) -> None:
    """Each log copies what it stores into its own chunk (state/log/batch_store.py): the request frame is not
    kept, and two partitions of one request share nothing."""
    mockbroker.create_topic("kept", partitions=2)
    assert _two_partitions(client, make_batch(b"a" * 5000), make_batch(b"b" * 5000)) == [0, 0]
    first, second = (mockbroker._call(lambda p=p: mockbroker.cluster.partition("kept", p).log.batches[0])
                     for p in (0, 1))
    assert first.data.obj is not second.data.obj
    assert [r.value for r in first.view().records()] == [b"a" * 5000]
    assert [r.value for r in second.view().records()] == [b"b" * 5000]
