"""Each file of the data dir against Kafka's layout (the seed document on Kafka's storage and Kafka's
source for the formats it does not spell out), with hand-checked bytes."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

import crc32c
import pytest
from kafka.record.memory_records import MemoryRecords

from mockbroker.protocol.records.batch import ControlType
from mockbroker.storage import checkpoints, layout, producer_snapshot, txn_index
from mockbroker.storage.indexes import SegmentIndexer, decode_offset_index, decode_time_index
from mockbroker.storage.producer_snapshot import SnapshotEntry
from tests.storage.helpers import T0, end_txn, open_broker, part, produce


def test_segment_files_are_named_by_base_offset_on_20_digits() -> None:
    assert layout.file_name(0, ".log") == "00000000000000000000.log"
    assert layout.file_name(42, ".index") == "00000000000000000042.index"
    assert layout.file_name(2**63 - 1, ".timeindex") == "09223372036854775807.timeindex"
    assert layout.offset_of("00000000000000000042.snapshot") == 42
    assert layout.offset_of("leader-epoch-checkpoint") is None


def test_partition_directories_are_topic_dash_partition() -> None:
    assert layout.partition_dir_name("my-topic", 3) == "my-topic-3"
    assert layout.parse_partition_dir("my-topic-3") == ("my-topic", 3)
    assert layout.parse_partition_dir("t-0.0123abcd-delete") is None


def test_offset_checkpoint_is_version_count_then_topic_partition_offset_lines() -> None:
    data = checkpoints.encode_offsets({("t", 0): 5, ("a", 1): 7})
    assert data == b"0\n2\na 1 7\nt 0 5\n"
    assert checkpoints.decode_offsets(data.decode()) == {("a", 1): 7, ("t", 0): 5}
    assert checkpoints.encode_offsets({}) == b"0\n0\n"
    with pytest.raises(ValueError):
        checkpoints.decode_offsets("0\n2\na 1 7\n")  # a count that does not match


def test_leader_epoch_checkpoint_is_version_count_then_epoch_start_offset_lines() -> None:
    assert checkpoints.encode_epochs([(0, 0), (3, 42)]) == b"0\n2\n0 0\n3 42\n"
    assert checkpoints.decode_epochs("0\n2\n0 0\n3 42\n") == [(0, 0), (3, 42)]


def test_partition_metadata_holds_the_topic_id_as_kafka_prints_it() -> None:
    topic_id = uuid.UUID(int=1)
    assert layout.encode_partition_metadata(topic_id) == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n"
    assert layout.decode_partition_metadata("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n") == topic_id
    # Kafka's Uuid.toString: URL-safe base64, no padding (- and _ instead of + and /)
    assert layout.kafka_uuid(uuid.UUID("fbffbfff-0000-0000-0000-000000000000")) == "-_-__wAAAAAAAAAAAAAAAA"


def test_meta_properties_has_version_1_and_the_ids() -> None:
    props = layout.decode_properties(layout.encode_meta_properties("abc", 7, "dirid").decode())
    assert props == {"cluster.id": "abc", "directory.id": "dirid", "node.id": "7", "version": "1"}


def test_offset_index_entries_are_relative_offset_and_position_every_interval_bytes() -> None:
    ix = SegmentIndexer(base_offset=100, interval=150)
    out = [ix.add(last_offset=100 + 2 * i + 1, max_timestamp=T0 + i, size=100) for i in range(5)]
    # LogSegment.append: an entry when more than index.interval.bytes were appended since the last one,
    # for the batch being appended (its last offset, the position it starts at)
    assert [o[0] for o in out] == [b"", b"", b"\x00\x00\x00\x05\x00\x00\x00\xc8", b"",
                                   b"\x00\x00\x00\x09\x00\x00\x01\x90"]
    assert decode_offset_index(b"".join(o[0] for o in out)) == [(5, 200), (9, 400)]
    # each with a time index entry: the largest timestamp so far (int64) and its relative offset (int32)
    assert out[2][1] == struct.pack(">qi", T0 + 2, 5) and out[4][1] == struct.pack(">qi", T0 + 4, 9)
    assert out[2][1][:8] == (T0 + 2).to_bytes(8, "big") and out[2][1][8:] == b"\x00\x00\x00\x05"
    # at roll, one more time entry for the largest timestamp (only if it is larger than the last entry)
    assert ix.time_entry() == b""
    ix.add(last_offset=111, max_timestamp=T0 + 99, size=10)
    assert decode_time_index(ix.time_entry()) == [(T0 + 99, 11)]


def test_producer_snapshot_is_kafkas_version_1_layout() -> None:
    entry = SnapshotEntry(producer_id=1000, epoch=2, last_sequence=9, last_offset=41, offset_delta=4,
                          timestamp=T0, coordinator_epoch=-1, current_txn_first_offset=-1)
    data = producer_snapshot.encode([entry])
    assert data[:2] == b"\x00\x01"  # version 1
    assert struct.unpack(">I", data[2:6])[0] == crc32c.crc32c(data[6:])  # CRC-32C of what follows
    assert data[6:10] == b"\x00\x00\x00\x01"  # one entry
    assert data[10:] == (struct.pack(">q", 1000) + struct.pack(">h", 2) + struct.pack(">i", 9)
                         + struct.pack(">q", 41) + struct.pack(">i", 4) + struct.pack(">q", T0)
                         + struct.pack(">i", -1) + struct.pack(">q", -1))
    assert len(data) == 2 + 4 + 4 + 46
    assert producer_snapshot.decode(data) == [entry]
    broken = bytearray(data)
    broken[-1] ^= 1
    with pytest.raises(producer_snapshot.CorruptSnapshotError):
        producer_snapshot.decode(bytes(broken))


def test_txn_index_entries_are_kafkas_34_byte_aborted_txn() -> None:
    entry = txn_index.TxnIndexEntry(producer_id=1000, first_offset=3, last_offset=7, last_stable_offset=8)
    data = entry.encode()
    assert data == (b"\x00\x00" + (1000).to_bytes(8, "big") + (3).to_bytes(8, "big") + (7).to_bytes(8, "big")
                    + (8).to_bytes(8, "big"))
    assert len(data) == 34
    assert txn_index.decode(data + data[:10]) == [entry]  # a torn last entry is left out


def test_an_abort_marker_adds_its_transaction_to_the_segments_txnindex(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("t")
    produce(broker, "t", b"plain")
    produce(broker, "t", b"open", pid=1001, epoch=0, seq=0, txn=True)  # offset 1, still open after
    produce(broker, "t", b"a1", pid=1000, epoch=0, seq=0, txn=True)  # offset 2
    produce(broker, "t", b"a2", pid=1000, epoch=0, seq=1, txn=True)  # offset 3
    end_txn(broker, "t", ControlType.ABORT, 1000, 0)  # offset 4
    end_txn(broker, "t", ControlType.COMMIT, 1001, 0)  # offset 5: commits are not indexed
    data = (tmp_path / "t-0" / "00000000000000000000.txnindex").read_bytes()
    # the last stable offset after the abort: the other open transaction's first offset
    assert txn_index.decode(data) == [txn_index.TxnIndexEntry(1000, 2, 4, 1)]


def test_a_new_data_dir_has_kafkas_files(tmp_path: Path) -> None:
    broker = open_broker(tmp_path, cluster_id="clusterid123")
    topic = broker.create_topic("orders", 2)
    for i in range(3):
        produce(broker, "orders", b"v%d" % i)
    broker.storage.close()  # type: ignore[union-attr]
    root = {p.name for p in tmp_path.iterdir()}
    assert {"meta.properties", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
            "replication-offset-checkpoint", "cleaner-offset-checkpoint", "orders-0", "orders-1"} <= root
    meta = layout.decode_properties((tmp_path / "meta.properties").read_text())
    assert meta["cluster.id"] == "clusterid123" and meta["node.id"] == "1" and meta["version"] == "1"
    assert len(layout.parse_kafka_uuid(meta["directory.id"]).bytes) == 16
    p0 = tmp_path / "orders-0"
    assert layout.decode_partition_metadata((p0 / "partition.metadata").read_text()) == topic.topic_id
    assert {"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
            "00000000000000000003.snapshot", "leader-epoch-checkpoint"} <= {p.name for p in p0.iterdir()}
    assert (p0 / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
    assert (tmp_path / "replication-offset-checkpoint").read_text() == "0\n2\norders 0 3\norders 1 0\n"
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n2\norders 0 3\norders 1 0\n"


def test_the_log_file_holds_the_stored_batches_byte_for_byte(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("t")
    produce(broker, "t", b"a", b"b")
    produce(broker, "t", b"c", pid=1000, epoch=0, seq=0)
    stored = b"".join(bytes(b.data) for b in part(broker, "t").log.batches)
    assert (tmp_path / "t-0" / "00000000000000000000.log").read_bytes() == stored  # before any stop


def test_kafka_pythons_batch_reader_reads_the_log_files(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("t", config={"segment.bytes": "300"})
    for i in range(10):
        produce(broker, "t", b"value-%d" % i, key=b"key-%d" % i, pid=1000, epoch=0, seq=i)
    broker.storage.close()  # type: ignore[union-attr]
    segments = sorted((tmp_path / "t-0").glob("*.log"))
    assert len(segments) > 1
    seen = []
    for seg in segments:
        records = MemoryRecords(seg.read_bytes())
        while records.has_next():
            batch = records.next_batch()
            assert batch.validate_crc()
            assert batch.producer_id == 1000
            for rec in batch:
                seen.append((rec.offset, rec.key, rec.value))
        assert int(seg.name.split(".")[0]) == min(o for o, _, _ in seen if o >= int(seg.name.split(".")[0]))
    assert seen == [(i, b"key-%d" % i, b"value-%d" % i) for i in range(10)]
