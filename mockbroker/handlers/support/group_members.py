"""What the group-member handlers share (JoinGroup, SyncGroup, ConsumerGroupHeartbeat): parking a request
until the group coordinator answers it, and the client host as Kafka prints it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from mockbroker.context import RequestContext
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.common import Responder


def park(start: Callable[[Responder], None], finish: Callable[[Msg], Msg]) -> Msg | Awaitable[Msg]:
    """Run `start(respond)`; answer at once if it responded, else await the response it gives later."""
    future: asyncio.Future[Msg] = asyncio.get_running_loop().create_future()

    def respond(response: Msg) -> None:
        if not future.done():
            future.set_result(response)

    start(respond)
    if future.done():
        return finish(future.result())

    async def wait() -> Msg:
        return finish(await future)

    return wait()


def client_host(ctx: RequestContext) -> str:
    """The client address as Kafka's InetAddress.toString() prints it ("/127.0.0.1")."""
    return f"/{ctx.client_host}"
