"""The thread hop of MockBroker's public methods: every piece of broker state belongs to one event loop, so
a call from another thread (a sync test using `run_in_thread`) is handed to that loop and waited for.

`LoopHop.call(fn, *args)` runs fn at once when there is nothing to hop to (the broker is not running on a
thread of its own, or the caller is already on the broker's thread), else on the broker's loop, waiting up
to 30 seconds for the answer. MockBroker owns one and gives it to its parts (node_control.py, acl_api.py).
`delegate` makes a MockBroker method that is one of its parts' methods (with its signature and docstring).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

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


P = ParamSpec("P")
R = TypeVar("R")


class delegate(Generic[P, R]):  # noqa: N801 (used as a decorator-like class attribute, named as a function)
    """A MockBroker method that is its part's method of the same name: `wait_for_records =
    delegate("waits", Waits.wait_for_records)` makes `broker.wait_for_records(...)` call
    `broker.waits.wait_for_records(...)`, with its signature and docstring (one line in server.py)."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self._part = part
        self._name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> delegate[P, R]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type) -> delegate[P, R] | Callable[P, R]:
        if obj is None:
            return self
        method: Callable[P, R] = getattr(getattr(obj, self._part), self._name)
        return method
