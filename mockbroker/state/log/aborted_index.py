"""Each partition's aborted-transaction index (Kafka's TransactionIndex): the producer id, first offset
and ABORT-marker offset of every aborted transaction, which read_committed fetches list and the log
cleaner prunes. Kept by log (a weak reference: a deleted partition's index goes with it)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockbroker.state.log.partition_log import PartitionLog


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An entry of a partition's aborted-transaction index (Kafka's AbortedTxn): the offsets of the
    aborted transaction's first batch and of its ABORT marker."""

    producer_id: int
    first_offset: int
    last_offset: int


class AbortedIndex:
    """The aborted-transaction index of every partition, by its log."""

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary[PartitionLog, list[AbortedTxn]] = weakref.WeakKeyDictionary()

    def add(self, log: PartitionLog, entry: AbortedTxn) -> None:
        self._entries.setdefault(log, []).append(entry)

    def aborted_transactions(self, log: PartitionLog, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of the aborted transactions a fetch of offsets [start, end) must list:
        those whose ABORT marker is at or after start and whose first offset is below end (Kafka's
        TransactionIndex.collectAbortedTxns)."""
        return [(a.producer_id, a.first_offset) for a in self._entries.get(log, ())
                if a.last_offset >= start and a.first_offset < end]

    def entries(self, log: PartitionLog) -> list[AbortedTxn]:
        """The partition's index, in marker order (a copy)."""
        return list(self._entries.get(log, ()))

    def replace(self, log: PartitionLog, entries: Iterable[AbortedTxn]) -> None:
        """Put a pruned index in place (the log cleaner drops entries whose ABORT marker it removed)."""
        self._entries[log] = list(entries)
