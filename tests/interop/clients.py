"""Run the real Kafka clients that the interop tests drive against mockbroker.

    from tests.interop.clients import run_java, run_kafkajs, run_kcat, of_type

    lines = run_java("produce", {"bootstrap": broker.bootstrap, "topic": "t",
                                 "records": [{"key": "k", "value": "v"}],
                                 "config": {"compression.type": "zstd"}})
    assert of_type(lines, "sent")[0]["offset"] == 0

- run_java: the Java harness (tests/interop/harness/java, kafka-clients 4.3.0). Commands and their
  JSON arguments: `KafkaHarness --help`, or the module docstring of KafkaHarness.java.
- run_kafkajs: the KafkaJS harness (tests/interop/harness/node/kafkajs_harness.js), same style.
- run_kcat: kcat (librdkafka) with any arguments.

Each first checks that its client is there (tools/interop_deps.py provides them; jars and
node_modules are never downloaded from here, but a stale Java harness is recompiled). When one is
missing the test is skipped with a one-line reason, or fails when MOCKBROKER_REQUIRE_INTEROP=1
(CI sets it, so a broken install cannot pass as a skip).

The harnesses print JSON lines; the runners return them as a list of dicts. A nonzero exit raises
HarnessError unless check=False (then the "fatal" line is in the list). A run that outlives
`timeout` is killed and raises HarnessError whatever `check` says: the harness's own watchdog
(deadline_ms, set from timeout) normally ends it first with a "fatal" Watchdog line.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
HARNESS_DIR = Path(__file__).resolve().parent / "harness"
KAFKAJS_HARNESS = HARNESS_DIR / "node" / "kafkajs_harness.js"
REQUIRE_ENV = "MOCKBROKER_REQUIRE_INTEROP"
JAVA_MAIN_CLASS = "KafkaHarness"
# Short-lived JVMs: C1 only and the serial GC start faster; extra options from MOCKBROKER_JAVA_OPTS.
JAVA_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Djava.awt.headless=true"]

Lines = list[dict[str, Any]]


class HarnessError(RuntimeError):
    """A harness or kcat run failed: nonzero exit (with check=True) or killed after its timeout."""

    def __init__(self, message: str, *, argv: list[str], returncode: int | None, lines: Lines, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.lines = lines
        self.stderr = stderr
        tail = "\n".join(stderr.rstrip().splitlines()[-40:])
        shown = "\n".join(json.dumps(line) for line in lines[-20:])
        super().__init__(
            f"{message}\n  command: {' '.join(argv[:1] + argv[-2:])}\n"
            f"--- last output lines ---\n{shown}\n--- stderr (tail) ---\n{tail}"
        )


# ------------------------------------------------------------------------------------------------
# availability


@functools.cache
def _deps() -> ModuleType:
    """tools/interop_deps.py, loaded by path (tools/ is not a package)."""
    path = REPO / "tools" / "interop_deps.py"
    spec = importlib.util.spec_from_file_location("mockbroker_interop_deps", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_FIX = "run scripts/install-test-deps (or: .venv/bin/python tools/interop_deps.py)"


@functools.cache
def java_unavailable() -> str | None:
    """None when the Java harness can run, else why not (one line)."""
    deps = _deps()
    try:
        deps.check_java_runtime()
        deps.ensure_java_libs(fetch=False)
        deps.ensure_java_classes(build=True)  # no network: recompiles only when the sources changed
    except deps.DepError as exc:
        return f"Java client unavailable: {str(exc).splitlines()[0]}; {_FIX}"
    return None


@functools.cache
def kafkajs_unavailable() -> str | None:
    deps = _deps()
    if shutil.which("node") is None:
        return "node not found on PATH (the KafkaJS interop tests need Node 18+)"
    try:
        deps.ensure_node(fetch=False)
    except deps.DepError as exc:
        return f"KafkaJS unavailable: {str(exc).splitlines()[0]}; {_FIX}"
    return None


@functools.cache
def kcat_unavailable() -> str | None:
    if _deps().kcat_path() is None:
        return f"kcat not found on PATH; {_FIX} (as root it apt-get installs kcat)"
    return None


def require(reason: str | None) -> None:
    """Skip the running test for `reason` (fail instead when MOCKBROKER_REQUIRE_INTEROP=1)."""
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} [{REQUIRE_ENV}=1]", pytrace=False)
    pytest.skip(reason)


def require_java() -> None:
    require(java_unavailable())


def require_kafkajs() -> None:
    require(kafkajs_unavailable())


def require_kcat() -> None:
    require(kcat_unavailable())


# ------------------------------------------------------------------------------------------------
# running


def parse_json_lines(stdout: bytes | str) -> Lines:
    """One dict per non-empty line; a line that is not a JSON object becomes {"type": "unparsed"}."""
    text = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
    out: Lines = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        out.append(value if isinstance(value, dict) else {"type": "unparsed", "text": raw})
    return out


def of_type(lines: Lines, type_: str) -> Lines:
    """The lines of one type: of_type(lines, "record")."""
    return [line for line in lines if line.get("type") == type_]


def _run_harness(argv: list[str], args: dict[str, Any] | None, timeout: float, check: bool,
                 env: dict[str, str] | None = None) -> Lines:
    payload = dict(args or {})
    # The harness's own watchdog fires a little before ours, so a hang still yields its output.
    payload.setdefault("deadline_ms", max(1000, int(timeout * 1000) - 2000))
    try:
        proc = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"killed after {timeout:.0f}s", argv=argv, returncode=None,
                           lines=parse_json_lines(exc.stdout or b""),
                           stderr=(exc.stderr or b"").decode("utf-8", "replace")) from None
    lines = parse_json_lines(proc.stdout)
    if check and proc.returncode != 0:
        raise HarnessError(f"exit code {proc.returncode}", argv=argv, returncode=proc.returncode,
                           lines=lines, stderr=proc.stderr.decode("utf-8", "replace"))
    return lines


def java_argv(command: str) -> list[str]:
    """The command line that runs the Java harness (arguments then come as JSON on stdin)."""
    extra = os.environ.get("MOCKBROKER_JAVA_OPTS", "").split()
    return ["java", *JAVA_OPTS, *extra, "-cp", _deps().java_classpath(), JAVA_MAIN_CLASS, command, "-"]


def run_java(command: str, args: dict[str, Any] | None = None, timeout: float = 60.0, *, check: bool = True) -> Lines:
    """Run `KafkaHarness <command>` with `args` (a JSON object on stdin); return its JSON lines."""
    require_java()
    return _run_harness(java_argv(command), args, timeout, check)


def kafkajs_argv(command: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    modules = str(_deps().node_modules_dir())
    env["NODE_PATH"] = modules + (os.pathsep + env["NODE_PATH"] if env.get("NODE_PATH") else "")
    return ["node", str(KAFKAJS_HARNESS), command, "-"], env


def run_kafkajs(command: str, args: dict[str, Any] | None = None, timeout: float = 60.0, *, check: bool = True) -> Lines:
    """Run `kafkajs_harness.js <command>` with `args`; return its JSON lines."""
    require_kafkajs()
    argv, env = kafkajs_argv(command)
    return _run_harness(argv, args, timeout, check, env)


def run_kcat(args: list[str], input: bytes | str | None = None, timeout: float = 30.0, *,
             check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run kcat with `args` (e.g. ["-b", bootstrap, "-C", "-t", "t", "-e", "-J"]); stdin from `input`.

    Returns the CompletedProcess (stdout/stderr as bytes); parse_json_lines(p.stdout) reads -J output.
    """
    require_kcat()
    exe = _deps().kcat_path()
    assert exe is not None
    argv = [exe, *args]
    data = input.encode() if isinstance(input, str) else input
    try:
        proc = subprocess.run(argv, input=data, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL if data is None else None)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"kcat killed after {timeout:.0f}s", argv=argv, returncode=None,
                           lines=parse_json_lines(exc.stdout or b""),
                           stderr=(exc.stderr or b"").decode("utf-8", "replace")) from None
    if check and proc.returncode != 0:
        raise HarnessError(f"kcat exit code {proc.returncode}", argv=argv, returncode=proc.returncode,
                           lines=[], stderr=proc.stderr.decode("utf-8", "replace"))
    return proc
