"""One partition's files: the LogSink (state/log/storage_hooks.py) the partition's log calls.

- append: before the log stores a batch, it is written to the active segment's `.log` (os.write, so it is
  in the OS before the produce is answered), with its index entries; when the log is about to roll, the
  active segment is closed first (last time index entry, fsync), a producer snapshot is taken at the new
  base offset, the recovery point moves to it, and the new segment's files are created. flush.messages /
  flush.ms (topic) or log.flush.interval.messages / .ms (broker) fsync the `.log` when reached; by default
  nothing is fsynced per append, as in Kafka.
- A write that fails (a full disk, an unwritable directory) cuts the `.log` back, logs one ERROR line, and
  from then on the partition answers KAFKA_STORAGE_ERROR to appends (Kafka takes the log directory
  offline); the rest of the broker keeps serving.
- Retention and truncation (segments_changed): the files of segments the log no longer has are renamed
  `.deleted` and removed; producer snapshots below the first segment go with them.
- An ABORT marker adds its transaction to the active segment's `.txnindex` (txn_index.py).
- Cleaning: the cleaned segments are written as `.cleaned` files (their `.txnindex` keeps the aborted
  transactions whose marker stayed), fsynced, renamed `.swap`, the replaced
  segments deleted (`.deleted`), then the `.swap` files renamed into place (recovery.py finishes or undoes
  each step after a crash).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.records.batch import ControlType
from mockbroker.state.log.cleaner import aborted_transactions
from mockbroker.storage import producer_snapshot, txn_index
from mockbroker.storage.checkpoints import CLEANER, LOG_START, RECOVERY_POINT, encode_epochs
from mockbroker.storage.indexes import SegmentIndexer
from mockbroker.storage.layout import (
    CLEANED,
    DELETED,
    INDEX,
    LEADER_EPOCH_CHECKPOINT,
    LOG,
    SEGMENT_SUFFIXES,
    SNAPSHOT,
    SWAP,
    TIME_INDEX,
    TXN_INDEX,
    file_name,
    offset_of,
    sync_dir,
    write_atomically,
)
from mockbroker.storage.segment_files import ActiveSegment, write_all
from mockbroker.storage.txn_index import TxnIndexEntry

if TYPE_CHECKING:
    from mockbroker.protocol.records.batch import RecordBatch
    from mockbroker.state.log.partition_log import PartitionLog
    from mockbroker.state.log.stored_batch import StoredBatch

log = logging.getLogger("mockbroker.storage")


def index_interval(plog: PartitionLog) -> int:
    config = plog.segments.config
    return int(config.get("index.interval.bytes")) if config is not None else 4096


def snapshot_entries(plog: PartitionLog) -> list[producer_snapshot.SnapshotEntry]:
    """The partition's producer state as Kafka's snapshot keeps it (the last batch of each producer)."""
    out = []
    for pid, e in sorted(plog.producers.entries.items()):
        last = e.batches[-1] if e.batches else None
        out.append(producer_snapshot.SnapshotEntry(
            pid, e.epoch, last.last_seq if last else -1, last.last_offset if last else -1,
            (last.last_seq - last.first_seq) if last else 0, e.last_timestamp, e.coordinator_epoch,
            e.current_txn_first_offset))
    return out


def write_segment(directory: Path, base: int, batches: list[StoredBatch], interval: int, suffix: str = "") -> int:
    """Write a whole segment (.log, .index, .timeindex, each name + suffix) from batches, fsynced; its size."""
    indexer = SegmentIndexer(base, interval)
    index = bytearray()
    time = bytearray()
    fd = os.open(directory / (file_name(base, LOG) + suffix), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for b in batches:
            write_all(fd, b.data)
            i, t = indexer.add(b.last_offset, b.max_timestamp, b.size)
            index += i
            time += t
        time += indexer.time_entry()
        os.fsync(fd)
    finally:
        os.close(fd)
    write_atomically(directory / (file_name(base, INDEX) + suffix), bytes(index), sync=True)
    write_atomically(directory / (file_name(base, TIME_INDEX) + suffix), bytes(time), sync=True)
    return indexer.position


def write_segment_indexes(directory: Path, base: int, batches: list[StoredBatch], interval: int) -> None:
    """Rebuild a segment's `.index` and `.timeindex` from the batches it holds."""
    indexer = SegmentIndexer(base, interval)
    index = bytearray()
    time = bytearray()
    for b in batches:
        i, t = indexer.add(b.last_offset, b.max_timestamp, b.size)
        index += i
        time += t
    write_atomically(directory / file_name(base, INDEX), bytes(index), sync=False)
    write_atomically(directory / file_name(base, TIME_INDEX), bytes(time), sync=False)


