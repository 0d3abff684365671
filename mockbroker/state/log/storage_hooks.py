"""What the model tells an optional storage layer (mockbroker/storage/) when a log or the cluster changes.

In memory mode (the default) no storage is attached: `PartitionLog.sink` and `Cluster.storage` are None and
the model does nothing more than test for None. With a data dir, mockbroker.storage attaches an object of
each kind; the model calls it at the moments Kafka's broker touches its files. No I/O here: these are the
interfaces only, so state/ never imports the storage package. (The cluster's side, ClusterStore, is in
state/cluster/cluster.py.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mockbroker.protocol.records.batch import RecordBatch


class LogSink(Protocol):
    """One partition's files (the sink knows its log; it imports nothing of state/)."""

    def append(self, batch: RecordBatch, now_ms: int) -> None:
        """The batch (base offset and leader epoch already stamped) is about to be stored: write it (rolling
        the segment first if the log is about to roll). Raises KafkaError(KAFKA_STORAGE_ERROR) when it
        cannot, before the log holds anything of it."""

    def log_start_moved(self) -> None:
        """The log start offset went up (DeleteRecords, retention)."""

    def segments_changed(self) -> None:
        """Segments were deleted from the front (retention) or the log was truncated: make the files match."""

    def cleaned(self, count: int) -> None:
        """The cleaner replaced the first `count` segments of the log (and their batches)."""
