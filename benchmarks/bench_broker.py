"""Throughput, latency, idle CPU and memory of mockbroker, side by side with librdkafka's mock cluster.

    .venv/bin/python benchmarks/bench_broker.py            # full run (a few minutes on 2 cores)
    .venv/bin/python benchmarks/bench_broker.py --quick    # smaller counts, one repetition
    .venv/bin/python benchmarks/bench_broker.py --only throughput,latency --reps 1

Targets, all driven by the confluent-kafka client (librdkafka) from this process:
- "mb thread":  MockBroker(port=0).run_in_thread() in this process; the broker's loop shares the GIL
                with the Python side of the client (produce() calls, consume() loop).
- "mb process": `python -m mockbroker --port 0` as a separate process: the fair figure.
- "rdk mock":   librdkafka's own mock cluster (benchmarks/rdkafka_mock.py, through ctypes; its brokers
                are C threads of this process, without the GIL).

Measured (never asserted; the targets are printed next to the figures):
- produce throughput, acks=1, default batching (linger.ms 5, batch.size 1 MB), into 1 partition and
  round robin into N partitions;
- consume throughput of the same messages with a Consumer (assign at offset 0, until all read).
  librdkafka's mock keeps at most 5 MiB per partition (older batches are dropped), so N is chosen so
  that no partition holds more than 4 MiB: the N-partition rows compare like with like, and the peer
  has no 1-partition consume figure;
- produce latency, one message per request: linger.ms=0, wait for each delivery report before the next
  (run first, on a fresh broker);
- the broker's CPU time per MB (per request for latency), from /proc/<pid>/task/<tid>/schedstat: the
  figure that other load on the machine disturbs least (the script prints how many cores others used);
- idle CPU of the broker process with no clients, with 10 raw Fetch requests parked (max_wait_ms
  30000), and with 10 consumers long-polling empty partitions (fetch.wait.max.ms=500);
- resident memory (VmRSS) idle and after storing ~100 MB of records, vs the record bytes stored (read
  back with raw Fetch requests).

Throughput: best of --reps runs (default 3); latency and CPU: median of them. --broker-python runs the
"mb process" target with another interpreter (e.g. to compare asyncio transports across versions).

Every wait is bounded in time; a target that does not answer fails its row, not the run.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import selectors
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from procs import stop_process  # noqa: E402
from rdkafka_mock import RdkafkaMockCluster  # noqa: E402

from tests.rawclient import RawClient  # noqa: E402  (the repository's raw-protocol test client)

MiB = 1024 * 1024
PEER_PARTITION_CAP = 4 * MiB  # stay under the 5 MiB librdkafka's mock keeps per partition
CLIENT_BASE = {"log_level": 3}  # errors only: keeps disconnect notices at teardown off the table
PHASE_TIMEOUT_S = 180.0

# -- targets ---------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    bootstrap: str
    pid: int | None = None  # a process of its own (for /proc figures)
    create: Callable[[dict[str, int]], None] | None = None  # topic -> partitions; default: AdminClient
    tids: list[int] = field(default_factory=list)  # the broker's threads, when it lives in this process

    def cpu_seconds(self) -> float:
        """CPU time the broker has used: its process, or its threads in this one."""
        if self.pid is not None:
            return cpu_seconds(self.pid)
        return sum(cpu_seconds(os.getpid(), tid) for tid in self.tids)

    def create_topics(self, topics: dict[str, int]) -> None:
        if self.create is not None:
            self.create(topics)
        else:
            admin_create_topics(self.bootstrap, topics)
        wait_for_topics(self.bootstrap, topics)

    @property
    def host_port(self) -> tuple[str, int]:
        host, _, port = self.bootstrap.split(",")[0].rpartition(":")
        return host, int(port)


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """First line of a child's stdout, waiting at most timeout seconds."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no line from {proc.args!r} within {timeout}s")
            if sel.select(min(left, 0.5)):
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise RuntimeError(f"{proc.args!r} closed its stdout (exit code {proc.poll()})")
                buf += chunk
    return buf.split(b"\n", 1)[0].decode()


