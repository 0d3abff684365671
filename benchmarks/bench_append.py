"""What one Produce append costs the broker, with each record walker: Appender.append_records of one 1 MiB
batch (100 B records, then 1 KiB records) on a CreateTime topic, and the walk alone (check_records).

Run: python benchmarks/bench_append.py [--repeat 30] [--walker both|python|c]

The record walk (issue #20: every record of every batch validated) is the per-record part of an append; the
C walker (mockbroker/protocol/records/_walk.c) and the Python one (MOCKBROKER_PURE_PYTHON=1 picks it in the broker)
are measured in one process, interleaved, so both see the same machine. Times are CPU time of this process
(time.process_time), best of `--repeat` runs: on a busy machine wall time mostly measures the others.

Then the per-megabyte costs of a Produce request of large batches that do not depend on its records (issue
#37): receiving a 1 MB frame through the frame decoder (the bytes written into its buffer as the kernel's recv
would, the previous frame released), and copying 1 MB batches into a log's BatchStore (fresh memory every
time: a log keeps every byte). CPU ms per MB, median and least of --repeat / 10 runs of 256 MB.

Not a test: prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mockbroker.clock import Clock  # noqa: E402
from mockbroker.protocol.framing import FrameDecoder  # noqa: E402
from mockbroker.protocol.records.batch import RecordBatch  # noqa: E402
from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from mockbroker.protocol.records.record import check_records_c, check_records_python  # noqa: E402
from mockbroker.state.cluster.appender import Appender  # noqa: E402
from mockbroker.state.cluster.cluster import Cluster  # noqa: E402
from mockbroker.state.log import validation  # noqa: E402
from mockbroker.state.log.batch_store import BatchStore  # noqa: E402

MIB = 1 << 20
NOW = 1_700_000_000_000


def cpu_best_of(repeat: int, setup: Callable[[], object], func: Callable[[object], object]) -> float:
    """Least CPU time of `repeat` calls of func(setup()), in seconds (setup not timed)."""
    best = float("inf")
    for _ in range(repeat):
        arg = setup()
        start = time.process_time()
        func(arg)
        best = min(best, time.process_time() - start)
    return best


def per_mb_runs(repeat: int, run: Callable[[int], None], megabytes: int = 256) -> list[float]:
    """CPU ms per MB of `repeat` calls of run(megabytes), each in fresh state."""
    out = []
    for _ in range(repeat):
        start = time.process_time()
        run(megabytes)
        out.append((time.process_time() - start) * 1000 / megabytes)
    return out


def receive_frames(megabytes: int) -> None:
    """1 MB frames into a FrameDecoder the way asyncio.BufferedProtocol feeds it, each taken and released."""
    decoder = FrameDecoder()
    payload = os.urandom(1_000_000)
    prefix = len(payload).to_bytes(4, "big")
    for _ in range(megabytes):
        for part in (prefix, payload):
            view = memoryview(part)
            while view.nbytes:
                buf = decoder.get_buffer()
                n = min(buf.nbytes, view.nbytes)
                buf[:n] = view[:n]
                del buf
                view = view[n:]
                decoder.buffer_updated(n)
        frame = decoder.next_frame()
        assert frame is not None and len(frame) == len(payload)
        del frame


def store_batches(megabytes: int) -> None:
    """1 MB batches copied into a fresh BatchStore."""
    store = BatchStore()
    batch = bytearray(os.urandom(1_000_000))
    for i in range(megabytes):
        store.append(batch, i, i)


def one_mib_batch(record_size: int) -> bytes:
    count = MIB // (record_size + 12)
    records = [RecordInput(key=b"k%07d" % i, value=os.urandom(record_size - 8), timestamp=NOW + i)
               for i in range(count)]
    return build_batch(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--walker", choices=["both", "python", "c"], default="both")
    args = parser.parse_args()
    walkers = {"python": check_records_python, "c": check_records_c}
    names = ["python", "c"] if args.walker == "both" else [args.walker]
    if check_records_c is None:
        print("the C walker was not built (no compiler at install): Python only")
        names = [n for n in names if n == "python"]
    print(f"python {sys.version.split()[0]}; best of {args.repeat}, CPU time\n")
    print(f"{'':<34}{'walker':<8}{'ms':>9}{'MB/s':>10}{'records/s':>14}")
    cluster = Cluster(clock=Clock(NOW, frozen=True))
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    assert partition is not None
    appender = Appender()
    for record_size in (100, 1024):
        batch = one_mib_batch(record_size)
        count = RecordBatch(bytearray(batch)).record_count
        section = RecordBatch(bytearray(batch)).records_section()
        megabytes = len(batch) / MIB
        for name in names:
            walk = walkers[name]
            assert walk is not None
            validation.check_records = walk  # what Produce calls
            rows = [
                (f"append 1 MiB of {record_size} B records",
                 cpu_best_of(args.repeat, lambda b=batch: memoryview(bytearray(b)),  # type: ignore[misc]
                             lambda view: appender.append_records(partition, view, 9, NOW))),  # type: ignore[arg-type]
                (f"  the walk alone ({count} records)",
                 cpu_best_of(args.repeat, lambda: None,
                             lambda _, w=walk, s=section, n=count: w(s, n))),  # type: ignore[misc]
            ]
            for label, seconds in rows:
                print(f"{label:<34}{name:<8}{seconds * 1000:9.2f}{megabytes / seconds:10.0f}{count / seconds:14,.0f}")
    runs_of = max(1, args.repeat // 10)
    print(f"\nper MB of large batches, CPU ms, {runs_of} runs of 256 MB each:          median    least")
    for label, run in (("receive 1 MB frames (FrameDecoder)", receive_frames),
                       ("copy 1 MB batches into a log (BatchStore)", store_batches)):
        runs = per_mb_runs(runs_of, run)
        print(f"{label:<54}{statistics.median(runs):9.3f}{min(runs):9.3f}")


if __name__ == "__main__":
    main()
