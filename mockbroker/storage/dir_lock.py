"""The data dir's lock: one `.lock` file at its root, flock'ed for as long as a broker uses the directory.

Taken before anything in the directory is read, whatever the node count, so a second broker (another
process, or another MockBroker in this one) on the same data dir stops at once with DataDirError naming
the directory, instead of rewriting mockbroker-metadata.json under the first (Kafka locks each log
directory the same way: a `.lock` file, FileLock). With brokers=N each `node-<id>/` log directory is
locked too, as Kafka locks each of its log.dirs. The lock goes with the process (kill -9 included).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from mockbroker.storage import DataDirError
from mockbroker.storage.layout import LOCK


class DirLock:
    """An exclusive, non-blocking flock on `<path>/.lock`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Lock the directory (made if missing); DataDirError when another broker holds it."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise DataDirError(f"the data dir {self.path} is in use by another broker (its {LOCK} is locked); "
                               "stop that broker or use another data dir") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
