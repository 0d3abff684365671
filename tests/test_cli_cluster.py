"""`mockbroker --brokers N` / MOCKBROKER_BROKERS: N nodes in one process, each on its own port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tests.rawclient import RawClient


def start(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], list[tuple[str, int]]]:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("mockbroker listening on "), (line, proc.stderr.read() if proc.poll() else "")
    addresses = []
    for item in line.removeprefix("mockbroker listening on ").split(", "):
        host, _, port = item.rpartition(":")
        addresses.append((host, int(port)))
    return proc, addresses


def _metadata_brokers(host: str, port: int) -> list[tuple[int, int]]:
    with RawClient(host, port) as c:
        meta = c.request(3, 12, {"topics": None})
        return [(b.node_id, b.port) for b in meta.brokers]


def test_brokers_flag_with_port_zero_gives_each_node_a_free_port_and_lists_them_all() -> None:
    proc, addresses = start("--port", "0", "--brokers", "3", "--topic", "t:3")
    try:
        assert len({port for _, port in addresses}) == 3
        expected = [(i + 1, port) for i, (_, port) in enumerate(addresses)]
        for host, port in addresses:
            assert _metadata_brokers(host, port) == expected
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def _free_run(count: int) -> int:
    """A base port with `count` consecutive ports free right now."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count > 65535:
            continue
        try:
            socks = []
            for p in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no run of free ports")


def test_brokers_from_the_environment_take_consecutive_ports() -> None:
    base = _free_run(2)
    proc, addresses = start("--port", str(base), env={"MOCKBROKER_BROKERS": "2"})
    try:
        assert [port for _, port in addresses] == [base, base + 1]
        assert _metadata_brokers("127.0.0.1", base + 1) == [(1, base), (2, base + 1)]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
