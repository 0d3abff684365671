"""Does the cost stay flat as the broker grows? One dimension at a time (issue #37).

    .venv/bin/python benchmarks/bench_scaling.py                 # every dimension (several minutes)
    .venv/bin/python benchmarks/bench_scaling.py --quick         # small sizes, fewer requests (~1 min)
    .venv/bin/python benchmarks/bench_scaling.py --only records --max-records 10000000 --gc freeze

Each point is a broker process of its own (this script with --serve): MockBroker in process, records loaded
through the log's own append path (PartitionLog.append of a fresh frame per batch, as a Produce request
leaves it: one record per batch, the costliest case) before it listens, then one of:
- records:     stored records 10^4 .. 10^6 (--max-records 10^7) of 100 B, and 10^3 .. 10^5 of 10 KiB (up to
               --max-records / 10 and --max-bytes GiB), 1 partition;
- partitions:  10 .. 10^4 partitions of one topic, 10 records each;
- connections: 10 .. 10^3 idle connections (each did ApiVersions) held open while measuring;
- members:     10 .. 10^3 members of one KIP-848 consumer group (ConsumerGroupHeartbeat) on 100 partitions.

For each point this process (a raw-protocol client, tests/rawclient.py, one request in flight, frames encoded
before the clock starts) measures:
- produce p50/p99: Produce v9, one batch of one 100 B record, acks=all, round robin over the partitions;
- fetch p50/p99: Fetch v11 of one batch at a random stored offset;
- heartbeat p50/p99 (members only): ConsumerGroupHeartbeat v0 of a member already in the group;
and the broker reports:
- cpu: the loop thread's CPU time per produce and per fetch (its own cost, whatever else runs on the machine);
- memory per stored byte: (VmRSS after the load - VmRSS before) / bytes of the stored batches;
- fill: seconds the load took (10^7 one-record batches: about 2 minutes, 1.7 GiB);
- full gc: one gc.collect() timed after the load (what a full collection costs at this size), and the
  objects the collector tracks;
- ret/cleaner: CPU time of one retention pass (every 5 min) and of one cleaner pass (every 15 s) over every
  partition (mockbroker/maintenance.py), each run as one loop callback: a pause growing with the partitions;
- longest pause while serving (benchmarks/gc_probe.py PauseProbe): every collection timed with its generation
  (gc max), and a loop-lag probe (a task sleeping 1 ms, its overshoot: lag max) with its cause: the loop
  thread's CPU time in that sleep (of which collections), the time it was off the CPU (other processes:
  preemption, not the broker's work), where the loop was; and the longest single loop callback in CPU time
  with its name (the longest pause the broker itself causes, whatever else runs on the machine).

--gc none|freeze|full|cli|threshold: what the broker process does after the load (mockbroker/gc_tuning.py):
nothing (an in-process broker), gc.freeze() once, a freeze after every full collection, a freeze after every
collection of generation 1 (`cli`: what `python -m mockbroker` does), or a gen-2 threshold of 100.
--only growth: one broker whose log grows while it serves, the longest collection of each step.
Nothing is asserted; figures move with other load on the machine: a lag spent off the CPU is the scheduler's
(niceness does not help where the kernel groups processes by session, autogroup), the longest callback is not.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import subprocess
import sys
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from gc_probe import PauseProbe  # noqa: E402
from procs import stop_process  # noqa: E402

from mockbroker.gc_tuning import FreezeSurvivors, freeze_now  # noqa: E402
from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from tests.rawclient import RawClient  # noqa: E402

TOPIC = "scale"
NOW = 1_700_000_000_000


def vm_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# -- the broker side (--serve) ---------------------------------------------------------------------

def load(broker: Any, records: int, size: int, partitions: int) -> int:
    """Append `records` one-record batches of `size` B round robin over the partitions; their bytes."""
    from mockbroker.protocol.records.batch import RecordBatch

    template = build_batch([RecordInput(key=b"k", value=os.urandom(size), timestamp=NOW)])
    logs = [broker.cluster.partition(TOPIC, p).log for p in range(partitions)]
    for i in range(records):
        logs[i % partitions].append(RecordBatch(memoryview(bytearray(template))), NOW)
    return records * len(template)


async def serve(args: argparse.Namespace) -> None:
    from mockbroker.server import MockBroker

    broker = MockBroker(port=0)
    broker.cluster.create_topic(TOPIC, args.partitions, 1, {"retention.ms": "-1", "segment.bytes": str(1 << 30)})
    gc.collect()
    rss0 = vm_rss()
    t_fill = time.perf_counter()
    stored = load(broker, args.records, args.size, args.partitions)
    fill_s = time.perf_counter() - t_fill
    rss1 = vm_rss()
    loop = asyncio.get_running_loop()
    await broker.start()  # as the command line: started (its reset() point copied), then frozen
    if args.gc == "threshold":
        gc.set_threshold(700, 10, 100)
    elif args.gc in ("freeze", "full", "cli"):
        freeze_now()
    if args.gc in ("full", "cli"):
        FreezeSurvivors(loop, 2 if args.gc == "full" else 1).install()
    t0 = time.perf_counter()
    gc.collect()
    full_gc = time.perf_counter() - t0
    maint = broker.log_maintenance  # its periodic passes, each one loop callback over every partition
    c0 = time.thread_time()
    maint.cleanup_logs()  # retention, every log.retention.check.interval.ms (5 min)
    c1 = time.thread_time()
    maint.clean_filthiest()  # the cleaner, every log.cleaner.backoff.ms (15 s) ...
    maint.delete_compacted_and_deleted()  # ... ending with the compact,delete logs' retention
    c2 = time.thread_time()
    tracked = len(gc.get_objects())
    probe = PauseProbe()
    lag_task = asyncio.ensure_future(probe.run())
    done = asyncio.Event()
    first = broker.cluster.partition(TOPIC, 0)
    assert first is not None
    log = first.log
    template = build_batch([RecordInput(key=b"k", value=os.urandom(args.size), timestamp=NOW)])

    async def grow(n: int) -> None:  # n more batches through the append path, 100 at a time, on the loop
        from mockbroker.protocol.records.batch import RecordBatch

        for start in range(0, n, 100):
            for _ in range(min(100, n - start)):
                log.append(RecordBatch(memoryview(bytearray(template))), NOW)
            await asyncio.sleep(0)

    def commands() -> None:  # one line per command on stdin, one JSON line back
        for line in sys.stdin:
            cmd = line.strip()
            if cmd.startswith("grow "):
                asyncio.run_coroutine_threadsafe(grow(int(cmd.split()[1])), loop).result()
                print(json.dumps({**probe.report(), "tracked": len(gc.get_objects()), "rss": vm_rss()}), flush=True)
            elif cmd == "collect":  # a full collection: what it found, what stays tracked and frozen
                print(json.dumps({"unreachable": gc.collect(), "tracked": len(gc.get_objects()),
                                  "frozen": gc.get_freeze_count(), "rss": vm_rss()}), flush=True)
            elif cmd == "reset":
                probe.reset()
                print("{}", flush=True)
            elif cmd == "report":
                print(json.dumps(probe.report()), flush=True)
            elif cmd == "cpu":  # the loop thread's CPU time so far
                print(json.dumps({"cpu": probe.loop_cpu()}), flush=True)
            else:
                break
        loop.call_soon_threadsafe(done.set)

    threading.Thread(target=commands, daemon=True).start()
    print(json.dumps({"port": broker.port, "rss_delta": rss1 - rss0, "stored": stored, "full_gc_ms": full_gc * 1000,
                      "tracked": tracked, "fill_s": fill_s, "retention_ms": (c1 - c0) * 1000,
                      "cleaner_ms": (c2 - c1) * 1000}), flush=True)
    await done.wait()
    lag_task.cancel()
    await broker.stop()


# -- the client side ---------------------------------------------------------------------------------

class Point:
    def __init__(self, records: int, size: int, partitions: int, gc_mode: str) -> None:
        cmd = [sys.executable, os.path.abspath(__file__), "--serve", "--records", str(records), "--size", str(size),
               "--partitions", str(partitions), "--gc", gc_mode]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ready = self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the broker process exited ({self.proc.wait(60)})")
        return dict(json.loads(line))

    def command(self, cmd: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)


def timed(client: RawClient, frames: list[bytes]) -> list[float]:
    out = []
    for frame in frames:
        t0 = time.perf_counter()
        client.send_frame(frame)
        client.recv_frame()
        out.append(time.perf_counter() - t0)
    return out


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def produce_frames(c: RawClient, n: int, partitions: int) -> list[bytes]:
    batch = build_batch([RecordInput(key=b"k", value=b"v" * 100, timestamp=NOW)])
    return [c.encode(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": i % partitions, "records": batch}]}]}) for i in range(n)]


def fetch_frames(c: RawClient, n: int, partitions: int, per_partition: int) -> list[bytes]:
    rnd = random.Random(7)
    return [c.encode(1, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": TOPIC, "partitions": [{
            "partition": i % partitions, "current_leader_epoch": -1, "log_start_offset": -1,
            "fetch_offset": rnd.randrange(max(per_partition, 1)), "partition_max_bytes": 1}]}]}) for i in range(n)]


def heartbeat(c: RawClient, member: str, epoch: int) -> int:
    resp = c.request(68, 0, {"group_id": "scale-group", "member_id": member, "member_epoch": epoch,
                             "rebalance_timeout_ms": 60000, "subscribed_topic_names": [TOPIC],
                             "topic_partitions": [] if epoch == 0 else None})
    if resp.error_code:
        raise RuntimeError(f"heartbeat of {member}: error {resp.error_code}")
    return int(resp.member_epoch)


def measure(label: str, records: int, size: int, partitions: int, args: argparse.Namespace,
            connections: int = 0, members: int = 0) -> None:
    point = Point(records, size, partitions, args.gc)
    port = point.ready["port"]
    held: list[RawClient] = []
    row: dict[str, Any] = {}
    try:
        for _ in range(connections):
            held.append(RawClient("127.0.0.1", port, client_id="scale-idle"))
            held[-1].request(18, 3, {"client_software_name": "bench", "client_software_version": "1"})
        with RawClient("127.0.0.1", port, client_id="scale", timeout=60) as c:
            ids = [f"member-{i}" for i in range(members)]
            epochs = {m: heartbeat(c, m, 0) for m in ids}
            produce = produce_frames(c, args.requests, partitions)
            fetch = fetch_frames(c, args.requests, partitions, records // partitions)
            timed(c, produce[:50] + fetch[:50])  # warm: the first request of each kind imports its handler
            point.command("reset")
            cpu0 = point.command("cpu")["cpu"]
            row["produce"] = timed(c, produce[50:])
            cpu1 = point.command("cpu")["cpu"]
            row["fetch"] = timed(c, fetch[50:])
            cpu2 = point.command("cpu")["cpu"]
            row["produce_cpu"] = (cpu1 - cpu0) / len(row["produce"])
            row["fetch_cpu"] = (cpu2 - cpu1) / len(row["fetch"])
            if members:
                beats = []
                for i in range(args.requests // 4):
                    m = ids[i % members]
                    t0 = time.perf_counter()
                    epochs[m] = heartbeat(c, m, epochs[m])
                    beats.append(time.perf_counter() - t0)
                row["heartbeat"] = beats
            pauses = point.command("report")
    finally:
        for h in held:
            h.close()
        point.close()
    r = point.ready
    per_byte = r["rss_delta"] / r["stored"] if r["stored"] else 0.0
    hb = f"{p(row['heartbeat'], .5):6.3f}/{p(row['heartbeat'], .99):6.3f}" if "heartbeat" in row else f"{'':>13}"
    print(f"{label:<22}{p(row['produce'], .5):6.3f}/{p(row['produce'], .99):6.3f}{row['produce_cpu'] * 1e6:5.0f}"
          f"{p(row['fetch'], .5):7.3f}/{p(row['fetch'], .99):6.3f}{row['fetch_cpu'] * 1e6:5.0f}  {hb}"
          f"{per_byte:6.2f}{r['fill_s']:7.1f}{r['full_gc_ms']:7.1f}{r['tracked']:8,}"
          f"{pauses['gc_ms']:6.2f} g{pauses['gc_gen']}{pauses['lag_ms']:7.2f}"
          f"{r['retention_ms']:7.2f}/{r['cleaner_ms']:5.2f}  {cause(pauses)}", flush=True)


def cause(pauses: dict[str, Any]) -> str:
    """What the longest loop lag was: loop CPU (of which collections), time off the CPU, where the loop was."""
    c = pauses.get("lag_cause") or {}
    if not c:
        return ""
    return (f"cpu {c['cpu_ms']:.2f} (gc {c['gc_ms']:.2f}) off-cpu {c['off_cpu_ms']:.2f} @ {c['where']}; "
            f"longest callback {pauses['callback_ms']:.2f} @ {pauses['callback']}")


def growth(args: argparse.Namespace) -> None:
    """One broker whose log grows while it serves: the longest collection and loop lag of each step."""
    print(f"\nthe log growing while serving (100 B, 1 partition, --gc {args.gc})")
    print(f"{'stored batches':>16}{'gc max ms':>11}{'gen':>5}{'lag max ms':>12}{'collections 0/1/2':>20}"
          f"{'tracked':>12}")
    point = Point(0, 100, 1, args.gc)
    try:
        total = 0
        for target in powers(10_000, args.max_records):
            point.command("reset")
            r = point.command(f"grow {target - total}")
            total = target
            print(f"{total:>16,}{r['gc_ms']:>11.2f}{r['gc_gen']:>5}{r['lag_ms']:>12.2f}"
                  f"{'/'.join(map(str, r['gc_count'])):>20}{r['tracked']:>12,}  {cause(r)}", flush=True)
    finally:
        point.close()


def churn(args: argparse.Namespace, rounds: int = 3, per_round: int = 700) -> None:
    """What freezing costs: connections opened and closed (ApiVersions, one Produce, one Fetch each), then a full
    collection; objects still tracked plus frozen after it, against a broker that does not freeze (--gc none)."""
    print(f"\nconnection churn: objects kept after a full collection ({per_round} connections a round)")
    print(f"{'--gc':>8}{'round':>7}{'found unreachable':>19}{'tracked':>10}{'frozen':>10}{'kept':>10}")
    for mode in ("none", args.gc if args.gc != "none" else "cli"):
        point = Point(1000, 100, 1, mode)
        try:
            port = point.ready["port"]
            for rnd in range(rounds + 1):
                if rnd:
                    for _ in range(per_round):
                        with RawClient("127.0.0.1", port, client_id="scale-churn") as c:
                            c.request(18, 3, {"client_software_name": "bench", "client_software_version": "1"})
                            timed(c, produce_frames(c, 1, 1) + fetch_frames(c, 1, 1, 1000))
                r = point.command("collect")
                print(f"{mode:>8}{rnd:>7}{r['unreachable']:>19,}{r['tracked']:>10,}{r['frozen']:>10,}"
                      f"{r['tracked'] + r['frozen']:>10,}", flush=True)
        finally:
            point.close()


def header(title: str) -> None:
    print(f"\n{title}")
    print(f"{'':<22}{'produce p50/p99 cpu':>18}{'fetch p50/p99 cpu':>19}  {'hbeat p50/p99':>13}{'RSS/B':>6}"
          f"{'fill':>7}{'fullgc':>7}{'tracked':>8}{'gc max':>9}{'lag max':>8}{'ret/cleaner':>13}  lag cause")
    print(f"{'':<22}{'ms':>13}{'us':>5}{'ms':>14}{'us':>5}  {'ms':>13}{'':>6}{'s':>7}{'ms':>7}{'objects':>8}"
          f"{'ms gen':>9}{'ms':>8}{'ms cpu':>13}  ms")


def powers(lo: int, hi: int) -> list[int]:
    out = []
    n = lo
    while n <= hi:
        out.append(n)
        n *= 10
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes and 300 requests per point")
    ap.add_argument("--only", default="records,growth,churn,partitions,connections,members")
    ap.add_argument("--max-records", type=int, default=1_000_000, help="largest 100 B record count (default 10^6)")
    ap.add_argument("--max-bytes", type=float, default=4.0,
                    help="largest stored GiB of a 10 KiB point (default 4: 10^5 records; 10^6 needs ~12 GiB)")
    ap.add_argument("--requests", type=int, default=2000, help="timed requests of each kind per point")
    ap.add_argument("--gc", choices=["none", "freeze", "full", "cli", "threshold"], default="cli")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--records", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--partitions", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        asyncio.run(serve(args))
        return 0
    if args.quick:
        args.requests = min(args.requests, 300)
        args.max_records = min(args.max_records, 100_000)
    only = set(args.only.split(","))
    started = time.perf_counter()
    print(f"python {sys.version.split()[0]}, gc after load: {args.gc}, {args.requests} requests per point, "
          f"one record per stored batch, load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    if "records" in only:
        header("stored records (1 partition)")
        for n in powers(10_000, args.max_records):
            measure(f"{n:>10,} x 100 B", n, 100, 1, args)
        kib_max = min(args.max_records // 10 if not args.quick else 10_000, int(args.max_bytes * (1 << 30)) // 10240)
        for n in powers(1_000, kib_max):
            measure(f"{n:>10,} x 10 KiB", n, 10 * 1024, 1, args)
    if "growth" in only:
        growth(args)
    if "churn" in only:
        churn(args)
    if "partitions" in only:
        header("partitions (10 records each)")
        for n in powers(10, 1_000 if args.quick else 10_000):
            measure(f"{n:>10,} partitions", n * 10, 100, n, args)
    if "connections" in only:
        header("idle connections (10,000 records)")
        for n in powers(10, 100 if args.quick else 1_000):
            measure(f"{n:>10,} connections", 10_000, 100, 1, args, connections=n)
    if "members" in only:
        header("consumer group members (100 partitions, 10,000 records)")
        for n in powers(10, 100 if args.quick else 1_000):
            measure(f"{n:>10,} members", 10_000, 100, 100, args, members=n)
    print(f"\nwall time {time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.2f} (1 min) at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
