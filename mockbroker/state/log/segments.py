"""Segments of one partition log, as Kafka's LocalLog / LogSegment keep them, over the in-memory batches.

The log's bytes stay in the log's BatchStore (state/log/batch_store.py); a segment here is only a boundary (its base offset) with
the bookkeeping Kafka keeps per segment file, which compaction and retention work in units of:
- size: the bytes appended to it. Moving the log start offset (DeleteRecords) does not shrink it, as it
  does not shrink Kafka's file; cleaning replaces it with the cleaned size.
- max timestamp (Kafka's maxTimestampSoFar) and, without one, the last-modified time (the broker clock
  of the last append), which make Kafka's `largestTimestamp` (retention.ms, min.compaction.lag.ms);
- the first batch's max timestamp (Kafka's rollingBasedTimestamp: segment.ms, max.compaction.lag.ms);
- the broker clock when the segment got its first batch (Kafka: the file's creation time).

Rolling (Kafka's UnifiedLog.maybeRoll / LogSegment.shouldRoll), checked when a batch is appended, before
it lands: a non-empty active segment rolls when the batch would take it past segment.bytes, or when
segment.ms has passed, which Kafka measures as the new batch's max timestamp minus the segment's first
batch's max timestamp (or, without timestamps, since the segment was created). The broker clock rule is
added: segment.ms after the segment's first append, so a test that moves the broker clock (while clients
stamp records with the wall clock) sees segments age as a real broker's would. segment.jitter.ms is not
applied. The active segment (the last one) is never cleaned; retention may delete it, rolling first, as
Kafka does.

No I/O: PartitionLog calls `on_append` for each stored batch; cleaner.py and retention.py replace
segments. `config` (the topic's TopicConfig, set when the partition is created) is read on each append,
so AlterConfigs changes apply at once; without one Kafka's defaults apply.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker.state.copying import copy_value

if TYPE_CHECKING:
    from mockbroker.state.configs import TopicConfig
    from mockbroker.state.log.stored_batch import StoredBatch

DEFAULT_SEGMENT_BYTES = 1073741824
DEFAULT_SEGMENT_MS = 604800000


class SegmentedLog(Protocol):
    """What segment lookups read of a partition log (mockbroker.state.log.partition_log.PartitionLog, which imports this
    module: the log depends on its segments, never the other way round)."""

    @property
    def base_offsets(self) -> Sequence[int]: ...  # the stored batches' base offsets, sorted
    log_end_offset: int
    segments: LogSegments


class SizedBatch(Protocol):
    """What the roll rule reads of a batch (a StoredBatch, or a RecordBatch about to be stored)."""

    @property
    def size(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...


class AppendedBatch(SizedBatch, Protocol):
    """What on_append reads of a batch just stored (a RecordBatch, or a StoredBatch)."""

    @property
    def base_offset(self) -> int: ...


@dataclass(slots=True)
class Segment:
    """One segment's bookkeeping; its batches are the log's batches with base offset in [base, next base)."""

    base_offset: int
    size: int = 0
    max_timestamp: int = -1
    first_batch_timestamp: int = -1  # the first batch's max timestamp; -1: none yet, or the batch has none
    has_batches: bool = False
    created_ms: int = -1  # broker clock of the first append (-1: none yet)
    last_modified_ms: int = -1  # broker clock of the last append (or of the cleaned segments)

    def copy(self) -> Segment:
        """A copy (for a snapshot, through LogSegments.__deepcopy__): every field is a number or a flag."""
        return Segment(*_segment_fields(self))

    @property
    def largest_timestamp(self) -> int:
        """Kafka's LogSegment.largestTimestamp: the max record timestamp, else the last-modified time."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified_ms

    def add(self, batch: SizedBatch, now_ms: int) -> None:
        if not self.has_batches:
            self.has_batches = True
            self.first_batch_timestamp = batch.max_timestamp
            if self.created_ms < 0:
                self.created_ms = now_ms
        self.size += batch.size
        if batch.max_timestamp > self.max_timestamp:
            self.max_timestamp = batch.max_timestamp
        self.last_modified_ms = now_ms


_segment_fields = operator.attrgetter(*Segment.__slots__)  # every field, in the order Segment() takes them