@contextlib.contextmanager
def _child(cmd: list[str], marker: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Start a server process, yield it and the address from its "... listening on host:port" line."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        try:
            try:
                line = _read_line(proc, 20)
            except (TimeoutError, RuntimeError):
                err.seek(0)
                sys.stderr.write(err.read().decode(errors="replace"))
                raise
            if marker not in line:
                raise RuntimeError(f"unexpected first line from {cmd!r}: {line!r}")
            yield proc, line.rsplit(" ", 1)[-1]
        finally:
            stop_process(proc)
            for f in (proc.stdin, proc.stdout):
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()


@contextlib.contextmanager
def mb_thread() -> Iterator[Target]:
    from mockbroker.server import MockBroker

    with MockBroker(port=0).run_in_thread() as b:
        thread = b._thread
        yield Target("mb thread", b.bootstrap_servers, tids=[thread.native_id] if thread and thread.native_id else [])


BROKER_PYTHON = sys.executable  # --broker-python: the interpreter of the "mb process" target


@contextlib.contextmanager
def mb_process() -> Iterator[Target]:
    cmd = [BROKER_PYTHON, "-m", "mockbroker", "--port", "0"]  # run from the repository root
    with _child(cmd, "mockbroker listening on") as (proc, addr):
        yield Target("mb process", addr, proc.pid)


@contextlib.contextmanager
def rdk_inproc() -> Iterator[Target]:
    with RdkafkaMockCluster(brokers=1) as m:

        def create(topics: dict[str, int]) -> None:
            for name, parts in topics.items():
                m.create_topic(name, parts)

        yield Target("rdk mock", m.bootstrap_servers, create=create, tids=threads_named("rdk:mock"))


@contextlib.contextmanager
def rdk_process() -> Iterator[Target]:
    cmd = [sys.executable, os.path.join(HERE, "rdkafka_mock.py"), "--serve"]
    with _child(cmd, "rdkafka mock listening on") as (proc, addr):

        def create(topics: dict[str, int]) -> None:
            assert proc.stdin is not None
            for name, parts in topics.items():
                proc.stdin.write(f"topic {name} {parts}\n".encode())
                proc.stdin.flush()
                answer = _read_line(proc, 10)
                if answer != "ok":
                    raise RuntimeError(f"rdk mock: create {name}: {answer}")

        yield Target("rdk mock process", addr, proc.pid, create=create)


TARGETS: dict[str, Callable[[], contextlib.AbstractContextManager[Target]]] = {
    "mb thread": mb_thread,
    "mb process": mb_process,
    "rdk mock": rdk_inproc,
}

# -- client helpers --------------------------------------------------------------------------------


def admin_create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    admin = AdminClient({**CLIENT_BASE, "bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, p, 1) for t, p in topics.items()], operation_timeout=10)
    for f in futures.values():
        f.result(30)


def wait_for_topics(bootstrap: str, topics: dict[str, int]) -> None:
    """Until Metadata shows every partition of every topic with a leader."""
    admin = AdminClient({**CLIENT_BASE, "bootstrap.servers": bootstrap})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(timeout=10).topics
        if all(t in md and len(md[t].partitions) == p and all(pm.leader >= 0 for pm in md[t].partitions.values())
               for t, p in topics.items()):
            return
        time.sleep(0.05)
    raise TimeoutError(f"topics {sorted(topics)} not ready")


def partitions_for(total_bytes: int) -> int:
    """Partitions enough that none holds more than PEER_PARTITION_CAP (record overhead included), >= 2."""
    return max(2, math.ceil(total_bytes * 1.15 / PEER_PARTITION_CAP))


def produce_all(bootstrap: str, topic: str, size: int, count: int, partitions: int = 1,
                extra: dict[str, object] | None = None) -> float:
    """Produce count messages of size bytes (round robin over partitions); seconds until all acked."""
    failures: list[KafkaError] = []

    def on_error(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    # The local queue holds every message (no BufferError stalls); batching stays at its defaults.
    p = Producer({**CLIENT_BASE, "bootstrap.servers": bootstrap, "acks": 1, "delivery.report.only.error": True,
                  "on_delivery": on_error, "queue.buffering.max.messages": min(10_000_000, count + 1000),
                  **(extra or {})})
    p.list_topics(topic, timeout=10)  # connection and metadata up before the clock starts
    payload = os.urandom(size)
    produce, poll = p.produce, p.poll
    t0 = time.perf_counter()
    deadline = t0 + PHASE_TIMEOUT_S
    for i in range(count):
        part = i % partitions
        while True:
            try:
                produce(topic, payload, partition=part)
                break
            except BufferError:
                poll(0.005)
                if time.perf_counter() > deadline:
                    raise TimeoutError("produce: local queue never drained") from None
    left = p.flush(max(1.0, deadline - time.perf_counter()))
    elapsed = time.perf_counter() - t0
    if left:
        raise TimeoutError(f"produce: {left} messages not delivered in time")
    p.poll(0)
    if failures:
        raise RuntimeError(f"produce: {len(failures)} delivery errors, first: {failures[0]}")
    return elapsed


def consume_all(bootstrap: str, topic: str, count: int, partitions: int) -> float:
    """Read count messages from offset 0 of every partition; seconds from assign to the last one."""
    c = Consumer({**CLIENT_BASE, "bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                  "enable.auto.commit": False, "auto.offset.reset": "error", "enable.partition.eof": False})
    try:
        c.list_topics(topic, timeout=10)
        t0 = time.perf_counter()
        deadline = t0 + PHASE_TIMEOUT_S
        c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
        n = 0
        while n < count:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"consume: {n}/{count} messages in {PHASE_TIMEOUT_S}s")
            msgs = c.consume(min(count - n, 100_000), 1.0)
            for m in msgs:
                if m.error() is not None:
                    raise KafkaException(m.error())
            n += len(msgs)
        return time.perf_counter() - t0
    finally:
        c.close()


def produce_latency(bootstrap: str, topic: str, count: int, warmup: int = 50, size: int = 100,
                    acks: int | str = 1) -> list[float]:
    """Milliseconds from produce() to the delivery report, one message in flight at a time."""
    state: list[KafkaError | None | bool] = [False, None]

    def on_delivery(err: KafkaError | None, _msg: object) -> None:
        state[0] = True
        state[1] = err

    p = Producer({**CLIENT_BASE, "bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 0})
    p.list_topics(topic, timeout=10)
    payload = os.urandom(size)
    out: list[float] = []
    deadline = time.perf_counter() + PHASE_TIMEOUT_S
    for i in range(warmup + count):
        state[0] = False
        t0 = time.perf_counter_ns()
        p.produce(topic, payload, partition=0, on_delivery=on_delivery)
        while not state[0]:
            p.poll(1.0)
            if time.perf_counter() > deadline:
                raise TimeoutError("latency: delivery report never came")
        t1 = time.perf_counter_ns()
        if state[1] is not None:
            raise RuntimeError(f"latency: delivery failed: {state[1]}")
        if i >= warmup:
            out.append((t1 - t0) / 1e6)
    p.flush(5)
    return out


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]


# -- throughput and latency ------------------------------------------------------------------------


@dataclass
class Sizes:
    small_count: int
    large_count: int
    latency_count: int
    small: int = 100
    large: int = 10 * 1024


def run_target(target: Target, sizes: Sizes, want: set[str]) -> dict[str, float]:
    """One repetition against one target: every metric as a number (left out where it failed or n/a).

    Latency first, on a fresh broker. Then for 100 B and 10 KiB messages:
    - "1p": produce to a one-partition topic, then (mockbroker only) consume it back. librdkafka's mock
      drops all but the last 5 MiB of a partition, so it cannot be read back there;
    - "Np": produce the same messages round robin over N partitions (N so that none holds more than
      4 MiB, so the peer keeps everything), then consume them: the like-for-like comparison."""
    out: dict[str, float] = {}
    tag = uuid.uuid4().hex[:6]
    cases = [("100 B", sizes.small, sizes.small_count), ("10 KiB", sizes.large, sizes.large_count)]
    topics: dict[str, int] = {}
    if "throughput" in want:
        for label, size, count in cases:
            key = label.replace(" ", "")
            topics[f"p-{key}-{tag}"] = 1
            topics[f"c-{key}-{tag}"] = partitions_for(size * count)
    if "latency" in want:
        topics[f"lat-{tag}"] = 1
    target.create_topics(topics)
    if "latency" in want:
        try:
            cpu0 = target.cpu_seconds()
            lat = produce_latency(target.bootstrap, f"lat-{tag}", sizes.latency_count)
            out["cpu latency"] = (target.cpu_seconds() - cpu0) / len(lat) * 1e6  # us per request
            out["latency p50"] = pct(lat, 50)
            out["latency p99"] = pct(lat, 99)
            out["latency max"] = max(lat)
        except Exception as exc:  # noqa: BLE001 - one failing row must not end the run
            print(f"  ! {target.name}: latency: {exc}", file=sys.stderr)
    if "throughput" in want:
        keeps_all = not target.name.startswith("rdk")
        for label, size, count in cases:
            key = label.replace(" ", "")
            parts = topics[f"c-{key}-{tag}"]
            one, many = f"p-{key}-{tag}", f"c-{key}-{tag}"
            steps: list[tuple[str, Callable[[], float]]] = [
                (f"produce {label} 1p", partial(produce_all, target.bootstrap, one, size, count)),
            ]
            if keeps_all:
                steps.append((f"consume {label} 1p", partial(consume_all, target.bootstrap, one, count, 1)))
            steps += [
                (f"produce {label} Np", partial(produce_all, target.bootstrap, many, size, count, parts)),
                (f"consume {label} Np", partial(consume_all, target.bootstrap, many, count, parts)),
            ]
            for metric, step in steps:
                try:
                    cpu0 = target.cpu_seconds()
                    out[metric] = count / step()  # messages per second
                    out[f"cpu {metric}"] = (target.cpu_seconds() - cpu0) / (size * count / 1e6)  # s per MB
                except Exception as exc:  # noqa: BLE001
                    print(f"  ! {target.name}: {metric}: {exc}", file=sys.stderr)
                    if metric.startswith("produce"):
                        break  # nothing to read back
    return out


def throughput_rows(sizes: Sizes) -> list[tuple[str, str, int, str]]:
    """(metric key, row label, message size or 0 for latency, target text)."""
    rows: list[tuple[str, str, int, str]] = []
    for label, size, count in (("100 B", sizes.small, sizes.small_count), ("10 KiB", sizes.large, sizes.large_count)):
        n = partitions_for(size * count)
        rows += [
            (f"produce {label} 1p", f"produce {label}, 1 partition", size, ">= rdk mock"),
            (f"produce {label} Np", f"produce {label}, {n} partitions", size, ">= rdk mock"),
            (f"consume {label} 1p", f"consume {label}, 1 partition", size, ">= 300 MB/s" if size > 1000 else ""),
            (f"consume {label} Np", f"consume {label}, {n} partitions", size, ">= 300 MB/s" if size > 1000 else ""),
        ]
    rows += [
        ("latency p50", "produce latency p50 (ms)", 0, ""),
        ("latency p99", "produce latency p99 (ms)", 0, "<= 1 ms"),
        ("latency max", "produce latency max (ms)", 0, ""),
    ]
    return rows


def verdict(target: str, size: int, msgs: float, peer: float) -> str:
    if not target or math.isnan(msgs):
        return ""
    if target.startswith(">= rdk"):
        if math.isnan(peer):
            return ""
        ok = msgs >= peer
    elif target.startswith(">="):
        ok = msgs * size / 1e6 >= float(target.split()[1])
    else:
        ok = msgs <= float(target.split()[1])
    return "met" if ok else "MISSED"


def fmt(v: float) -> str:
    if math.isnan(v):
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}"


def fmt_rate(msgs: float, size: int) -> str:
    """"MB/s (msg/s)" for throughput, plain milliseconds for latency."""
    if math.isnan(msgs):
        return "-"
    if not size:
        return fmt(msgs)
    k = f"{msgs / 1000:,.0f}k" if msgs >= 10_000 else f"{msgs / 1000:.1f}k"
    return f"{fmt(msgs * size / 1e6)} ({k})"


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths, strict=True)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))


def throughput_section(sizes: Sizes, reps: int, want: set[str], targets: list[str], verbose: bool) -> None:
    results: dict[str, list[dict[str, float]]] = {t: [] for t in targets}
    others: list[float] = []
    for rep in range(reps):
        for name in targets:
            with TARGETS[name]() as target:
                load = OtherLoad(target.pid)
                r = run_target(target, sizes, want)
                other_cores = load.cores()
            others.append(other_cores)
            results[name].append(r)
            if verbose:
                figures = ", ".join(f"{k} {fmt(v)}" for k, v in r.items())
                print(f"  rep {rep + 1}/{reps} {name} ({load.wall():.1f}s, other processes used "
                      f"{other_cores:.2f} cores): {figures}", flush=True)

    def med(name: str, metric: str) -> float:
        """Throughput: best of the repetitions (least disturbed); latency: median of them."""
        vals = [r[metric] for r in results.get(name, []) if metric in r]
        if not vals:
            return float("nan")
        return statistics.median(vals) if metric.startswith("latency") else max(vals)

    print()
    print(f"Throughput (best of {reps} runs) and latency (median of {reps} runs): {sizes.small_count:,} x 100 B and "
          f"{sizes.large_count:,} x 10 KiB messages, acks=1, default batching; latency: "
          f"{sizes.latency_count:,} x 100 B, linger.ms=0, one in flight")
    header = ["MB/s (msg/s); latency ms", *targets, "proc/peer", "thread/peer", "target", "mb process vs target"]
    rows = []
    for metric, label, size, target_text in throughput_rows(sizes):
        vals = {n: med(n, metric) for n in targets}
        if all(math.isnan(v) for v in vals.values()):
            continue
        peer = vals.get("rdk mock", float("nan"))
        ratios = []
        for n in ("mb process", "mb thread"):
            v = vals.get(n, float("nan"))
            ratios.append("-" if math.isnan(v) or math.isnan(peer) or not peer else f"{v / peer:.2f}x")
        rows.append([label, *(fmt_rate(vals[n], size) for n in targets), *ratios, target_text,
                     verdict(target_text, size, vals.get("mb process", float("nan")), peer)])
    print_table(header, rows)
    print("ratios: mockbroker / rdk mock (throughput: higher is better for mockbroker; latency: lower is). "
          "rdk mock keeps only the last 5 MiB of a partition, so it has no 1-partition consume figure.")
    print()
    print("Broker CPU time per MB of message values moved (ms/MB; latency: us per request), median of the runs: "
          "the figure least disturbed by other load")
    cpu_rows = []
    for metric, label, _size, _target_text in throughput_rows(sizes):
        key = "cpu latency" if metric.startswith("latency") else f"cpu {metric}"
        if metric.startswith("latency") and metric != "latency p50":
            continue
        if metric == "latency p50":
            label = "produce latency (one request)"
        vals = {}
        for n in targets:
            got = [r[key] for r in results.get(n, []) if key in r]
            vals[n] = statistics.median(got) if got else float("nan")
        if all(math.isnan(v) for v in vals.values()):
            continue
        scale = 1.0 if metric.startswith("latency") else 1000.0
        peer = vals.get("rdk mock", float("nan"))
        ratios = [("-" if math.isnan(vals.get(n, float("nan"))) or math.isnan(peer) or not peer
                   else f"{vals[n] / peer:.2f}x") for n in ("mb process", "mb thread")]
        cpu_rows.append([label, *(fmt(vals[n] * scale) for n in targets), *ratios])
    print_table(["broker CPU", *targets, "proc/peer", "thread/peer"], cpu_rows)
    print("rdk mock: its \"rdk:mock\" thread; mb thread: the broker's loop thread; mb process: the whole process. "
          "CPU time from /proc/<pid>/task/<tid>/schedstat.")
    print(f"other processes on this machine used {statistics.median(others):.2f} cores (median over runs, "
          f"max {max(others):.2f}) of {os.cpu_count()} while this ran: figures are only as quiet as that.")


def _client_version() -> str:
    import confluent_kafka

    v = confluent_kafka.version()
    return f"{v if isinstance(v, str) else v[0]} / librdkafka {confluent_kafka.libversion()[0]}"


# -- idle CPU and memory ---------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """CPU time of a process (all its live threads) or of one of its threads, in seconds.

    From /proc/.../schedstat (nanoseconds on CPU); from utime + stime in /proc/.../stat (10 ms ticks)
    where schedstat is missing."""
    tids = [str(tid)] if tid is not None else os.listdir(f"/proc/{pid}/task")
    total = 0.0
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0]) / 1e9
        except FileNotFoundError:
            path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{t}/stat"
            with open(path) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14 and 15)
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended
    return total


def threads_named(name: str, wait_s: float = 2.0) -> list[int]:
    """Thread ids of this process whose name (comm) is `name` (librdkafka names its mock's "rdk:mock").

    A thread names itself once running, so look again for up to wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        out = []
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() == name:
                    out.append(int(tid))
        if out or time.monotonic() > deadline:
            return out
        time.sleep(0.01)


def cpu_percent(pid: int, seconds: float) -> float:
    c0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / (time.monotonic() - t0) * 100


def rss_bytes(pid: int, key: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


class OtherLoad:
    """CPU used by processes other than this one and the broker under test, from /proc/stat."""

    def __init__(self, broker_pid: int | None) -> None:
        self.pid = broker_pid
        self.t0 = time.monotonic()
        self.busy0 = system_busy_seconds()
        self.own0 = own_cpu_seconds()
        self.broker0 = cpu_seconds(broker_pid) if broker_pid else 0.0

    def wall(self) -> float:
        return time.monotonic() - self.t0

    def cores(self) -> float:
        busy = system_busy_seconds() - self.busy0
        own = own_cpu_seconds() - self.own0
        broker = cpu_seconds(self.pid) - self.broker0 if self.pid else 0.0
        return max(0.0, busy - own - broker) / max(self.wall(), 1e-9)


def system_busy_seconds() -> float:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system = fields[:3]  # irq/softirq left out: loopback traffic of ours is counted there
    return (user + nice + system) / CLK_TCK


def own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def park_raw_fetches(target: Target, topics: list[str], max_wait_ms: int = 30000) -> list[RawClient]:
    """One connection per topic, each with one Fetch (v11) that waits max_wait_ms for 1 byte."""
    host, port = target.host_port
    clients = []
    for t in topics:
        c = RawClient(host, port, client_id="bench-idle")
        c.send(1, 11, {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20,
                       "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                       "topics": [{"topic": t, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                               "fetch_offset": 0, "log_start_offset": -1,
                                                               "partition_max_bytes": 1 << 20}]}],
                       "forgotten_topics_data": [], "rack_id": ""})
        clients.append(c)
    return clients


