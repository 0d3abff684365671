"""Run the Spark pipeline end to end against a mockbroker started for it, and check what it wrote.

    python examples/spark_pipeline/run.py [--events 200] [--bootstrap HOST:PORT] [--keep-checkpoint DIR]

1. starts a MockBroker in this process (or uses --bootstrap, e.g. the docker image) with the topics
   "events" (3 partitions) and "action-counts";
2. writes sample events (sample_producer.py);
3. runs the pipeline (pipeline.py) with Trigger.AvailableNow: Kafka source, JSON parsing, a watermark,
   1-minute windows per action, Kafka sink, a checkpoint;
4. reads "action-counts" back, prints the windows and compares them with what the events add up to.

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


def read_output(bootstrap: str, topic: str, want: int, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The JSON values in `topic`, read with confluent-kafka until `want` arrived (bounded)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-pipeline-check",
                         "enable.auto.commit": False})
    out: list[dict[str, Any]] = []
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        consumer.assign([TopicPartition(topic, p, 0) for p in metadata.partitions])
        deadline = time.monotonic() + timeout
        while len(out) < want and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(json.loads(msg.value() or b"null"))
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
        spark.sparkContext.setLogLevel("ERROR")
        print("running the pipeline (Trigger.AvailableNow)")
        query = pipeline.start(spark, bootstrap, checkpoint, available_now=True)
        if not query.awaitTermination(args.timeout):
            query.stop()
            print(f"the pipeline did not finish in {args.timeout:.0f}s", file=sys.stderr)
            return 1

        rows = read_output(bootstrap, "action-counts", len(expected))
        spark.stop()

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
        return 1
    print(f"OK: {len(got)} windows, each written once, as the events add up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
