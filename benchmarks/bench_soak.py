"""Soak: a broker process under steady produce and consume load for a long time; memory and latency over time.

    .venv/bin/python benchmarks/bench_soak.py                      # 30 minutes, a line a minute
    .venv/bin/python benchmarks/bench_soak.py --duration 120 --interval 10
    .venv/bin/python benchmarks/bench_soak.py --max-log-bytes 67108864   # with mockbroker.max.log.bytes

Starts `python -m mockbroker --port 0` (a separate process, so its memory is its own), creates a topic of
--partitions partitions with retention.bytes per partition (--retention-bytes, so a long run holds a
steady amount of records), then runs from this process, on one asyncio loop:
- --producers raw-protocol connections, each sending acks=all Produce requests of --batch records of
  --value-size bytes, one request at a time, --rate requests per second each at most;
- --consumers connections long-polling Fetch (max_wait_ms 500) on one partition each, from its end;
- every --interval seconds a line: elapsed time, broker VmRSS and VmHWM (/proc/<pid>/status), records
  acknowledged and consumed in the interval, produce latency (request to answer) p50 / p99 / max over
  the interval, the records held by the broker (high watermark - log start offset, from Fetch answers),
  and the broker's connection count is constant (no leak: every connection stays open).
At the end: the first and last RSS, the RSS growth per hour over the second half, and latency drift
(the last interval's p99 over the first's). Nothing is asserted: benchmarks measure. Every wait is bounded;
the broker process is stopped (SIGTERM) when the run ends or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from procs import stop_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mockbroker.protocol import headers as hdr  # noqa: E402
from mockbroker.protocol.messages import Msg, decode_response, encode_request  # noqa: E402
from mockbroker.protocol.primitives import Writer  # noqa: E402
from mockbroker.protocol.records.batch import iter_batches  # noqa: E402
from mockbroker.protocol.records.builder import build_batch  # noqa: E402

PRODUCE, FETCH, CREATE_TOPICS = 0, 1, 19
TOPIC = "soak"
REQUEST_TIMEOUT_S = 60.0


class Client:
    """One raw-protocol connection, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.correlation_id = 0

    @classmethod
    async def connect(cls, port: int) -> Client:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), REQUEST_TIMEOUT_S)
        return cls(reader, writer)

    async def request(self, api_key: int, version: int, body: dict[str, Any]) -> Msg:
        self.correlation_id += 1
        w = Writer()
        hdr.encode_request_header(hdr.RequestHeader(api_key, version, self.correlation_id, "soak"), w)
        encode_request(api_key, version, body, w)
        payload = w.getvalue()
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        await self.writer.drain()

        async def answer() -> Msg:
            (size,) = struct.unpack(">i", await self.reader.readexactly(4))
            frame = await self.reader.readexactly(size)
            _, reader = hdr.decode_response_header(frame, hdr.response_header_version(api_key, version))
            return decode_response(api_key, version, reader)

        return await asyncio.wait_for(answer(), REQUEST_TIMEOUT_S)

    def close(self) -> None:
        self.writer.close()


@dataclass
class Interval:
    latencies_ms: list[float] = field(default_factory=list)
    acked: int = 0
    consumed: int = 0
    held: dict[int, int] = field(default_factory=dict)  # partition -> records held


def proc_status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0]) * 1024
    return out


