"""Retention: whole segments deleted from the front of a log, as Kafka's UnifiedLog.deleteOldSegments does.

Three rules, each applied in turn from the oldest segment while it holds:
- log start offset breached: the next segment starts at or below the log start offset (the segment holds
  only records DeleteRecords already cut off). Applies to every log.
- retention.bytes (cleanup.policy with delete, >= 0): while the log (the sum of segment sizes) exceeds it
  by at least the oldest segment's size, that segment goes.
- retention.ms (cleanup.policy with delete, >= 0): a segment goes when now - its largest timestamp (the max
  record timestamp, else the time of its last append) > retention.ms; the broker clock is `now`.
A segment is only deleted when every segment before it is, and an empty last segment never is. When every
segment is deleted the log first rolls a new empty active segment at the log end offset, as Kafka does, so
a log whose records all aged out is empty with log start offset = log end offset. The log start offset
moves to the first remaining segment's base (PartitionLog.truncate_before, which also rebuilds producer
state). No I/O here; mockbroker.maintenance runs it on the broker clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.state.log.segments import Segment

if TYPE_CHECKING:
    from mockbroker.state.configs import TopicConfig
    from mockbroker.state.log.partition_log import PartitionLog

Predicate = Callable[[Segment, "Segment | None"], bool]


def has_delete_policy(config: TopicConfig) -> bool:
    return "delete" in str(config.get("cleanup.policy")).split(",")


def deletable_segments(log: PartitionLog, predicate: Predicate) -> int:
    """How many segments, from the oldest, the predicate deletes (Kafka's deletableSegments)."""
    segs = log.segments.segments
    count = 0
    for i, seg in enumerate(segs):
        nxt = segs[i + 1] if i + 1 < len(segs) else None
        last_and_empty = nxt is None and seg.size == 0
        upper = nxt.base_offset if nxt is not None else log.log_end_offset
        if log.high_watermark >= upper and predicate(seg, nxt) and not last_and_empty:
            count += 1
        else:
            break
    return count


def delete_segments(log: PartitionLog, count: int, now_ms: int) -> int:
    """Delete the `count` oldest segments and move the log start offset past them."""
    if count <= 0:
        return 0
    segments = log.segments
    if count == len(segments.segments):
        segments.roll(log.log_end_offset, now_ms)  # there is always an active segment
        if count == len(segments.segments):  # the active segment was empty and stays
            count -= 1
    if count <= 0:
        return 0
    new_start = segments.segments[count].base_offset
    del segments.segments[:count]
    if new_start > log.log_start_offset:
        log.truncate_before(new_start, now_ms)
    if log.sink is not None:
        log.sink.segments_changed()  # the deleted segments' files go (.deleted, then removed)
    return count


def delete_old_segments(log: PartitionLog, config: TopicConfig, now_ms: int) -> int:
    """Kafka's deleteOldSegments: the log start offset rule always, retention.bytes and retention.ms when
    the cleanup policy includes delete. The number of segments deleted."""
    total = delete_segments(log, deletable_segments(log, _start_offset_breached(log)), now_ms)
    if not has_delete_policy(config):
        return total
    retention_bytes = int(config.get("retention.bytes"))
    size = log.segments.size_bytes()
    if retention_bytes >= 0 and size >= retention_bytes:
        total += delete_segments(log, deletable_segments(log, _size_breached(size - retention_bytes)), now_ms)
    retention_ms = int(config.get("retention.ms"))
    if retention_ms >= 0:
        total += delete_segments(
            log, deletable_segments(log, lambda seg, _nxt: now_ms - seg.largest_timestamp > retention_ms), now_ms
        )
    return total


def _start_offset_breached(log: PartitionLog) -> Predicate:
    return lambda _seg, nxt: nxt is not None and nxt.base_offset <= log.log_start_offset


def _size_breached(excess: int) -> Predicate:
    remaining = [excess]

    def predicate(seg: Segment, _nxt: Segment | None) -> bool:
        if remaining[0] - seg.size >= 0:
            remaining[0] -= seg.size
            return True
        return False

    return predicate
