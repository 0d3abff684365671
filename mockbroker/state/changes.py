"""A "the state changed" signal the model raises where something a test may wait for happens: records
appended (cluster/appender.py), a group changed or offsets committed (groups/coordinator.py, groups/offsets.py),
a transactional id changed (txn/coordinator.py). The Cluster holds one (`cluster.changes`); mockbroker/waits.py
listens and re-checks its conditions. Listeners are plain callbacks (no asyncio here) and must not change
the state they are told about.
"""

from __future__ import annotations

from collections.abc import Callable


class Changes:
    def __init__(self) -> None:
        self._listeners: list[Callable[[], None]] = []

    def listen(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def unlisten(self, callback: Callable[[], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def notify(self) -> None:
        """Something changed: tell every listener."""
        for callback in list(self._listeners):
            callback()
