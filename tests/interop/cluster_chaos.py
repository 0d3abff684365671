"""Leader moves and a node stop/start while a real client produces (the cluster failure runs).

`Chaos` runs in its own thread: every ~200 ms, and only once the client has sent PROGRESS more Produce
requests since the last step (so the failures interleave with the writes however fast the machine), it
moves the leader of one partition to another live ISR
member (MOVES moves in all), stops a node a third of the way through and starts it again at two thirds,
then gives every partition its preferred leader back; `at_step` adds calls of the test's own at given
steps (a coordinator move). Every step goes through the broker's thread-safe failure API. `check_exactly_once_in_order` then judges the log against what the client was told.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from mockbroker import MockBroker
from mockbroker.testing.delivery import Acked, Read, check_delivery

MOVES = 24
INTERVAL_S = 0.2
PROGRESS = 20  # Produce requests between two steps
PRODUCE = 0
STOPPED_NODE = 3
TOPIC_CONFIG = {"min.insync.replicas": "2"}


def make_topic(broker: MockBroker, name: str, partitions: int) -> None:
    broker.create_topic(name, partitions, config=dict(TOPIC_CONFIG), replication_factor=3)


class Chaos(threading.Thread):
    def __init__(self, broker: MockBroker, topic: str, partitions: int,
                 at_step: dict[int, Callable[[], None]] | None = None) -> None:
        super().__init__(name="chaos", daemon=True)
        self.broker, self.topic, self.partitions = broker, topic, partitions
        self.at_step = dict(at_step or {})
        self.moves = 0
        self.produced = len(broker.received(PRODUCE))
        self.error: BaseException | None = None
        self.epochs_before = [broker.partition_state(topic, p).leader_epoch for p in range(partitions)]

    def run(self) -> None:
        try:
            for step in range(MOVES):
                self._wait_for_progress()
                if step == MOVES // 3:
                    self.broker.stop_node(STOPPED_NODE)
                if step == 2 * MOVES // 3:
                    self.broker.start_node(STOPPED_NODE)
                if step in self.at_step:
                    self.at_step[step]()
                partition = step % self.partitions
                state = self.broker.partition_state(self.topic, partition)
                live = [n for n in state.isr if n not in state.offline_replicas and n != state.leader]
                if live:
                    self.broker.move_leader(self.topic, partition, live[step % len(live)])
                    self.moves += 1
                time.sleep(INTERVAL_S)
            self.broker.elect_preferred_leaders()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def _wait_for_progress(self) -> None:
        deadline = time.monotonic() + 60
        target = self.produced + PROGRESS
        while True:
            self.produced = len(self.broker.received(PRODUCE))
            if self.produced >= target:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the client stopped producing ({self.produced} Produce requests)")
            time.sleep(0.01)

    def finish(self) -> None:
        """Wait for the run to end (bounded) and fail on anything it raised."""
        self.join(120)
        assert not self.is_alive(), "the chaos thread did not finish"
        if self.error is not None:
            raise self.error
        assert self.moves >= MOVES // 2, f"only {self.moves} leader moves"
        after = [self.broker.partition_state(self.topic, p).leader_epoch for p in range(self.partitions)]
        assert all(a > b for a, b in zip(after, self.epochs_before, strict=True)), (self.epochs_before, after)


def check_exactly_once_in_order(broker: MockBroker, topic: str, partitions: int,
                                acked: dict[int, list[bytes]]) -> None:
    """Every acknowledged value is in its partition's log exactly once, in the order they were sent (values
    sort in send order), no value is in the log twice and the log holds nothing that was not acknowledged
    (every caller had every record it sent acknowledged)."""
    acks = [Acked(topic, p, -1, None, v) for p in range(partitions) for v in sorted(acked.get(p, []))]
    log = [Read.of(r) for p in range(partitions) for r in broker.records(topic, p)]
    check_delivery(acks, log, distinct_values=True, only_acked=True).assert_ok()
    assert sum(len(v) for v in acked.values()) > 0


def produce_through_chaos(broker: MockBroker, topic: str, partitions: int, chaos: Chaos) -> dict[int, list[bytes]]:
    """An idempotent acks=all confluent-kafka producer writing while the chaos runs; checks every record was
    acknowledged without an error; what it was told landed, by partition."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                         "acks": "all", "linger.ms": 2, "retry.backoff.ms": 20, "reconnect.backoff.ms": 20,
                         "reconnect.backoff.max.ms": 200, "topic.metadata.refresh.interval.ms": 1000,
                         "message.timeout.ms": 60_000})
    acked: dict[int, list[bytes]] = {}
    errors: list[str] = []

    def delivered(err: object, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            acked.setdefault(msg.partition(), []).append(msg.value())

    chaos.start()
    i = 0
    while chaos.is_alive() and i < 20_000:  # bounded: the chaos run takes ~5 s
        producer.produce(topic, b"%06d" % i, partition=i % partitions, on_delivery=delivered)
        producer.poll(0.002)
        i += 1
    assert producer.flush(60) == 0
    chaos.finish()
    assert errors == []
    assert sum(len(v) for v in acked.values()) == i
    return acked
