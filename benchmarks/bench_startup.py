"""Startup time of the `mockbroker` command: from spawning the process to accepting connections.

    .venv/bin/python benchmarks/bench_startup.py [--runs 10] [--importtime] [--brokers 3]

For each way of starting it, `--runs` times (median, min, max printed; target: median under 300 ms):
- "line":    `python -m mockbroker --port 0`, clock stopped when the "mockbroker listening on" line
             arrives (the broker prints it once its listener accepts connections);
- "line, all listeners": `python -m mockbroker --port 0 --brokers 3` (--brokers N), a cluster in one
             process: clock stopped at the line, which comes once every node's listener accepts;
- "connect": `python -m mockbroker --port <free port>`, clock stopped at the first TCP connect that
             succeeds (polled every millisecond), independent of the printed line;
- the installed `mockbroker` script (next to this interpreter, or on PATH), "line" mode;
- baselines: `python -c pass` and `python -c "import mockbroker.server"` (interpreter start, imports);
- `python -m mockbroker` with this environment as it is: with PYTHONDONTWRITEBYTECODE=1 and sources
  newer than their __pycache__, every start compiles those modules again.
Bytecode is otherwise cached in a private PYTHONPYCACHEPREFIX (a temporary directory, nothing written
into the repository), warmed by one untimed start per case.
--importtime adds the slowest imports of one `python -X importtime -m mockbroker` start.
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial

from procs import stop_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = b"mockbroker listening on"
TIMEOUT_S = 20.0


def _stop(proc: subprocess.Popen[bytes]) -> None:
    stop_process(proc)
    if proc.stdout is not None:
        proc.stdout.close()


def time_until_line(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from spawn to the "listening" line on stdout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = b""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while MARKER not in buf:
                left = t0 + TIMEOUT_S - time.perf_counter()
                if left <= 0:
                    raise TimeoutError(f"no listening line from {cmd!r}")
                if sel.select(left):
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        raise RuntimeError(f"{cmd!r} exited ({proc.poll()}) before listening")
                    buf += chunk
        elapsed = time.perf_counter() - t0
        # the line promises listeners (every node's, with --brokers): check them
        addrs = buf.split(MARKER, 1)[1].split(b"\n", 1)[0].strip().decode()
        for addr in addrs.split(", "):
            host, _, port = addr.rpartition(":")
            socket.create_connection((host, int(port)), timeout=5).close()
        return elapsed
    finally:
        _stop(proc)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_until_connect(cmd_without_port: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from spawn to the first successful TCP connect on a port chosen beforehand."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([*cmd_without_port, "--port", str(port)], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return time.perf_counter() - t0
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd_without_port!r} exited ({proc.returncode}) before listening")
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError(f"{cmd_without_port!r} not accepting after {TIMEOUT_S}s")
            time.sleep(0.001)
    finally:
        _stop(proc)


def time_until_exit(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True,
                   timeout=TIMEOUT_S, env=env)
    return time.perf_counter() - t0


def installed_script() -> str | None:
    beside = os.path.join(os.path.dirname(sys.executable), "mockbroker")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("mockbroker")


def import_times(env: dict[str, str] | None = None) -> list[tuple[int, int, str]]:
    """(cumulative us, self us, module) of every import of one `-X importtime -m mockbroker` start."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "mockbroker", "--port", str(port)],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.005)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    rows = []
    for line in err.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) == 3:
            rows.append((int(parts[1]), int(parts[0]), parts[2].rstrip()))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="startup time of the mockbroker command")
    ap.add_argument("--runs", type=int, default=10, help="runs per case (default 10)")
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    ap.add_argument("--brokers", type=int, default=3,
                    help="also time a cluster of this many nodes (--brokers N, every listener; default 3; 1: skip)")
    args = ap.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="mockbroker-pycache-") as cache:
        # "cached": bytecode compiled once into a private cache (what an installed package gives);
        # "as is": this environment's own settings (PYTHONDONTWRITEBYTECODE, whatever __pycache__ holds).
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        as_is = dict(os.environ)
        cases: list[tuple[str, Callable[[], float], bool]] = [
            ("python -c pass (interpreter only)", partial(time_until_exit, [py, "-c", "pass"], cached), False),
            ("python -c 'import mockbroker.server'",
             partial(time_until_exit, [py, "-c", "import mockbroker.server"], cached), False),
            ("python -m mockbroker --port 0 (line)",
             partial(time_until_line, [py, "-m", "mockbroker", "--port", "0"], cached), True),
            ("python -m mockbroker --port P (connect)",
             partial(time_until_connect, [py, "-m", "mockbroker"], cached), True),
        ]
        if args.brokers > 1:
            cases.append((f"python -m mockbroker --port 0 --brokers {args.brokers} (line, all listeners)",
                          partial(time_until_line, [py, "-m", "mockbroker", "--port", "0", "--brokers",
                                                    str(args.brokers)], cached), True))
        script = installed_script()
        if script:
            cases.append((f"{os.path.relpath(script, ROOT)} --port 0 (line)",
                          partial(time_until_line, [script, "--port", "0"], cached), True))
        dont_write = os.environ.get("PYTHONDONTWRITEBYTECODE")
        cases.append((f"python -m mockbroker --port 0 (line), env as is (PYTHONDONTWRITEBYTECODE={dont_write})",
                      partial(time_until_line, [py, "-m", "mockbroker", "--port", "0"], as_is), True))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.2f}, {args.runs} runs per case after one untimed start; bytecode cached in "
              "a private PYTHONPYCACHEPREFIX unless said otherwise. Target: accepting connections in under "
              "300 ms (median)")
        rows = []
        for name, fn, is_broker in cases:
            fn()  # warm: fills the bytecode cache and the page cache
            times = [fn() * 1000 for _ in range(args.runs)]
            med = statistics.median(times)
            verdict = ("met" if med < 300 else "MISSED") if is_broker else ""
            rows.append((name, med, min(times), max(times), verdict))
        w = max(len(r[0]) for r in rows)
        print(f"{'case':<{w}}  {'median ms':>9}  {'min ms':>7}  {'max ms':>7}  vs 300 ms")
        print("-" * (w + 40))
        for name, med, lo, hi, verdict in rows:
            print(f"{name:<{w}}  {med:9.1f}  {lo:7.1f}  {hi:7.1f}  {verdict}")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if not script:
            print("(no installed mockbroker script found next to this interpreter or on PATH)")
        if args.importtime:
            rows_it = import_times(cached)
            print("\nslowest imports of one `python -X importtime -m mockbroker` start (bytecode cached), by "
                  "cumulative time (cumulative ms, self ms, module):")
            for cum, own, mod in sorted(rows_it, reverse=True)[:15]:
                print(f"  {cum / 1000:7.1f}  {own / 1000:7.1f}  {mod}")
            print("by self time:")
            for own, cum, mod in sorted(((o, c, m.strip()) for c, o, m in rows_it), reverse=True)[:10]:
                print(f"  {cum / 1000:7.1f}  {own / 1000:7.1f}  {mod}")
            print(f"total of self times: {sum(o for _, o, _ in rows_it) / 1000:.1f} ms over {len(rows_it)} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
