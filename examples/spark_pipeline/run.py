"""Run the Spark pipeline end to end against a mockbroker started for it, and check what it wrote.

    python examples/spark_pipeline/run.py [--events 200] [--bootstrap HOST:PORT] [--keep-checkpoint DIR]

1. starts a MockBroker in this process (or uses --bootstrap, e.g. the docker image) with the topics
   "events" (3 partitions) and "action-counts";
2. writes sample events (sample_producer.py);
3. runs the pipeline (pipeline.py) with Trigger.AvailableNow: Kafka source, JSON parsing, a watermark,
   1-minute windows per action, Kafka sink, a checkpoint;
4. reads "action-counts" back, prints the windows and compares them with what the events add up to;
5. restarts from the checkpoint: writes a second, later batch of events, runs the pipeline again on the
   same checkpoint, and checks that "action-counts" now holds every window of both batches exactly once
   (the restart went on where the first run stopped: nothing re-read, nothing lost).

Exit code 0 when the output is right, 1 when not, 2 when Spark or its Kafka connector is missing
(mockbroker.testing.spark says how to provide it: MOCKBROKER_SPARK_JARS or Maven Central).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pipeline  # noqa: E402
import sample_producer  # noqa: E402


def read_output(bootstrap: str, topic: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Every JSON value in `topic`, up to its end offsets, read with confluent-kafka (bounded in time)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-pipeline-check",
                         "enable.auto.commit": False})
    out: list[dict[str, Any]] = []
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in metadata.partitions}
        consumer.assign([TopicPartition(topic, p, 0) for p in metadata.partitions])
        left = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + timeout
        while left and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(json.loads(msg.value() or b"null"))
                if msg.offset() + 1 >= ends[msg.partition()]:
                    left.discard(msg.partition())
    finally:
        consumer.close()
    return out


@contextlib.contextmanager
def broker_for(bootstrap: str | None) -> Iterator[str]:
    """The given bootstrap address, or an in-process MockBroker's with the pipeline's topics."""
    if bootstrap:
        yield bootstrap
        return
    from mockbroker import MockBroker

    with MockBroker(port=0).run_in_thread() as broker:
        broker.create_topic("events", partitions=3)
        broker.create_topic("action-counts")
        yield broker.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200, help="how many sample events (default 200)")
    parser.add_argument("--bootstrap", help="use this broker instead of starting a mockbroker")
    parser.add_argument("--keep-checkpoint", type=Path, help="checkpoint here (kept) instead of a temp dir")
    parser.add_argument("--timeout", type=float, default=300.0, help="bound on the Spark run (seconds)")
    args = parser.parse_args(argv)

    from mockbroker.testing.spark import spark_session, spark_unavailable

    reason = spark_unavailable()
    if reason:
        print(f"cannot run the pipeline: {reason}", file=sys.stderr)
        return 2

    events = sample_producer.make_events(args.events)
    expected = sample_producer.expected_windows(events)
    with contextlib.ExitStack() as stack:
        checkpoint = args.keep_checkpoint or Path(stack.enter_context(tempfile.TemporaryDirectory())) / "ckpt"
        bootstrap = stack.enter_context(broker_for(args.bootstrap))
        print(f"broker {bootstrap}: sending {len(events)} events")
        sample_producer.send(bootstrap, "events", events)

        spark = spark_session("spark-pipeline-example")
        stack.callback(spark.stop)
        spark.sparkContext.setLogLevel("ERROR")
        print("running the pipeline (Trigger.AvailableNow)")
        if not run_once(spark, bootstrap, checkpoint, args.timeout):
            return 1
        if not check(read_output(bootstrap, "action-counts"), expected):
            return 1

        later = sample_producer.make_events(args.events, seed=8, start=sample_producer.next_start(events))
        print(f"restarting from the checkpoint after sending {len(later)} later events")
        sample_producer.send(bootstrap, "events", later)
        if not run_once(spark, bootstrap, checkpoint, args.timeout):
            return 1
        expected_all = sample_producer.expected_windows(events + later)
        if not check(read_output(bootstrap, "action-counts"), expected_all):
            return 1
    print("OK: the restart went on from the checkpoint (nothing read twice, nothing lost)")
    return 0


def run_once(spark: Any, bootstrap: str, checkpoint: Path, timeout: float) -> bool:
    """One Trigger.AvailableNow run of the pipeline on `checkpoint`; False when it did not finish."""
    query = pipeline.start(spark, bootstrap, checkpoint, available_now=True)
    if not query.awaitTermination(timeout):
        query.stop()
        print(f"the pipeline did not finish in {timeout:.0f}s", file=sys.stderr)
        return False
    return True


def check(rows: list[dict[str, Any]], expected: dict[tuple[str, str], dict[str, Any]]) -> bool:
    """Print the windows read back; True when they are exactly `expected`, each written once."""
    got = {(r["window_start"], r["action"]): {"events": r["events"], "amount": round(r["amount"], 2)}
           for r in rows}
    print(f"{'window':22} {'action':7} {'events':>6} {'amount':>9}")
    for (start, action), agg in sorted(got.items()):
        print(f"{start:22} {action:7} {agg['events']:6d} {agg['amount']:9.2f}")
    if got != expected or len(rows) != len(expected):
        missing = sorted(set(expected) - set(got))
        wrong = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
        print(f"MISMATCH: {len(rows)} rows for {len(expected)} windows; missing {missing[:5]}, wrong {wrong[:5]}",
              file=sys.stderr)
        return False
    print(f"OK: {len(got)} windows, each written once, as the events add up")
    return True


if __name__ == "__main__":
    sys.exit(main())
