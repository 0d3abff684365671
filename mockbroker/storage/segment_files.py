"""The active segment's files: `.log`, `.index` and `.timeindex`, open for appending.

Every batch is written to the `.log` with os.write before the produce is answered (Kafka's page cache
write), so what the OS has survives a kill -9 of the broker; `flush` (fsync) is for flush.messages /
flush.ms and for rolls. Index entries are written as LogSegment makes them (indexes.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from mockbroker.storage.indexes import SegmentIndexer
from mockbroker.storage.layout import INDEX, LOG, TIME_INDEX, file_name

_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class ActiveSegment:
    """The files of the segment batches are appended to."""

    def __init__(self, directory: Path, base_offset: int, indexer: SegmentIndexer) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.indexer = indexer
        self.log_fd = os.open(directory / file_name(base_offset, LOG), _APPEND, 0o644)
        # The index files are opened only to add an entry (one per index.interval.bytes of appends), so an
        # active segment holds one file descriptor, not three.
        for suffix in (INDEX, TIME_INDEX):
            os.close(os.open(directory / file_name(base_offset, suffix), _APPEND, 0o644))

    @property
    def size(self) -> int:
        return self.indexer.position

    def append(self, data: memoryview, last_offset: int, max_timestamp: int) -> None:
        """Write one batch; on a failed write the `.log` is cut back to where it was (no torn tail stays)."""
        before = self.indexer.position
        try:
            write_all(self.log_fd, data)
        except OSError:
            try:
                os.ftruncate(self.log_fd, before)
            except OSError:
                pass
            raise
        index, time = self.indexer.add(last_offset, max_timestamp, len(data))
        if index:
            self._append_to(INDEX, index)
        if time:
            self._append_to(TIME_INDEX, time)

    def _append_to(self, suffix: str, data: bytes, *, sync: bool = False) -> None:
        fd = os.open(self.directory / file_name(self.base_offset, suffix), _APPEND, 0o644)
        try:
            write_all(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def flush(self) -> None:
        os.fsync(self.log_fd)

    def close(self, *, inactive: bool) -> None:
        """Close the files; `inactive` (rolled, or the broker stops): the time index gets its last entry, and
        the files are fsynced (Kafka flushes a segment when it rolls)."""
        try:
            if inactive:
                self._append_to(TIME_INDEX, self.indexer.time_entry(), sync=True)
                self._append_to(INDEX, b"", sync=True)
                os.fsync(self.log_fd)
        finally:
            try:
                os.close(self.log_fd)
            except OSError:
                pass

    def remove(self) -> None:
        """Close and delete the files (an empty active segment replaced at another base offset)."""
        self.close(inactive=False)
        for suffix in (LOG, INDEX, TIME_INDEX):
            try:
                os.unlink(self.directory / file_name(self.base_offset, suffix))
            except FileNotFoundError:
                pass
