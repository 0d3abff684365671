"""Sample events for the Spark pipeline: JSON user actions with event times, written with confluent-kafka.

    python examples/spark_pipeline/sample_producer.py --bootstrap 127.0.0.1:9092 --topic events --count 200

Each event is {"user": "u7", "action": "click", "amount": 3.5, "event_time": "2024-05-01T12:00:07Z"},
keyed by user. Event times start at BASE_TIME, EVENT_SPACING_S apart, in order; a last "flush" event
far later moves the pipeline's watermark past every earlier window, so all of them are emitted.
expected_windows() computes what the pipeline should output for a list of events.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

BASE_TIME = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
EVENT_SPACING_S = 7
ACTIONS = ("view", "click", "buy")
WINDOW = timedelta(minutes=1)
FLUSH_AFTER = timedelta(minutes=10)


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_events(count: int, seed: int = 7, start: datetime = BASE_TIME) -> list[dict[str, Any]]:
    """`count` events in event-time order from `start`, then one "flush" event FLUSH_AFTER later."""
    rng = random.Random(seed)
    events = []
    for i in range(count):
        action = rng.choice(ACTIONS)
        amount = round(rng.uniform(1, 50), 2) if action == "buy" else 0.0
        events.append({"user": f"u{rng.randrange(10)}", "action": action, "amount": amount,
                       "event_time": iso(start + timedelta(seconds=EVENT_SPACING_S * i))})
    last = start + timedelta(seconds=EVENT_SPACING_S * max(count - 1, 0))
    events.append({"user": "system", "action": "flush", "amount": 0.0, "event_time": iso(last + FLUSH_AFTER)})
    return events


def next_start(events: list[dict[str, Any]]) -> datetime:
    """Where a later batch of events starts: a window after the last (flush) event of `events`."""
    last = datetime.strptime(events[-1]["event_time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return last + 2 * WINDOW


def expected_windows(events: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """{(window_start, action): {"events": n, "amount": total}} for every window the pipeline emits: all
    but the last flush event's (later events close an earlier flush event's window, which is then emitted
    like any other)."""
    out: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"events": 0, "amount": 0.0})
    for e in events:
        if e is events[-1] and e["action"] == "flush":
            continue
        t = datetime.strptime(e["event_time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        start = t - timedelta(seconds=t.second, microseconds=t.microsecond)  # 1-minute tumbling windows
        agg = out[(iso(start), e["action"])]
        agg["events"] += 1
        agg["amount"] = round(agg["amount"] + e["amount"], 2)
    return dict(out)


def send(bootstrap: str, topic: str, events: list[dict[str, Any]]) -> int:
    """Write the events keyed by user; returns how many were delivered."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    failures: list[Any] = []
    for e in events:
        producer.produce(topic, key=e["user"], value=json.dumps(e),
                         on_delivery=lambda err, _msg: failures.append(err) if err else None)
        producer.poll(0)
    remaining = producer.flush(30)
    if remaining or failures:
        raise RuntimeError(f"{remaining} events undelivered, {len(failures)} failed: {failures[:3]}")
    return len(events)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    sent = send(args.bootstrap, args.topic, make_events(args.count, args.seed))
    print(f"sent {sent} events to {args.topic} at {args.bootstrap}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
