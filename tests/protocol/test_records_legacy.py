"""Magic 0/1 message sets and their conversion to and from v2, judged by kafka-python's and aiokafka's
legacy readers and builders."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from kafka import codec as kp_codec
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpLegacyBuilder
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords

from mockbroker.protocol.errors import DecodeError, EncodeError
from mockbroker.protocol.records.batch import Codec, CorruptRecordError, RecordBatch, iter_batches
from mockbroker.protocol.records.builder import RecordInput, build_batch, build_control_batch
from mockbroker.protocol.records.compression import xxh32
from mockbroker.protocol.records.legacy import (
    LegacyMessage,
    build_message_set,
    convert_from_v2,
    convert_to_v2,
    parse_message_set,
)

LEGACY_CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4]
MESSAGES = [
    (b"key-0", b"value " * 30, 1_600_000_000_000),
    (None, b"value " * 30, 1_600_000_000_009),
    (b"key-2", None, 1_600_000_000_004),
    (b"", b"", 1_600_000_000_001),
]


class XxhashShim:
    """kafka-python's magic 0 LZ4 needs the xxhash package (not installed); this stands in for it."""

    @staticmethod
    def xxh32(data: bytes) -> Any:
        class Digest:
            @staticmethod
            def digest() -> bytes:
                return struct.pack(">I", xxh32(bytes(data)))

        return Digest()


@pytest.fixture(autouse=True)
def kafka_python_xxhash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kp_codec, "xxhash", XxhashShim)


def read_with(memory_records_class: Any, data: bytes) -> list[tuple[Any, ...]]:
    """(offset, timestamp, key, value) of every message, through a client's MemoryRecords."""
    records = memory_records_class(data)
    out: list[tuple[Any, ...]] = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        out.extend((r.offset, r.timestamp, r.key, r.value) for r in batch)
    return out


def ours(messages: list[LegacyMessage]) -> list[tuple[Any, ...]]:
    return [(m.offset, m.timestamp, m.key, m.value) for m in messages]


def expected(magic: int, base_offset: int = 0) -> list[tuple[Any, ...]]:
    return [(base_offset + i, ts if magic == 1 else None, k, v) for i, (k, v, ts) in enumerate(MESSAGES)]


# -- round trips and client agreement -----------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name.lower())
def test_message_set_round_trips_and_decodes_with_kafka_python_and_aiokafka(magic: int, codec: Codec) -> None:
    data = build_message_set(MESSAGES, magic=magic, codec=codec, base_offset=50)
    assert ours(parse_message_set(data)) == expected(magic, 50)
    assert all(m.magic == magic for m in parse_message_set(data))
    assert read_with(KpMemoryRecords, data) == expected(magic, 50)
    if not (codec == Codec.LZ4 and magic == 0):  # aiokafka refuses magic 0 LZ4 (KAFKA-3160)
        assert read_with(AioMemoryRecords, data) == expected(magic, 50)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name.lower())
def test_message_set_built_by_kafka_python_decodes(magic: int, codec: Codec) -> None:
    builder = KpLegacyBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20)
    for offset, (key, value, ts) in enumerate(MESSAGES):
        builder.append(offset, timestamp=ts, key=key, value=value)
    data = bytes(builder.build())
    # kafka-python writes a producer's set: wrapper offset 0, so inner offsets stay relative (0..n-1)
    assert ours(parse_message_set(data)) == expected(magic)


def test_compressed_wrapper_offsets_are_absolute_in_v0_and_relative_in_v1() -> None:
    v1 = build_message_set(MESSAGES, magic=1, codec=Codec.GZIP, base_offset=1000)
    (offset, size) = struct.unpack_from(">qi", v1)
    assert offset == 1003  # the wrapper carries the last inner offset
    inner = zlib.decompress(v1[12 + 4 + 1 + 1 + 8 + 4 + 4 :], wbits=31)
    assert struct.unpack_from(">q", inner)[0] == 0  # first inner offset, relative
    v0 = build_message_set(MESSAGES, magic=0, codec=Codec.GZIP, base_offset=1000)
    assert struct.unpack_from(">q", v0)[0] == 1003
    inner = zlib.decompress(v0[12 + 4 + 1 + 1 + 4 + 4 :], wbits=31)
    assert struct.unpack_from(">q", inner)[0] == 1000  # absolute


