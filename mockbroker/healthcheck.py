"""`mockbroker healthcheck [--bootstrap HOST:PORT[,HOST:PORT]] [--timeout SECONDS]`: exit 0 when every
address answers an ApiVersions request, 1 otherwise (one line on stderr saying which and why).

Without --bootstrap it checks every listener the environment configures (KAFKA_LISTENERS and the rest,
read as the broker reads them; 0.0.0.0 is reached on 127.0.0.1), which is what the image's HEALTHCHECK
uses. The request is ApiVersions v0, written by hand so that the check stays small: a 4-byte size, then
api key 18, version 0, a correlation id and a client id; the answer must carry the same correlation id
and error code 0.
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import sys
import time

API_VERSIONS = 18
CLIENT_ID = b"mockbroker-healthcheck"


def api_versions_frame(correlation_id: int) -> bytes:
    """An ApiVersions v0 request (request header v1, empty body), length-prefixed."""
    body = struct.pack(">hhih", API_VERSIONS, 0, correlation_id, len(CLIENT_ID)) + CLIENT_ID
    return struct.pack(">i", len(body)) + body


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    chunks = []
    while n:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("connection closed before the answer")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def not_kafka(head: bytes, size: int) -> str:
    """Why the first 4 bytes of an answer are no Kafka frame size: another protocol's greeting, if known."""
    if head == b"HTTP":
        return "the port answered HTTP, not Kafka (is it the control endpoint or another HTTP service?)"
    if head[:1] in (b"\x15", b"\x16") and head[1:2] == b"\x03":  # a TLS alert or handshake record
        return "the port answered TLS, not plaintext Kafka (a TLS listener?)"
    if head.isascii() and head.decode("ascii").isprintable():
        return f"the port answered text ({head.decode('ascii')!r}...), not Kafka"
    return f"answer of implausible size {size}: not a Kafka broker?"


def check(host: str, port: int, timeout: float = 5.0) -> str | None:
    """None when host:port answers ApiVersions within timeout seconds, else why not."""
    deadline = time.monotonic() + timeout
    correlation_id = 0x6D6B6263  # "mkbc"
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(api_versions_frame(correlation_id))
            head = _recv_exact(sock, 4, deadline)
            (size,) = struct.unpack(">i", head)
            if size < 6 or size > 1 << 20:
                return not_kafka(head, size)
            payload = _recv_exact(sock, size, deadline)
    except (OSError, ConnectionError) as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    got, error_code = struct.unpack_from(">ih", payload)
    if got != correlation_id:
        return f"correlation id {got} != {correlation_id}"
    if error_code != 0:
        return f"ApiVersions error code {error_code}"
    return None


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (a port 1..65535)")
    return host.strip("[]") or "127.0.0.1", int(port)


def addresses_from_env() -> list[tuple[str, int]]:
    from mockbroker.envconfig import build_settings

    settings = build_settings(os.environ)
    return [(spec.connect_host, spec.port) for spec in settings.listeners]


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be a number above 0") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be a number above 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    from mockbroker.cliargs import Parser

    p = Parser(prog="mockbroker healthcheck", description="Exit 0 if the broker answers ApiVersions, else 1.")
    p.add_argument("--bootstrap", metavar="HOST:PORT[,HOST:PORT]",
                   help="addresses to check (default: every listener the environment configures)")
    p.add_argument("--timeout", type=positive_seconds, default=5.0, help="seconds per address (default 5)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 every address answered; 1 one did not, or the environment names no usable address
    (Docker reserves 2 for its own use, so a broken environment reads as unhealthy); 2 bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.bootstrap:
        try:
            targets = [parse_address(a) for a in args.bootstrap.split(",") if a.strip()]
        except ValueError as exc:
            parser.error(f"argument --bootstrap: {exc}")
    else:
        try:
            targets = addresses_from_env()
        except ValueError as exc:  # envconfig.ConfigError is a ValueError
            print(f"mockbroker healthcheck: {exc}", file=sys.stderr)
            return 1
    if not targets:
        print("mockbroker healthcheck: no address to check", file=sys.stderr)
        return 1
    failed = 0
    for host, port in targets:
        if port == 0:
            print(f"mockbroker healthcheck: {host}:0 is a port chosen at start; give --bootstrap", file=sys.stderr)
            failed += 1
            continue
        reason = check(host, port, args.timeout)
        if reason is not None:
            print(f"mockbroker healthcheck: {host}:{port}: {reason}", file=sys.stderr)
            failed += 1
    if failed:
        return 1
    print("ok " + ",".join(f"{h}:{p}" for h, p in targets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
