"""A confluent-kafka ShareConsumer across broker.restore(snap) (mockbroker/snapshots.py, docs/snapshots.md): its
connection closed, it reconnects, its member and share partition are the snapshot's, and it carries on with what
the restored log and share partition hold (nothing twice, nothing skipped)."""

from __future__ import annotations

from typing import Any

from confluent_kafka import Producer, ShareConsumer

from mockbroker.server import MockBroker
from tests.interop.test_share_groups import wait_for

Delivery = tuple[int, bytes, int]  # offset, value, delivery count


def _produce(broker: MockBroker, *values: bytes) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    for value in values:
        producer.produce("s", value)
    assert producer.flush(30) == 0


def _start_offset(broker: MockBroker) -> int:
    part: Any = broker.share_groups().get("sg", {}).get("partitions", {}).get("s-0", {"start_offset": -1})
    return int(part["start_offset"])


def test_a_share_consumer_carries_on_after_a_restore() -> None:
    config = {"share.auto.offset.reset": "earliest", "group.share.max.record.lock.duration.ms": 3_600_000,
              "group.share.record.lock.duration.ms": 3_600_000}  # records come back only through what is tested
    with MockBroker(config=config).run_in_thread() as broker:
        broker.create_topic("s", 1)
        _produce(broker, b"v0", b"v1", b"v2", b"v3")
        consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "sg"})
        consumer.subscribe(["s"])
        got: list[Delivery] = []

        def poll() -> None:
            for m in consumer.poll(0.2) or []:
                assert m.error() is None, m.error()
                got.append((m.offset(), m.value(), m.delivery_count()))

        try:
            wait_for(lambda: len(got) >= 4 and _start_offset(broker) == 4, poll, timeout=60.0)  # read and acknowledged
            assert got == [(0, b"v0", 1), (1, b"v1", 1), (2, b"v2", 1), (3, b"v3", 1)]
            snap = broker.snapshot()
            at_snapshot = broker.share_groups()

            _produce(broker, b"v4", b"v5", b"v6")
            wait_for(lambda: len(got) >= 7 and _start_offset(broker) == 7, poll, timeout=60.0)
            broker.restore(snap)
            assert broker.share_groups() == at_snapshot  # v4-v6 and their acknowledgements are gone

            _produce(broker, b"w0", b"w1")  # offsets 4 and 5 again, in the restored log
            wait_for(lambda: len(got) >= 9 and _start_offset(broker) == 6, poll, timeout=60.0)
            assert got[7:] == [(4, b"w0", 1), (5, b"w1", 1)]
            [member] = broker.share_groups()["sg"]["members"]
            assert member in at_snapshot["sg"]["members"]  # the same member went on
        finally:
            consumer.close()