class LogSegments:
    """The segment list of one partition log (the last one is the active segment), plus the cleaner's
    checkpoint for it (Kafka's cleaner-offset-checkpoint: the first dirty offset)."""

    def __init__(self, base_offset: int = 0) -> None:
        self.segments: list[Segment] = [Segment(base_offset)]
        self.config: TopicConfig | None = None
        self.cleaner_checkpoint: int | None = None

    def __len__(self) -> int:
        return len(self.segments)

    def __deepcopy__(self, memo: dict[int, Any]) -> LogSegments:
        """A copy for a snapshot (mockbroker/snapshots.py), made fast: each Segment copied (its fields are numbers),
        the topic's config through memo (the copy's topic holds the same copy)."""
        new = LogSegments.__new__(LogSegments)
        memo[id(self)] = new
        attrs = new.__dict__
        for key, value in vars(self).items():
            if key == "segments":
                attrs[key] = [Segment(*_segment_fields(segment)) for segment in value]  # Segment.copy, inlined
            else:
                attrs[key] = copy_value(value, memo)
        return new

    def __repr__(self) -> str:
        return f"LogSegments(bases={self.bases()}, checkpoint={self.cleaner_checkpoint})"

    @property
    def active(self) -> Segment:
        return self.segments[-1]

    def bases(self) -> list[int]:
        return [s.base_offset for s in self.segments]

    # -- config --------------------------------------------------------------------------------------
    def _int_config(self, name: str, default: int) -> int:
        return int(self.config.get(name)) if self.config is not None else default

    @property
    def segment_bytes(self) -> int:
        return self._int_config("segment.bytes", DEFAULT_SEGMENT_BYTES)

    @property
    def segment_ms(self) -> int:
        return self._int_config("segment.ms", DEFAULT_SEGMENT_MS)

    # -- appends and rolls ---------------------------------------------------------------------------
    def on_append(self, batch: AppendedBatch, now_ms: int) -> None:
        """Account for a batch just stored at the end of the log, rolling first if Kafka would have."""
        seg = self.segments[-1]
        if seg.has_batches and self._should_roll(seg, batch, now_ms):
            seg = self._start_segment(batch.base_offset, now_ms)
        seg.add(batch, now_ms)

    def rolls_before(self, batch: SizedBatch, now_ms: int) -> bool:
        """Whether appending `batch` now starts a new segment (what on_append will do)."""
        seg = self.segments[-1]
        return seg.has_batches and self._should_roll(seg, batch, now_ms)

    def _should_roll(self, seg: Segment, batch: SizedBatch, now_ms: int) -> bool:
        config = self.config
        if config is not None:  # both settings from the topic's parsed ones (every append comes here)
            settings = config.log_settings()
            segment_bytes, segment_ms = settings.segment_bytes, settings.segment_ms
        else:
            segment_bytes, segment_ms = DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENT_MS
        if seg.size > segment_bytes - batch.size:
            return True
        if now_ms - seg.created_ms > segment_ms:  # the broker clock (Kafka's rule without timestamps)
            return True
        # Kafka's rule: the new batch's timestamp against the segment's first batch's
        return seg.first_batch_timestamp >= 0 and batch.max_timestamp - seg.first_batch_timestamp > segment_ms

    def _start_segment(self, base_offset: int, now_ms: int) -> Segment:
        seg = Segment(base_offset, created_ms=now_ms, last_modified_ms=now_ms)
        self.segments.append(seg)
        return seg

    def roll(self, log_end_offset: int, now_ms: int) -> Segment:
        """Start a new active segment at the log end offset (Kafka's roll); nothing when the active segment
        is empty and already starts there."""
        seg = self.segments[-1]
        if not seg.has_batches:
            seg.base_offset = log_end_offset  # Kafka deletes and recreates an empty active segment
            return seg
        return self._start_segment(log_end_offset, now_ms)

    def truncate_to(self, log: SegmentedLog, batches: Sequence[StoredBatch]) -> None:
        """After the log dropped its batches from log.log_end_offset on: segments starting there go (the
        first one stays, empty), and the last one left is recounted from the batches it still holds."""
        end = log.log_end_offset
        kept = [s for s in self.segments if s.base_offset < end] or [Segment(min(self.segments[0].base_offset, end))]
        last = kept[-1]
        self.segments = kept
        lo = bisect.bisect_left(log.base_offsets, last.base_offset)
        last.size, last.max_timestamp, last.has_batches = 0, -1, False
        for b in batches[lo:]:
            last.size += b.size
            last.max_timestamp = max(last.max_timestamp, b.max_timestamp)
            last.has_batches = True
        if self.cleaner_checkpoint is not None and self.cleaner_checkpoint > end:
            self.cleaner_checkpoint = end

    # -- lookups (Kafka's LocalLog.logSegments / nonActiveLogSegmentsFrom) ---------------------------
    def floor_index(self, offset: int) -> int:
        """Index of the segment holding `offset` (the last one whose base is <= offset), -1 if none."""
        return bisect.bisect_right(self.bases(), offset) - 1

    def indices_in(self, start: int, end: int) -> range:
        """Indices of the segments overlapping [start, end): from the one holding `start` (or the first)
        to the last whose base is below `end` (empty when start == end)."""
        if start >= end:
            return range(0)
        bases = self.bases()
        lo = max(bisect.bisect_right(bases, start) - 1, 0)
        hi = bisect.bisect_left(bases, end)
        return range(lo, hi)

    def non_active_from(self, offset: int) -> range:
        """Indices of the non-active segments from the one holding `offset`."""
        active_base = self.segments[-1].base_offset
        if offset > active_base:
            return range(0)
        return self.indices_in(offset, active_base)

    def upper_bound(self, index: int, log_end_offset: int) -> int:
        """The first offset after segment `index`: the next segment's base, or the log end offset."""
        if index + 1 < len(self.segments):
            return self.segments[index + 1].base_offset
        return log_end_offset

    def batch_range(self, log: SegmentedLog, index: int) -> tuple[int, int]:
        """[lo, hi) indices into log.batches of the batches of segment `index`."""
        lo = bisect.bisect_left(log.base_offsets, self.segments[index].base_offset)
        if index + 1 < len(self.segments):
            hi = bisect.bisect_left(log.base_offsets, self.segments[index + 1].base_offset, lo)
        else:
            hi = len(log.base_offsets)  # one entry per stored batch
        return lo, hi

    def size_bytes(self) -> int:
        """Kafka's UnifiedLog.size: the sum of the segments' sizes."""
        return sum(s.size for s in self.segments)


def describe_segments(log: SegmentedLog) -> list[dict[str, int]]:
    """The segments of a log as a test reads them: base offset, next offset, size, batch count, largest
    timestamp, and whether it is the active one."""
    segs = log.segments
    out = []
    for i, s in enumerate(segs.segments):
        lo, hi = segs.batch_range(log, i)
        out.append({
            "base_offset": s.base_offset,
            "next_offset": segs.upper_bound(i, log.log_end_offset),
            "size": s.size,
            "batches": hi - lo,
            "largest_timestamp": s.largest_timestamp,
            "active": int(i == len(segs.segments) - 1),
        })
    return out
