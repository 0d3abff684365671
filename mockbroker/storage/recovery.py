"""Loading one partition directory into a PartitionLog: after a clean stop, or after a crash.

As Kafka's LogLoader:
1. Interrupted file operations first: `.cleaned` files (a cleaning pass that did not finish) and `.deleted`
   files are removed; a `.swap` segment (cleaned and complete) replaces the segments in its offset range.
2. Every segment is read. Batches of the segments at or past the recovery point (the last flush, from
   recovery-point-offset-checkpoint; all of them when the partition has none) are checked as the broker
   checks a produced batch (length, magic, CRC-32C: RecordBatch.validate) and must follow each other in
   offset order. At the first batch that fails, the segment is truncated there (a torn or corrupt tail)
   and every later segment is deleted; a segment (not the first) with no whole batch at all, or whose
   base offset falls inside the segment before it, is deleted with them. The checked segments' offset
   and time indexes are rebuilt.
3. Offsets: the log end offset after the last batch (or the last, empty, segment's base), the log start
   offset from log-start-offset-checkpoint (at least the first segment's base), the leader epochs from
   leader-epoch-checkpoint plus the epochs of the batches after it; the leader epoch one above the last
   known (the partition was offline and elected again).
4. Producer state: the latest `.snapshot` at or below the log end offset, then the batches from its offset
   on replayed (later snapshots, made stale by a truncation, are deleted); without a snapshot, every batch.
   Producers whose last batch lies below the log start offset are dropped, as Kafka's truncateHead does.

Nothing is dropped without a word: every truncation and every deleted segment is a line of
`RecoveryReport.warnings` (the file, the offsets lost), which the caller logs at WARNING, as Kafka's
LogLoader warns "Corruption found in segment ..., truncating to offset ...". A missing segment, found by
the index files it left behind (Kafka: "Found an orphaned index file ...") or, on a log that was never
compacted, by a hole between one segment's last offset and the next one's base, is worse than a torn tail:
records in the middle of the log are gone while the log goes on after them. Recovery refuses such a log
(MissingSegmentError, a DataDirError: the broker does not start) unless `allow_missing`
(mockbroker.recovery.allow.missing.segments=true), which loads the log with the hole and warns. A missing
last segment is a lost tail: warned, the log ends before it.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.records.batch import RECORD_BATCH_OVERHEAD, RecordBatch
from mockbroker.state.log.producers import BatchMetadata, ProducerEntry
from mockbroker.state.log.segments import Segment
from mockbroker.state.log.stored_batch import StoredBatch
from mockbroker.storage import DataDirError, producer_snapshot
from mockbroker.storage.checkpoints import decode_epochs
from mockbroker.storage.layout import (
    CLEANED,
    DELETED,
    INDEX,
    LEADER_EPOCH_CHECKPOINT,
    LOG,
    SNAPSHOT,
    SWAP,
    TIME_INDEX,
    TXN_INDEX,
    file_name,
    offset_of,
)
from mockbroker.storage.partition_store import keep_txn_entries_below, write_segment_indexes

if TYPE_CHECKING:
    from mockbroker.state.log.partition_log import PartitionLog

_LENGTH = struct.Struct(">qi")  # base offset, batch length
ALLOW_MISSING_SEGMENTS = "mockbroker.recovery.allow.missing.segments"
_INDEX_FILES = (INDEX, TIME_INDEX, TXN_INDEX)


class MissingSegmentError(DataDirError):
    """A segment in the middle of a partition's log is missing and recovery was not told to go on."""


@dataclass
class RecoveryReport:
    """What loading a partition found."""

    segments: int = 0
    batches: int = 0
    checked_batches: int = 0
    truncated_bytes: int = 0
    deleted_segments: int = 0
    snapshot_offset: int | None = None
    warnings: list[str] = field(default_factory=list)  # what was lost, file by file (logged at WARNING)


