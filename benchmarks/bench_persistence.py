"""What persistence costs: produce throughput with a data dir against in memory, and recovery time.

    .venv/bin/python benchmarks/bench_persistence.py                 # throughput rows + recovery of 1 GiB
    .venv/bin/python benchmarks/bench_persistence.py --quick         # fewer messages, 64 MiB recovery
    .venv/bin/python benchmarks/bench_persistence.py --only recovery --size-mb 256

Throughput: `python -m mockbroker --port 0` as a process (in memory; --data-dir; --data-dir with
log.flush.interval.messages=1, an fsync per append), a confluent-kafka producer (acks=all, linger.ms 5)
sending --messages messages of 100 bytes into one partition, best of --reps runs.

Recovery: a data dir of --size-mb MiB in 1 MiB batches (1 GiB segments, Kafka's default), written through
the broker's own append path; then the time MockBroker(data_dir=...) takes to load it after a clean stop
(the clean shutdown marker: headers read, no CRC) and after a crash (no marker, no recovery point: every
batch's CRC checked, as after a kill -9 before the first checkpoint). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mockbroker.clock import Clock  # noqa: E402
from mockbroker.protocol.records.batch import RecordBatch  # noqa: E402
from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from mockbroker.server import MockBroker  # noqa: E402


def _start(args: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--no-env", "--topic", "t:1", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("mockbroker listening on "):
        proc.kill()
        raise RuntimeError(f"broker did not start: {line!r}")
    return proc, line.split()[3]


def produce_rate(args: list[str], messages: int) -> float:
    """Messages per second a producer gets through (acks=all)."""
    from confluent_kafka import Producer

    proc, address = _start(args)
    try:
        producer = Producer({"bootstrap.servers": address, "acks": "all", "linger.ms": 5, "log_level": 2})
        payload = b"x" * 100
        producer.produce("t", payload)
        producer.flush(30)
        begin = time.perf_counter()
        for _ in range(messages):
            while True:
                try:
                    producer.produce("t", payload)
                    break
                except BufferError:
                    producer.poll(0.01)
        if producer.flush(120) != 0:
            raise RuntimeError("messages left undelivered")
        return messages / (time.perf_counter() - begin)
    finally:
        proc.terminate()
        proc.wait(30)


def build_data_dir(path: Path, size_mb: int) -> int:
    """A data dir holding `size_mb` MiB in one partition; the batch count."""
    broker = MockBroker(data_dir=path, clock=Clock())
    broker.create_topic("t")
    partition = broker.cluster.partition("t", 0)
    assert partition is not None
    records = [RecordInput(b"k%d" % i, os.urandom(1000)) for i in range(1040)]  # ~1 MiB a batch
    count = 0
    while partition.log.size_bytes < size_mb * 1024 * 1024:
        data = build_batch(records)
        partition.log.append(RecordBatch(data), broker.clock.now_ms())
        count += 1
        if count % 64 == 0:
            partition.log.store.replace([])  # keep the builder's memory small: the files hold them
    assert broker.storage is not None
    broker.storage.close()
    return count


def recovery_seconds(path: Path, *, crashed: bool) -> float:
    if crashed:
        (path / ".kafka_cleanshutdown").unlink(missing_ok=True)
        (path / "recovery-point-offset-checkpoint").unlink(missing_ok=True)
    begin = time.perf_counter()
    broker = MockBroker(data_dir=path)
    elapsed = time.perf_counter() - begin
    assert broker.storage is not None
    broker.storage.close()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--messages", type=int)
    ap.add_argument("--size-mb", type=int)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="throughput,recovery")
    opts = ap.parse_args()
    only = set(opts.only.split(","))
    messages = opts.messages or (20_000 if opts.quick else 200_000)
    size_mb = opts.size_mb or (64 if opts.quick else 1024)
    reps = 1 if opts.quick else opts.reps
    work = Path(tempfile.mkdtemp(prefix="bench-persistence-"))
    try:
        if "throughput" in only:
            print(f"produce, {messages} x 100 B, acks=all, 1 partition (best of {reps})")
            rows = [("in memory", []), ("--data-dir", ["--data-dir", str(work / "a")]),
                    ("--data-dir, flush.messages=1", ["--data-dir", str(work / "b"), "--config",
                                                      "log.flush.interval.messages=1"])]
            for name, args in rows:
                best = 0.0
                for _ in range(reps):
                    for d in ("a", "b"):
                        shutil.rmtree(work / d, ignore_errors=True)
                    best = max(best, produce_rate(args, messages))
                print(f"  {name:32s} {best:10.0f} msg/s  {best * 100 / 1e6:6.1f} MB/s of values")
        if "recovery" in only:
            path = work / "recovery"
            begin = time.perf_counter()
            batches = build_data_dir(path, size_mb)
            print(f"recovery of {size_mb} MiB ({batches} batches of ~1 MiB), written in "
                  f"{time.perf_counter() - begin:.1f} s")
            print(f"  after a clean stop             {recovery_seconds(path, crashed=False):8.2f} s")
            print(f"  after a crash (CRC every batch) {recovery_seconds(path, crashed=True):8.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
