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
        try:
            self.index_fd = os.open(directory / file_name(base_offset, INDEX), _APPEND, 0o644)
            self.time_fd = os.open(directory / file_name(base_offset, TIME_INDEX), _APPEND, 0o644)
        except OSError:
            os.close(self.log_fd)
            raise

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
            write_all(self.index_fd, index)
        if time:
            write_all(self.time_fd, time)

    def flush(self) -> None:
        os.fsync(self.log_fd)

    def close(self, *, inactive: bool) -> None:
        """Close the files; `inactive` (rolled, or the broker stops): the time index gets its last entry, and
        every file is fsynced (Kafka flushes a segment when it rolls)."""
        try:
            if inactive:
                final = self.indexer.time_entry()
                if final:
                    write_all(self.time_fd, final)
                for fd in (self.log_fd, self.index_fd, self.time_fd):
                    os.fsync(fd)
        finally:
            for fd in (self.log_fd, self.index_fd, self.time_fd):
                try:
                    os.close(fd)
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
