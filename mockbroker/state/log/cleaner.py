"""The log cleaner for compacted topics, as Kafka's LogCleaner / Cleaner / LogCleanerManager do it.

Which logs, and how far (LogCleanerManager):
- The cleaner checkpoint (`LogSegments.cleaner_checkpoint`, Kafka's cleaner-offset-checkpoint) is the first
  dirty offset: below it the log was cleaned already (the clean section), from it on it is dirty. Unset,
  below the log start offset or past the log end offset, it is the log start offset.
- Nothing at or past the first uncleanable offset is cleaned: the active segment, the last stable offset
  (an open transaction), and, with min.compaction.lag.ms, the first dirty segment whose largest timestamp
  is within the lag of now. That offset is rounded down to the base of its segment.
- Dirty ratio: cleanable bytes (the dirty segments below the first uncleanable offset) over clean + cleanable
  bytes. The scheduled cleaner takes a log when the ratio is above min.cleanable.dirty.ratio, or when its
  earliest dirty segment's first batch is older than max.compaction.lag.ms and it has cleanable bytes.

One pass (Cleaner.doClean):
- Offset map: the latest offset of each key in the dirty section [first dirty, first uncleanable),
  leaving out records of aborted transactions and control batches. Kafka's map has a size limit (the
  dedupe buffer); this one has none, so one pass always covers the whole cleanable range.
- Every segment below that offset (clean and dirty, from the first) is recopied, grouped as Kafka groups
  them (consecutive segments while their total size stays within segment.bytes become one segment). Offsets
  never change; a batch keeps its base offset and last offset delta (so its producer's last sequence),
  producer id and epoch, base sequence, partition leader epoch, codec and flags, with a fresh CRC
  (protocol.records.builder.rebuild_batch). A batch that keeps all its records and needs no new delete
  horizon stays byte for byte.
- A record stays when it is the latest of its key (or its key is not in the map: clean section), and it
  is not a tombstone whose delete horizon has passed. Keyless records go.
- Tombstones (KIP-534, Kafka 3.1+): the first pass that keeps a tombstone sets the batch's delete horizon
  (attributes bit 6, base timestamp = now + delete.retention.ms); a later pass after the horizon removes
  the tombstone. A pass only happens when the log is dirty enough (or `MockBroker.compact`).
- Transactions (CleanedTransactionMetadata): batches of aborted transactions go. An ABORT marker stays while
  a batch of its transaction was seen in the pass; a COMMIT marker while a batch of its transaction was
  seen. A marker whose transaction is gone gets a delete horizon like a tombstone, and goes after it.
- Batch retention: a batch whose records all went is deleted, except (RETAIN_EMPTY) the batch holding its
  producer's last data offset (or, for a producer with no data batch in its epoch, its marker of that
  epoch), so the producer's last sequence and epoch survive, and the last batch before the first
  uncleanable offset; those stay as Kafka's empty batch (61 bytes, no records, base timestamp -1).
- Producer state is not touched (Kafka's cleaner does not change it: every producer it knows keeps its
  last batch); the last stable offset cannot change (cleaning stops before it). The offset and time
  indexes of the log are rebuilt.

Aborted transactions are derived from the log: a producer's transactional data batches after its
previous marker, up to an ABORT marker (first offset of the transaction, offset of the marker), as
Kafka's transaction index records them. A data-less ABORT is (marker, marker).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.records.batch import (
    INT32_MAX,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    ControlType,
    Record,
    RecordBatch,
)
from mockbroker.protocol.records.builder import rebuild_batch
from mockbroker.state.log.aborted_index import AbortedTxn
from mockbroker.state.log.segments import Segment

if TYPE_CHECKING:
    from mockbroker.state.configs import TopicConfig
    from mockbroker.state.log.partition_log import PartitionLog, StoredBatch

NO_PRODUCER_ID = -1


@dataclass
class CleanerStats:
    """What one cleaning pass of one partition did."""

    topic: str
    partition: int
    first_dirty_offset: int
    end_offset: int  # the first uncleanable offset: the new cleaner checkpoint
    batches_before: int = 0
    batches_after: int = 0
    records_removed: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    empty_batches_retained: int = 0
    # The aborted transactions of the cleaned range whose ABORT marker stays because batches of the
    # transaction were seen (Kafka's cleaned transaction index); see prune_aborted_index.
    aborted_retained: list[AbortedTxn] = field(default_factory=list)


@dataclass
class LogToClean:
    """A compacted log's cleanable range and dirty ratio (Kafka's LogToClean)."""

    log: PartitionLog
    config: TopicConfig
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def should_clean(self) -> bool:
        """Kafka's grabFilthiestCompactedLog filter."""
        if self.total_bytes <= 0:
            return False
        min_ratio = float(self.config.get("min.cleanable.dirty.ratio"))
        return (self.need_compaction_now and self.cleanable_bytes > 0) or self.cleanable_ratio > min_ratio