def stored_record_bytes(target: Target, topic: str, partitions: int) -> int:
    """Bytes of record batches a partition set holds, read back with raw Fetch v11 requests."""
    host, port = target.host_port
    total = 0
    with RawClient(host, port, client_id="bench-size", timeout=30) as c:
        for part in range(partitions):
            offset = 0
            for _ in range(10_000):
                resp = c.request(1, 11, {
                    "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 64 * MiB,
                    "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                    "topics": [{"topic": topic, "partitions": [{"partition": part, "current_leader_epoch": -1,
                                                                "fetch_offset": offset, "log_start_offset": -1,
                                                                "partition_max_bytes": 64 * MiB}]}],
                    "forgotten_topics_data": [], "rack_id": ""})
                pr = resp.responses[0].partitions[0]
                if pr.error_code:
                    raise RuntimeError(f"fetch {topic}-{part}@{offset}: error {pr.error_code}")
                data = bytes(pr.records or b"")
                pos = 0
                while pos + 61 <= len(data):
                    base, length = struct.unpack_from(">qi", data, pos)
                    if pos + 12 + length > len(data):
                        break
                    (last_delta,) = struct.unpack_from(">i", data, pos + 23)
                    total += 12 + length
                    offset = base + last_delta + 1
                    pos += 12 + length
                if offset >= pr.high_watermark or pos == 0:
                    break
    return total