def scan_batches(data: bytes, *, check: bool, next_offset: int) -> tuple[list[RecordBatch], int]:
    """The whole batches at the front of a segment's bytes and how many bytes they take. With `check`, each
    must pass RecordBatch.validate (length, magic, CRC); always, each must fit and start at or after
    `next_offset` (the offset after the previous batch). Stops at the first that does not."""
    view = memoryview(data)
    out: list[RecordBatch] = []
    pos = 0
    end = len(data)
    while end - pos >= RECORD_BATCH_OVERHEAD:
        _, length = _LENGTH.unpack_from(view, pos)
        size = length + 12
        if length < RECORD_BATCH_OVERHEAD - 12 or pos + size > end:
            break
        try:
            batch = RecordBatch(view[pos:pos + size])
            if check:
                batch.validate()
        except DecodeError:
            break
        if batch.base_offset < next_offset or batch.last_offset < batch.base_offset:
            break
        out.append(batch)
        next_offset = batch.last_offset + 1
        pos += size
    return out, pos


def stored(batch: RecordBatch, now_ms: int) -> StoredBatch:
    return StoredBatch(
        base_offset=batch.base_offset, last_offset=batch.last_offset, max_timestamp=batch.max_timestamp,
        base_timestamp=batch.base_timestamp, data=batch.buffer, producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence, last_sequence=batch.last_sequence,
        record_count=batch.record_count, is_transactional=batch.is_transactional, is_control=batch.is_control,
        leader_epoch=batch.partition_leader_epoch)


def _segment_bases(directory: Path) -> list[int]:
    return sorted(b for name in os.listdir(directory) if name.endswith(LOG) and (b := offset_of(name)) is not None)


def finish_interrupted(directory: Path) -> None:
    """Undo incomplete cleaning (`.cleaned`), finish deletions (`.deleted`) and swaps (`.swap`)."""
    for name in os.listdir(directory):
        if name.endswith((CLEANED, DELETED, ".tmp")):
            os.unlink(directory / name)
    swaps = sorted(b for name in os.listdir(directory)
                   if name.endswith(LOG + SWAP) and (b := offset_of(name)) is not None)
    for base in swaps:
        batches, _ = scan_batches((directory / (file_name(base, LOG) + SWAP)).read_bytes(), check=False,
                                  next_offset=base)
        last = batches[-1].last_offset if batches else base
        for other in _segment_bases(directory):
            if base < other <= last:
                for suffix in (LOG, INDEX, TIME_INDEX, TXN_INDEX):
                    path = directory / file_name(other, suffix)
                    if path.exists():
                        os.unlink(path)
        for suffix in (LOG, INDEX, TIME_INDEX, TXN_INDEX):
            swap = directory / (file_name(base, suffix) + SWAP)
            if swap.exists():
                os.replace(swap, directory / file_name(base, suffix))


def _orphaned_indexes(directory: Path, bases: list[int]) -> dict[int, list[str]]:
    """Index files whose segment's `.log` is gone, by that segment's base offset."""
    have = set(bases)
    out: dict[int, list[str]] = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(_INDEX_FILES) and (b := offset_of(name)) is not None and b not in have:
            out.setdefault(b, []).append(name)
    return out


def _delete_segment(directory: Path, base: int) -> None:
    for suffix in (LOG, *_INDEX_FILES):
        p = directory / file_name(base, suffix)
        if p.exists():
            os.unlink(p)


def _hole(directory: Path, report: RecoveryReport, *, start: int, end: int, orphans: list[int],
          allow_missing: bool) -> None:
    """Offsets start..end-1 lie between two segments and no segment holds them: refuse, or warn."""
    where = (f"segment {file_name(orphans[0], LOG)} is missing (its index files are still there)" if orphans
             else f"no segment holds offsets {start} to {end - 1} (the one that did is missing)")
    if not allow_missing:
        raise MissingSegmentError(f"{directory}: {where}: records {start} to {end - 1} are lost from the middle of "
                                  f"the log. Restore the file, or set {ALLOW_MISSING_SEGMENTS}=true to start "
                                  "without them")
    report.warnings.append(f"{where}: offsets {start} to {end - 1} are lost; going on without them as "
                           f"{ALLOW_MISSING_SEGMENTS}=true")
    for base in orphans:
        _delete_segment(directory, base)


