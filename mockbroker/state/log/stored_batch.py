"""A batch as the log hands it out: its header fields and its bytes.

The log keeps none of these (state/log/batch_store.py holds the bytes and a few columns); one is made from the
stored bytes each time PartitionLog.batches is indexed or iterated. producers.py rebuilds producer state from
them, cleaner.py rewrites them, storage/ writes their bytes. It imports none of those modules, so they all
depend on it in one direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.protocol.records.batch import RecordBatch


@dataclass(slots=True)
class StoredBatch:
    """A batch in the log: its header fields, read from its bytes, and a view of those bytes."""

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
    leader_epoch: int  # the header's partition leader epoch

    @property
    def size(self) -> int:
        return len(self.data)

    def view(self) -> RecordBatch:
        return RecordBatch(self.data)
