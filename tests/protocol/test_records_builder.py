"""Building batches: defaults as Kafka's MemoryRecordsBuilder, compressed layout, empty batches and the
log cleaner's rebuild (Kafka's MemoryRecords.filterTo)."""

from __future__ import annotations

import pytest
from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
from kafka.record.default_records import DefaultRecordBatch as KpBatch

from mockbroker.protocol.records import compression
from mockbroker.protocol.records.batch import (
    HEADER,
    RECORD_BATCH_OVERHEAD,
    RECORDS,
    Codec,
    ControlType,
    Record,
    RecordBatch,
)
from mockbroker.protocol.records.builder import (
    RecordInput,
    build_batch,
    build_control_batch,
    encode_record,
    rebuild_batch,
)


def test_defaults_take_base_timestamp_from_first_record_and_max_from_the_largest() -> None:
    data = build_batch([(b"a", b"1", (), 2_000), (b"b", b"2", (), 5_000), (b"c", b"3", (), 1_000)])
    batch = RecordBatch(data)
    assert batch.base_timestamp == 2_000
    assert batch.max_timestamp == 5_000
    assert [r.timestamp_delta for r in batch.records()] == [0, 3_000, -1_000]
    assert batch.last_offset_delta == 2
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.partition_leader_epoch == -1
    assert batch.attributes == 0


def test_records_without_timestamp_get_the_given_base_timestamp() -> None:
    data = build_batch([(b"a", b"1"), RecordInput(value=b"2", timestamp=9_000)], base_timestamp=7_000)
    records = RecordBatch(data).records()
    assert [r.timestamp for r in records] == [7_000, 9_000]


def test_tuple_forms_and_record_inputs_build_the_same_bytes() -> None:
    as_tuples = build_batch(
        [(b"k", b"v"), (b"k2", None, [("h", b"x")]), (None, b"v3", (), 50)], base_timestamp=50
    )
    as_inputs = build_batch(
        [
            RecordInput(b"k", b"v"),
            RecordInput(b"k2", None, [("h", b"x")]),
            RecordInput(None, b"v3", timestamp=50),
        ],
        base_timestamp=50,
    )
    assert as_tuples == as_inputs


def test_a_record_that_is_not_a_tuple_or_input_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        build_batch([b"just bytes"])  # type: ignore[list-item]


def test_explicit_offset_deltas_and_last_offset_delta_are_kept() -> None:
    data = build_batch(
        [RecordInput(b"a", offset_delta=0), RecordInput(b"b", offset_delta=3)], last_offset_delta=5
    )
    batch = RecordBatch(data)
    assert [r.offset_delta for r in batch.records()] == [0, 3]
    assert batch.last_offset_delta == 5
    assert batch.record_count == 2


def test_empty_batch_needs_last_offset_delta_and_decodes_with_kafka_python() -> None:
    with pytest.raises(ValueError):
        build_batch([])
    data = build_batch(
        [],
        last_offset_delta=9,
        producer_id=5,
        producer_epoch=1,
        base_sequence=20,
        base_offset=1000,
        max_timestamp=77,
    )
    assert len(data) == RECORD_BATCH_OVERHEAD
    batch = RecordBatch(data)
    batch.validate()
    assert batch.record_count == 0
    assert batch.last_sequence == 29
    assert batch.base_timestamp == -1 and batch.max_timestamp == 77
    assert batch.records() == []
    theirs = KpBatch(bytes(data))
    assert theirs.validate_crc()
    assert list(theirs) == []
    assert theirs.last_offset_delta == 9


@pytest.mark.parametrize(
    "codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD], ids=lambda c: c.name.lower()
)
def test_compressed_batch_keeps_the_header_and_count_plain_and_compresses_only_the_records(
    codec: Codec,
) -> None:
    records = [(b"key", b"value" * 100, [("h", b"v")], 1_000 + i) for i in range(20)]
    plain = build_batch(records, base_offset=7)
    packed = build_batch(records, codec=codec, base_offset=7)
    plain_header = HEADER.unpack_from(plain)
    packed_header = HEADER.unpack_from(packed)
    assert packed_header[12] == plain_header[12] == 20  # record count stays in the plain header
    # every header field but length, crc and attributes is the same
    assert [f for i, f in enumerate(packed_header) if i not in (1, 4, 5)] == [
        f for i, f in enumerate(plain_header) if i not in (1, 4, 5)
    ]
    assert packed_header[5] == int(codec)
    assert compression.decompress(codec, memoryview(packed)[RECORDS:]) == bytes(plain[RECORDS:])
    assert len(packed) < len(plain)


def test_encode_record_matches_the_documented_layout() -> None:
    assert bytes(encode_record(1, -1, b"k", None, [("h", None)])) == bytes.fromhex(
        "14"  # length 10 (zigzag 20)
        "00"  # attributes
        "01"  # timestamp delta -1
        "02"  # offset delta 1
        "02 6b"  # key: length 1, "k"
        "01"  # value: null
        "02"  # 1 header
        "02 68"  # header key "h"
        "01"  # header value null
    )


def test_null_header_key_is_rejected() -> None:
    with pytest.raises(ValueError):
        encode_record(0, 0, None, None, [(None, b"x")])  # type: ignore[list-item]


