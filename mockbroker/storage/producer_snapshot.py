"""Producer state snapshots (`<offset>.snapshot`), in the format of Kafka's ProducerStateManager.

ProducerSnapshot version 1 (storage/src/main/resources/message/ProducerSnapshot.json), big-endian:
    version              int16   1
    crc                  uint32  CRC-32C of every byte after this field
    producer entries     int32 count, then per producer:
        producer_id int64, epoch int16, last_sequence int32, last_offset int64, offset_delta int32
        (last sequence - first sequence of the last batch), timestamp int64, coordinator_epoch int32,
        current_txn_first_offset int64 (-1: no open transaction)
A snapshot named by offset N holds the producer state of the log up to N (exclusive). Only the last batch
of each producer is kept (so after a restart only a retry of the last batch is a duplicate, as in Kafka).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import crc32c

HEADER = struct.Struct(">hIi")
ENTRY = struct.Struct(">qhiqiqiq")
VERSION = 1


class CorruptSnapshotError(ValueError):
    pass


@dataclass(frozen=True)
class SnapshotEntry:
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


def encode(entries: list[SnapshotEntry]) -> bytes:
    body = bytearray(struct.pack(">i", len(entries)))
    for e in entries:
        body += ENTRY.pack(e.producer_id, e.epoch, e.last_sequence, e.last_offset, e.offset_delta, e.timestamp,
                           e.coordinator_epoch, e.current_txn_first_offset)
    return struct.pack(">hI", VERSION, crc32c.crc32c(bytes(body))) + bytes(body)


def decode(data: bytes) -> list[SnapshotEntry]:
    if len(data) < HEADER.size:
        raise CorruptSnapshotError("snapshot shorter than its header")
    version, crc, count = HEADER.unpack_from(data, 0)
    if version != VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    computed = crc32c.crc32c(data[6:])
    if computed != crc:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. "
                                   f"Computed crc: {computed}")
    if count < 0 or len(data) != HEADER.size + count * ENTRY.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes cannot hold {count} entries")
    return [SnapshotEntry(*ENTRY.unpack_from(data, HEADER.size + i * ENTRY.size)) for i in range(count)]