def recover_partition(directory: Path, plog: PartitionLog, *, recovery_point: int, log_start: int | None,
                      cleaner_checkpoint: int | None, leader_epoch: int, now_ms: int,
                      index_interval: int, clean: bool = False, contiguous: bool = False,
                      allow_missing: bool = False) -> RecoveryReport:
    """Fill the (new, empty) log `plog` from its directory; truncate what does not check out. `clean`: the
    broker stopped cleanly (its marker file was there), so nothing past the recovery point is checked.
    `contiguous`: the log was never compacted, so its segments follow each other without a hole in the
    offsets. A missing segment in the middle raises MissingSegmentError unless `allow_missing`."""
    report = RecoveryReport()
    finish_interrupted(directory)
    bases = _segment_bases(directory)
    orphans = _orphaned_indexes(directory, bases)
    batches: list[StoredBatch] = []
    chunks: list[tuple[memoryview, list[int]]] = []  # each segment's bytes and its batches' sizes
    segments: list[Segment] = []
    next_offset = 0
    for k, base in enumerate(bases):
        path = directory / file_name(base, LOG)
        if k:
            missing = [o for o in orphans if bases[k - 1] < o < base]
            if missing or (contiguous and base > next_offset):
                _hole(directory, report, start=min([next_offset, *missing]), end=base, orphans=missing,
                      allow_missing=allow_missing)
        data = path.read_bytes()
        last_segment = k + 1 == len(bases)
        check = not clean and (last_segment or bases[k + 1] > recovery_point)
        found, valid = scan_batches(data, check=check, next_offset=max(next_offset, base))
        if k and base < next_offset:  # overlaps the segment before it: not a segment of this log
            found, valid = [], 0
        if k and not found and valid < len(data):  # nothing of it is whole: it goes with the ones after it
            report.warnings.append(f"{path}: no whole batch in its {len(data)} bytes: deleted, the log now ends at "
                                   f"offset {next_offset}; offsets from {max(next_offset, base)} on are lost")
            _delete_later(directory, report, bases[k + 1:], path.name)
            _delete_segment(directory, base)
            report.deleted_segments += 1
            report.truncated_bytes += len(data)
            break
        seg = Segment(base, size=valid, created_ms=now_ms, last_modified_ms=now_ms)
        seg_batches = [stored(b, now_ms) for b in found]
        for b in seg_batches:
            seg.add(b, now_ms)
        seg.size = valid
        batches += seg_batches
        if seg_batches:
            sizes = [b.size for b in seg_batches]
            chunks.append((memoryview(data)[:sum(sizes)], sizes))
        segments.append(seg)
        report.segments += 1
        if check:
            report.checked_batches += len(found)
            write_segment_indexes(directory, base, seg_batches, index_interval)
        if seg_batches:
            next_offset = seg_batches[-1].last_offset + 1
        elif base > next_offset:
            next_offset = base
        if valid < len(data):
            with open(path, "r+b") as f:
                f.truncate(valid)
            report.truncated_bytes += len(data) - valid
            report.warnings.append(f"{path}: corruption found at byte {valid}: truncated to offset {next_offset} "
                                   f"({len(data) - valid} bytes); offsets from {next_offset} on are lost")
            keep_txn_entries_below(directory, base, next_offset)
            _delete_later(directory, report, bases[k + 1:], path.name)
            write_segment_indexes(directory, base, seg_batches, index_interval)
            break
    for base, names in orphans.items():
        if not (directory / names[0]).exists():
            continue  # a hole's, dealt with above
        where = f"segment {directory / file_name(base, LOG)} is missing (its index files are still there)"
        if segments and base < segments[0].base_offset:
            report.warnings.append(f"{where}: offsets {base} to {segments[0].base_offset - 1} are lost, the log "
                                   f"starts at offset {segments[0].base_offset}")
        else:
            report.warnings.append(f"{where}: offsets from {base} on are lost, the log ends at offset {next_offset}")
        _delete_segment(directory, base)
    report.batches = len(batches)
    start = max(log_start or 0, segments[0].base_offset if segments else 0)
    end = max(next_offset, segments[-1].base_offset if segments else start)
    plog.store.replace([])
    for chunk, sizes in chunks:
        plog.store.adopt(chunk, sizes)  # the bytes read from the files, kept as they are: no copy
    plog.size_bytes = sum(b.size for b in batches)
    plog.log_end_offset = end
    plog.log_start_offset = min(start, end)
    plog.segments.segments[:] = segments or [Segment(end)]
    plog.segments.cleaner_checkpoint = cleaner_checkpoint
    plog.epoch_starts[:] = _epochs(directory, batches, end)
    # A restarted broker's partitions went offline and were elected again: the epoch goes up, as in Kafka,
    # so clients that cached the old epoch take the new metadata as newer.
    plog.leader_epoch = max(leader_epoch, plog.epoch_starts[-1][0] if plog.epoch_starts else 0) + 1
    report.snapshot_offset = load_producer_state(directory, plog, now_ms)
    plog.sync_open_txns()
    return report


