"""The listening sockets of each node, and what stopping and starting a node does to them.

- At start every listener of every node is bound (port 0: a free port, kept from then on).
- stop_node: the node's listeners close (new connections are refused) and its open connections are
  dropped (a parked request is cancelled, nothing more is answered on them).
- start_node: the node's listeners are bound again on the same ports, at once (the sockets listen
  before this returns; serving starts as the event loop runs), so it works from the loop and from a test
  thread alike.
The cluster model's side (ISR, leaders, epochs) is state/cluster/leadership.py.

Every listening socket's accept queue is socket.listen.backlog.size long (Kafka's setting; the kernel caps
it at net.core.somaxconn). mockbroker's default is 1024, not Kafka's 50: Kafka accepts on a thread of its
own, while here one event loop accepts between serving requests, so a test that opens 1,000 connections
at once must find room in the queue for all of them, or the kernel drops and resets the overflow
(asyncio's own default is 100). asyncio also accepts up to `backlog` connections per loop pass.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable, Iterable
from typing import Any

from mockbroker.connection import Connection
from mockbroker.state.cluster.cluster import Listener

ProtocolFactory = Callable[[Listener], Connection]
BACKLOG = "socket.listen.backlog.size"
DEFAULT_BACKLOG = 1024


class NodeServers:
    def __init__(self, make_connection: ProtocolFactory,
                 server_options: Callable[[Listener], dict[str, Any]] = lambda _listener: {},
                 backlog: Callable[[], int] = lambda: DEFAULT_BACKLOG) -> None:
        """server_options(listener): create_server's extra arguments for it (TLS for SSL listeners);
        backlog(): socket.listen.backlog.size, read each time a listener is bound."""
        self._make_connection = make_connection
        self._server_options = server_options
        self._backlog = backlog
        self.servers: dict[int, list[asyncio.AbstractServer]] = {}
        self._starting: set[asyncio.Task[asyncio.AbstractServer]] = set()

    async def bind(self, loop: asyncio.AbstractEventLoop, listener: Listener) -> None:
        """Bind one listener (port 0: pick a free port and remember it)."""
        server = await loop.create_server(lambda: self._make_connection(listener), listener.host, listener.port,
                                          reuse_address=True, backlog=self._backlog(),
                                          **self._server_options(listener))
        if listener.port == 0:
            listener.port = server.sockets[0].getsockname()[1]
        self.servers.setdefault(listener.node_id, []).append(server)

    def bind_now(self, loop: asyncio.AbstractEventLoop, listeners: Iterable[Listener]) -> None:
        """Bind listeners on their known ports synchronously; the loop starts serving them next."""
        for listener in listeners:
            backlog = self._backlog()
            sock = _listening_socket(listener.host, listener.port, backlog)
            task = loop.create_task(loop.create_server(functools.partial(self._make_connection, listener), sock=sock,
                                                       backlog=backlog, **self._server_options(listener)))
            self._starting.add(task)
            task.add_done_callback(functools.partial(self._started, listener.node_id))

    def _started(self, node_id: int, task: asyncio.Task[asyncio.AbstractServer]) -> None:
        self._starting.discard(task)
        if not task.cancelled() and task.exception() is None:
            self.servers.setdefault(node_id, []).append(task.result())

    def close_node(self, node_id: int, connections: Iterable[Connection]) -> None:
        """Stop listening for the node and drop its open connections."""
        for server in self.servers.pop(node_id, []):
            server.close()
        for conn in list(connections):
            if conn.node.node_id == node_id:
                conn.close()
                conn.cancel_pending()

    async def settle(self) -> None:
        """Wait for listeners still being started (a start_node just before the broker stops)."""
        if self._starting:
            await asyncio.wait(list(self._starting), timeout=5)

    def all(self) -> list[asyncio.AbstractServer]:
        return [s for servers in self.servers.values() for s in servers]

    def clear(self) -> None:
        self.servers.clear()


def _listening_socket(host: str, port: int, backlog: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
