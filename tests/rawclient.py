"""A tiny blocking Kafka client built on the protocol package, for raw-protocol tests.

    with RawClient(broker.host, broker.port) as c:
        resp = c.request(3, 12, {"topics": None})          # Metadata v12
        c.send_frame(b"garbage")                           # anything at all
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from mockbroker.protocol import headers as hdr
from mockbroker.protocol.messages import Msg, decode_response, encode_request
from mockbroker.protocol.primitives import Writer


class RawClient:
    def __init__(self, host: str, port: int, client_id: str | None = "raw-test", timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self.correlation_id = 0

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    # -- building and sending --------------------------------------------------------------------
    def encode(self, api_key: int, version: int, body: dict[str, Any], correlation_id: int | None = None) -> bytes:
        if correlation_id is None:
            self.correlation_id += 1
            correlation_id = self.correlation_id
        w = Writer()
        hdr.encode_request_header(hdr.RequestHeader(api_key, version, correlation_id, self.client_id), w)
        encode_request(api_key, version, body, w)
        payload = w.getvalue()
        return struct.pack(">i", len(payload)) + payload

    def send_frame(self, payload: bytes) -> None:
        """Send raw bytes (already framed or not: exactly what is given)."""
        self.sock.sendall(payload)

    def send(self, api_key: int, version: int, body: dict[str, Any]) -> int:
        frame = self.encode(api_key, version, body)
        self.sock.sendall(frame)
        return self.correlation_id

    # -- receiving -------------------------------------------------------------------------------
    def _recv_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(min(n, 1 << 20))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self._recv_exact(4))
        return self._recv_exact(size)

    def recv(self, api_key: int, version: int) -> tuple[int, Msg]:
        frame = self.recv_frame()
        cid, reader = hdr.decode_response_header(frame, hdr.response_header_version(api_key, version))
        return cid, decode_response(api_key, version, reader)

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> Msg:
        cid = self.send(api_key, version, body)
        got, resp = self.recv(api_key, version)
        assert got == cid, f"correlation id {got} != {cid}"
        return resp

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True if the broker closes the connection (reads EOF) within timeout."""
        self.sock.settimeout(timeout)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
