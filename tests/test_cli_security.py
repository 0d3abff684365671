"""The `mockbroker` command with secured listeners: --listener SASL_SSL://..., --user, --sasl-mechanisms,
--security-protocol-map, --ssl-* and --ssl-ca-out; bad security flags exit with code 2 and a message."""

from __future__ import annotations

import re
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rawclient import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA = 17, 36, 3


def start(*args: str) -> tuple[subprocess.Popen[str], list[tuple[str, int, str]], list[str]]:
    """The command started with args: its listeners (host, port, protocol) and its further lines."""
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--no-env", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("mockbroker listening on "), (line, proc.stderr.read() if proc.poll() else "")
    listeners = [(host, int(port), protocol or "PLAINTEXT") for host, port, protocol in
                 re.findall(r"([\d.]+):(\d+)(?: \[(\w+)\])?", line.removeprefix("mockbroker listening on "))]
    more = []
    if any(p in ("SSL", "SASL_SSL") for _, _, p in listeners):
        more.append(proc.stdout.readline().strip())
    return proc, listeners, more


def test_plaintext_and_sasl_ssl_listeners_with_users_from_flags(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    proc, listeners, more = start("--listener", "PLAINTEXT://127.0.0.1:0", "--listener", "SASL_SSL://127.0.0.1:0",
                                  "--user", "alice:secret", "--sasl-mechanisms", "PLAIN", "--ssl-ca-out", str(ca))
    try:
        assert [p for _, _, p in listeners] == ["PLAINTEXT", "SASL_SSL"]
        assert more == [f"mockbroker TLS CA certificate in {ca}"]
        (host, plain_port, _), (_, tls_port, _) = listeners
        with RawClient(host, plain_port) as c:
            assert c.request(METADATA, 12, {"topics": None}).brokers[0].port == plain_port
        context = ssl.create_default_context(cafile=str(ca))
        c = RawClient(host, tls_port)
        c.sock = context.wrap_socket(c.sock, server_hostname="localhost")
        with c:
            resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
            assert (resp.error_code, resp.mechanisms) == (33, ["PLAIN"])  # UNSUPPORTED_SASL_MECHANISM
        c = RawClient(host, tls_port)
        c.sock = context.wrap_socket(c.sock, server_hostname="localhost")
        with c:
            assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == 0
            assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"}).error_code == 0
            assert c.request(METADATA, 12, {"topics": None}).brokers[0].port == tls_port
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_a_listener_named_otherwise_takes_its_protocol_from_the_map() -> None:
    proc, listeners, _ = start("--listener", "INTERNAL://127.0.0.1:0", "--security-protocol-map",
                               "INTERNAL:SASL_PLAINTEXT", "--user", "bob:pw")
    try:
        [(host, port, protocol)] = listeners
        assert protocol == "SASL_PLAINTEXT"
        with RawClient(host, port) as c:
            c.send(METADATA, 12, {"topics": None})  # before authentication: closed
            assert c.is_closed_by_peer()
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("args,message", [
    (["--listener", "SASL_PLAINTEXT://127.0.0.1:0", "--sasl-mechanisms", "GSSAPI"], "SASL mechanisms not served"),
    (["--listener", "SSL://127.0.0.1:0", "--ssl-certfile", __file__], "give certfile and keyfile together"),
    (["--listener", "SSL://127.0.0.1:0", "--ssl-certfile", __file__, "--ssl-keyfile", __file__],
     "bad security setting"),
    (["--listener", "SSL://127.0.0.1:0", "--ssl-certfile", "/nonexistent.pem"], "'/nonexistent.pem': no such file"),
    (["--user", "nopassword"], "NAME:PASSWORD"),
    (["--listener", "X://127.0.0.1:0", "--security-protocol-map", "X:TLS"], "NAME:PROTOCOL"),
])
def test_bad_security_flags_exit_2_with_a_message(args: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mockbroker", "--no-env", *args], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
