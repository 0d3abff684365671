"""The rest of requests whose connection went away mid-way (handlers/support/request_steps.py): Kafka
completes a request it has read whatever becomes of its connection. Each node owns one
(BrokerNode.carried_on); a handler starts the rest of its request there, and MockBroker's stop waits for
it. A node-level service below the handlers, so node.py needs nothing of handlers/."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class CarriedOn:
    """The rest of requests whose connection went away mid-way, run in tasks of their own: Kafka completes a
    request it has read whatever becomes of its connection. Owned by the node that serves the requests
    (BrokerNode.carried_on); the broker's stop waits for it (finish)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` (the rest of a request) in a task of its own, on the running loop."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self, timeout_s: float) -> None:
        """At the broker's stop, on its loop: let the work carried on finish (at most timeout_s), then
        cancel it."""
        tasks = set(self._tasks)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
