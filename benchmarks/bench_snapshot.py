"""What broker.snapshot(), restore(snap) and reset() cost for a broker with many topics (issue 34: "under 5 ms for a
broker with 100 topics").

    .venv/bin/python benchmarks/bench_snapshot.py [--topics 100] [--partitions 1] [--batches 10] [--repeat 20]

A running broker (in-process, its own thread) gets `--topics` topics of `--partitions` partitions, each partition
`--batches` idempotent batches of 10 records from one producer, and a consumer group with committed offsets on every
partition. Then, `--repeat` times each (median and min printed, wall time of the call from the test's thread, the
thread hop included): snapshot(); restore(snap) after a topic was created and some records produced; reset() (back
to the empty broker at start, so cheap) and, for comparison, MockBroker start + stop. Then snapshot and restore
again as CPU time of the broker's thread (time.thread_time), which a loaded machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from mockbroker.server import MockBroker  # noqa: E402
from mockbroker.snapshots import restore, take  # noqa: E402
from mockbroker.state.groups.offsets import CommittedOffset  # noqa: E402

PRODUCER_ID = 4242


def fill(broker: MockBroker, topics: int, partitions: int, batches: int) -> None:
    """Topics with idempotent batches and a group's committed offsets, straight through the broker's appender."""
    def run() -> None:
        offsets = broker.group_coordinator.offsets
        for t in range(topics):
            name = f"topic-{t:04d}"
            broker.cluster.create_topic(name, partitions, -1, None)
            for p in range(partitions):
                partition = broker.cluster.partition(name, p)
                assert partition is not None
                for b in range(batches):
                    records = [RecordInput(b"key-%d" % i, b"value-%d-%d" % (b, i)) for i in range(10)]
                    batch = build_batch(records, producer_id=PRODUCER_ID, producer_epoch=0, base_sequence=b * 10)
                    broker.appender.append_records(partition, memoryview(batch), 9, broker.clock.now_ms())
                offsets.commit("bench-group", name, p, CommittedOffset(batches * 10, -1, "", broker.clock.now_ms()))
    broker._call(run)


def timed(repeat: int, prepare: Callable[[], object], action: Callable[[object], object]) -> list[float]:
    """Wall time of action, ms (the thread hop included)."""
    out = []
    for _ in range(repeat):
        arg = prepare()
        start = time.perf_counter()
        action(arg)
        out.append((time.perf_counter() - start) * 1000)
    return out


def cpu_on_loop(broker: MockBroker, repeat: int, prepare: Callable[[], object], action: Callable[[], object]) -> list[float]:
    """CPU time of action on the broker's own thread, ms: what the call costs, whatever else the machine runs."""
    out = []
    for _ in range(repeat):
        prepare()

        def run() -> float:
            start = time.thread_time()
            action()
            return (time.thread_time() - start) * 1000
        out.append(broker._call(run))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; {args.topics} topics x {args.partitions} partitions x {args.batches} "
          f"batches; {args.repeat} runs each, ms\n")
    rows: list[tuple[str, list[float]]] = []
    with MockBroker().run_in_thread() as broker:
        fill(broker, args.topics, args.partitions, args.batches)
        snap = broker.snapshot()
        rows.append(("snapshot()", timed(args.repeat, lambda: None, lambda _: broker.snapshot())))
        counter = iter(range(10**9))

        def change() -> object:
            broker.create_topic(f"scratch-{next(counter)}")
            return None

        rows.append(("restore(snap) after a change", timed(args.repeat, change, lambda _: broker.restore(snap))))
        rows.append(("reset() (to the empty start)", timed(args.repeat, change, lambda _: broker.reset())))
        broker.restore(snap)
        rows.append(("snapshot(), broker thread CPU", cpu_on_loop(broker, args.repeat, lambda: None,
                                                                  lambda: take(broker))))  # type: ignore[arg-type]
        rows.append(("restore(snap), broker thread CPU", cpu_on_loop(broker, args.repeat, change,
                                                                     lambda: restore(broker, snap))))  # type: ignore[arg-type]

    def start_stop(_: object) -> None:
        with MockBroker().run_in_thread():
            pass

    rows.append(("MockBroker start + stop", timed(min(args.repeat, 10), lambda: None, start_stop)))
    print(f"{'':<32}{'median':>9}{'min':>9}")
    for label, values in rows:
        print(f"{label:<32}{statistics.median(values):9.2f}{min(values):9.2f}")


if __name__ == "__main__":
    main()
