"""The scheduled cleaner goes in steps (issue #20's per-request bound, for the cleaner): a pass cleans the
filthiest logs as long as the logs cleaned in this step span at most mockbroker.max.records.per.batch
offsets (one log always), and goes on at the loop's next pass, so connections are served between logs.
Driven with a scheduler that keeps the next step instead of running it."""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.maintenance import LogMaintenance
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.scheduler import Timer
from mockbroker.server import MockBroker


class KeptSteps:
    """A scheduler that keeps what is asked of it: the steps for the loop's next pass, the timers."""

    def __init__(self) -> None:
        self.soon: list[Callable[[], None]] = []
        self.later: list[tuple[int, Callable[[], None]]] = []

    def call_soon(self, callback: Callable[[], None]) -> None:
        self.soon.append(callback)

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        self.later.append((delay_ms, callback))
        return Timer(delay_ms, callback)


def _dirty(broker: MockBroker, topic: str, n: int) -> None:
    """n records of one key in n segments (segment.bytes 1): all but the last are cleanable."""
    broker.create_topic(topic, config={"cleanup.policy": "compact", "segment.bytes": "1"})
    for i in range(n):
        broker.appender.append_records(broker.cluster.topic(topic).partitions[0],
                                       memoryview(build_batch([RecordInput(b"k", b"%d" % i)])), 9, broker.clock.now_ms())


def _maintenance(broker: MockBroker) -> tuple[LogMaintenance, KeptSteps]:
    steps = KeptSteps()
    m = LogMaintenance(broker.cluster, broker.clock, steps)  # type: ignore[arg-type]
    m.start()  # schedules retention and the first pass: forgotten, the test runs the pass by hand
    steps.later.clear()
    return m, steps


def test_a_cleaner_pass_over_large_logs_goes_one_step_per_log() -> None:
    broker = MockBroker(config={"mockbroker.max.records.per.batch": 10})
    _dirty(broker, "a", 8)
    _dirty(broker, "b", 8)
    m, steps = _maintenance(broker)
    m._cleaner_task()
    # One log (8 offsets) fits a step; the second would pass 10: it waits for the next step.
    assert sorted(len(broker.batches(t)) for t in ("a", "b")) == [2, 8] and len(steps.soon) == 1 and not steps.later
    steps.soon.pop()()
    assert [len(broker.batches(t)) for t in ("a", "b")] == [2, 2]
    assert not steps.soon and [d for d, _ in steps.later] == [15000]  # the pass is over: the backoff


def test_small_logs_are_cleaned_in_one_step() -> None:
    broker = MockBroker()
    _dirty(broker, "a", 8)
    _dirty(broker, "b", 8)
    m, steps = _maintenance(broker)
    m._cleaner_task()
    assert [len(broker.batches(t)) for t in ("a", "b")] == [2, 2]
    assert not steps.soon and len(steps.later) == 1


def test_a_topic_deleted_between_steps_is_not_cleaned() -> None:
    broker = MockBroker(config={"mockbroker.max.records.per.batch": 10})
    _dirty(broker, "a", 8)
    _dirty(broker, "b", 8)
    m, steps = _maintenance(broker)
    m._cleaner_task()
    [left] = [t for t in ("a", "b") if len(broker.batches(t)) == 8]
    broker.delete_topic(left)
    steps.soon.pop()()
    assert not steps.soon and len(steps.later) == 1


def test_a_step_of_an_earlier_start_does_nothing() -> None:
    broker = MockBroker(config={"mockbroker.max.records.per.batch": 10})
    _dirty(broker, "a", 8)
    _dirty(broker, "b", 8)
    m, steps = _maintenance(broker)
    m._cleaner_task()
    m._generation += 1  # restarted meanwhile
    steps.soon.pop()()
    assert sorted(len(broker.batches(t)) for t in ("a", "b")) == [2, 8] and not steps.soon and not steps.later


def _expired(broker: MockBroker, topic: str, partitions: int) -> None:
    """A topic whose partitions each hold two batches of timestamp 0, past retention.ms."""
    broker.create_topic(topic, partitions=partitions, config={"retention.ms": "1", "segment.bytes": "1"})
    for p in broker.cluster.topic(topic).partitions:
        for i in range(2):  # the second batch rolls a new segment: the first one can go
            broker.appender.append_records(p, memoryview(build_batch([RecordInput(b"k", b"%d" % i)], base_timestamp=0, max_timestamp=0)),
                                           9, 0)


def test_a_retention_pass_over_many_partitions_goes_in_steps() -> None:
    from mockbroker.maintenance import RETENTION_STEP_PARTITIONS

    broker = MockBroker()
    _expired(broker, "many", RETENTION_STEP_PARTITIONS + 3)
    _expired(broker, "gone", 2)
    m, steps = _maintenance(broker)
    m._retention_task()
    starts = [p.log.log_start_offset for p in broker.cluster.topic("many").partitions]
    done = starts[0]  # both batches are past retention.ms: Kafka rolls the active segment and deletes it too
    assert done > 0 and starts == [done] * RETENTION_STEP_PARTITIONS + [0, 0, 0]  # one step's; the rest next pass
    assert len(steps.soon) == 1 and not steps.later
    gone = broker.cluster.topic("gone")
    broker.delete_topic("gone")
    steps.soon.pop()()
    assert [p.log.log_start_offset for p in broker.cluster.topic("many").partitions] == [done] * len(starts)
    assert [p.log.log_start_offset for p in gone.partitions] == [0, 0]  # deleted meanwhile: not looked at
    assert not steps.soon and [d for d, _ in steps.later] == [300_000]  # the pass is over: the next one
