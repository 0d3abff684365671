"""Start-up time and idle memory of the image's entrypoint configured from a compose-style environment.

    .venv/bin/python benchmarks/bench_footprint.py [--runs 5] [--idle 1.0]

Runs the `mockbroker` console script (what docker/Dockerfile's ENTRYPOINT runs; `python -m mockbroker`
when the script is not installed) with the environment of docker/compose.yaml's broker service: an
INTERNAL and an EXTERNAL listener (here on 127.0.0.2 and 127.0.0.1, free ports), a CONTROLLER listener
that is not bound, KAFKA_* settings, a topic created at start (MOCKBROKER_TOPICS) and the HTTP control
endpoint. For each of `--runs` starts it measures:
- accept: from spawning the process to the first TCP connect that succeeds on BOTH listeners
  (polled every millisecond);
- ready:  from spawning to the control endpoint answering GET /health;
- VmRSS and VmHWM of the idle broker (/proc/<pid>/status), `--idle` seconds after it accepted.
Baselines: `python -c pass` start time and the RSS of an idle bare interpreter.

Beside them, the figures commonly reported for Kafka's own images, for scale; they are NOT measured
here (no Docker engine, no JVM broker on this machine).
Nothing is asserted: benchmarks measure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from procs import stop_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 20.0

# Commonly reported figures for Kafka's images (not measured here; orders of magnitude, varying with
# the machine and the settings).
KAFKA_FIGURES = [
    ("apache/kafka (JVM), start to serving", "several seconds (typically ~3-10 s)"),
    ("apache/kafka (JVM), heap", "1 GB by default (kafka-server-start.sh: KAFKA_HEAP_OPTS=-Xmx1G -Xms1G)"),
    ("apache/kafka (JVM), resident memory", "several hundred MB and up"),
    ("apache/kafka-native (GraalVM), start", "around a second or less"),
    ("apache/kafka-native (GraalVM), memory", "a few hundred MB at most"),
]


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def entrypoint() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "mockbroker")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "mockbroker"]


def compose_env() -> tuple[dict[str, str], list[tuple[str, int]], int]:
    """docker/compose.yaml's broker environment, on loopback with free ports."""
    internal, external, http = free_port("127.0.0.2"), free_port("127.0.0.1"), free_port("127.0.0.1")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    env.update({
        "PYTHONPATH": ROOT,
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": f"INTERNAL://127.0.0.2:{internal},EXTERNAL://127.0.0.1:{external},"
                           f"CONTROLLER://127.0.0.1:{free_port('127.0.0.1')}",
        "KAFKA_ADVERTISED_LISTENERS": f"INTERNAL://127.0.0.2:{internal},EXTERNAL://localhost:{external}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "true",
        "KAFKA_NUM_PARTITIONS": "3",
        "KAFKA_LOG_RETENTION_MS": "3600000",
        "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
        "MOCKBROKER_TOPICS": "orders:3",
        "MOCKBROKER_HTTP_PORT": str(http),
    })
    return env, [("127.0.0.2", internal), ("127.0.0.1", external)], http


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


def _health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as resp:
            return bool(json.load(resp).get("status") == "ok")
    except OSError:
        return False


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    return out


def one_run(idle: float) -> dict[str, float]:
    env, listeners, http = compose_env()
    t0 = time.perf_counter()
    proc = subprocess.Popen(entrypoint(), cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pending = list(listeners)
        while pending:
            if proc.poll() is not None:
                raise RuntimeError(f"the entrypoint exited with {proc.returncode}")
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError("the entrypoint did not accept connections")
            pending = [hp for hp in pending if not _accepts(*hp)]
            if pending:
                time.sleep(0.001)
        accept = time.perf_counter() - t0
        while not _health(http):
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise TimeoutError("the control endpoint did not answer")
            time.sleep(0.001)
        ready = time.perf_counter() - t0
        time.sleep(idle)
        mem = proc_status(proc.pid)
        return {"accept_s": accept, "ready_s": ready, "rss_kib": mem["VmRSS"], "hwm_kib": mem["VmHWM"]}
    finally:
        stop_process(proc)


def baseline(idle: float) -> dict[str, float]:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    start = time.perf_counter() - t0
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(max(idle, 0.5))
        rss = proc_status(proc.pid)["VmRSS"]
    finally:
        proc.kill()
        proc.wait(5)
    return {"start_s": start, "rss_kib": rss}


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):8.3f}   min {min(values):8.3f}   max {max(values):8.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=1.0, help="seconds idle before reading memory (default 1)")
    args = ap.parse_args()
    runs = [one_run(args.idle) for _ in range(args.runs)]
    base = [baseline(args.idle) for _ in range(min(args.runs, 3))]
    print(f"mockbroker entrypoint ({' '.join(entrypoint())}), compose-style environment, {args.runs} runs")
    print(f"  start -> both listeners accept  (s)  {summary([r['accept_s'] for r in runs])}")
    print(f"  start -> control endpoint ready (s)  {summary([r['ready_s'] for r in runs])}")
    print(f"  idle VmRSS  (MiB)                    {summary([r['rss_kib'] / 1024 for r in runs])}")
    print(f"  peak VmHWM  (MiB)                    {summary([r['hwm_kib'] / 1024 for r in runs])}")
    print(f"baseline: python -c pass (s)           {summary([b['start_s'] for b in base])}")
    print(f"baseline: idle interpreter VmRSS (MiB) {summary([b['rss_kib'] / 1024 for b in base])}")
    print("Kafka's own images, commonly reported figures (NOT measured here):")
    for what, figure in KAFKA_FIGURES:
        print(f"  {what:42s} {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