def test_control_batch_decodes_with_aiokafka() -> None:
    data = build_control_batch(
        ControlType.ABORT,
        producer_id=3,
        producer_epoch=4,
        coordinator_epoch=11,
        timestamp_ms=5,
        base_offset=8,
    )
    theirs = AioBatch(bytes(data))
    assert theirs.validate_crc()
    assert theirs.is_control_batch and theirs.is_transactional
    (record,) = list(theirs)
    assert record.key == b"\x00\x00\x00\x00"
    assert record.value == b"\x00\x00\x00\x00\x00\x0b"
    assert record.offset == 8 and record.timestamp == 5


# -- rebuild (log cleaner) ----------------------------------------------------------------------


def source_batch(codec: Codec = Codec.ZSTD, **kwargs: object) -> bytearray:
    records = [
        RecordInput(f"k{i}".encode(), f"v{i}".encode() * 10, [("i", bytes([i]))], 10_000 + i)
        for i in range(6)
    ]
    options: dict[str, object] = {
        "base_offset": 500,
        "codec": codec,
        "producer_id": 31,
        "producer_epoch": 2,
        "base_sequence": 60,
        "is_transactional": True,
        "partition_leader_epoch": 4,
    }
    options.update(kwargs)
    return build_batch(records, **options)  # type: ignore[arg-type]


def test_rebuild_keeps_the_batch_identity_and_only_the_kept_records() -> None:
    batch = RecordBatch(source_batch())
    records = batch.records()
    keep = [records[2], records[4]]
    rebuilt = RecordBatch(rebuild_batch(batch, keep))
    rebuilt.validate()
    assert rebuilt.base_offset == 500
    assert rebuilt.last_offset_delta == 5 and rebuilt.last_offset == 505
    assert (rebuilt.producer_id, rebuilt.producer_epoch) == (31, 2)
    assert rebuilt.base_sequence == 60 and rebuilt.last_sequence == 65
    assert rebuilt.partition_leader_epoch == 4
    assert rebuilt.codec == Codec.ZSTD
    assert rebuilt.is_transactional and not rebuilt.is_control
    assert rebuilt.record_count == 2
    assert rebuilt.base_timestamp == 10_002  # the first kept record's
    assert rebuilt.max_timestamp == 10_004
    assert [
        (r.offset, r.offset_delta, r.timestamp, r.key, r.value, r.headers) for r in rebuilt.records()
    ] == [(r.offset, r.offset_delta, r.timestamp, r.key, r.value, r.headers) for r in keep]
    theirs = KpBatch(bytes(rebuilt.buffer))
    assert theirs.validate_crc()
    assert [r.offset for r in theirs] == [502, 504]


def test_rebuild_with_delete_horizon_sets_the_flag_and_rebases_timestamps() -> None:
    batch = RecordBatch(source_batch(Codec.NONE))
    keep = batch.records()[1:3]
    rebuilt = RecordBatch(rebuild_batch(batch, keep, delete_horizon_ms=99_000))
    assert rebuilt.has_delete_horizon
    assert rebuilt.base_timestamp == 99_000
    assert [r.timestamp for r in rebuilt.records()] == [10_001, 10_002]
    # a second pass without a new horizon keeps the existing one (Kafka keeps batch.deleteHorizonMs())
    again = RecordBatch(rebuild_batch(rebuilt, rebuilt.records()[:1]))
    assert again.delete_horizon_ms == 99_000
    assert [r.timestamp for r in again.records()] == [10_001]


def test_rebuild_of_a_log_append_time_batch_keeps_the_append_time() -> None:
    data = source_batch(Codec.GZIP)
    RecordBatch(data).set_log_append_time(55_555)
    batch = RecordBatch(data)
    rebuilt = RecordBatch(rebuild_batch(batch, batch.records()[3:]))
    assert rebuilt.timestamp_type == 1
    assert rebuilt.max_timestamp == 55_555
    assert [r.timestamp for r in rebuilt.records()] == [55_555] * 3


def test_rebuild_with_nothing_kept_is_kafkas_empty_batch() -> None:
    batch = RecordBatch(source_batch(Codec.SNAPPY))
    empty = RecordBatch(rebuild_batch(batch, []))
    empty.validate()
    assert empty.size == RECORD_BATCH_OVERHEAD
    assert empty.record_count == 0
    assert empty.codec == Codec.NONE  # DefaultRecordBatch.writeEmptyHeader writes no codec
    assert empty.base_offset == 500 and empty.last_offset_delta == 5
    assert (empty.producer_id, empty.producer_epoch, empty.base_sequence) == (31, 2, 60)
    assert empty.last_sequence == 65
    assert empty.base_timestamp == -1
    assert empty.max_timestamp == batch.max_timestamp
    assert empty.is_transactional and not empty.has_delete_horizon
    assert empty.partition_leader_epoch == 4


def test_rebuild_of_a_control_batch_keeps_the_control_flag() -> None:
    batch = RecordBatch(
        build_control_batch(
            ControlType.COMMIT, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=3
        )
    )
    rebuilt = RecordBatch(rebuild_batch(batch, batch.records()))
    assert rebuilt.is_control and rebuilt.is_transactional
    assert bytes(rebuilt.buffer) == bytes(batch.buffer)


def test_rebuild_accepts_records_made_by_hand() -> None:
    batch = RecordBatch(source_batch(Codec.NONE))
    keep = [Record(offset=503, timestamp=1, key=b"x", value=None)]
    (record,) = RecordBatch(rebuild_batch(batch, keep)).records()
    assert (record.offset, record.offset_delta, record.timestamp, record.key, record.value) == (
        503,
        3,
        1,
        b"x",
        None,
    )
