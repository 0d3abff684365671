"""The sparse offset index and the time index of one segment, as Kafka's LogSegment builds them.

- `.index`: 8-byte entries, big-endian: relative offset (int32, offset - segment base) and physical
  position (int32) in the `.log`. An entry is added for a batch when more than index.interval.bytes were
  appended since the last entry (LogSegment.append: the batch's last offset, the position it starts at).
- `.timeindex`: 12-byte entries: timestamp (int64) and relative offset (int32): the largest timestamp so
  far and the last offset of the batch that holds it, added with each offset index entry when the
  timestamp is larger than the last entry's, and once more when the segment stops being active.
Kafka preallocates both files and trims them when the segment rolls; these are written to their exact
size from the start.
"""

from __future__ import annotations

import struct

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


class SegmentIndexer:
    """The index entries of one segment, as batches are appended to it."""

    __slots__ = ("base_offset", "interval", "position", "bytes_since_entry", "max_timestamp",
                 "max_timestamp_offset", "last_time_entry", "last_index_offset")

    def __init__(self, base_offset: int, interval: int) -> None:
        self.base_offset = base_offset
        self.interval = interval
        self.position = 0  # bytes of the .log
        self.bytes_since_entry = 0
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        self.last_time_entry: tuple[int, int] | None = None  # (timestamp, offset)
        self.last_index_offset = -1

    def add(self, last_offset: int, max_timestamp: int, size: int) -> tuple[bytes, bytes]:
        """Account for a batch appended at the end; the (offset index, time index) bytes to append."""
        index = time = b""
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.max_timestamp_offset = last_offset
        if self.bytes_since_entry > self.interval:
            if last_offset > self.last_index_offset:
                index = OFFSET_ENTRY.pack(last_offset - self.base_offset, self.position)
                self.last_index_offset = last_offset
            time = self.time_entry()
            self.bytes_since_entry = 0
        self.position += size
        self.bytes_since_entry += size
        return index, time

    def time_entry(self) -> bytes:
        """Kafka's TimeIndex.maybeAppend of the largest timestamp so far: only when it is larger than the
        last entry's (the final entry at roll uses this too)."""
        if self.max_timestamp < 0:
            return b""
        last = self.last_time_entry
        if last is not None and (self.max_timestamp <= last[0] or self.max_timestamp_offset < last[1]):
            return b""
        self.last_time_entry = (self.max_timestamp, self.max_timestamp_offset)
        return TIME_ENTRY.pack(self.max_timestamp, self.max_timestamp_offset - self.base_offset)


def decode_offset_index(data: bytes) -> list[tuple[int, int]]:
    """(relative offset, position) entries."""
    return [OFFSET_ENTRY.unpack_from(data, i) for i in range(0, len(data) - len(data) % 8, 8)]


def decode_time_index(data: bytes) -> list[tuple[int, int]]:
    """(timestamp, relative offset) entries."""
    return [TIME_ENTRY.unpack_from(data, i) for i in range(0, len(data) - len(data) % 12, 12)]