def test_v1_wrapper_timestamp_is_the_max_and_log_append_time_overrides_inner_timestamps() -> None:
    data = bytearray(build_message_set(MESSAGES, magic=1, codec=Codec.SNAPPY))
    assert struct.unpack_from(">q", data, 18)[0] == 1_600_000_000_009
    data[17] |= 0x08  # mark the wrapper LogAppendTime, as a broker would
    struct.pack_into(">q", data, 18, 1_700_000_000_000)
    struct.pack_into(">I", data, 12, zlib.crc32(data[16:]))
    messages = parse_message_set(data)
    assert [m.timestamp for m in messages] == [1_700_000_000_000] * 4
    assert [m.timestamp_type for m in messages] == [1] * 4
    assert [r[1] for r in read_with(KpMemoryRecords, bytes(data))] == [1_700_000_000_000] * 4


def test_magic_0_lz4_carries_kafka_08_broken_header_checksum() -> None:
    data = build_message_set(MESSAGES, magic=0, codec=Codec.LZ4)
    value = data[12 + 4 + 1 + 1 + 4 + 4 :]
    broken = (xxh32(value[0:6]) >> 8) & 0xFF  # computed over the frame magic too
    assert value[6] == broken
    v1 = build_message_set(MESSAGES, magic=1, codec=Codec.LZ4)
    value = v1[12 + 4 + 1 + 1 + 8 + 4 + 4 :]
    assert value[6] == (xxh32(value[4:6]) >> 8) & 0xFF  # the standard checksum for magic 1


def test_legacy_message_inputs_keep_their_offsets_and_timestamps() -> None:
    messages = [LegacyMessage(7, 1, 0, 70, b"a", b"1"), LegacyMessage(9, 1, 0, 90, b"b", b"2")]
    for codec in (Codec.NONE, Codec.GZIP):
        parsed = parse_message_set(build_message_set(messages, magic=1, codec=codec))
        assert [(m.offset, m.timestamp) for m in parsed] == [(7, 70), (9, 90)]


def test_build_rejects_zstd_and_other_magics() -> None:
    with pytest.raises(EncodeError):
        build_message_set(MESSAGES, magic=1, codec=Codec.ZSTD)
    with pytest.raises(EncodeError):
        build_message_set(MESSAGES, magic=2)
    with pytest.raises(EncodeError):
        build_message_set([], magic=1, codec=Codec.GZIP)
    assert build_message_set([], magic=1) == b""


# -- malformed sets -----------------------------------------------------------------------------


def recrc(data: bytearray, pos: int = 0) -> bytearray:
    (size,) = struct.unpack_from(">i", data, pos + 8)
    struct.pack_into(">I", data, pos + 12, zlib.crc32(data[pos + 16 : pos + 12 + size]))
    return data


def test_flipped_byte_in_a_message_is_a_crc_error() -> None:
    original = build_message_set(MESSAGES, magic=1)
    (size,) = struct.unpack_from(">i", original, 8)
    for position in range(16, 12 + size):
        data = bytearray(original)
        data[position] ^= 0x04
        with pytest.raises(CorruptRecordError):
            parse_message_set(data)


def test_truncated_trailing_message_raises_unless_partial_allowed() -> None:
    data = build_message_set(MESSAGES, magic=0)
    with pytest.raises(DecodeError):
        parse_message_set(data[:-3])
    assert len(parse_message_set(data[:-3], allow_partial=True)) == 3
    assert len(parse_message_set(data[: -len(data) + 20], allow_partial=True)) == 0


