"""A small blocking Kafka client on this project's protocol package, for the remote target (RemoteBroker).

`Connection` is one socket to one broker: length-prefixed frames, request headers by the protocol
package's rules, ApiVersions asked once so each request goes at the newest version both sides know (up to
the version the caller's field names are written for). `ClusterClient` keeps one connection per node of
the cluster, found through Metadata from the bootstrap servers, and finds coordinators.

Nothing here is asyncio: the remote target is called from sync test code, one request at a time.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import Msg, api_name, decode_response, encode_request
from mockbroker.protocol.primitives import Writer
from mockbroker.remote.security import ClientSecurity

DEFAULT_TIMEOUT_S = 30.0
COORDINATOR_GROUP = 0
COORDINATOR_TRANSACTION = 1
RETRY_S = 0.1


class UnsupportedOnTarget(RuntimeError):
    """The target does not serve an API (or a version of it) this call needs."""


class Connection:
    """One blocking connection to one broker; `request(api_key, body, newest)` picks the version."""

    def __init__(self, host: str, port: int, client_id: str = "mockbroker-remote",
                 timeout: float = DEFAULT_TIMEOUT_S, security: ClientSecurity | None = None) -> None:
        self.address = f"{host}:{port}"
        security = security or ClientSecurity()
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock = security.wrap(sock, host)  # TLS for SSL and SASL_SSL (mockbroker/remote/security.py)
        except BaseException:
            sock.close()
            raise
        self.client_id = client_id
        self.correlation_id = 0
        self._lock = threading.Lock()  # one request at a time (an async wait polls from a worker thread)
        answer = self.send(ApiKey.API_VERSIONS, 3, {"client_software_name": "mockbroker-remote",
                                                    "client_software_version": "1"})
        if answer.error_code != ErrorCode.NONE:
            raise UnsupportedOnTarget(f"{self.address} refused ApiVersions v3: error {answer.error_code}")
        self.versions: dict[int, tuple[int, int]] = {
            k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        try:
            security.authenticate(self.send, self.versions, self.address)  # SASL_PLAINTEXT, SASL_SSL
        except BaseException:
            self.sock.close()
            raise

    def close(self) -> None:
        self.sock.close()

    def version_for(self, api_key: int, newest: int, oldest: int = 0) -> int:
        """The newest version both sides serve, at most `newest` and at least `oldest`."""
        served = self.versions.get(api_key)
        if served is None or min(newest, served[1]) < max(oldest, served[0]):
            raise UnsupportedOnTarget(f"{self.address} does not serve {api_name(api_key)} v{oldest}..v{newest} "
                                      f"(serves {served and f'v{served[0]}..v{served[1]}' or 'none'})")
        return min(newest, served[1])

    def request(self, api_key: int, body: dict[str, Any], newest: int, oldest: int = 0) -> Msg:
        """Send body at the newest version both sides know within [oldest, newest]; the decoded answer."""
        return self.send(api_key, self.version_for(api_key, newest, oldest), body)

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> Msg:
        with self._lock:
            return self._send(api_key, version, body)

    def _send(self, api_key: int, version: int, body: dict[str, Any]) -> Msg:
        self.correlation_id += 1
        w = Writer()
        hdr.encode_request_header(hdr.RequestHeader(api_key, version, self.correlation_id, self.client_id), w)
        encode_request(api_key, version, body, w)
        payload = w.getvalue()
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        (size,) = struct.unpack(">i", self._recv_exact(4))
        frame = self._recv_exact(size)
        cid, reader = hdr.decode_response_header(frame, hdr.response_header_version(api_key, version))
        if cid != self.correlation_id:
            raise ConnectionError(f"{self.address}: correlation id {cid}, expected {self.correlation_id}")
        msg = decode_response(api_key, version, reader)
        msg["_version"] = version
        return msg

    def _recv_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(min(n, 1 << 20))
            if not chunk:
                raise ConnectionError(f"{self.address} closed the connection")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)


def check(code: int, what: str) -> None:
    """KafkaError for a non-zero error code of an answer."""
    if code != ErrorCode.NONE:
        try:
            error = ErrorCode(code)
        except ValueError:
            error = ErrorCode.UNKNOWN_SERVER_ERROR
        raise KafkaError(error, what)


class ClusterClient:
    """Connections to every node of a cluster, from its bootstrap servers ("host:port,host:port")."""

    def __init__(self, bootstrap_servers: str, client_id: str = "mockbroker-remote",
                 timeout: float = DEFAULT_TIMEOUT_S, security: ClientSecurity | None = None) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.security = security or ClientSecurity()
        self.client_id = client_id
        self.timeout = timeout
        self._conns: dict[int, Connection] = {}
        self._bootstrap: Connection | None = None
        self.nodes: dict[int, tuple[str, int]] = {}
        self.controller_id = -1
        self.metadata(None)

    def close(self) -> None:
        for conn in [*self._conns.values(), *([self._bootstrap] if self._bootstrap else [])]:
            conn.close()
        self._conns.clear()
        self._bootstrap = None

    def any(self) -> Connection:
        """A connection to any node (the first bootstrap server that answers)."""
        if self._bootstrap is None:
            errors = []
            for address in self.bootstrap_servers.split(","):
                host, _, port = address.strip().rpartition(":")
                try:
                    self._bootstrap = Connection(host, int(port), self.client_id, self.timeout, self.security)
                    break
                except OSError as exc:
                    errors.append(f"{address}: {exc}")
            else:
                raise ConnectionError(f"no bootstrap server answered: {'; '.join(errors)}")
        return self._bootstrap

    def node(self, node_id: int) -> Connection:
        """The connection to one node (made on first use)."""
        conn = self._conns.get(node_id)
        if conn is None:
            if node_id not in self.nodes:
                self.metadata(None)
            host, port = self.nodes[node_id]
            conn = self._conns[node_id] = Connection(host, port, self.client_id, self.timeout, self.security)
        return conn

    def metadata(self, topics: list[str] | None) -> Msg:
        """A Metadata answer (topics None: every topic); the node list is refreshed from it."""
        answer = self.any().request(ApiKey.METADATA, {
            "topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": False}, newest=12, oldest=1)
        self.nodes = {b.node_id: (b.host, b.port) for b in answer.brokers}
        self.controller_id = answer.controller_id
        return answer

    def coordinator(self, key: str, key_type: int) -> Connection:
        """The connection to the coordinator of a group (key_type 0) or a transactional id (1); asked again
        while the cluster answers COORDINATOR_NOT_AVAILABLE (its internal topic being made), up to the timeout."""
        conn = self.any()
        version = conn.version_for(ApiKey.FIND_COORDINATOR, 4, 1)
        deadline = time.monotonic() + self.timeout
        while True:
            answer = conn.send(ApiKey.FIND_COORDINATOR, version,
                               {"key": key, "key_type": key_type, "coordinator_keys": [key]})
            found = answer.coordinators[0] if version >= 4 else answer
            if found.error_code != ErrorCode.COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
                break
            time.sleep(RETRY_S)
        check(found.error_code, f"FindCoordinator({key!r})")
        self.nodes[found.node_id] = (found.host, found.port)
        return self.node(found.node_id)
