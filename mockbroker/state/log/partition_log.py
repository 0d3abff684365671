"""One partition's log: the v2 record batches producers sent, kept as bytes, with the indexes to serve them.

- Batches are stored as the bytes that arrived, after the broker stamped their base offset and partition
  leader epoch in place: copied once into the log's BatchStore (state/log/batch_store.py: large chunks and
  compact columns, no Python object per batch; the request frame goes back to the allocator). Fetch hands
  views of the stored bytes back. `batches` makes a StoredBatch per index asked for (inspection, cleaner).
- Offset index: `base_offsets` is sorted; bisect finds the batch holding an offset. A fetch at an
  offset inside a batch returns that whole batch, as Kafka does (the client skips the records below
  its position).
- Time index: `max_ts_running` is the running maximum of the batches' max timestamps, so bisect finds
  the first batch that can hold a record with timestamp >= t.
- Offsets: log start offset (first offset still served), high watermark (the log end offset, unless an
  in-sync follower is behind: replicated_end, kept by state/cluster/replicas.py), last stable offset (the first offset of the earliest open transaction, else the high
  watermark; open transactions are tracked by mockbroker.state.txn.coordinator).
- Leader epochs: (epoch, start offset) entries, for OffsetForLeaderEpoch.

No I/O and no asyncio: listeners registered with `add_append_listener` are plain callbacks (the fetch
long-poll registers one that wakes its future). With a data dir, `sink` (state/storage_hooks.LogSink,
None in memory) writes each batch before the log stores it, and hears of log start offset moves.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mockbroker.protocol.records.batch import (
    CONTROL_MASK,
    TRANSACTIONAL_MASK,
    Record,
    RecordBatch,
    last_sequence_of,
)
from mockbroker.state.copying import copy_attrs
from mockbroker.state.log.batch_store import BatchStore, StoredBatches
from mockbroker.state.log.producers import ProducerStateTable
from mockbroker.state.log.segments import LogSegments
from mockbroker.state.log.stored_batch import StoredBatch

if TYPE_CHECKING:
    from mockbroker.state.log.storage_hooks import LogSink

__all__ = ["PartitionLog", "StoredBatch", "copy_log"]

def copy_log(log: PartitionLog, memo: dict[int, Any]) -> PartitionLog:
    """A copy of a log for a snapshot (mockbroker/snapshots.py): the stored bytes shared (BatchStore.__deepcopy__:
    stored bytes never change), the columns indexing them copied, the rest (producer state, segments, open
    transactions) copied deeply over memo; no append listeners (they belong to the parked fetches of this log)."""
    return copy_attrs(log, memo, shallow=("epoch_starts",), empty=("_listeners",))


class PartitionLog:
    sink: LogSink | None = None  # the partition's files (mockbroker/storage), None in memory mode

    def __init__(self, topic: str, partition: int, leader_epoch: int = 0) -> None:
        self.topic = topic
        self.partition = partition
        self.store = BatchStore()
        self.log_start_offset = 0
        self.log_end_offset = 0  # next offset to assign
        self.leader_epoch = leader_epoch
        self.epoch_starts: list[tuple[int, int]] = []  # (epoch, start offset), epochs increasing
        # The end offset every in-sync replica has (state/cluster/replicas.py), when an ISR member is behind (a
        # stalled follower): the high watermark stops there. None: every ISR member has the whole log.
        self.replicated_end: int | None = None
        self.size_bytes = 0
        self._listeners: list[Callable[[], None]] = []
        # First offsets of open transactions (producer_id -> first offset); see state/txn/coordinator.py.
        self.open_txn_first_offsets: dict[int, int] = {}
        self.producers = ProducerStateTable(f"{topic}-{partition}")
        # Segment boundaries and the cleaner checkpoint (state/log/segments.py, cleaner.py, retention.py).
        self.segments = LogSegments()
        # ListOffsets MAX_TIMESTAMP's batch, kept on append (Kafka's maxTimestampSoFar): (base offset, max
        # timestamp) of the first data batch with the largest max timestamp, None if none, and the number of
        # stored batches it accounts for (-1: unknown, found by one walk over the log when next asked for).
        self._max_ts_batch: tuple[int, int] | None = None
        self._max_ts_count = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> PartitionLog:
        return copy_log(self, memo)

    @property
    def batches(self) -> StoredBatches:
        """The stored batches as a sequence of StoredBatch, each made when asked for (not for hot paths)."""
        return StoredBatches(self.store)

    @property
    def base_offsets(self) -> array[int]:
        """The offset index: the stored batches' base offsets, sorted."""
        return self.store.base_offsets

    @property
    def max_ts_running(self) -> array[int]:
        """The time index: the running maximum of the stored batches' max timestamps."""
        return self.store.max_ts_running

    # -- offsets ---------------------------------------------------------------------------------
    @property
    def high_watermark(self) -> int:
        if self.replicated_end is not None and self.replicated_end < self.log_end_offset:
            return self.replicated_end
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        if self.open_txn_first_offsets:
            return min(min(self.open_txn_first_offsets.values()), self.high_watermark)
        return self.high_watermark

    def sync_open_txns(self) -> None:
        """Recompute open_txn_first_offsets from the producer state (after producers.rebuild)."""
        self.open_txn_first_offsets = {pid: e.current_txn_first_offset for pid, e in self.producers.entries.items()
                                       if e.current_txn_first_offset >= 0}

    # -- append ----------------------------------------------------------------------------------
    def append(self, batch: RecordBatch, now_ms: int, *, log_append_time: bool = False) -> StoredBatch:
        """Assign offsets to a validated batch (in place), store it, wake waiters."""
        base = self.log_end_offset
        batch.set_base_offset(base)
        batch.set_partition_leader_epoch(self.leader_epoch)
        if log_append_time:
            batch.set_log_append_time(now_ms)
        if self.sink is not None:
            self.sink.append(batch, now_ms)  # on disk before the log holds it (may raise STORAGE_ERROR)
        stored = self._store(batch, now_ms)
        if self._listeners:  # notify's test, without the call when nobody waits
            self.notify()
        return stored

    def _store(self, batch: RecordBatch, now_ms: int) -> StoredBatch:
        (base_offset, _length, _epoch, _magic, _crc, attributes, last_offset_delta, base_timestamp, max_timestamp,
         producer_id, producer_epoch, base_sequence, record_count) = batch.header()  # one unpack: the hot path
        last_offset = base_offset + last_offset_delta
        if not self.epoch_starts or self.epoch_starts[-1][0] != self.leader_epoch:
            self.epoch_starts.append((self.leader_epoch, base_offset))
        data = self.store.append(batch.buffer, base_offset, max_timestamp)
        if self._max_ts_count >= 0:
            if self._max_ts_count + 1 != len(self.store):
                self._max_ts_count = -1  # the store changed behind the log's back (recovery): walk it when asked
            else:
                self._max_ts_count += 1
                best = self._max_ts_batch
                if not attributes & CONTROL_MASK and (best is None or max_timestamp > best[1]):
                    self._max_ts_batch = (base_offset, max_timestamp)
        self.log_end_offset = last_offset + 1
        self.size_bytes += len(data)
        stored = StoredBatch(base_offset, last_offset, max_timestamp, base_timestamp, data, producer_id,
                             producer_epoch, base_sequence, last_sequence_of(base_sequence, last_offset_delta),
                             record_count, bool(attributes & TRANSACTIONAL_MASK), bool(attributes & CONTROL_MASK),
                             self.leader_epoch)
        self.segments.on_append(stored, now_ms)  # the stored batch's fields: plain attributes, no unpacking
        if producer_id >= 0:
            entry = self.producers.update(producer_id, producer_epoch, base_sequence, stored.last_sequence, base_offset,
                                          last_offset, max_timestamp, now_ms, is_transactional=stored.is_transactional,
                                          is_control=stored.is_control)
            # The last stable offset follows the producer's open transaction (a marker closes it).
            if entry.current_txn_first_offset >= 0:
                self.open_txn_first_offsets[producer_id] = entry.current_txn_first_offset
            elif self.open_txn_first_offsets:
                self.open_txn_first_offsets.pop(producer_id, None)
        return stored

    # -- listeners (fetch long-poll) -------------------------------------------------------------
    def add_append_listener(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def remove_append_listener(self, callback: Callable[[], None]) -> None:
        try:
            self._listeners.remove(callback)
        except ValueError:
            pass

    def notify(self) -> None:
        if self._listeners:
            for cb in list(self._listeners):
                cb()

    # -- reads -----------------------------------------------------------------------------------
    def index_of(self, offset: int) -> int:
        """Index of the first batch whose last offset >= offset (len(batches) if none)."""
        i = bisect.bisect_right(self.base_offsets, offset) - 1
        if i < 0:
            return 0
        if self.store.last_offset(i) < offset:
            return i + 1
        return i

    def read(self, offset: int, max_bytes: int, *, min_one: bool, upto: int | None = None) -> tuple[list[memoryview], int]:
        """Whole batches from the one holding `offset`, up to max_bytes (the first one even if larger when
        min_one), stopping before offset `upto` (the high watermark or the last stable offset). Both bounds
        fall between batches (the last stable offset is the first offset of an open transaction's first
        batch), so a batch starting below the bound ends below it too."""
        limit = self.log_end_offset if upto is None else upto
        return self.store.read(self.index_of(offset), limit, max_bytes, min_one)

    def bytes_below(self, end: int) -> int:
        """The bytes of the batches wholly below offset `end` (a follower's copy ending there): the log's size
        less the batches from the one holding `end`, so the cost is in the batches above it, not the log's."""
        if end >= self.log_end_offset:
            return self.size_bytes
        store = self.store
        return self.size_bytes - sum(store.size(i) for i in range(self.index_of(end), len(store)))

    def iter_batches(self, start: int = 0) -> Iterator[StoredBatch]:
        return self.iter_batches_from_index(self.index_of(start))

    def iter_batches_from_index(self, i: int) -> Iterator[StoredBatch]:
        store = self.store
        while i < len(store):
            yield store.batch(i)
            i += 1

    def records(self) -> Iterator[tuple[StoredBatch, Record]]:
        """Every record with its batch, decoded (for inspection, not the hot path)."""
        for b in self.batches:
            if b.is_control:
                continue
            for rec in b.view().iter_records():
                if rec.offset >= self.log_start_offset:
                    yield b, rec

    # -- time and epochs -------------------------------------------------------------------------
    def offset_for_timestamp(self, target_ms: int) -> tuple[int, int, int] | None:
        """(offset, timestamp, leader epoch) of the first record with timestamp >= target, or None."""
        i = bisect.bisect_left(self.max_ts_running, target_ms)
        i = max(i, self.index_of(self.log_start_offset))
        for b in self.iter_batches_from_index(i):
            if b.max_timestamp < target_ms or b.is_control:
                continue
            for rec in b.view().iter_records():  # decoded one at a time: the search stops at the first match
                if rec.offset >= self.log_start_offset and rec.timestamp >= target_ms:
                    return rec.offset, rec.timestamp, b.leader_epoch
        return None

    def max_timestamp_offset(self) -> tuple[int, int, int] | None:
        """(offset, timestamp, epoch) of the record with the largest timestamp (the first such), control batches
        left out. The batch holding it is kept up to date on append; only after a change other than an append
        (truncation, compaction) is the log walked again, once."""
        if self._max_ts_count != len(self.store):
            self._find_max_timestamp_batch()
        if self._max_ts_batch is None:
            return None
        best = self.store.batch(bisect.bisect_left(self.base_offsets, self._max_ts_batch[0]))
        for rec in best.view().iter_records():
            if rec.timestamp == best.max_timestamp:
                return rec.offset, rec.timestamp, best.leader_epoch
        return best.last_offset, best.max_timestamp, best.leader_epoch

    def _find_max_timestamp_batch(self) -> None:
        best: tuple[int, int] | None = None
        for b in self.iter_batches_from_index(self.index_of(self.log_start_offset)):
            if not b.is_control and (best is None or b.max_timestamp > best[1]):
                best = (b.base_offset, b.max_timestamp)
        self._max_ts_batch, self._max_ts_count = best, len(self.store)

    def forget_max_timestamp(self) -> None:
        """The batches changed other than by an append (compaction, truncation): the next MAX_TIMESTAMP
        lookup walks the log once."""
        self._max_ts_count = -1

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers: the largest epoch <= the one asked for,
        and the start offset of the epoch after it (or the log end offset); (-1, -1) if unknown."""
        if epoch > self.leader_epoch:
            return -1, -1
        if epoch == self.leader_epoch:
            return epoch, self.log_end_offset
        found = -1
        end = self.log_end_offset
        for k, (e, _start) in enumerate(self.epoch_starts):
            if e <= epoch:
                found = e
                end = self.epoch_starts[k + 1][1] if k + 1 < len(self.epoch_starts) else self.log_end_offset
        if found < 0:
            # Smaller than every known epoch: Kafka answers it with the first known epoch's start offset.
            return (epoch, self.epoch_starts[0][1]) if self.epoch_starts and epoch >= 0 else (-1, -1)
        return found, end

    # -- truncation from the end (an unclean leader election: state/cluster/replicas.py) -----------------
    def truncate_to(self, offset: int, now_ms: int = 0) -> None:
        """Drop every batch at or above `offset` (a batch boundary: where a replica's copy ended), as
        Kafka's truncateTo: the log end moves back, leader-epoch entries starting there go, the producer
        state is rebuilt from what is left. Parked fetches are woken."""
        if offset >= self.log_end_offset:
            return
        offset = max(offset, self.log_start_offset)
        keep = self.index_of(offset)
        if keep < len(self.store) and self.store.base_offsets[keep] < offset:
            keep += 1  # a batch holding `offset` ends above it: replicas copy whole batches, so it stays
        self.size_bytes -= self.store.truncate(keep)
        if self._max_ts_batch is not None and self._max_ts_batch[0] >= offset:
            self.forget_max_timestamp()  # the largest is cut off; otherwise it still is the largest
        else:
            self._max_ts_count = len(self.store) if self._max_ts_count >= 0 else -1
        self.log_end_offset = self.store.last_offset(keep - 1) + 1 if keep else offset
        self.epoch_starts = [(e, start) for e, start in self.epoch_starts if start < self.log_end_offset]
        self.segments.truncate_to(self, self.batches)
        self.producers.rebuild(self.batches, now_ms)
        self.sync_open_txns()
        if self.sink is not None:
            self.sink.segments_changed()  # the cut tail's segment files go too
        self.notify()

    # -- truncation from the front (retention, DeleteRecords) ------------------------------------
    def truncate_before(self, offset: int, now_ms: int = 0) -> None:
        """Move the log start offset to `offset` and drop the batches wholly below it.

        A producer whose batches are all gone is forgotten (and then accepted with any sequence, KIP-360), as
        Kafka's truncateHead does: from the producer table alone (producers.truncate_head) when it can tell,
        else rebuilt from the batches that remain. Neither walks the batches left in the common case."""
        offset = min(max(offset, self.log_start_offset), self.log_end_offset)
        self.log_start_offset = offset
        keep_from = self.index_of(offset)  # the batches wholly below `offset` go
        if keep_from:
            best = self._max_ts_batch
            self.size_bytes -= self.store.drop_front(keep_from)
            left = len(self.store)
            if not left or (best is not None and best[0] < self.store.base_offsets[0]):
                self.forget_max_timestamp()  # the largest went with the dropped batches
            elif self._max_ts_count >= 0:
                self._max_ts_count = left
            if not self.producers.truncate_head(offset):
                self.producers.rebuild(self.batches, now_ms)
            self.sync_open_txns()
        if self.sink is not None:
            self.sink.log_start_moved()