def v0_entry(attributes: int, value: bytes | None, offset: int = 0) -> bytes:
    """One magic 0 log entry with a null key, written out by hand."""
    value_field = struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    body = struct.pack(">bb", 0, attributes) + struct.pack(">i", -1) + value_field
    return struct.pack(">qi", offset, len(body) + 4) + struct.pack(">I", zlib.crc32(body)) + body


def test_hand_written_v0_entry_is_what_the_builder_writes() -> None:
    assert v0_entry(0, b"v", 3) == build_message_set([LegacyMessage(3, 0, 0, None, None, b"v")], magic=0)


def test_compressed_message_with_null_value_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="null value"):
        parse_message_set(v0_entry(int(Codec.GZIP), None))


def test_compressed_message_inside_a_compressed_message_is_corrupt() -> None:
    inner_wrapper = build_message_set([(b"k", b"v")], magic=0, codec=Codec.GZIP)
    with pytest.raises(CorruptRecordError, match="holds a compressed message"):
        parse_message_set(v0_entry(int(Codec.GZIP), zlib.compress(inner_wrapper)))


def test_inner_message_of_another_magic_is_corrupt() -> None:
    inner = build_message_set([(b"k", b"v", 5)], magic=1)
    with pytest.raises(CorruptRecordError, match="magic 1 inside a wrapper of magic 0"):
        parse_message_set(v0_entry(int(Codec.GZIP), zlib.compress(inner)))


def test_compressed_message_with_zstd_codec_is_corrupt_in_legacy_sets() -> None:
    with pytest.raises(CorruptRecordError, match="codec 4"):
        parse_message_set(v0_entry(int(Codec.ZSTD), b"whatever"))


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        (lambda d: struct.pack_into(">i", d, 8, 13), "below the minimum"),
        (lambda d: d.__setitem__(16, 3), "magic 3"),
        (lambda d: struct.pack_into(">i", d, 18, 1000), "key of 1000 bytes"),
    ],
)
def test_malformed_entries_raise_decode_errors(patch: Any, reason: str) -> None:
    data = bytearray(build_message_set([(b"k", b"v")], magic=0))
    patch(data)
    if reason != "below the minimum":
        recrc(data)
    with pytest.raises(DecodeError, match=reason):
        parse_message_set(data)


# -- conversions --------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name.lower())
def test_legacy_to_v2_to_legacy_keeps_offsets_keys_values_and_timestamps(magic: int, codec: Codec) -> None:
    data = build_message_set(MESSAGES, magic=magic, codec=codec, base_offset=300)
    batch = RecordBatch(convert_to_v2(data))
    batch.validate(producer_batch=True)
    assert batch.codec == codec
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.base_offset == 300
    timestamps = [ts if magic == 1 else -1 for _, _, ts in MESSAGES]
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch.records()] == [
        (300 + i, ts, k, v) for i, ((k, v, _), ts) in enumerate(zip(MESSAGES, timestamps, strict=True))
    ]
    assert batch.max_timestamp == max(timestamps)
    back = convert_from_v2([batch], magic)
    assert ours(parse_message_set(back)) == expected(magic, 300)
    assert read_with(KpMemoryRecords, back) == expected(magic, 300)


def test_convert_to_v2_with_a_base_offset_assigns_offsets_as_the_broker_does() -> None:
    data = build_message_set(MESSAGES, magic=1, codec=Codec.GZIP)
    batch = RecordBatch(convert_to_v2(data, base_offset=7000, partition_leader_epoch=3))
    assert [r.offset for r in batch.records()] == [7000, 7001, 7002, 7003]
    assert batch.partition_leader_epoch == 3
    assert RecordBatch(convert_to_v2(data, codec=Codec.ZSTD)).codec == Codec.ZSTD


