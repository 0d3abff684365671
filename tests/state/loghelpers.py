"""Building partition logs batch by batch for the segment, cleaner and retention tests (no sockets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockbroker.inspection import BatchInfo, batch_info
from mockbroker.protocol.records.batch import Codec, ControlType, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch, build_control_batch
from mockbroker.state.cluster.cluster import Cluster, Topic
from mockbroker.state.log.partition_log import PartitionLog, StoredBatch

T0 = 1_700_000_000_000  # a broker clock reading the tests start from (ms)
DAY_MS = 86_400_000


def compacted_log(**config: Any) -> tuple[Topic, PartitionLog]:
    """A one-partition compacted topic ("t") and its log; `config` adds topic configs (dots as `_`)."""
    settings = {"cleanup.policy": "compact", **{k.replace("_", "."): str(v) for k, v in config.items()}}
    return topic_log(settings)


def topic_log(settings: dict[str, str], broker: dict[str, Any] | None = None) -> tuple[Topic, PartitionLog]:
    from mockbroker.state.configs import BrokerConfig

    cluster = Cluster(config=BrokerConfig(broker or {}))
    topic = cluster.create_topic("t", 1, -1, settings)
    assert topic is not None
    return topic, topic.partitions[0].log


def append(
    log: PartitionLog,
    records: Sequence[tuple[bytes | None, bytes | None]],
    now: int = T0,
    *,
    timestamp: int | None = None,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    txn: bool = False,
    codec: Codec = Codec.NONE,
) -> StoredBatch:
    """Append one batch of (key, value) records, as a producer would send it, at broker time `now`."""
    ts = now if timestamp is None else timestamp
    data = build_batch([RecordInput(k, v, (), ts) for k, v in records], codec=codec, producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, is_transactional=txn)
    return log.append(RecordBatch(data), now)


def marker(log: PartitionLog, kind: ControlType, pid: int, epoch: int, now: int = T0) -> StoredBatch:
    """Append a transaction marker (what the transaction coordinator writes) and close the producer's
    open transaction in the log's bookkeeping."""
    data = build_control_batch(kind, producer_id=pid, producer_epoch=epoch, coordinator_epoch=0, timestamp_ms=now)
    log.open_txn_first_offsets.pop(pid, None)
    return log.append(RecordBatch(data), now)


def infos(log: PartitionLog) -> list[BatchInfo]:
    return [batch_info(b) for b in log.batches]


def offsets(log: PartitionLog) -> list[int]:
    """Offsets of every record still in the log (control records included)."""
    return [r.offset for b in log.batches for r in b.view().records()]


def kv(log: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every data record still in the log."""
    return [(r.offset, r.key, r.value) for b in log.batches if not b.is_control for r in b.view().records()]


def all_valid(log: PartitionLog) -> bool:
    """Every stored batch passes the CRC and structure checks."""
    for b in log.batches:
        RecordBatch(bytes(b.data)).validate()
    return True