def _delete_later(directory: Path, report: RecoveryReport, later: list[int], cause: str) -> None:
    """The segments after a truncated one go (Kafka's recovery deletes every segment after a corruption)."""
    for base in later:
        report.warnings.append(f"{directory / file_name(base, LOG)}: deleted after the corruption in {cause} "
                               f"(offsets from {base} on)")
        _delete_segment(directory, base)
        report.deleted_segments += 1


def _epochs(directory: Path, batches: list[StoredBatch], end: int) -> list[tuple[int, int]]:
    path = directory / LEADER_EPOCH_CHECKPOINT
    epochs: list[tuple[int, int]] = []
    if path.exists():
        try:
            epochs = [(e, s) for e, s in decode_epochs(path.read_text()) if s < end]
        except ValueError:
            epochs = []
    for b in batches:
        if b.leader_epoch >= 0 and (not epochs or b.leader_epoch > epochs[-1][0]):
            epochs.append((b.leader_epoch, b.base_offset))
    return epochs


def load_producer_state(directory: Path, plog: PartitionLog, now_ms: int) -> int | None:
    """Producer state from the latest usable snapshot plus the batches after it; the snapshot's offset."""
    snapshots = sorted((o, name) for name in os.listdir(directory)
                       if name.endswith(SNAPSHOT) and (o := offset_of(name)) is not None)
    table = plog.producers
    table.entries.clear()
    chosen: int | None = None
    for offset, name in reversed(snapshots):
        if offset > plog.log_end_offset:
            os.unlink(directory / name)  # past a truncated tail
            continue
        try:
            entries = producer_snapshot.decode((directory / name).read_bytes())
        except (OSError, producer_snapshot.CorruptSnapshotError):
            os.unlink(directory / name)
            continue
        for e in entries:
            entry = ProducerEntry(e.producer_id, e.epoch)
            if e.last_offset >= 0:
                entry.batches.append(BatchMetadata(e.last_sequence - e.offset_delta, e.last_sequence,
                                                   e.last_offset - e.offset_delta, e.last_offset, e.timestamp))
            entry.last_timestamp = e.timestamp
            entry.last_write_ms = now_ms
            entry.coordinator_epoch = e.coordinator_epoch
            entry.current_txn_first_offset = e.current_txn_first_offset
            table.entries[e.producer_id] = entry
        chosen = offset
        break
    for b in plog.batches:
        if b.producer_id < 0 or (chosen is not None and b.base_offset < chosen):
            continue
        table.update(b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.base_offset,
                     b.last_offset, b.max_timestamp, now_ms, is_transactional=b.is_transactional,
                     is_control=b.is_control)
    start = plog.log_start_offset
    for pid in [pid for pid, e in table.entries.items()
                if e.current_txn_first_offset < 0 and e.batches and e.batches[-1].last_offset < start]:
        del table.entries[pid]
    return chosen
