"""The thread hop of MockBroker's public methods: every piece of broker state belongs to one event loop, so
a call from another thread (a sync test using `run_in_thread`) is handed to that loop and waited for.

`LoopHop.call(fn, *args)` runs fn at once when there is nothing to hop to (the broker is not running on a
thread of its own, or the caller is already on the broker's thread), else on the broker's loop, waiting up
to 30 seconds for the answer. MockBroker owns one and gives it to its parts (node_control.py, acl_api.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
CALL_TIMEOUT_S = 30


class LoopHop:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None  # the broker's loop, once it runs
        self.thread: threading.Thread | None = None  # its thread, under run_in_thread

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run fn on the broker's loop (hopping threads if needed) and return its result."""
        loop = self.loop
        if loop is None or self.thread is None or threading.current_thread() is self.thread:
            return fn(*args, **kwargs)

        async def call() -> T:
            return fn(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(call(), loop).result(CALL_TIMEOUT_S)