def start_broker(args: argparse.Namespace) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, "-m", "mockbroker", "--port", "0", "--no-env", "--log-level", "WARNING"]
    if args.max_log_bytes is not None:
        cmd += ["--config", f"mockbroker.max.log.bytes={args.max_log_bytes}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = re.search(r"listening on [^:]+:(\d+)", line)
        if match:
            return proc, int(match.group(1))
        if not line and proc.poll() is not None:
            break
    stop_process(proc)
    raise SystemExit("the broker did not start")


async def create_topic(port: int, args: argparse.Namespace) -> None:
    c = await Client.connect(port)
    try:
        topic = {"name": TOPIC, "num_partitions": args.partitions, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": "retention.bytes", "value": str(args.retention_bytes)},
                             {"name": "segment.bytes", "value": str(max(args.retention_bytes // 4, 1 << 20))}]}
        resp = await c.request(CREATE_TOPICS, 7, {"topics": [topic], "timeout_ms": 10000, "validate_only": False})
        assert resp.topics[0].error_code == 0, resp.topics[0]
    finally:
        c.close()


async def producer(port: int, index: int, args: argparse.Namespace, stats: list[Interval],
                   stop: asyncio.Event) -> None:
    c = await Client.connect(port)
    partition = index % args.partitions
    value = os.urandom(args.value_size)
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    try:
        while not stop.is_set():
            started = time.monotonic()
            batch = build_batch([(b"k%d" % index, value)] * args.batch)
            body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
                {"name": TOPIC, "partition_data": [{"index": partition, "records": bytes(batch)}]}]}
            resp = await c.request(PRODUCE, 9, body)
            took = time.monotonic() - started
            p = resp.responses[0].partition_responses[0]
            if p.error_code == 0:
                stats[-1].acked += args.batch
                stats[-1].latencies_ms.append(took * 1000)
            if period > took:
                await asyncio.sleep(period - took)
    finally:
        c.close()


async def consumer(port: int, index: int, args: argparse.Namespace, stats: list[Interval],
                   stop: asyncio.Event) -> None:
    c = await Client.connect(port)
    partition = index % args.partitions
    offset = -1
    try:
        while not stop.is_set():
            body = {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 8 << 20,
                    "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                    "forgotten_topics_data": [],
                    "topics": [{"topic": TOPIC, "partitions": [{
                        "partition": partition, "fetch_offset": max(offset, 0), "partition_max_bytes": 8 << 20,
                        "current_leader_epoch": -1, "log_start_offset": -1}]}]}
            resp = await c.request(FETCH, 12, body)
            p = resp.responses[0].partitions[0]
            if p.error_code == 1 or offset < 0:  # OFFSET_OUT_OF_RANGE (retention), or start: from the end
                offset = p.high_watermark if p.high_watermark >= 0 else 0
                continue
            for b in iter_batches(bytes(p.records or b"")):
                if b.last_offset >= offset:
                    stats[-1].consumed += b.last_offset + 1 - max(offset, b.base_offset)
                    offset = b.last_offset + 1
            stats[-1].held[partition] = p.high_watermark - p.log_start_offset
    finally:
        c.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args: argparse.Namespace, pid: int, port: int) -> list[tuple[float, dict[str, int], Interval]]:
    await create_topic(port, args)
    stats = [Interval()]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(producer(port, i, args, stats, stop)) for i in range(args.producers)]
    tasks += [asyncio.create_task(consumer(port, i, args, stats, stop)) for i in range(args.consumers)]
    rows: list[tuple[float, dict[str, int], Interval]] = []
    started = time.monotonic()
    print(f"{'elapsed s':>9} {'RSS MiB':>8} {'HWM MiB':>8} {'acked/s':>9} {'consumed/s':>10} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'held':>9}", flush=True)
    try:
        while time.monotonic() - started < args.duration:
            await asyncio.sleep(min(args.interval, max(0.0, args.duration - (time.monotonic() - started))))
            failed = [t for t in tasks if t.done() and t.exception() is not None]
            if failed:
                raise RuntimeError(f"a client failed: {failed[0].exception()!r}")
            done, stats[-1:] = stats[-1], [Interval()]
            status = proc_status(pid)
            elapsed = time.monotonic() - started
            rows.append((elapsed, status, done))
            lat = done.latencies_ms
            print(f"{elapsed:9.0f} {status['VmRSS'] / 2**20:8.1f} {status['VmHWM'] / 2**20:8.1f} "
                  f"{done.acked / args.interval:9.0f} {done.consumed / args.interval:10.0f} "
                  f"{percentile(lat, 0.5):7.2f} {percentile(lat, 0.99):7.2f} {max(lat, default=float('nan')):7.2f} "
                  f"{sum(done.held.values()):9d}", flush=True)
    finally:
        stop.set()
        await asyncio.wait(tasks, timeout=REQUEST_TIMEOUT_S + 5)
    return rows


def summary(rows: list[tuple[float, dict[str, int], Interval]]) -> None:
    if len(rows) < 2:
        return
    first, last = rows[0], rows[-1]
    half = rows[len(rows) // 2]
    hours = (last[0] - half[0]) / 3600
    growth = (last[1]["VmRSS"] - half[1]["VmRSS"]) / 2**20 / hours if hours > 0 else float("nan")
    p99_first = percentile(first[2].latencies_ms, 0.99)
    p99_last = percentile(last[2].latencies_ms, 0.99)
    print(f"\nRSS: {first[1]['VmRSS'] / 2**20:.1f} MiB after the first interval, {last[1]['VmRSS'] / 2**20:.1f} "
          f"MiB at the end (peak {last[1]['VmHWM'] / 2**20:.1f} MiB); second half: {growth:+.1f} MiB/hour")
    print(f"produce p99: {p99_first:.2f} ms in the first interval, {p99_last:.2f} ms in the last "
          f"({p99_last / p99_first if p99_first else float('nan'):.2f}x)")
    print(f"records acknowledged: {sum(r[2].acked for r in rows)}, consumed: {sum(r[2].consumed for r in rows)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=1800.0, help="seconds to run (default 1800)")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between report lines (default 60)")
    p.add_argument("--producers", type=int, default=20)
    p.add_argument("--consumers", type=int, default=20)
    p.add_argument("--partitions", type=int, default=10)
    p.add_argument("--batch", type=int, default=10, help="records per Produce request")
    p.add_argument("--value-size", type=int, default=200)
    p.add_argument("--rate", type=float, default=20.0, help="Produce requests per second per producer (0: no cap)")
    p.add_argument("--retention-bytes", type=int, default=16 << 20, help="retention.bytes of each partition")
    p.add_argument("--max-log-bytes", type=int, default=None, help="mockbroker.max.log.bytes for the broker")
    args = p.parse_args()
    proc, port = start_broker(args)
    try:
        print(f"broker pid {proc.pid} on port {port}; {args.producers} producers, {args.consumers} consumers, "
              f"{args.partitions} partitions, {args.duration:.0f} s", flush=True)
        rows = asyncio.run(run(args, proc.pid, port))
        summary(rows)
    finally:
        stop_process(proc)


if __name__ == "__main__":
    main()
