"""Reading a topic's records for the control API and the console: oldest or newest first, paged per
partition, filtered by key and time; control records left out. No I/O.

Paging: `next_offsets` maps each partition to where the next page starts. Oldest first: the next offset
to read (pass it back as offset=). Newest first: the offset below the oldest record returned, read
downwards (pass it back as offset=, which then means "at or below"; -1 when the partition is done).
With several partitions, pass the whole map back as cursor=0:12,1:40 (partitions at -1 are skipped).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mockbroker.http.request import encoded
from mockbroker.inspection import RecordInfo, record_info

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Partition
    from mockbroker.state.log.partition_log import StoredBatch


def _matches(r: RecordInfo, key: str | None, from_ms: int | None, to_ms: int | None) -> bool:
    if from_ms is not None and r.timestamp < from_ms:
        return False
    if to_ms is not None and r.timestamp > to_ms:
        return False
    if key:
        if r.key is None:
            return False
        if key not in bytes(r.key).decode("utf-8", "replace") and key != bytes(r.key).hex():
            return False
    return True


def _index_of(b: StoredBatch, offset: int) -> int | None:
    """The index in `b` of the record at `offset` (clamped to the batch) when the batch's offsets are
    contiguous (as Produce stores them: offset deltas 0..n-1); None when they are not (a compacted batch)."""
    if b.record_count != b.last_offset - b.base_offset + 1:
        return None
    return min(max(offset - b.base_offset, 0), b.record_count)


def _newest_first(topic: str, p: Partition, below: int) -> Iterator[RecordInfo]:
    """Records of `p` at or below offset `below`, newest first. Each batch is decoded backwards in windows
    that double (hopping over the records before each window), so a reader that stops after a few records
    decodes little more than it takes, however many records the batch holds."""
    batches: Sequence[StoredBatch] = p.log.batches
    start_offset = p.log.log_start_offset
    for b in reversed(batches):
        if b.base_offset > below or b.is_control:
            continue
        view = b.view()
        end = _index_of(b, below + 1)
        if end is None:
            end = b.record_count
        window = 8
        while end > 0:
            first = max(end - window, 0)
            taken = [rec for _, rec in zip(range(end - first), view.iter_records(first), strict=False)]
            for rec in reversed(taken):
                if start_offset <= rec.offset <= below:
                    yield record_info(topic, p.index, b, rec)
            end = first
            window *= 2


def read_records(topic: str, parts: list[Partition], *, order: str, offset: int | None, limit: int,
                 key: str | None = None, from_ms: int | None = None, to_ms: int | None = None,
                 cursor: dict[int, int] | None = None) -> tuple[list[RecordInfo], dict[int, int]]:
    """(records, next offsets per partition); see the module docstring. `cursor` gives a start offset per
    partition (the next_offsets of the page before), overriding `offset` for those partitions."""
    if cursor:
        parts = [p for p in parts if cursor.get(p.index, 0) >= 0]
    if order == "newest":
        return _read_newest(topic, parts, offset, limit, key, from_ms, to_ms, cursor or {})
    out: list[RecordInfo] = []
    next_offsets: dict[int, int] = {}
    for p in parts:
        log_ = p.log
        first = max((cursor or {}).get(p.index, offset or 0), log_.log_start_offset)
        next_offsets[p.index] = first
        for b in log_.iter_batches(first):
            if len(out) >= limit:
                break
            if b.is_control:
                next_offsets[p.index] = b.last_offset + 1
                continue
            for rec in b.view().iter_records(_index_of(b, first) or 0):
                if rec.offset < first:
                    continue
                if len(out) >= limit:
                    break
                info = record_info(topic, p.index, b, rec)
                if _matches(info, key, from_ms, to_ms):
                    out.append(info)
                next_offsets[p.index] = rec.offset + 1
            else:
                next_offsets[p.index] = max(next_offsets[p.index], b.last_offset + 1)
    return out, next_offsets


def _read_newest(topic: str, parts: list[Partition], offset: int | None, limit: int, key: str | None,
                 from_ms: int | None, to_ms: int | None,
                 cursor: dict[int, int]) -> tuple[list[RecordInfo], dict[int, int]]:
    """Up to `limit` matching records of each partition, merged newest first (by timestamp, then offset)
    and cut to `limit`; each partition's next offset follows the records of it that were kept."""
    per_partition: dict[int, list[RecordInfo]] = {}
    starts: dict[int, int] = {}
    for p in parts:
        start = cursor.get(p.index, offset)
        below = p.log.high_watermark - 1 if start is None else min(start, p.log.high_watermark - 1)
        starts[p.index] = below
        found: list[RecordInfo] = []
        for info in _newest_first(topic, p, below):
            if _matches(info, key, from_ms, to_ms):
                found.append(info)
                if len(found) >= limit:
                    break
        per_partition[p.index] = found
    merged = list(heapq.merge(*per_partition.values(), key=lambda r: (-r.timestamp, -r.offset)))[:limit]
    kept: dict[int, int] = {}
    for r in merged:
        kept[r.partition] = min(kept.get(r.partition, r.offset), r.offset)
    next_offsets: dict[int, int] = {}
    for index, found in per_partition.items():
        if index in kept:
            exhausted = len(found) < limit and kept[index] == found[-1].offset
            next_offsets[index] = -1 if exhausted else kept[index] - 1
        elif not found:
            next_offsets[index] = -1
        else:
            next_offsets[index] = starts[index]
    return merged, next_offsets


def record_json(r: RecordInfo) -> dict[str, Any]:
    key, key_enc = encoded(r.key)
    value, value_enc = encoded(r.value)
    headers = []
    for hk, hv in r.headers:
        text, enc = encoded(hv)
        headers.append({"key": hk, "value": text, "value_encoding": enc})
    return {"partition": r.partition, "offset": r.offset, "timestamp": r.timestamp,
            "timestamp_type": "LogAppendTime" if r.timestamp_type == 1 else "CreateTime",
            "key": key, "key_encoding": key_enc, "value": value, "value_encoding": value_enc,
            "headers": headers, "producer_id": r.producer_id, "producer_epoch": r.producer_epoch,
            "sequence": r.sequence, "is_transactional": r.is_transactional}
