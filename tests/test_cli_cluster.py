"""`mockbroker --brokers N` / MOCKBROKER_BROKERS: N nodes in one process, each on its own port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Any

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


def _post(base: str, path: str, body: dict[str, object] | None = None) -> Any:
    import json
    import urllib.request

    req = urllib.request.Request(base + path, data=json.dumps(body or {}).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_the_commands_http_endpoint_stops_starts_nodes_and_moves_a_coordinator() -> None:
    """Issue #12 item 6 from the CLI: `--brokers 3 --http-port 0`, and the failure calls over its endpoint
    show at once in what the nodes answer."""
    proc, addresses = start("--port", "0", "--brokers", "3", "--http-port", "0", "--http-host", "127.0.0.1")
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip().removeprefix("mockbroker control endpoint on ")
        assert base.startswith("http://127.0.0.1:"), base
        (host1, port1), (host2, port2), (_, port3) = addresses
        stopped = _post(base, "/nodes/2/stop")
        assert [n["alive"] for n in stopped["nodes"]] == [True, False, True]
        assert _metadata_brokers(host1, port1) == [(1, port1), (3, port3)]
        try:
            socket.create_connection((host2, port2), timeout=5).close()
            refused = False
        except OSError:
            refused = True
        assert refused, "a stopped node still accepts connections"
        _post(base, "/nodes/2/start")
        assert _metadata_brokers(host2, port2) == [(1, port1), (2, port2), (3, port3)]
        _post(base, "/coordinators", {"group": "g", "node": 3})
        with RawClient(host1, port1) as c:
            found = c.request(10, 4, {"key_type": 0, "coordinator_keys": ["g"]}).coordinators[0]
        assert (found.error_code, found.node_id, found.port) == (0, 3, port3)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
