"""v2 record batches as byte views: decoding what real clients build, and the other way round.

Independent implementations are the judge: kafka-python's pure-Python DefaultRecordBatch(Builder) and
aiokafka's C-extension DefaultRecordBatch(Builder), whose CRC-32C, varints and codecs (cramjam) are
not ours.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder
from kafka.record.default_records import DefaultRecordBatch as KpBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.records import compression
from mockbroker.protocol.records.batch import (
    ATTRIBUTES,
    BASE_OFFSET,
    BASE_SEQUENCE,
    BASE_TIMESTAMP,
    BATCH_LENGTH,
    CRC,
    HEADER,
    LAST_OFFSET_DELTA,
    LOG_OVERHEAD,
    MAGIC,
    MAX_TIMESTAMP,
    PARTITION_LEADER_EPOCH,
    PRODUCER_EPOCH,
    PRODUCER_ID,
    RECORD_BATCH_OVERHEAD,
    RECORDS,
    RECORDS_COUNT,
    Codec,
    ControlType,
    CorruptRecordError,
    InvalidRecordError,
    RecordBatch,
    iter_batches,
    magic_of,
)
from mockbroker.protocol.records.builder import RecordInput, build_batch, build_control_batch

ALL_CODECS = list(Codec)

# Compressible values so the clients' builders keep the codec (they fall back to none otherwise).
SAMPLE: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = [
    # key, value, headers, timestamp
    (b"key-0", b"value " * 40, [("trace", b"abc"), ("empty", b""), ("null", None)], 1_700_000_000_000),
    (None, b"value " * 40, [], 1_700_000_000_005),
    (b"key-2", None, [("h\u00e9", b"\x00\xff")], 1_700_000_000_003),  # out of order: max is record 1
    (b"", b"", [], 1_700_000_000_001),
    (b"k" * 300, b"v" * 5000, [("x" * 200, b"y" * 300)], 1_700_000_000_002),  # multi-byte varints
]

BUILDERS: dict[str, Callable[..., Any]] = {"kafka-python": KpBuilder, "aiokafka": AioBuilder}


def client_batch(library: str, codec: Codec, *, transactional: bool = False) -> bytes:
    builder = BUILDERS[library](
        magic=2,
        compression_type=int(codec),
        is_transactional=transactional,
        producer_id=4242,
        producer_epoch=7,
        base_sequence=1000,
        batch_size=1 << 20,
    )
    for offset, (key, value, headers, ts) in enumerate(SAMPLE):
        assert builder.append(offset, timestamp=ts, key=key, value=value, headers=headers) is not None
    return bytes(builder.build())


@pytest.mark.parametrize("library", sorted(BUILDERS))
@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name.lower())
def test_batch_from_client_library_decodes_every_field_for_each_codec(library: str, codec: Codec) -> None:
    data = client_batch(library, codec, transactional=True)
    batch = RecordBatch(data)
    batch.validate(producer_batch=True)

    assert batch.codec == codec
    assert batch.size == len(data) == batch.batch_length + LOG_OVERHEAD
    assert bytes(batch.buffer) == data
    assert batch.magic == 2
    assert batch.base_offset == 0
    assert batch.partition_leader_epoch in (0, -1)  # kafka-python writes 0, aiokafka -1
    assert batch.is_transactional
    assert not batch.is_control
    assert not batch.has_delete_horizon
    assert batch.timestamp_type == 0
    assert batch.producer_id == 4242
    assert batch.producer_epoch == 7
    assert batch.base_sequence == 1000
    assert batch.last_offset_delta == 4
    assert batch.last_offset == 4
    assert batch.last_sequence == 1004
    assert batch.record_count == 5
    assert batch.base_timestamp == 1_700_000_000_000
    assert batch.max_timestamp == 1_700_000_000_005

    records = batch.records()
    assert [(r.key, r.value, r.headers, r.timestamp) for r in records] == [
        (key, value, list(headers), ts) for key, value, headers, ts in SAMPLE
    ]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4]
    assert [r.offset_delta for r in records] == [0, 1, 2, 3, 4]
    assert [r.timestamp_delta for r in records] == [0, 5, 3, 1, 2]
    assert all(r.attributes == 0 for r in records)


def test_non_transactional_client_batch_has_the_transactional_bit_clear() -> None:
    batch = RecordBatch(client_batch("kafka-python", Codec.NONE, transactional=False))
    assert not batch.is_transactional
    assert batch.attributes == 0


def our_batch(codec: Codec, **kwargs: Any) -> bytearray:
    options: dict[str, Any] = {
        "base_offset": 100,
        "codec": codec,
        "producer_id": 99,
        "producer_epoch": 3,
        "base_sequence": 17,
        "is_transactional": True,
        "partition_leader_epoch": 12,
    }
    options.update(kwargs)
    return build_batch(SAMPLE, **options)


def expected_fields(records: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records]


SAMPLE_EXPECTED = [
    (100 + i, ts, key, value, [tuple(h) for h in headers])
    for i, (key, value, headers, ts) in enumerate(SAMPLE)
]


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name.lower())
def test_our_batch_decodes_with_kafka_python_for_each_codec(codec: Codec) -> None:
    data = bytes(our_batch(codec))
    theirs = KpBatch(data)
    assert theirs.validate_crc()
    assert theirs.compression_type == codec
    assert theirs.base_offset == 100
    assert theirs.leader_epoch == 12
    assert theirs.is_transactional and not theirs.is_control_batch
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (99, 3, 17)
    assert theirs.last_offset_delta == 4
    assert theirs.records_count == 5
    assert theirs.first_timestamp == 1_700_000_000_000
    assert theirs.max_timestamp == 1_700_000_000_005
    assert expected_fields(list(theirs)) == SAMPLE_EXPECTED


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name.lower())
def test_our_batch_decodes_with_aiokafka_for_each_codec(codec: Codec) -> None:
    data = bytes(our_batch(codec))
    theirs = AioBatch(data)
    assert theirs.validate_crc()
    assert theirs.compression_type == codec
    assert theirs.base_offset == 100
    assert theirs.is_transactional and not theirs.is_control_batch
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (99, 3, 17)
    assert theirs.last_offset_delta == 4
    assert theirs.first_timestamp == 1_700_000_000_000
    assert theirs.max_timestamp == 1_700_000_000_005
    assert expected_fields(list(theirs)) == SAMPLE_EXPECTED


def test_uncompressed_batch_is_byte_for_byte_what_kafka_python_builds() -> None:
    theirs = client_batch("kafka-python", Codec.NONE)
    ours = build_batch(
        SAMPLE, producer_id=4242, producer_epoch=7, base_sequence=1000, partition_leader_epoch=0
    )
    assert bytes(ours) == theirs


def test_several_batches_concatenated_split_the_same_with_kafka_python() -> None:
    blob = (
        bytes(our_batch(Codec.NONE))
        + bytes(our_batch(Codec.GZIP, base_offset=105))
        + client_batch("aiokafka", Codec.LZ4)
    )
    ours = list(iter_batches(blob))
    assert [b.base_offset for b in ours] == [100, 105, 0]
    assert [b.codec for b in ours] == [Codec.NONE, Codec.GZIP, Codec.LZ4]
    theirs = KpMemoryRecords(blob)
    sizes = []
    while theirs.has_next():
        sizes.append(theirs.next_batch().size_in_bytes)
    assert sizes == [b.size for b in ours]
    for batch in ours:
        batch.validate()


def test_log_append_time_batch_gives_every_record_the_max_timestamp_as_kafka_python_does() -> None:
    data = our_batch(Codec.NONE)
    RecordBatch(data).set_log_append_time(1_800_000_000_000)
    ours = RecordBatch(data).records()
    theirs = list(KpBatch(bytes(data)))
    assert [r.timestamp for r in ours] == [1_800_000_000_000] * 5
    assert [r.timestamp for r in theirs] == [1_800_000_000_000] * 5
    assert all(r.timestamp_type == 1 for r in theirs)


# -- control batches ----------------------------------------------------------------------------


def expected_control_batch(control_type: int) -> bytes:
    """A marker batch written out field by field (Kafka's MemoryRecords.withEndTransactionMarker)."""
    record = (
        bytes.fromhex(
            "20"  # record length varint: 16 bytes follow (zigzag 32)
            "00"  # record attributes
            "00"  # timestamp delta varlong 0
            "00"  # offset delta varint 0
            "08"  # key length varint 4 (zigzag 8)
            "0000"  # key: int16 version 0
        )
        + struct.pack(">h", control_type)  # key: int16 type (0 abort, 1 commit)
        + bytes.fromhex(
            "0c"  # value length varint 6 (zigzag 12)
            "0000"  # value: int16 version 0
            "00000005"  # value: int32 coordinator epoch 5
            "00"  # header count 0
        )
    )
    after_crc = (
        struct.pack(">h", 0x30)  # attributes: transactional (0x10) + control (0x20), no codec, CreateTime
        + struct.pack(">i", 0)  # last offset delta
        + struct.pack(">q", 1_690_000_000_123)  # base timestamp
        + struct.pack(">q", 1_690_000_000_123)  # max timestamp
        + struct.pack(">q", 77)  # producer id
        + struct.pack(">h", 2)  # producer epoch
        + struct.pack(">i", -1)  # base sequence: none for markers
        + struct.pack(">i", 1)  # record count
        + record
    )
    crc = compression_free_crc32c(after_crc)
    return (
        struct.pack(">q", 40)  # base offset
        + struct.pack(">i", 4 + 1 + 4 + len(after_crc))  # batch length: epoch + magic + crc + rest
        + struct.pack(">i", 9)  # partition leader epoch
        + struct.pack(">b", 2)  # magic
        + struct.pack(">I", crc)
        + after_crc
    )


def compression_free_crc32c(data: bytes) -> int:
    """CRC-32C written out bit by bit (polynomial 0x82F63B78, reflected), independent of crc32c."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.mark.parametrize("control_type", [ControlType.COMMIT, ControlType.ABORT], ids=["commit", "abort"])
def test_control_batch_is_byte_for_byte_kafkas_marker(control_type: ControlType) -> None:
    built = build_control_batch(
        control_type,
        producer_id=77,
        producer_epoch=2,
        coordinator_epoch=5,
        timestamp_ms=1_690_000_000_123,
        base_offset=40,
        partition_leader_epoch=9,
    )
    expected = expected_control_batch(control_type)
    assert len(expected) == RECORD_BATCH_OVERHEAD + 17
    assert bytes(built) == expected

    batch = RecordBatch(built)
    batch.validate()
    assert batch.is_control and batch.is_transactional
    marker = batch.control_record()
    assert marker.type is control_type
    assert marker.version == 0
    assert marker.coordinator_epoch == 5

    theirs = list(KpBatch(bytes(built)))
    assert len(theirs) == 1
    assert (theirs[0].version, theirs[0].type) == (0, int(control_type))


def test_control_record_of_a_data_batch_raises() -> None:
    with pytest.raises(DecodeError):
        RecordBatch(our_batch(Codec.NONE)).control_record()


def test_control_record_with_short_key_or_value_raises() -> None:
    short_key = build_batch(
        [(b"\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05")], is_control=True, is_transactional=True
    )
    with pytest.raises(DecodeError, match="key"):
        RecordBatch(short_key).control_record()
    short_value = build_batch(
        [(b"\x00\x00\x00\x01", b"\x00\x00\x00")], is_control=True, is_transactional=True
    )
    with pytest.raises(DecodeError, match="value"):
        RecordBatch(short_value).control_record()


def test_control_record_of_unknown_type_is_returned_as_int() -> None:
    data = build_batch([(b"\x00\x00\x00\x07", b"")], is_control=True)
    marker = RecordBatch(data).control_record()
    assert marker.type == 7 and not isinstance(marker.type, ControlType)
    assert marker.coordinator_epoch == -1


# -- header layout ------------------------------------------------------------------------------


def test_header_offsets_match_the_struct_layout() -> None:
    data = our_batch(Codec.NONE)
    fields = HEADER.unpack_from(data)
    offsets = [
        BASE_OFFSET,
        BATCH_LENGTH,
        PARTITION_LEADER_EPOCH,
        MAGIC,
        CRC,
        ATTRIBUTES,
        LAST_OFFSET_DELTA,
        BASE_TIMESTAMP,
        MAX_TIMESTAMP,
        PRODUCER_ID,
        PRODUCER_EPOCH,
        BASE_SEQUENCE,
        RECORDS_COUNT,
    ]
    formats = ">q >i >i >b >I >h >i >q >q >q >h >i >i".split()
    for field, offset, fmt in zip(fields, offsets, formats, strict=True):
        assert struct.unpack_from(fmt, data, offset)[0] == field
    assert RECORDS == RECORD_BATCH_OVERHEAD == HEADER.size == 61
    assert RecordBatch(data).header() == fields


def test_last_sequence_wraps_past_int32_max_to_zero() -> None:
    data = build_batch([(b"k", b"v")] * 3, producer_id=1, producer_epoch=0, base_sequence=2**31 - 2)
    batch = RecordBatch(data)
    assert batch.last_offset_delta == 2
    assert batch.last_sequence == 0
    assert RecordBatch(build_batch([(b"k", b"v")] * 3)).last_sequence == -1


def test_delete_horizon_flag_makes_base_timestamp_the_horizon() -> None:
    data = build_batch([(b"k", None, (), 5_000)], delete_horizon_ms=9_000)
    batch = RecordBatch(data)
    assert batch.has_delete_horizon
    assert batch.attributes & 0x40
    assert batch.delete_horizon_ms == batch.base_timestamp == 9_000
    assert batch.records()[0].timestamp == 5_000
    assert RecordBatch(our_batch(Codec.NONE)).delete_horizon_ms is None


def test_magic_of_reads_byte_16_of_any_format() -> None:
    assert magic_of(our_batch(Codec.NONE)) == 2
    blob = b"\x00" * 10 + bytes(our_batch(Codec.NONE))
    assert magic_of(blob, 10) == 2
    legacy = bytes(8) + struct.pack(">i", 14) + bytes(4) + b"\x01"
    assert magic_of(legacy) == 1
    with pytest.raises(DecodeError):
        magic_of(bytes(16))


# -- in-place edits -----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.ZSTD], ids=["none", "zstd"])
def test_set_base_offset_and_leader_epoch_leave_the_crc_valid(codec: Codec) -> None:
    data = bytearray(b"prefix") + our_batch(codec)
    batch = RecordBatch(data, 6)
    crc = batch.crc
    batch.set_base_offset(2**40 + 3)
    batch.set_partition_leader_epoch(31)
    assert batch.crc == crc
    batch.validate()
    assert data[:6] == b"prefix"
    assert RecordBatch(data, 6).base_offset == 2**40 + 3
    assert [r.offset for r in batch.records()] == [2**40 + 3 + i for i in range(5)]
    theirs = KpBatch(bytes(data[6:]))
    assert theirs.validate_crc() and theirs.base_offset == 2**40 + 3 and theirs.leader_epoch == 31


def test_set_log_append_time_sets_the_type_bit_and_max_timestamp_and_recomputes_the_crc() -> None:
    data = our_batch(Codec.GZIP)
    batch = RecordBatch(data)
    old_crc = batch.crc
    batch.set_log_append_time(1_800_000_000_000)
    assert batch.timestamp_type == 1
    assert batch.max_timestamp == 1_800_000_000_000
    assert batch.codec == Codec.GZIP and batch.is_transactional  # other attribute bits kept
    assert batch.crc != old_crc
    batch.validate()
    assert AioBatch(bytes(data)).validate_crc()


def test_edits_on_a_read_only_buffer_raise_type_error() -> None:
    batch = RecordBatch(bytes(our_batch(Codec.NONE)))
    with pytest.raises(TypeError):
        batch.set_base_offset(1)


def test_validate_catches_a_flipped_byte_anywhere_in_attributes_to_end() -> None:
    original = our_batch(Codec.SNAPPY)
    RecordBatch(original).validate()
    for position in range(ATTRIBUTES, len(original)):
        data = bytearray(original)
        data[position] ^= 0x01
        with pytest.raises(CorruptRecordError):
            RecordBatch(data).validate()


def test_validate_catches_a_flipped_crc_byte() -> None:
    for position in range(CRC, CRC + 4):
        data = our_batch(Codec.NONE)
        data[position] ^= 0x80
        with pytest.raises(CorruptRecordError, match="crc"):
            RecordBatch(data).validate()


# -- validation rules ---------------------------------------------------------------------------


def with_header(data: bytearray, fmt: str, offset: int, value: int) -> RecordBatch:
    """Patch a header field and fix the CRC, so only the field rule can fail."""
    struct.pack_into(fmt, data, offset, value)
    batch = RecordBatch(data)
    batch.update_crc()
    return batch


def test_validate_rejects_negative_record_count() -> None:
    batch = with_header(our_batch(Codec.NONE), ">i", RECORDS_COUNT, -1)
    with pytest.raises(InvalidRecordError, match="negative record count"):
        batch.validate()


def test_validate_rejects_negative_last_offset_delta() -> None:
    batch = with_header(our_batch(Codec.NONE), ">i", LAST_OFFSET_DELTA, -1)
    with pytest.raises(InvalidRecordError, match="negative last offset delta"):
        batch.validate()


def test_validate_rejects_more_records_than_offsets() -> None:
    batch = with_header(our_batch(Codec.NONE), ">i", LAST_OFFSET_DELTA, 3)
    with pytest.raises(InvalidRecordError, match="offset range"):
        batch.validate()


def test_validate_rejects_a_count_that_cannot_fit_the_uncompressed_records() -> None:
    batch = with_header(build_batch([(b"k", b"v")], last_offset_delta=100), ">i", RECORDS_COUNT, 50)
    with pytest.raises(CorruptRecordError, match="declares 50 records"):
        batch.validate()


def test_validate_rejects_unknown_codec() -> None:
    batch = with_header(our_batch(Codec.NONE), ">h", ATTRIBUTES, 0x15)
    with pytest.raises(CorruptRecordError, match="codec 5"):
        batch.validate()
    with pytest.raises(CorruptRecordError):
        _ = batch.codec


def test_validate_for_producer_requires_count_to_match_offset_range() -> None:
    gap = build_batch([(b"a", b"1"), RecordInput(b"b", b"2", offset_delta=2)])
    RecordBatch(gap).validate()  # fine in the log (compaction leaves such gaps)
    with pytest.raises(InvalidRecordError, match="inconsistent"):
        RecordBatch(gap).validate(producer_batch=True)
    empty = build_batch([], last_offset_delta=4)
    RecordBatch(empty).validate()
    with pytest.raises(InvalidRecordError, match="no records"):
        RecordBatch(empty).validate(producer_batch=True)


def test_errors_carry_kafkas_error_codes() -> None:
    assert CorruptRecordError.error_code == 2  # CORRUPT_MESSAGE
    assert InvalidRecordError.error_code == 87  # INVALID_RECORD


# -- delimiting ---------------------------------------------------------------------------------


def test_constructor_rejects_short_buffers_overlong_lengths_and_other_magics() -> None:
    data = our_batch(Codec.NONE)
    with pytest.raises(DecodeError, match="needs 61"):
        RecordBatch(data[:60])
    with pytest.raises(DecodeError, match="runs past"):
        RecordBatch(data[:-1])
    tiny = bytearray(data)
    struct.pack_into(">i", tiny, BATCH_LENGTH, 48)
    with pytest.raises(CorruptRecordError, match="smaller than the minimum"):
        RecordBatch(tiny)
    for magic in (0, 1):
        other = bytearray(data)
        other[MAGIC] = magic
        with pytest.raises(DecodeError, match="legacy"):
            RecordBatch(other)
    other = bytearray(data)
    other[MAGIC] = 3
    with pytest.raises(CorruptRecordError, match="magic 3"):
        RecordBatch(other)


def test_batch_view_does_not_copy_the_buffer() -> None:
    data = bytearray(b"xx") + our_batch(Codec.NONE) + bytearray(b"tail")
    batch = RecordBatch(data, 2)
    assert batch.size == len(data) - 6
    data[2 + 7] = 0x55  # low byte of the base offset
    assert batch.base_offset == 0x55  # was 100 = 0x64: the view sees the edit


def test_iter_batches_raises_on_a_truncated_trailing_batch_unless_partial_allowed() -> None:
    one = bytes(our_batch(Codec.NONE))
    blob = one + one[:40]
    with pytest.raises(DecodeError):
        list(iter_batches(blob))
    assert [b.size for b in iter_batches(blob, allow_partial=True)] == [len(one)]
    blob = one + one[:-1]
    with pytest.raises(DecodeError):
        list(iter_batches(blob))
    assert len(list(iter_batches(blob, allow_partial=True))) == 1
    assert list(iter_batches(b"")) == []


def test_iter_batches_rejects_a_length_below_the_header_size_even_when_partial() -> None:
    bad = bytearray(our_batch(Codec.NONE))
    struct.pack_into(">i", bad, BATCH_LENGTH, 10)
    with pytest.raises(CorruptRecordError):
        list(iter_batches(bad, allow_partial=True))


def test_iter_batches_does_not_check_the_crc() -> None:
    data = our_batch(Codec.NONE)
    data[-1] ^= 0xFF
    (batch,) = iter_batches(data)
    with pytest.raises(CorruptRecordError):
        batch.validate()


# -- malformed records --------------------------------------------------------------------------


def raw_batch(records_section: bytes, count: int, codec: Codec = Codec.NONE) -> bytearray:
    """A batch around an arbitrary records section (CRC right), to reach the record decoder."""
    section = compression.compress(codec, records_section)
    out = bytearray(RECORDS + len(section))
    HEADER.pack_into(
        out, 0, 0, len(out) - 12, -1, 2, 0, int(codec), max(count - 1, 0), 0, 0, -1, -1, -1, count
    )
    out[RECORDS:] = section
    RecordBatch(out).update_crc()
    return out


ONE_RECORD = bytes.fromhex("10 00 00 00 02 6b 02 76 00")  # length 8, key b"k", value b"v", no headers


def test_raw_batch_helper_builds_what_the_builder_builds() -> None:
    assert RecordBatch(raw_batch(ONE_RECORD, 1)).records()[0].value == b"v"


@pytest.mark.parametrize(
    ("section", "count", "reason"),
    [
        (ONE_RECORD, 2, "declares 2 records but holds only 1"),
        (ONE_RECORD + ONE_RECORD, 1, "bytes left after"),
        (b"\x12" + ONE_RECORD[1:], 1, "declares 9 bytes"),  # length says 9, 8 remain
        (b"\x0e" + ONE_RECORD[1:-1], 1, "header count runs past"),  # length 7: header count cut off
        (bytes.fromhex("12 00 00 00 02 6b 02 76 00 00"), 1, "invalid record size"),  # 1 byte too many
        (bytes.fromhex("10 00 00 00 20 6b 02 76 00"), 1, "key of 16 bytes"),
        (bytes.fromhex("10 00 00 00 02 6b 20 76 00"), 1, "value of 16 bytes"),
        (bytes.fromhex("10 00 00 00 02 6b 02 76 01"), 1, "header count -1"),
        (bytes.fromhex("12 00 00 00 02 6b 02 76 02 01"), 1, "header key length -1"),
        (bytes.fromhex("1a 00 ff ff ff ff ff ff ff ff ff ff 7f 00"), 1, "timestamp delta varint is too long"),
        (bytes.fromhex("0e 00 00 ff ff ff ff 7f"), 1, "offset delta varint is out of range"),
        (b"\x80", 1, "length runs past"),
        (b"", 1, "holds only 0"),
    ],
)
def test_malformed_records_raise_decode_error_naming_the_problem(
    section: bytes, count: int, reason: str
) -> None:
    with pytest.raises(DecodeError, match=reason):
        RecordBatch(raw_batch(section, count)).records()


def test_negative_key_value_and_header_value_lengths_are_null_as_in_kafka() -> None:
    # key length -2, value length -1, one header "h" with value length -3
    section = bytes.fromhex("12 00 00 00 03 01 02 02 68 05")
    (record,) = RecordBatch(raw_batch(section, 1)).records()
    assert record.key is None and record.value is None
    assert record.headers == [("h", None)]


def test_header_key_that_is_not_utf8_decodes_with_replacement_as_java_does() -> None:
    section = bytes.fromhex("12 00 00 00 01 01 02 02 ff 01")
    (record,) = RecordBatch(raw_batch(section, 1)).records()
    assert record.headers == [("\ufffd", None)]


def test_compressed_records_section_that_is_garbage_raises_decode_error() -> None:
    for codec in (Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD):
        data = raw_batch(ONE_RECORD, 1)
        struct.pack_into(">h", data, ATTRIBUTES, int(codec))
        with pytest.raises(DecodeError):
            RecordBatch(data).records()


def test_records_of_a_compressed_batch_respect_max_size() -> None:
    data = build_batch([(None, b"\x00" * 100_000)], codec=Codec.ZSTD)
    with pytest.raises(DecodeError, match="limit"):
        RecordBatch(data).records(max_size=10_000)
    assert len(RecordBatch(data).records()[0].value or b"") == 100_000