# -- aborted transactions --------------------------------------------------------------------------


def _control_type(view: RecordBatch) -> int | None:
    """The control type of a control batch (None when it holds no record: an already cleaned marker)."""
    if view.record_count <= 0:
        return None
    try:
        return int(view.control_record().type)
    except DecodeError:
        return None


def aborted_transactions(log: PartitionLog) -> list[AbortedTxn]:
    """Every aborted transaction the log holds the marker of, in marker order."""
    first_offsets: dict[int, int] = {}
    out: list[AbortedTxn] = []
    for b in log.batches:
        if b.producer_id < 0 or not b.is_transactional:
            continue
        if not b.is_control:
            first_offsets.setdefault(b.producer_id, b.base_offset)
            continue
        first = first_offsets.pop(b.producer_id, b.base_offset)
        if _control_type(b.view()) == ControlType.ABORT:
            out.append(AbortedTxn(b.producer_id, first, b.last_offset))
    return out


class _AbortedTxnState:
    __slots__ = ("txn", "last_observed_batch_offset")

    def __init__(self, txn: AbortedTxn) -> None:
        self.txn = txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    """Transaction state along one pass over the log (Kafka's class of the same name): decides which
    batches belong to aborted transactions and which markers may go."""

    def __init__(self, aborted: Iterable[AbortedTxn] = ()) -> None:
        self._queue: list[tuple[int, int, AbortedTxn]] = []
        self._seq = 0
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, _AbortedTxnState] = {}
        self.retained_aborted: list[AbortedTxn] = []  # the cleaned transaction index
        self.add_aborted(aborted)

    def add_aborted(self, aborted: Iterable[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._queue, (txn.first_offset, self._seq, txn))
            self._seq += 1

    def _consume_up_to(self, offset: int) -> None:
        while self._queue and self._queue[0][0] <= offset:
            _, _, txn = heapq.heappop(self._queue)
            self.ongoing_aborted.setdefault(txn.producer_id, _AbortedTxnState(txn))

    def on_control_batch_read(self, batch: StoredBatch) -> bool:
        """True when the marker may be discarded."""
        self._consume_up_to(batch.last_offset)
        control_type = _control_type(batch.view())
        if control_type is None:
            return True  # an empty control batch was already cleaned
        pid = batch.producer_id
        if control_type == ControlType.ABORT:
            state = self.ongoing_aborted.pop(pid, None)
            if state is not None and state.last_observed_batch_offset is not None:
                self.retained_aborted.append(state.txn)
                return False
            return True
        if control_type == ControlType.COMMIT:
            if pid in self.ongoing_committed:
                self.ongoing_committed.discard(pid)
                return False
            return True
        return False

    def on_batch_read(self, batch: StoredBatch) -> bool:
        """True when the data batch belongs to an aborted transaction."""
        self._consume_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        state = self.ongoing_aborted.get(batch.producer_id)
        if state is not None:
            state.last_observed_batch_offset = batch.last_offset
            return True
        self.ongoing_committed.add(batch.producer_id)
        return False


# -- which range ------------------------------------------------------------------------------------


def first_dirty_offset(log: PartitionLog) -> int:
    """The checkpoint, or the log start offset when it is unset or out of the log's range."""
    checkpoint = log.segments.cleaner_checkpoint
    if checkpoint is None or checkpoint < log.log_start_offset or checkpoint > log.log_end_offset:
        return log.log_start_offset
    return checkpoint


def _segment_first_batch_timestamp(log: PartitionLog, index: int) -> int:
    return log.segments.segments[index].first_batch_timestamp


def max_compaction_delay(log: PartitionLog, config: TopicConfig, first_dirty: int, now_ms: int) -> int:
    """How long past max.compaction.lag.ms the earliest dirty segment is (0: not overdue)."""
    segs = log.segments
    stamps = [t for i in segs.non_active_from(first_dirty) if (t := _segment_first_batch_timestamp(log, i)) > 0]
    earliest = min(stamps) if stamps else None
    lag = max(int(config.get("max.compaction.lag.ms")), 0)
    clean_until = now_ms - lag
    if earliest is not None and earliest < clean_until:
        return clean_until - earliest
    return 0


def log_to_clean(log: PartitionLog, config: TopicConfig, now_ms: int) -> LogToClean:
    """The cleanable range of a compacted log (Kafka's cleanableOffsets + LogToClean)."""
    segs = log.segments
    first_dirty = first_dirty_offset(log)
    candidates = [log.last_stable_offset, segs.active.base_offset]
    min_lag = max(int(config.get("min.compaction.lag.ms")), 0)
    if min_lag > 0:
        for i in segs.non_active_from(first_dirty):
            if segs.segments[i].largest_timestamp > now_ms - min_lag:
                candidates.append(segs.segments[i].base_offset)
                break
    uncleanable = max(first_dirty, min(candidates))
    # rounded down to its segment (Kafka's calculateCleanableBytes)
    non_active = segs.non_active_from(uncleanable)
    first_uncleanable = segs.segments[non_active[0]].base_offset if non_active else segs.active.base_offset
    clean_bytes = sum(segs.segments[i].size for i in segs.indices_in(-1, first_dirty))
    cleanable_bytes = sum(segs.segments[i].size
                          for i in segs.indices_in(min(first_dirty, first_uncleanable), first_uncleanable))
    delay = max_compaction_delay(log, config, first_dirty, now_ms)
    return LogToClean(log, config, first_dirty, first_uncleanable, clean_bytes, cleanable_bytes, delay > 0)


# -- one pass ---------------------------------------------------------------------------------------


def _records(batch: StoredBatch) -> list[Record]:
    return batch.view().records()


def build_offset_map(log: PartitionLog, start: int, end: int) -> dict[bytes, int]:
    """Latest offset of each key in [start, end), aborted transactions and control batches left out."""
    segs = log.segments
    offsets: dict[bytes, int] = {}
    txns = CleanedTransactionMetadata(t for t in aborted_transactions(log)
                                      if t.last_offset >= start and t.first_offset < end)
    for i in segs.indices_in(start, end):
        lo, hi = segs.batch_range(log, i)
        for b in log.batches[lo:hi]:
            if b.is_control:
                txns.on_control_batch_read(b)
                continue
            if txns.on_batch_read(b) or b.last_offset < start:
                continue
            for rec in _records(b):
                if rec.key is not None and rec.offset >= start:
                    offsets[rec.key] = rec.offset
    return offsets


def group_segments(segments: list[Segment], max_size: int, first_uncleanable: int) -> list[list[int]]:
    """Kafka's groupSegmentsBySize: consecutive segments while their total (pre-clean) size stays within
    segment.bytes and their offsets within an int32 of the group's base. Returns lists of indices."""
    groups: list[list[int]] = []
    i = 0
    n = len(segments)
    while i < n:
        group = [i]
        size = segments[i].size
        i += 1
        while i < n and size + segments[i].size <= max_size:
            last = segments[i + 1].base_offset - 1 if i + 1 < n else first_uncleanable - 1
            if last - segments[group[0]].base_offset > INT32_MAX:
                break
            group.append(i)
            size += segments[i].size
            i += 1
        groups.append(group)
    return groups


@dataclass
class _Pass:
    """The state of one cleaning pass over a log."""

    log: PartitionLog
    offsets: dict[bytes, int]
    latest_offset: int
    upper_bound: int
    now_ms: int
    delete_retention_ms: int
    txns: CleanedTransactionMetadata
    last_records: dict[int, tuple[int | None, int]]  # producer id -> (last data offset, epoch)
    removed: int = 0
    empties: int = 0

    def retain_record(self, batch: RecordBatch, rec: Record) -> bool:
        """Kafka's Cleaner.shouldRetainRecord for a v2 batch."""
        if rec.offset > self.latest_offset:
            return True
        if rec.key is None:
            return False
        if rec.offset < self.offsets.get(rec.key, -1):
            return False
        if rec.value is not None:
            return True
        horizon = batch.delete_horizon_ms
        return horizon is None or self.now_ms < horizon

    def is_last_of_producer(self, b: StoredBatch) -> bool:
        last = self.last_records.get(b.producer_id)
        if last is None:
            return False
        last_data_offset, epoch = last
        if last_data_offset is not None:
            return b.last_offset == last_data_offset
        return b.is_control and b.producer_epoch == epoch

    def filter(self, b: StoredBatch) -> StoredBatch | None:
        """The batch as this pass keeps it: itself, rewritten, emptied, or None (deleted)."""
        view = b.view()
        if b.is_control:
            can_discard = self.txns.on_control_batch_read(b)
            horizon = view.delete_horizon_ms
            discard_records = can_discard and horizon is not None and horizon <= self.now_ms
        else:
            can_discard = self.txns.on_batch_read(b)
            discard_records = can_discard
        if b.producer_id != NO_PRODUCER_ID and self.is_last_of_producer(b):
            retain_empty, delete = True, False
        elif b.last_offset + 1 == self.upper_bound:
            # the last batch of the cleaned range stays, even empty, so the last offset is kept (Kafka 3.8+)
            retain_empty, delete = True, False
        else:
            retain_empty, delete = False, discard_records
        marker_for_empty_txn = can_discard and b.is_control
        if delete:
            self.removed += b.record_count
            return None
        records = _records(b)
        if discard_records:
            kept: list[Record] = []
        elif b.is_control:
            kept = records
        else:
            kept = [r for r in records if self.retain_record(view, r)]
        self.removed += len(records) - len(kept)
        if kept:
            has_tombstone = any(r.value is None for r in kept)
            needs_horizon = (has_tombstone or marker_for_empty_txn) and not view.has_delete_horizon
            if len(kept) == len(records) and not needs_horizon:
                return b
            horizon_ms = self.now_ms + self.delete_retention_ms if needs_horizon else None
            return _restored(b, rebuild_batch(view, kept, delete_horizon_ms=horizon_ms))
        if retain_empty:
            self.empties += 1
            if b.record_count == 0 and b.size == RECORD_BATCH_OVERHEAD and view.base_timestamp == NO_TIMESTAMP:
                return b  # already Kafka's empty batch
            return _restored(b, rebuild_batch(view, []))
        return None


def _restored(old: StoredBatch, data: bytearray) -> StoredBatch:
    """A StoredBatch for rewritten bytes, keeping what the log knows of the original (leader epoch, append time)."""
    v = RecordBatch(data)
    return dataclasses.replace(
        old,
        base_offset=v.base_offset,
        last_offset=v.last_offset,
        max_timestamp=v.max_timestamp,
        base_timestamp=v.base_timestamp,
        data=v.buffer,
        producer_id=v.producer_id,
        producer_epoch=v.producer_epoch,
        base_sequence=v.base_sequence,
        last_sequence=v.last_sequence,
        record_count=v.record_count,
        is_transactional=v.is_transactional,
        is_control=v.is_control,
    )


def last_records_of_producers(log: PartitionLog) -> dict[int, tuple[int | None, int]]:
    """Kafka's lastRecordsOfActiveProducers: each producer's last data offset (None if it has no data batch
    in its current epoch) and epoch, from the partition's producer state."""
    out: dict[int, tuple[int | None, int]] = {}
    for pid, entry in log.producers.entries.items():
        last = entry.batches[-1].last_offset if entry.batches else None
        out[pid] = (last, entry.epoch)
    return out


def clean(log: PartitionLog, config: TopicConfig, now_ms: int, first_dirty: int, end: int) -> CleanerStats:
    """One cleaning pass: build the offset map over [first_dirty, end) and recopy every segment below
    `end` (a segment base). Sets the cleaner checkpoint to `end`."""
    segs = log.segments
    stats = CleanerStats(log.topic, log.partition, first_dirty, end)
    cleaning = [i for i, s in enumerate(segs.segments) if s.base_offset < end]
    if not cleaning:
        segs.cleaner_checkpoint = end
        if log.sink is not None:
            log.sink.cleaned(0)
        return stats
    offsets = build_offset_map(log, first_dirty, end)
    old_segments = [segs.segments[i] for i in cleaning]
    groups = group_segments(old_segments, segs.segment_bytes, end)
    aborted = [t for t in aborted_transactions(log) if t.first_offset < end]
    work = _Pass(
        log=log,
        offsets=offsets,
        latest_offset=end - 1,
        upper_bound=end,
        now_ms=now_ms,
        delete_retention_ms=int(config.get("delete.retention.ms")),
        txns=CleanedTransactionMetadata(aborted),
        last_records=last_records_of_producers(log),
    )
    hi_all = segs.batch_range(log, cleaning[-1])[1]
    old_batches = log.batches[:hi_all]
    stats.batches_before = len(old_batches)
    stats.bytes_before = sum(b.size for b in old_batches)
    new_batches: list[StoredBatch] = []
    new_segments: list[Segment] = []
    for group in groups:
        merged = Segment(old_segments[group[0]].base_offset,
                         created_ms=old_segments[group[0]].created_ms,
                         last_modified_ms=old_segments[group[-1]].last_modified_ms)
        for k in group:
            lo, hi = segs.batch_range(log, cleaning[k])
            for b in log.batches[lo:hi]:
                out = work.filter(b)
                if out is None:
                    continue
                new_batches.append(out)
                if not merged.has_batches:
                    merged.has_batches = True
                    merged.first_batch_timestamp = out.max_timestamp
                merged.size += out.size
                merged.max_timestamp = max(merged.max_timestamp, out.max_timestamp)
        new_segments.append(merged)
    install(log, new_batches, hi_all)
    segs.segments[: len(cleaning)] = new_segments
    segs.cleaner_checkpoint = end
    if log.sink is not None:
        log.sink.cleaned(len(new_segments))  # .cleaned files, swapped in as Kafka does
    stats.batches_after = len(new_batches)
    stats.bytes_after = sum(b.size for b in new_batches)
    stats.records_removed = work.removed
    stats.empty_batches_retained = work.empties
    stats.aborted_retained = list(work.txns.retained_aborted)
    return stats


class _AbortedLike(Protocol):
    @property
    def producer_id(self) -> int: ...
    @property
    def first_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...


A = TypeVar("A", bound=_AbortedLike)


def prune_aborted_index(index: Iterable[A], stats: CleanerStats) -> list[A]:
    """An aborted-transaction index after a pass, as Kafka rebuilds the cleaned segments' transaction
    index: entries whose ABORT marker lies in the cleaned range stay only when the marker stayed because
    batches of the transaction are still there. Otherwise a read_committed consumer would be told of an
    aborted transaction with no marker left to end it, and would skip the producer's later transactional
    batches."""
    kept = {(t.producer_id, t.last_offset) for t in stats.aborted_retained}
    return [t for t in index if t.last_offset >= stats.end_offset or (t.producer_id, t.last_offset) in kept]


def install(log: PartitionLog, batches: list[StoredBatch], replacing: int) -> None:
    """Put `batches` in place of the log's first `replacing` batches: the log's store rebuilt from their bytes and
    those of the batches after them (BatchStore.replace: new chunks, new offset and time indexes)."""
    store = log.store
    kept = [store.data(i) for i in range(replacing, len(store))]
    log.store.replace([b.data for b in batches] + kept)
    log.forget_max_timestamp()
    log.size_bytes = sum(len(b.data) for b in batches) + sum(len(v) for v in kept)


def clean_now(log: PartitionLog, config: TopicConfig, now_ms: int) -> CleanerStats:
    """Roll the active segment and make a pass now over everything cleanable (the test hook behind
    MockBroker.compact): no dirty-ratio threshold, and a pass even when the dirty section is empty, so
    tombstones and markers past their delete horizon go. min.compaction.lag.ms and the last stable
    offset still bound it."""
    log.segments.roll(log.log_end_offset, now_ms)
    target = log_to_clean(log, config, now_ms)
    return clean(log, config, now_ms, target.first_dirty_offset, target.first_uncleanable_offset)