def idle_section(quick: bool) -> None:
    n_idle = 10
    mem_bytes = (20 if quick else 100) * 1_000_000
    window = 2.0 if quick else 5.0
    cases = [("10 KiB", 10 * 1024), ("100 B", 100)]
    cols: dict[str, dict[str, str]] = {}
    for name, make in (("mb process", mb_process), ("rdk mock process", rdk_process)):
        col: dict[str, str] = {}
        cols[name] = col
        with make() as target:
            assert target.pid is not None
            pid = target.pid
            idle_topics = [f"idle-{i}" for i in range(n_idle)]
            mem_topics = {f"mem-{label.replace(' ', '')}": partitions_for(mem_bytes) for label, _ in cases}
            target.create_topics({**dict.fromkeys(idle_topics, 1), **mem_topics})
            time.sleep(1.0)
            rss_idle = rss_bytes(pid)
            col["RSS idle, topics created (MB)"] = f"{rss_idle / 1e6:.1f}"
            col[f"CPU %, no clients ({window:.0f} s)"] = f"{cpu_percent(pid, window):.2f}"

            raw = park_raw_fetches(target, idle_topics)
            time.sleep(0.5)
            col[f"CPU %, {n_idle} raw Fetch parked, max_wait 30 s"] = f"{cpu_percent(pid, window):.2f}"
            for rc in raw:
                rc.close()

            consumers = []
            for t in idle_topics:
                c = Consumer({**CLIENT_BASE, "bootstrap.servers": target.bootstrap, "group.id": f"idle-{t}",
                              "enable.auto.commit": False, "fetch.wait.max.ms": 500})
                c.assign([TopicPartition(t, 0, 0)])
                consumers.append(c)
            for c in consumers:
                c.poll(0.1)
            time.sleep(2.0)  # every consumer connected and long-polling
            col[f"CPU %, {n_idle} consumers, fetch.wait.max.ms 500"] = f"{cpu_percent(pid, window):.2f}"
            for c in consumers:
                c.close()
            time.sleep(0.5)

            base = rss_bytes(pid)
            for label, size in cases:
                topic = f"mem-{label.replace(' ', '')}"
                parts = mem_topics[topic]
                count = mem_bytes // size
                before = rss_bytes(pid)
                produce_all(target.bootstrap, topic, size, count, parts)
                time.sleep(1.0)
                after = rss_bytes(pid)
                try:
                    stored = stored_record_bytes(target, topic, parts)
                except Exception as exc:  # noqa: BLE001
                    print(f"  ! {name}: reading back {topic}: {exc}", file=sys.stderr)
                    stored = 0
                grew = after - before
                col[f"{label}: value bytes produced (MB)"] = f"{size * count / 1e6:.1f}"
                col[f"{label}: record batch bytes stored (MB)"] = f"{stored / 1e6:.1f}" if stored else "-"
                col[f"{label}: RSS growth (MB)"] = f"{grew / 1e6:.1f}"
                col[f"{label}: RSS growth / stored"] = f"{grew / stored:.2f}x" if stored else "-"
            col["RSS after both, minus idle (MB)"] = f"{(rss_bytes(pid) - base) / 1e6:.1f}"
            col["VmHWM peak RSS (MB)"] = f"{rss_bytes(pid, 'VmHWM') / 1e6:.1f}"
    print()
    print(f"Idle CPU and memory of the broker process ({os.cpu_count()} cores; CPU over {window:.0f} s from "
          f"/proc/<pid>/task/*/schedstat; {mem_bytes / 1e6:.0f} MB of values per message size, in "
          f"{partitions_for(mem_bytes)} partitions)")
    metrics = list(cols["mb process"])
    print_table(["metric", *cols], [[m, *(cols[n].get(m, "-") for n in cols)] for m in metrics])
    print("targets: idle CPU ~0 %; RSS growth <= 1.2x the record bytes stored (+ a fixed base). "
          "rdk mock process = rdkafka_mock.py --serve: a Python interpreter hosting the C mock cluster.")


