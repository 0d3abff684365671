"""Helpers of the docker tests: free loopback ports, the entrypoint as a subprocess with a compose-style
environment, reading docker/compose.yaml without PyYAML, and the skip rule of the tool tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
REQUIRE_ENV = "MOCKBROKER_REQUIRE_INTEROP"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now (bound and released; another process could still take it)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def entrypoint_argv() -> list[str]:
    """The `mockbroker` console script next to this interpreter (what the image's ENTRYPOINT runs),
    else `python -m mockbroker`."""
    script = Path(sys.executable).parent / "mockbroker"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "mockbroker"]


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any KAFKA_* / MOCKBROKER_* / SCHEMA_REGISTRY_* / CLUSTER_ID, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KAFKA_", "MOCKBROKER_", "SCHEMA_REGISTRY_")) and k != "CLUSTER_ID"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def image_env() -> dict[str, str]:
    """The ENV settings of docker/Dockerfile's last stage (what the image adds to a compose file's
    environment), PATH left out."""
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    last_stage = text[text.rindex("\nFROM "):]
    out: dict[str, str] = {}
    for line in last_stage.splitlines():
        if line.startswith("ENV "):
            for item in line[4:].split():
                key, sep, value = item.partition("=")
                assert sep, line
                if key != "PATH":
                    out[key] = value.strip("\"'")
    return out


@dataclass
class Entrypoint:
    proc: subprocess.Popen[bytes]
    lines: list[str] = field(default_factory=list)
    stderr: str = ""
    _buf: bytes = b""

    def read_line(self, timeout: float = 30.0) -> str:
        """The next stdout line ('' if the process exited first)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no line from the entrypoint in {timeout}s")
                if sel.select(min(left, 0.5)):
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        rest, self._buf = self._buf.decode(), b""
                        return rest
                    self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        text = line.decode().strip()
        self.lines.append(text)
        return text

    def stop(self) -> tuple[int, str]:
        """SIGTERM, wait; (exit code, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.stderr += self.proc.stderr.read().decode()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        return int(self.proc.returncode), self.stderr


@contextlib.contextmanager
def entrypoint(env: Mapping[str, str], *args: str) -> Iterator[Entrypoint]:
    """The entrypoint started with `env` (compose style) and `args`; yields once it printed its
    listening line (fails the test with its stderr otherwise); SIGTERM at the end, exit code 0 checked."""
    proc = subprocess.Popen([*entrypoint_argv(), *args], cwd=REPO, env=clean_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ep = Entrypoint(proc)
    try:
        line = ep.read_line()
        if not line.startswith("mockbroker listening on "):
            code, err = ep.stop()
            pytest.fail(f"the entrypoint did not start (exit {code}): {line!r}\n{err}", pytrace=False)
        yield ep
    finally:
        code, err = ep.stop()
    assert code == 0, err


def run_entrypoint(env: Mapping[str, str], *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run the entrypoint expecting it to exit by itself (a configuration error)."""
    return subprocess.run([*entrypoint_argv(), *args], cwd=REPO, env=clean_env(env), capture_output=True,
                          text=True, timeout=timeout)


def listening_addresses(line: str) -> list[tuple[str, str]]:
    """[(bound "host:port", advertised "host:port")] from "mockbroker listening on ..."."""
    rest = line.removeprefix("mockbroker listening on ")
    out = []
    for part in rest.split(", "):
        m = re.match(r"^(\S+)(?: \(advertised as (\S+)\))?(?: \[[A-Z_]+\])?$", part)
        assert m is not None, line
        out.append((m[1], m[2] or m[1]))
    return out


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


# ------------------------------------------------------------------------------------------------
# docker/compose.yaml without PyYAML: the subset it is written in (block mappings, quoted scalars,
# block lists of scalars, flow lists written as JSON arrays, comments).


def _scalar(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    if text[0] in "[\"" or text[0] == "{":
        return json.loads(text)
    if text[0] == "'" and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    return text


def load_compose(path: Path = DOCKER / "compose.yaml") -> dict[str, Any]:
    text = path.read_text()
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        return dict(yaml.safe_load(text))
    root: dict[str, Any] = {}
    stack: list[tuple[int, Any]] = [(-1, root)]
    pending: tuple[int, dict[str, Any], str] | None = None
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if pending is not None:
            p_indent, p_parent, p_key = pending
            pending = None
            if indent > p_indent:
                container: Any = [] if line.startswith("- ") else {}
                p_parent[p_key] = container
                stack.append((p_indent, container))
            else:
                p_parent[p_key] = None
        while stack and indent <= stack[-1][0]:
            stack.pop()
        parent = stack[-1][1]
        if line.startswith("- "):
            assert isinstance(parent, list), raw
            parent.append(_scalar(line[2:]))
            continue
        key, sep, value = line.partition(":")
        assert sep and isinstance(parent, dict), raw
        key = key.strip().strip("\"'")
        if value.strip():
            parent[key] = _scalar(value)
        else:
            pending = (indent, parent, key)
    if pending is not None:
        pending[1][pending[2]] = None
    return root


def compose_env(service: str = "mockbroker") -> dict[str, str]:
    env = load_compose()["services"][service]["environment"]
    return {str(k): str(v) for k, v in env.items()}


def require_tool(name: str, fallback: Path | None = None) -> str:
    """The path of a command-line tool; skip (fail under MOCKBROKER_REQUIRE_INTEROP=1) if missing."""
    path = shutil.which(name)
    if path is None and fallback is not None and fallback.exists():
        path = str(fallback)
    if path is None:
        reason = f"{name} not found on PATH"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason} [{REQUIRE_ENV}=1]", pytrace=False)
        pytest.skip(reason)
    return path
