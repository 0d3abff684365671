"""Brokers on a data dir without sockets, for the storage tests: open one, append to it, stop it cleanly
or as a crash would, open the next on the same directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mockbroker.clock import Clock
from mockbroker.protocol.records.batch import ControlType, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch, build_control_batch
from mockbroker.server import MockBroker
from mockbroker.state.cluster.appender import AppendResult
from mockbroker.state.cluster.cluster import Partition

T0 = 1_700_000_000_000


def open_broker(data_dir: Path, **kwargs: Any) -> MockBroker:
    return MockBroker(data_dir=data_dir, clock=kwargs.pop("clock", None) or Clock(start_ms=T0), **kwargs)


def crash(broker: MockBroker) -> None:
    """What a kill -9 leaves: the files as written, no snapshot, no checkpoints, no clean shutdown marker
    (the lock goes with the process)."""
    assert broker.storage is not None
    broker.storage.close(clean=False)


def produce(broker: MockBroker, topic: str, *values: bytes, partition: int = 0, key: bytes | None = b"k",
            pid: int = -1, epoch: int = -1, seq: int = -1, txn: bool = False,
            timestamp: int | None = None) -> AppendResult:
    """One batch of `values`, through the broker's append path (validation, producer checks); a transactional
    one straight into the log (the coordinator's checks are not what these tests are about)."""
    p = part(broker, topic, partition)
    ts = broker.clock.now_ms() if timestamp is None else timestamp
    data = build_batch([RecordInput(key, v, (), ts) for v in values], producer_id=pid, producer_epoch=epoch,
                       base_sequence=seq, is_transactional=txn)
    if txn:
        stored = p.log.append(RecordBatch(data), broker.clock.now_ms())
        return AppendResult(stored.base_offset, -1, p.log.log_start_offset)
    return broker.appender.append_records(p, memoryview(data), 9, broker.clock.now_ms())


def end_txn(broker: MockBroker, topic: str, kind: ControlType, pid: int, epoch: int, partition: int = 0) -> None:
    """Write a transaction marker as the coordinator does (ABORTs go into the aborted index)."""
    p = part(broker, topic, partition)
    first = p.log.producers.entries[pid].current_txn_first_offset
    data = build_control_batch(kind, producer_id=pid, producer_epoch=epoch, coordinator_epoch=0,
                               timestamp_ms=broker.clock.now_ms())
    stored = p.log.append(RecordBatch(data), broker.clock.now_ms())
    if kind == ControlType.ABORT:
        from mockbroker.state.log.aborted_index import AbortedTxn

        broker.txn_coordinator.aborted.add(p.log, AbortedTxn(pid, first, stored.base_offset))


def part(broker: MockBroker, topic: str, partition: int = 0) -> Partition:
    p = broker.cluster.partition(topic, partition)
    assert p is not None, f"no partition {topic}-{partition}"
    return p


def values(broker: MockBroker, topic: str, partition: int = 0) -> list[bytes | None]:
    return [r.value for r in broker.records(topic, partition)]
