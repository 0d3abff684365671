"""The transaction index (`.txnindex`) of a segment, as Kafka's TransactionIndex writes it: one 34-byte
entry per aborted transaction whose ABORT marker is in the segment, big-endian:
    version int16 (0), producer id int64, first offset int64 (the transaction's first batch),
    last offset int64 (the ABORT marker), last stable offset int64 (after the marker: the first offset of
    the earliest other open transaction, else the marker's offset + 1)
The broker rebuilds its aborted-transaction index from the log's markers at load; these files are kept
for the tools that read Kafka's layout.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ENTRY = struct.Struct(">hqqqq")
VERSION = 0


@dataclass(frozen=True)
class TxnIndexEntry:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return ENTRY.pack(VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset)


def decode(data: bytes) -> list[TxnIndexEntry]:
    """The whole entries of a `.txnindex` (a torn last entry is left out)."""
    out = []
    for pos in range(0, len(data) - len(data) % ENTRY.size, ENTRY.size):
        version, pid, first, last, lso = ENTRY.unpack_from(data, pos)
        if version != VERSION:
            break
        out.append(TxnIndexEntry(pid, first, last, lso))
    return out
