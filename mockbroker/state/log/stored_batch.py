"""A batch as the log stores it: the header fields read once on append, and the bytes themselves.

The bottom of the log's modules: partition_log.py keeps a list of these, producers.py rebuilds producer state from
them, segments.py accounts for them, cleaner.py and retention.py rewrite and drop them. It imports none
of them, so they all depend on it in one direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.protocol.records.batch import RecordBatch


@dataclass(slots=True)
class StoredBatch:
    """A batch in the log: its header fields, read once on append, and its bytes."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    base_timestamp: int
    data: memoryview  # the whole batch, exactly as served
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    record_count: int
    is_transactional: bool
    is_control: bool
    leader_epoch: int
    append_time_ms: int  # broker clock when appended (for segment.ms / retention)

    @property
    def size(self) -> int:
        return len(self.data)

    def view(self) -> RecordBatch:
        return RecordBatch(self.data)