# -- main ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller counts and one repetition")
    ap.add_argument("--reps", type=int, help="repetitions of the throughput/latency runs (default 3, quick 1)")
    ap.add_argument("--only", default="throughput,latency,idle",
                    help="comma list of sections: throughput, latency, idle (default all)")
    ap.add_argument("--broker-python", default=sys.executable,
                    help="interpreter for the broker process (default: this one); it needs the broker's "
                         "dependencies, the repository root is its working directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every repetition's figures")
    ap.add_argument("--targets", default=",".join(TARGETS), help=f"comma list among {', '.join(TARGETS)}")
    args = ap.parse_args(argv)
    global BROKER_PYTHON
    BROKER_PYTHON = args.broker_python
    want = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = want - {"throughput", "latency", "idle"}
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    for t in targets:
        if t not in TARGETS:
            ap.error(f"unknown target {t!r}")
    sizes = Sizes(20_000, 2_000, 300) if args.quick else Sizes(200_000, 20_000, 2_000)
    reps = args.reps or (1 if args.quick else 3)
    broker_py = subprocess.run([BROKER_PYTHON, "-c", "import sys; print(sys.version.split()[0])"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    print(f"python {sys.version.split()[0]} (broker process: {broker_py}), {os.cpu_count()} cores, "
          f"confluent-kafka {_client_version()}")
    if want & {"throughput", "latency"}:
        throughput_section(sizes, reps, want, targets, args.verbose)
    if "idle" in want:
        idle_section(args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