def read_txn_index(directory: Path, base: int) -> list[TxnIndexEntry]:
    path = directory / file_name(base, TXN_INDEX)
    return txn_index.decode(path.read_bytes()) if path.exists() else []


def keep_txn_entries_below(directory: Path, base: int, end: int) -> None:
    """Drop the `.txnindex` entries of a segment whose ABORT marker is at or past `end` (a truncated log)."""
    entries = read_txn_index(directory, base)
    kept = [e for e in entries if e.last_offset < end]
    if len(kept) != len(entries):
        write_atomically(directory / file_name(base, TXN_INDEX), b"".join(e.encode() for e in kept), sync=False)


def delete_segment_files(directory: Path, base: int) -> None:
    """Kafka's segment deletion: every file of the segment renamed `.deleted`, then removed."""
    for suffix in SEGMENT_SUFFIXES:
        path = directory / file_name(base, suffix)
        if path.exists():
            doomed = path.with_name(path.name + DELETED)
            os.replace(path, doomed)
            os.unlink(doomed)


class PartitionStore:
    """The files of one partition directory."""

    def __init__(self, directory: Path, plog: PartitionLog, checkpoint_changed: Callable[[str], None]) -> None:
        self.directory = directory
        self.plog = plog
        topic, partition = plog.topic, plog.partition
        self.topic = topic
        self.partition = partition
        self.checkpoint_changed = checkpoint_changed  # rewrite this log dir's checkpoint file of that name
        self.active: ActiveSegment | None = None
        self.failed: str | None = None
        self.recovery_point = 0
        self.unflushed = 0
        self.last_flush_ms: int | None = None
        self.epochs_written: list[tuple[int, int]] = []

    def __repr__(self) -> str:
        return f"PartitionStore({self.directory})"

    # -- failures ------------------------------------------------------------------------------------
    def fail(self, exc: BaseException) -> KafkaError:
        """Take the partition's storage offline: one ERROR line, KAFKA_STORAGE_ERROR from now on."""
        if self.failed is None:
            self.failed = f"{type(exc).__name__}: {exc}"
            log.error("storage of %s-%d in %s failed (%s): the partition answers KAFKA_STORAGE_ERROR to writes "
                      "until the broker is restarted", self.topic, self.partition, self.directory, self.failed)
            if self.active is not None:
                try:
                    self.active.close(inactive=False)
                except OSError:
                    pass
                self.active = None
        return self.storage_error()

    def storage_error(self) -> KafkaError:
        return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                          f"Disk error while writing to {self.topic}-{self.partition}: {self.failed}")

    # -- LogSink -------------------------------------------------------------------------------------
    def append(self, batch: RecordBatch, now_ms: int) -> None:
        plog = self.plog
        if self.failed is not None:
            raise self.storage_error()
        try:
            segs = plog.segments
            rolls = segs.rolls_before(batch, now_ms)
            target = batch.base_offset if rolls else segs.active.base_offset
            if self.active is None or self.active.base_offset != target:
                self._roll_to(plog, target, rolls)
            assert self.active is not None
            self.active.append(batch.buffer, batch.last_offset, batch.max_timestamp)
            if batch.is_control:
                self._index_abort(plog, batch)
            if not plog.epoch_starts or plog.epoch_starts[-1][0] != plog.leader_epoch:
                self._write_epochs([*plog.epoch_starts, (plog.leader_epoch, batch.base_offset)])
            self._maybe_flush(plog, batch, now_ms)
        except OSError as exc:
            raise self.fail(exc) from None

    def log_start_moved(self) -> None:
        self._guard(lambda: self.checkpoint_changed(LOG_START))

    def segments_changed(self) -> None:
        self._guard(lambda: self._sync_segments(self.plog))

    def cleaned(self, count: int) -> None:
        self._guard(lambda: self._swap_cleaned(self.plog, count))

    def _guard(self, work: Callable[[], None]) -> None:
        """Run file work of maintenance (retention, cleaning): a failure takes the partition's storage
        offline (logged once) instead of failing the broker's maintenance task."""
        if self.failed is not None:
            return
        try:
            work()
        except OSError as exc:
            self.fail(exc)

    # -- appends -------------------------------------------------------------------------------------
    def open_active(self, plog: PartitionLog, base: int) -> None:
        """Open (create) the active segment's files at `base`, its index state replayed from the batches the
        log holds there (a segment reopened after a stop or a restart)."""
        indexer = SegmentIndexer(base, index_interval(plog))
        segs = plog.segments
        k = segs.floor_index(base)
        if k >= 0 and segs.segments[k].base_offset == base:
            lo, hi = segs.batch_range(plog, k)
            for b in plog.batches[lo:hi]:
                indexer.add(b.last_offset, b.max_timestamp, b.size)
        self.active = ActiveSegment(self.directory, base, indexer)

    def _roll_to(self, plog: PartitionLog, base: int, rolls: bool) -> None:
        """Make the segment at `base` the one appended to. `rolls`: the log rolls (the segment before it has
        batches): it is closed and flushed, a producer snapshot is taken at `base`, the recovery point moves
        there. Else an empty active segment moved (Kafka recreates it), or the files are reopened."""
        old = self.active
        self.active = None
        if old is not None and old.size == 0 and not rolls:
            old.remove()
        elif old is not None:
            old.close(inactive=True)
        elif rolls:  # not open since a restart: flush what the previous segment holds
            previous = self.directory / file_name(plog.segments.active.base_offset, LOG)
            fd = os.open(previous, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        if rolls:
            self.recovery_point = base
            self.unflushed = 0
            self.write_snapshot(plog, base)
            self.checkpoint_changed(RECOVERY_POINT)
        self.open_active(plog, base)

    def _index_abort(self, plog: PartitionLog, batch: RecordBatch) -> None:
        """An ABORT marker: its transaction's entry in the active segment's `.txnindex` (Kafka's
        updateTxnIndex), before the producer state closes the transaction."""
        try:
            if batch.control_record().type != ControlType.ABORT:
                return
        except DecodeError:
            return
        pid = batch.producer_id
        entry = plog.producers.entries.get(pid)
        first = entry.current_txn_first_offset if entry is not None else -1
        others = [o for p, o in plog.open_txn_first_offsets.items() if p != pid]
        lso = min(others) if others else batch.last_offset + 1
        assert self.active is not None
        data = TxnIndexEntry(pid, first if first >= 0 else batch.base_offset, batch.last_offset, lso).encode()
        fd = os.open(self.directory / file_name(self.active.base_offset, TXN_INDEX),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)

    def write_snapshot(self, plog: PartitionLog, offset: int) -> None:
        data = producer_snapshot.encode(snapshot_entries(plog))
        write_atomically(self.directory / file_name(offset, SNAPSHOT), data, sync=True)

    def _write_epochs(self, epochs: list[tuple[int, int]]) -> None:
        write_atomically(self.directory / LEADER_EPOCH_CHECKPOINT, encode_epochs(epochs), sync=True)
        self.epochs_written = list(epochs)

    def _maybe_flush(self, plog: PartitionLog, batch: RecordBatch, now_ms: int) -> None:
        self.unflushed += batch.last_offset - batch.base_offset + 1
        if self.last_flush_ms is None:
            self.last_flush_ms = now_ms
        config = plog.segments.config
        if config is None:
            return
        if self.unflushed >= int(config.get("flush.messages")) or \
                now_ms - self.last_flush_ms >= int(config.get("flush.ms")):
            self.flush(batch.last_offset + 1, now_ms)

    def flush(self, upto: int, now_ms: int) -> None:
        if self.active is not None:
            self.active.flush()
        self.recovery_point = max(self.recovery_point, upto)
        self.unflushed = 0
        self.last_flush_ms = now_ms

    # -- retention -----------------------------------------------------------------------------------
    def segment_bases_on_disk(self) -> list[int]:
        return sorted(b for name in os.listdir(self.directory)
                      if name.endswith(LOG) and (b := offset_of(name)) is not None)

    def _sync_segments(self, plog: PartitionLog) -> None:
        """Make the files match the log's segments: the files of segments it no longer has go (retention
        from the front, or a truncation from the end), a segment file longer than the batches the log holds
        in it is cut back (a truncation from the end) and its indexes rebuilt, snapshots outside the log go."""
        segs = plog.segments
        keep = {s.base_offset: i for i, s in enumerate(segs.segments)}
        for base in self.segment_bases_on_disk():
            if base not in keep:
                self._close_active_at(base)
                delete_segment_files(self.directory, base)
                continue
            lo, hi = segs.batch_range(plog, keep[base])
            held = plog.batches[lo:hi]
            path = self.directory / file_name(base, LOG)
            # The file still holds the batches below the log start that the log dropped (DeleteRecords moved
            # the start inside this segment): they stay on disk until the segment goes, as in Kafka.
            front = _bytes_below(path, plog.log_start_offset) if keep[base] == 0 else 0
            if path.stat().st_size > front + sum(b.size for b in held):
                self._close_active_at(base)
                with open(path, "r+b") as f:
                    f.truncate(front + sum(b.size for b in held))
                    os.fsync(f.fileno())
                write_segment_indexes(self.directory, base, held, index_interval(plog))
                keep_txn_entries_below(self.directory, base, plog.log_end_offset)
        first, end = segs.segments[0].base_offset, plog.log_end_offset
        for name in os.listdir(self.directory):
            offset = offset_of(name)
            if name.endswith(SNAPSHOT) and offset is not None and not first <= offset <= end:
                os.unlink(self.directory / name)
        if self.epochs_written != plog.epoch_starts:
            self._write_epochs(list(plog.epoch_starts))
        if self.active is None:
            self.open_active(plog, segs.active.base_offset)
        self.checkpoint_changed(LOG_START)

    def _close_active_at(self, base: int) -> None:
        if self.active is not None and self.active.base_offset == base:
            self.active.close(inactive=False)
            self.active = None

    # -- cleaning ------------------------------------------------------------------------------------
    def _swap_cleaned(self, plog: PartitionLog, count: int) -> None:
        segs = plog.segments
        if count:
            upper = segs.upper_bound(count - 1, plog.log_end_offset)
            replaced = [b for b in self.segment_bases_on_disk() if b < upper]
            markers = {(t.producer_id, t.last_offset) for t in aborted_transactions(plog)}
            aborted = [e for b in replaced for e in read_txn_index(self.directory, b)
                       if (e.producer_id, e.last_offset) in markers]
            if self.active is not None and self.active.base_offset < upper:
                self.active.close(inactive=True)
                self.active = None
            interval = index_interval(plog)
            written: dict[int, tuple[str, ...]] = {}
            for i in range(count):
                lo, hi = segs.batch_range(plog, i)
                base = segs.segments[i].base_offset
                write_segment(self.directory, base, plog.batches[lo:hi], interval, CLEANED)
                written[base] = (LOG, INDEX, TIME_INDEX)
                mine = [e for e in aborted if base <= e.last_offset < segs.upper_bound(i, plog.log_end_offset)]
                if mine:
                    write_atomically(self.directory / (file_name(base, TXN_INDEX) + CLEANED),
                                     b"".join(e.encode() for e in mine))
                    written[base] += (TXN_INDEX,)
            for base, suffixes in written.items():  # complete: .cleaned -> .swap
                for suffix in suffixes:
                    name = file_name(base, suffix)
                    os.replace(self.directory / (name + CLEANED), self.directory / (name + SWAP))
            sync_dir(self.directory)
            for base in replaced:
                delete_segment_files(self.directory, base)
            for base, suffixes in written.items():  # .swap -> in place
                for suffix in suffixes:
                    name = file_name(base, suffix)
                    os.replace(self.directory / (name + SWAP), self.directory / name)
            sync_dir(self.directory)
            if self.active is None and segs.active.base_offset >= upper:
                self.open_active(plog, segs.active.base_offset)
        self.checkpoint_changed(CLEANER)

    # -- shutdown ------------------------------------------------------------------------------------
    def close(self) -> None:
        """A clean stop: the active segment flushed and closed, a producer snapshot at the log end offset."""
        plog = self.plog
        if self.failed is not None:
            return
        try:
            if self.active is not None:
                self.active.close(inactive=True)
                self.active = None
            self.write_snapshot(plog, plog.log_end_offset)
            self.recovery_point = plog.log_end_offset
        except OSError as exc:
            self.fail(exc)


def _bytes_below(path: Path, start_offset: int) -> int:
    """How many bytes the leading batches of a segment file wholly below start_offset take (each batch's
    base offset and length in its first 12 bytes, its last offset delta at byte 23 for magic 2)."""
    position = 0
    with open(path, "rb") as f:
        while True:
            f.seek(position)
            header = f.read(27)
            if len(header) < 27:
                return position
            base = int.from_bytes(header[0:8], "big", signed=True)
            length = int.from_bytes(header[8:12], "big", signed=True)
            last = base + int.from_bytes(header[23:27], "big", signed=True) if header[16] >= 2 else base
            if last >= start_offset or length <= 0:
                return position
            position += 12 + length
