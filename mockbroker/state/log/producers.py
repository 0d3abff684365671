"""Producer state per partition, as Kafka's ProducerStateManager keeps it: derived from the log.

For each producer id: its epoch, the metadata of its last five batches (first/last sequence, first/last
offset, timestamp), the last timestamp, and the first offset of its open transaction. Checked on every
append of a batch that carries a producer id:
- a duplicate of one of the last five batches (same epoch, same first and last sequence) is not
  appended again: the append answers with the offset first assigned to it, no error;
- a lower epoch: INVALID_PRODUCER_EPOCH;
- a higher epoch must start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER;
- the same epoch: the first sequence must be the last sequence + 1 (Int32.MaxValue wraps to 0), else
  OUT_OF_ORDER_SEQUENCE_NUMBER;
- a producer the partition holds no state for (new, expired, or its records deleted) is accepted with
  any sequence (Kafka 2.5+, KIP-360).
`rebuild(batches)` recomputes the table from the stored batches (after compaction or a truncation), so
the state never disagrees with the log; `truncate_head` follows the log start offset without a walk. Entries expire producer.id.expiration.ms after their last
write, measured on the broker clock (`expire`).
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.records.batch import RecordBatch, last_sequence_of

if TYPE_CHECKING:
    from mockbroker.state.log.stored_batch import StoredBatch

INT32_MAX = 2147483647
BATCHES_KEPT = 5


@dataclass(slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=BATCHES_KEPT))
    last_timestamp: int = -1
    last_write_ms: int = 0  # broker clock, for expiration
    current_txn_first_offset: int = -1
    coordinator_epoch: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.epoch:
            return None
        for b in self.batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return b
        return None


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateTable:
    def __init__(self, topic_partition: str = "") -> None:
        self.topic_partition = topic_partition
        self.entries: dict[int, ProducerEntry] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> ProducerStateTable:
        """A copy for a snapshot (mockbroker/snapshots.py), made fast: each entry copied, its BatchMetadata (never
        changed once made) shared."""
        new = ProducerStateTable.__new__(ProducerStateTable)
        memo[id(self)] = new
        new.topic_partition = self.topic_partition
        entries: dict[int, ProducerEntry] = {}
        new.entries = entries
        for pid, entry in self.entries.items():
            twin = ProducerEntry.__new__(ProducerEntry)
            twin.__dict__.update(vars(entry))  # numbers, and the deque copied next
            twin.batches = deque(entry.batches, maxlen=entry.batches.maxlen)
            entries[pid] = twin
        if len(vars(self)) != 2:  # an attribute added later is copied deeply, not forgotten
            for key in set(vars(self)) - {"topic_partition", "entries"}:
                setattr(new, key, copy.deepcopy(getattr(self, key), memo))
        return new

    def check(self, batch: RecordBatch) -> BatchMetadata | None:
        """Check a batch about to be appended; the earlier batch if it is a duplicate, else None.
        Raises KafkaError with Kafka's code if the batch must be refused."""
        (_base_offset, _length, _leader_epoch, _magic, _crc, _attributes, last_offset_delta, _base_ts, _max_ts, pid,
         epoch, first_seq, _count) = batch.header()  # one unpack: every idempotent batch comes here
        if pid < 0:
            return None
        entry = self.entries.get(pid)
        if entry is None:
            return None  # unknown producer: any sequence (KIP-360)
        duplicate = entry.find_duplicate(epoch, first_seq, last_sequence_of(first_seq, last_offset_delta))
        if duplicate is not None:
            return duplicate
        if epoch < entry.epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {pid} in {self.topic_partition} is {epoch}, which is smaller than the last "
                f"seen epoch {entry.epoch}",
            )
        if epoch > entry.epoch:
            if first_seq != 0:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {pid} in partition "
                    f"{self.topic_partition}: {epoch} (request epoch), {first_seq} (seq. number), "
                    f"{entry.epoch} (current producer epoch)",
                )
            return None
        if entry.batches and not in_sequence(entry.last_seq, first_seq):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {pid} in partition {self.topic_partition}: "
                f"{first_seq} (incoming seq. number), {entry.last_seq} (current end sequence number)",
            )
        return None

    def update(self, producer_id: int, epoch: int, first_seq: int, last_seq: int, first_offset: int,
               last_offset: int, timestamp: int, now_ms: int, *, is_transactional: bool = False,
               is_control: bool = False) -> ProducerEntry:
        """Record an appended batch (data or control) of a producer."""
        entry = self.entries.get(producer_id)
        if entry is None or epoch > entry.epoch:
            kept_txn = entry.current_txn_first_offset if entry is not None else -1
            entry = ProducerEntry(producer_id, epoch)
            entry.current_txn_first_offset = kept_txn
            self.entries[producer_id] = entry
        if is_control:
            entry.current_txn_first_offset = -1
        else:
            if first_seq >= 0:
                entry.batches.append(BatchMetadata(first_seq, last_seq, first_offset, last_offset, timestamp))
            if is_transactional and entry.current_txn_first_offset < 0:
                entry.current_txn_first_offset = first_offset
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        entry.last_write_ms = now_ms
        return entry

    def rebuild(self, batches: Iterable[StoredBatch], now_ms: int) -> None:
        """Recompute the table from stored batches (mockbroker.state.log.stored_batch.StoredBatch). A producer that
        keeps batches keeps its last write time (for expiration); now_ms stamps the others."""
        last_write = {pid: e.last_write_ms for pid, e in self.entries.items()}
        self.entries.clear()
        for b in batches:
            if b.producer_id < 0:
                continue
            self.update(b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.base_offset,
                        b.last_offset, b.max_timestamp, now_ms, is_transactional=b.is_transactional,
                        is_control=b.is_control)
        for pid, entry in self.entries.items():
            entry.last_write_ms = last_write.get(pid, now_ms)

    def truncate_head(self, start: int) -> bool:
        """The log start offset moved to `start` (DeleteRecords, retention) and the batches wholly below it went:
        Kafka's truncateHead, in the number of producers, not of batches. A producer whose known data batches
        all lie below `start` is forgotten (then accepted with any sequence, KIP-360); the others keep their
        state, less the metadata of batches that went. False, changing nothing, when the table alone cannot
        tell (an entry without batch metadata, or an open transaction starting below `start`): the caller then
        rebuilds the table from the batches left."""
        for e in self.entries.values():
            if not e.batches or 0 <= e.current_txn_first_offset < start:
                return False
        for pid in [pid for pid, e in self.entries.items() if e.batches[-1].last_offset < start]:
            del self.entries[pid]
        for e in self.entries.values():
            while e.batches[0].last_offset < start:
                e.batches.popleft()
        return True

    def expire(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Drop producers idle for expiration_ms with no open transaction; their ids."""
        gone = [pid for pid, e in self.entries.items()
                if e.current_txn_first_offset < 0 and now_ms - e.last_write_ms >= expiration_ms]
        for pid in gone:
            del self.entries[pid]
        return gone
