"""KafkaProxy: a local Kafka-aware proxy in front of each broker of a real cluster, so that MockBroker's fault
rules (`inject`) and request record (`received`) work on the remote target (RemoteBroker(..., proxy=True),
`pytest --kafka-proxy`).

The proxy runs its own asyncio loop in a thread. It listens on 127.0.0.1, one port per real broker: one
for each bootstrap server and each broker a Metadata answer names at start, and one more for each broker
a response passing through names later (Metadata,
FindCoordinator, DescribeCluster, KIP-951 leader hints), whose endpoint is rewritten to that port
(mockbroker/remote/proxy_rewrite.py), so a client that bootstraps from the proxy only ever connects to it.
Each client connection is paired with a connection to its broker (mockbroker/remote/proxy_connection.py).
A secured cluster (SSL, SASL_SSL, SASL_PLAINTEXT): `config` holds the user's client settings; the proxy
reaches the cluster as they say and offers its clients TLS when the cluster has it, SASL passing through
(mockbroker/remote/proxy_security.py); client_settings() gives the settings that reach the proxy.

Faults are mockbroker/faults.py's rules, matched the same way (API key, topic, partition, node: the node
id Metadata gave the broker behind the listener; a bootstrap listener whose address no Metadata answer
has named has none), and answered as the embedded broker does, errors with the API's own error
response (the dispatch registry's builders). Requests are recorded in a faults.RequestRecord: received()
gives the same ReceivedRequest entries, time_ms from the wall clock, node_id -1 before the node is known.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mockbroker import intercept
from mockbroker.dispatch import load_handlers
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.faults import FaultRule, Faults, ReceivedRequest, RequestRecord, make_rule
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ProtocolError
from mockbroker.protocol.messages import Msg
from mockbroker.remote import proxy_rewrite
from mockbroker.remote.client import Connection, UnsupportedOnTarget
from mockbroker.remote.proxy_connection import PairedConnection
from mockbroker.remote.proxy_security import PROXY_HOST, ProxySecurity, proxy_security
from mockbroker.security.tls import TlsConfig

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_TIMEOUT_S = 30.0


@dataclass
class Listener:
    """One port of the proxy and the real broker behind it."""

    upstream: tuple[str, int]
    server: asyncio.Server
    port: int


def parse_servers(servers: str) -> list[tuple[str, int]]:
    """[(host, port)] of a "host:port,host:port" list."""
    out = []
    for item in servers.split(","):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"not host:port: {item!r}")
        out.append((host.strip("[]"), int(port)))
    return out


class KafkaProxy:
    """A fault proxy in front of the cluster at bootstrap_servers; start() it, point clients at its
    bootstrap_servers, stop() it (or use it as a context manager).

    config: the user's client settings for the cluster (security.protocol, ssl.ca.location, sasl.*... in
    librdkafka's or Java's names); tls: what the proxy offers its clients: None (TLS when the cluster has
    it), True or a mockbroker.security.tls.TlsConfig (always; the config's certificate), False (never)."""

    def __init__(self, bootstrap_servers: str, *, timeout: float = DEFAULT_TIMEOUT_S, seed: int = 0,
                 config: dict[str, str] | None = None, tls: TlsConfig | bool | None = None) -> None:
        load_handlers()  # the error answers' builders and make_rule's checks come from the handlers' registry
        self.upstream_bootstrap = parse_servers(bootstrap_servers)
        self.timeout = timeout
        self.faults = Faults(random.Random(seed))
        self.map_topic: Callable[[str], str] = str  # a test's topic name -> the cluster's (RemoteBroker's isolation)
        self.requests = RequestRecord()
        self.config = dict(config or {})
        self.security: ProxySecurity = proxy_security(self.config, tls)
        self.listener_name = self.security.listener  # each request's listener in received()
        self._listeners: dict[tuple[str, int], Listener] = {}
        self._nodes: dict[tuple[str, int], int] = {}  # real broker address -> node id, from the answers
        self._topics: dict[uuid.UUID, str] = {}
        self._connections: set[PairedConnection] = set()
        self._upstream_sockets: set[tuple[str, int]] = set()
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._bootstrap: list[Listener] = []

    # -- life --------------------------------------------------------------------------------------------
    def start(self) -> KafkaProxy:
        """Start the loop thread and a listener for each bootstrap server (returns once they listen)."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="mockbroker-kafka-proxy", daemon=True)
        self._thread.start()
        self._bootstrap = asyncio.run_coroutine_threadsafe(self._listen_bootstrap(), loop).result(self.timeout)
        for node_id, host, port in self._brokers():
            asyncio.run_coroutine_threadsafe(self.route(node_id, host, port), loop).result(self.timeout)
        return self

    def _brokers(self) -> list[tuple[int, str, int]]:
        """(node id, host, port) of each broker, from one Metadata to the first bootstrap server, so that
        node filters hold from a client's first request; [] if it is refused (a SASL listener closes an
        unauthenticated connection): the proxy then learns them from the answers passing through."""
        try:
            conn = Connection(*self.upstream_bootstrap[0], client_id="mockbroker-proxy", timeout=self.timeout,
                              security=self.security.upstream)
        except (OSError, ProtocolError, UnsupportedOnTarget, KafkaError):
            return []
        try:
            answer = conn.request(ApiKey.METADATA, {"topics": [], "allow_auto_topic_creation": False}, newest=12)
            return [(b.node_id, b.host, b.port) for b in answer.brokers]
        except (OSError, ProtocolError, UnsupportedOnTarget, KafkaError):
            return []
        finally:
            conn.close()

    async def _listen_bootstrap(self) -> list[Listener]:
        return [await self._listener(addr) for addr in self.upstream_bootstrap]

    def stop(self) -> None:
        """Close every listener and connection and end the loop thread (bounded by the timeout)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(self.timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(self.timeout)
            if not thread.is_alive():
                loop.close()
            self._loop = self._thread = None
            self.security.close()

    async def _close_all(self) -> None:
        for listener in self._listeners.values():
            listener.server.close()
        for conn in list(self._connections):
            conn.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), self.timeout)

    def __enter__(self) -> KafkaProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def bootstrap_servers(self) -> str:
        """The proxy's listeners for the bootstrap servers it was given, as "127.0.0.1:port,..."."""
        return ",".join(f"{PROXY_HOST}:{listener.port}" for listener in self._bootstrap)

    @property
    def ca_file(self) -> str | None:
        """The CA file clients trust for the proxy's TLS (its throwaway CA), or None when it offers none."""
        return self.security.ca_file

    def client_settings(self) -> dict[str, str]:
        """bootstrap.servers and the config the proxy was given, changed to reach the proxy: the same SASL
        settings, security.protocol as the proxy offers it, the proxy's CA in place of the cluster's."""
        return {**self.security.client_settings(self.config), "bootstrap.servers": self.bootstrap_servers}

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run fn(*args) on the proxy's loop and return its result (the fault rules live on that thread)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("the Kafka proxy is not running")
        if threading.current_thread() is self._thread:  # from a hook, on the loop: at once
            return fn(*args)
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller's thread
                done.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return done.result(self.timeout)

    # -- the test API ------------------------------------------------------------------------------------
    def inject(self, api_key: int, *, error: int | ErrorCode | None = None, drop: str | None = None,
               delay: float | None = None, count: int = 1, topic: str | None = None, partition: int | None = None,
               node: int | None = None, probability: float = 1.0) -> FaultRule:
        """Make the next `count` requests of api_key passing through the proxy (optionally for one topic /
        partition, or only those sent to one node) fail: exactly one of error=<code> (answered by the
        proxy with the API's error response, not sent on), drop="before" (the connection is closed, the
        request not sent on), drop="after" (sent on and applied by the cluster, then the connection is
        closed unanswered), delay=<seconds> (the answer held back); as MockBroker.inject."""
        if topic is not None:
            topic = self.map_topic(topic)
        rule = make_rule(api_key, error=error, drop=drop, delay=delay, count=count, topic=topic,
                         partition=partition, node=node, probability=probability)
        return self._call(self.faults.add, rule)

    def clear_faults(self) -> None:
        """Remove every fault rule (not the hooks)."""
        self._call(self.faults.clear)

    def intercept(self, api_key: int, fn: Callable[..., Any], *, node: int | None = None,
                  count: int | None = None) -> intercept.Hook:
        """Let fn(request, context) answer api_key's requests passing through the proxy, as MockBroker.intercept
        (mockbroker/remote/proxy_intercept.py: `await context.forward()` gives the cluster's answer);
        .remove() undoes it."""
        return self._call(self.faults.add_hook, api_key, fn, node, count, self._call)

    def clear_intercepts(self) -> None:
        """Remove every request hook."""
        self._call(self.faults.clear_hooks)

    def received(self, api_key: int | None = None) -> list[ReceivedRequest]:
        """The requests that passed through the proxy so far (optionally of one API key)."""
        return self._call(lambda: [r for r in self.requests if api_key is None or r.api_key == api_key])

    def routes(self) -> dict[tuple[str, int], tuple[str, int]]:
        """{real broker address: the proxy's address for it} of every listener so far."""
        return self._call(lambda: {up: (PROXY_HOST, lst.port) for up, lst in self._listeners.items()})

    def node_routes(self) -> dict[int, tuple[str, int]]:
        """{node id: the proxy's address for it} of every broker whose node id an answer has given."""
        return self._call(lambda: {self._nodes[up]: (PROXY_HOST, lst.port) for up, lst in self._listeners.items()
                                   if up in self._nodes})

    def upstream_sockets(self) -> set[tuple[str, int]]:
        """The local addresses of every connection the proxy opened to a real broker."""
        return self._call(lambda: set(self._upstream_sockets))

    # -- what the paired connections ask (on the loop) ---------------------------------------------------
    async def route(self, node_id: int, host: str, port: int) -> tuple[str, int]:
        """The proxy's endpoint for a real broker a response names (a new listener the first time)."""
        if node_id >= 0:
            self._nodes[(host, port)] = node_id
        listener = self._listeners.get((host, port)) or await self._listener((host, port))
        return PROXY_HOST, listener.port

    async def _listener(self, upstream: tuple[str, int]) -> Listener:
        async with self._lock:
            found = self._listeners.get(upstream)
            if found is not None:
                return found

            async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                conn = PairedConnection(self, upstream, reader, writer, next(self._ids))
                self._connections.add(conn)
                try:
                    await conn.run()
                except asyncio.CancelledError:
                    conn.close()  # the proxy is stopping: this connection's handler ends here
                finally:
                    self._connections.discard(conn)

            context = self.security.server_context
            server = await (asyncio.start_server(serve, PROXY_HOST, 0) if context is None else asyncio.start_server(
                serve, PROXY_HOST, 0, ssl=context, ssl_handshake_timeout=self.timeout))
            port = int(server.sockets[0].getsockname()[1])
            listener = self._listeners[upstream] = Listener(upstream, server, port)
            log.info("proxy: 127.0.0.1:%d -> %s:%d", port, *upstream)
            return listener

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._topics.get(topic_id)

    def learn(self, api_key: int, msg: Msg) -> None:
        """Keep the topic ids and node ids a decoded response teaches."""
        self._topics.update(proxy_rewrite.topic_ids(api_key, msg))
        self._nodes.update(proxy_rewrite.nodes(api_key, msg))

    def node_of(self, upstream: tuple[str, int]) -> int | None:
        return self._nodes.get(upstream)

    def upstream_opened(self, local: tuple[str, int]) -> None:
        self._upstream_sockets.add(local)
