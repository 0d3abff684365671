"""The HTTP endpoint under bad input: malformed requests, huge headers and bodies, slow clients and many
connections get aiohttp's limits and a JSON answer (or a clean close), never a traceback, and the broker
keeps serving Kafka clients meanwhile."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.http import ControlServer
from mockbroker.server import MockBroker
from tests.docker.test_control_http import produce

WAIT_S = 60.0


def serve(**limits: float) -> Iterator[tuple[MockBroker, ControlServer]]:
    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        server = ControlServer(broker, **limits)  # type: ignore[arg-type]
        asyncio.run_coroutine_threadsafe(server.start("127.0.0.1", 0), broker._loop).result(30)
        try:
            yield broker, server
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), broker._loop).result(30)


@pytest.fixture
def strict() -> Iterator[tuple[MockBroker, ControlServer]]:
    """A broker whose endpoint has short limits: 1 s to send a request, 1 s for a body, 20 connections."""
    yield from serve(keepalive_timeout=1.0, read_timeout=1.0, max_connections=20)


@pytest.fixture
def few_connections() -> Iterator[tuple[MockBroker, ControlServer]]:
    """At most 20 connections, kept alive long enough for a slow machine to open them all."""
    yield from serve(keepalive_timeout=60.0, max_connections=20)


@pytest.fixture(autouse=True)
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)
    yield
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the socket timeout)."""
    buf = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return buf


def answer(buf: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = buf.partition(b"\r\n\r\n")
    assert b"Traceback" not in buf
    assert b"application/json" in head, head
    return int(head.split(b" ", 2)[1]), json.loads(body)


def kafka_still_served(broker: MockBroker) -> None:
    name = "alive"
    if name not in broker.topics():
        broker.create_topic(name)
    before = broker.offsets(name)["high_watermark"]
    assert produce(broker, name, [(b"k", b"v")]) == before


@pytest.mark.parametrize("data,status,error", [
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40, 400, "bad_request"),  # TLS on plain HTTP
    (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431, "too_large"),
    (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(300)) + b"\r\n", 400,
     "bad_request"),
    (b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef", 400, "bad_request"),
])
def test_malformed_and_oversized_requests_get_json_and_a_close(strict: tuple[MockBroker, ControlServer], data: bytes,
                                                               status: int, error: str) -> None:
    broker, server = strict
    with connect(server.port) as sock:
        sock.sendall(data)
        got_status, body = answer(read_until_closed(sock))
    assert (got_status, body["error"]) == (status, error) and body["message"]
    kafka_still_served(broker)


def test_a_huge_body_is_refused_413_and_the_endpoint_goes_on(strict: tuple[MockBroker, ControlServer]) -> None:
    broker, server = strict
    body = b"{" + b" " * (2 << 20) + b"}"
    with connect(server.port) as sock:
        sock.sendall(b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        try:
            sock.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading it all
        status, payload = answer(read_until_closed(sock))
    assert (status, payload["error"]) == (413, "too_large")
    kafka_still_served(broker)
    with connect(server.port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer(read_until_closed(sock))[0] == 200


def test_a_client_that_never_finishes_its_request_is_closed(strict: tuple[MockBroker, ControlServer]) -> None:
    broker, server = strict
    silent, slow = connect(server.port), connect(server.port)
    try:
        slow.sendall(b"GET /topics HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # headers never end
        kafka_still_served(broker)  # meanwhile the broker serves Kafka clients
        assert read_until_closed(silent) == b""   # closed by aiohttp's keep-alive timer, no answer
        assert read_until_closed(slow) == b""
    finally:
        silent.close()
        slow.close()


def test_a_body_that_never_arrives_gets_408(strict: tuple[MockBroker, ControlServer]) -> None:
    broker, server = strict
    with connect(server.port) as sock:
        sock.sendall(b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"name\"")
        status, body = answer(read_until_closed(sock))
    assert (status, body["error"]) == (408, "timeout")
    assert broker.topics() == []


def test_past_the_connection_limit_new_connections_get_503_and_old_ones_keep_working(
        few_connections: tuple[MockBroker, ControlServer]) -> None:
    broker, server = few_connections
    held = [connect(server.port) for _ in range(20)]
    try:
        for sock in held:  # a request each, kept alive
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        for sock in held:
            assert b" 200 " in sock.recv(65536).split(b"\r\n", 1)[0]
        extra = connect(server.port)
        with extra:
            extra.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            status, body = answer(read_until_closed(extra))
        assert (status, body["error"]) == (503, "too_many_connections")
        kafka_still_served(broker)
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + WAIT_S
    while True:  # once the held connections are gone, new ones are served again
        with connect(server.port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status, _ = answer(read_until_closed(sock))
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status == 200


def test_many_clients_at_once_are_all_answered(strict: tuple[MockBroker, ControlServer]) -> None:
    broker, server = strict
    broker.create_topic("t")
    socks = [connect(server.port) for _ in range(15)]
    try:
        for sock in socks:
            sock.sendall(b"GET /topics/t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        for sock in socks:
            status, body = answer(read_until_closed(sock))
            assert status == 200 and body["name"] == "t"
    finally:
        for sock in socks:
            sock.close()
