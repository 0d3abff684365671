"""What the inspection API returns: records and batches as a test wants to read them."""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.protocol.records.batch import Codec, ControlType, Record
from mockbroker.state.log.partition_log import StoredBatch


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
        timestamp_type=batch.view().timestamp_type,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        sequence=seq,
        is_transactional=batch.is_transactional,
    )


def batch_info(b: StoredBatch) -> BatchInfo:
    v = b.view()
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
        size=b.size,
        raw=bytes(b.data),
        delete_horizon_ms=v.delete_horizon_ms,
    )