def test_convert_to_v2_of_a_kafka_python_producer_set() -> None:
    builder = KpLegacyBuilder(magic=1, compression_type=int(Codec.SNAPPY), batch_size=1 << 20)
    for offset, (key, value, ts) in enumerate(MESSAGES):
        builder.append(offset, timestamp=ts, key=key, value=value)
    batch = RecordBatch(convert_to_v2(bytes(builder.build()), base_offset=0))
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch.records()] == expected(1)


def test_convert_to_v2_rejects_empty_sets_and_decreasing_offsets() -> None:
    with pytest.raises(DecodeError):
        convert_to_v2(b"")
    backwards = build_message_set(
        [LegacyMessage(5, 1, 0, 1, b"a", b""), LegacyMessage(4, 1, 0, 1, b"b", b"")], magic=1
    )
    with pytest.raises(DecodeError, match="increasing"):
        convert_to_v2(backwards)
    assert [r.offset for r in RecordBatch(convert_to_v2(backwards, base_offset=0)).records()] == [0, 1]


def test_convert_to_v2_of_a_log_append_time_set_gives_a_log_append_time_batch() -> None:
    data = build_message_set(MESSAGES, magic=1, timestamp_type=1)
    batch = RecordBatch(convert_to_v2(data))
    assert batch.timestamp_type == 1


def test_down_conversion_drops_control_and_empty_batches_and_headers() -> None:
    blob = (
        build_batch([(b"a", b"1", [("h", b"x")], 10), (b"b", b"2", (), 11)], base_offset=0)
        + build_control_batch(
            1, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=12, base_offset=2
        )
        + build_batch([], last_offset_delta=1, base_offset=3)
        + build_batch([(b"c", b"3", (), 15)], base_offset=5, codec=Codec.LZ4)
    )
    data = convert_from_v2(iter_batches(blob), 1)
    assert ours(parse_message_set(data)) == [(0, 10, b"a", b"1"), (1, 11, b"b", b"2"), (5, 15, b"c", b"3")]
    assert read_with(AioMemoryRecords, data) == [
        (0, 10, b"a", b"1"),
        (1, 11, b"b", b"2"),
        (5, 15, b"c", b"3"),
    ]


def test_down_conversion_of_a_compressed_batch_is_one_wrapper_with_the_same_codec() -> None:
    batch = RecordBatch(build_batch([(b"k", b"v" * 100, (), 1)] * 5, base_offset=40, codec=Codec.SNAPPY))
    data = convert_from_v2([batch], 1)
    (offset, size) = struct.unpack_from(">qi", data)
    assert len(data) == 12 + size  # one log entry
    assert offset == 44
    assert data[17] & 0x07 == Codec.SNAPPY
    assert [m.offset for m in parse_message_set(data)] == [40, 41, 42, 43, 44]


def test_down_conversion_keeps_gaps_left_by_compaction() -> None:
    records = [RecordInput(b"a", b"1", (), 5, 0), RecordInput(b"b", b"2", (), 6, 3)]
    for codec in (Codec.NONE, Codec.GZIP):
        batch = RecordBatch(build_batch(records, base_offset=10, codec=codec, last_offset_delta=4))
        for magic in (0, 1):
            data = convert_from_v2([batch], magic)
            assert [m.offset for m in parse_message_set(data)] == [10, 13]
            assert [r[0] for r in read_with(KpMemoryRecords, data)] == [10, 13]


def test_down_conversion_of_an_uncompressed_batch_skips_records_before_the_fetch_offset() -> None:
    batch = RecordBatch(build_batch([(b"k", b"v", (), 1)] * 4, base_offset=20))
    assert [m.offset for m in parse_message_set(convert_from_v2([batch], 0, first_offset=22))] == [22, 23]


def test_down_conversion_of_zstd_is_refused() -> None:
    batch = RecordBatch(build_batch([(b"k", b"v")], codec=Codec.ZSTD))
    with pytest.raises(EncodeError):
        convert_from_v2([batch], 1)
    with pytest.raises(EncodeError):
        convert_from_v2([batch], 2)
