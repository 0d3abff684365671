"""MockBroker's inspection API (broker.records, batches, offsets, producers, segments): records and batches
as a test wants to read them, and what a partition's log holds, read from the cluster on the broker's loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.protocol.records.batch import Codec, ControlType, Record, RecordBatch
from mockbroker.state.log.segments import describe_segments
from mockbroker.state.log.stored_batch import StoredBatch

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster, Partition


@dataclass(frozen=True)
class RecordInfo:
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp_type: int = 0  # 0 CreateTime, 1 LogAppendTime
    producer_id: int = -1
    producer_epoch: int = -1
    sequence: int = -1  # this record's sequence (base sequence + offset delta), -1 if none
    is_transactional: bool = False


@dataclass(frozen=True)
class BatchInfo:
    base_offset: int
    last_offset: int
    magic: int
    codec: Codec
    record_count: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    is_transactional: bool
    is_control: bool
    control_type: ControlType | None  # COMMIT / ABORT for control batches
    base_timestamp: int
    max_timestamp: int
    timestamp_type: int
    partition_leader_epoch: int
    size: int
    raw: bytes
    delete_horizon_ms: int | None = None  # KIP-534: set by the log cleaner (attributes bit 6)


def record_info(topic: str, partition: int, batch: StoredBatch, rec: Record) -> RecordInfo:
    return view_record_info(topic, partition, batch.view(), rec)


def view_record_info(topic: str, partition: int, batch: RecordBatch, rec: Record) -> RecordInfo:
    """A record of a batch read from any buffer (a stored batch, or a Fetch answer's: mockbroker/remote)."""
    seq = -1
    if batch.base_sequence >= 0:
        seq = (batch.base_sequence + (rec.offset - batch.base_offset)) % (2**31)
    return RecordInfo(
        topic=topic,
        partition=partition,
        offset=rec.offset,
        timestamp=rec.timestamp,
        key=rec.key,
        value=rec.value,
        headers=list(rec.headers),
        timestamp_type=batch.timestamp_type,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        sequence=seq,
        is_transactional=batch.is_transactional,
    )


def batch_info(b: StoredBatch) -> BatchInfo:
    return view_batch_info(b.view())


def view_batch_info(v: RecordBatch) -> BatchInfo:
    """What a batch read from any buffer holds (a stored batch, or a Fetch answer's: mockbroker/remote)."""
    control_type = None
    if v.is_control and v.record_count > 0:  # an emptied marker (log cleaner) has no type left
        try:
            control_type = ControlType(v.control_record().type)
        except ValueError:
            control_type = None
    return BatchInfo(
        base_offset=v.base_offset,
        last_offset=v.last_offset,
        magic=v.magic,
        codec=v.codec,
        record_count=v.record_count,
        producer_id=v.producer_id,
        producer_epoch=v.producer_epoch,
        base_sequence=v.base_sequence,
        last_sequence=v.last_sequence,
        is_transactional=v.is_transactional,
        is_control=v.is_control,
        control_type=control_type,
        base_timestamp=v.base_timestamp,
        max_timestamp=v.max_timestamp,
        timestamp_type=v.timestamp_type,
        partition_leader_epoch=v.partition_leader_epoch,
        size=v.size,
        raw=bytes(v.buffer),
        delete_horizon_ms=v.delete_horizon_ms,
    )


def records_of(cluster: Cluster, topic: str, partition: int | None) -> list[RecordInfo]:
    """Decoded records of a topic (one partition, or all in partition order), control records left out."""
    t = cluster.topic(topic)
    if t is None:
        raise KeyError(f"no topic {topic!r}")
    parts = t.partitions if partition is None else [t.partitions[partition]]
    out = []
    for p in parts:
        for batch, rec in p.log.records():
            out.append(record_info(topic, p.index, batch, rec))
    return out


def batches_of(cluster: Cluster, topic: str, partition: int) -> list[BatchInfo]:
    """What each stored batch of a partition holds, with its raw bytes."""
    t = cluster.topic(topic)
    if t is None:
        raise KeyError(f"no topic {topic!r}")
    return [batch_info(b) for b in t.partitions[partition].log.batches]


def _partition(cluster: Cluster, topic: str, partition: int) -> Partition:
    p = cluster.partition(topic, partition)
    if p is None:
        raise KeyError(f"no partition {topic}-{partition}")
    return p


def offsets_of(cluster: Cluster, topic: str, partition: int) -> dict[str, int]:
    """log_start_offset, high_watermark and last_stable_offset of a partition."""
    log = _partition(cluster, topic, partition).log
    return {
        "log_start_offset": log.log_start_offset,
        "high_watermark": log.high_watermark,
        "last_stable_offset": log.last_stable_offset,
    }


def producers_of(cluster: Cluster, topic: str, partition: int) -> list[dict[str, Any]]:
    """The producer state a partition holds: id, epoch, last sequence, last timestamp, the first offset of the
    open transaction (-1 if none), and the last five batches' (first seq, last seq, first offset, last offset)."""
    entries = _partition(cluster, topic, partition).log.producers.entries
    return [
        {
            "producer_id": e.producer_id,
            "producer_epoch": e.epoch,
            "last_sequence": e.last_seq,
            "last_timestamp": e.last_timestamp,
            "current_txn_start_offset": e.current_txn_first_offset,
            "batches": [(b.first_seq, b.last_seq, b.first_offset, b.last_offset) for b in e.batches],
        }
        for e in sorted(entries.values(), key=lambda e: e.producer_id)
    ]


def segments_of(cluster: Cluster, topic: str, partition: int) -> list[dict[str, int]]:
    """A partition's segments: base and next offset, size, batch count, largest timestamp, active."""
    return describe_segments(_partition(cluster, topic, partition).log)
