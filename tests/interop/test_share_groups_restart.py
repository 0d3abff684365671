"""A restart on a data dir keeps a share group's state, seen by a real share consumer (confluent-kafka's
ShareConsumer, and Java's KafkaShareConsumer): the records acknowledged or rejected before the stop are never delivered again, and the
ones released come back with their delivery counts carried over (the share coordinator's
__share_group_state, mockbroker/state/share/persisted.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import AcknowledgeType, Message

from mockbroker.server import MockBroker
from tests.interop.clients import of_type
from tests.interop.test_share_groups import (
    EARLIEST,
    TOPIC,
    Delivery,
    close_all,
    java_share_consume,
    poll_all,
    produce,
    share_consumer,
    wait_for,
)

pytestmark = pytest.mark.interop


def test_librdkafka_a_restart_keeps_what_was_acknowledged_and_the_delivery_counts(tmp_path: Path) -> None:
    before: list[Delivery] = []
    with MockBroker(data_dir=tmp_path, config=dict(EARLIEST), port=0).run_in_thread() as b1:
        b1.create_topic(TOPIC, 1)
        produce(b1, 10, 1)
        members = {"a": share_consumer(b1, "sg-restart", explicit=True)}

        def ack(m: Message) -> AcknowledgeType:
            if m.offset() < 5:
                return AcknowledgeType.ACCEPT
            return AcknowledgeType.REJECT if m.offset() == 5 else AcknowledgeType.RELEASE

        def done() -> bool:
            part = b1.share_groups().get("sg-restart", {}).get("partitions", {}).get(f"{TOPIC}-0", {})
            return part.get("start_offset") == 6 and {r["offset"] for r in part["records"]} >= {6, 7, 8, 9}
        try:
            wait_for(done, lambda: poll_all(members, before, ack))
        finally:
            close_all(members)  # what it still held is released
    counts_before = {o: max(n for _, _, off, n in before if off == o) for o in range(6, 10)}
    after: list[Delivery] = []
    with MockBroker(data_dir=tmp_path, config=dict(EARLIEST), port=0).run_in_thread() as b2:
        members = {"b": share_consumer(b2, "sg-restart", explicit=True)}
        try:
            wait_for(lambda: len({o for _, _, o, _ in after}) >= 4,
                     lambda: poll_all(members, after, lambda m: AcknowledgeType.ACCEPT))
        finally:
            close_all(members)
    assert {o for _, _, o, _ in after} == {6, 7, 8, 9}  # 0-4 accepted and 5 rejected before the stop
    for _, _, offset, count in after:
        # Delivered before the stop (at least as often as the consumer saw): the count goes on from there.
        assert count >= counts_before[offset] + 1


@pytest.mark.java
def test_java_a_restart_keeps_what_was_acknowledged(tmp_path: Path) -> None:
    """Java's KafkaShareConsumer acknowledges six records, the broker restarts on its data dir, and the next
    run of the group gets only the three records written after the restart (share.auto.offset.reset is
    earliest: without the persisted state the group would start again at offset 0)."""
    with MockBroker(data_dir=tmp_path, config=dict(EARLIEST), port=0).run_in_thread() as b1:
        b1.create_topic(TOPIC, 1)
        produce(b1, 6, 1)
        first = of_type(java_share_consume(b1, "jsg-restart"), "record")
        assert sorted((r["offset"], r["delivery_count"]) for r in first) == [(o, 1) for o in range(6)]
        part = b1.share_groups()["jsg-restart"]["partitions"][f"{TOPIC}-0"]
        assert part["start_offset"] == 6
    with MockBroker(data_dir=tmp_path, config=dict(EARLIEST), port=0).run_in_thread() as b2:
        produce(b2, 3, 1)
        second = of_type(java_share_consume(b2, "jsg-restart"), "record")
    assert sorted(r["offset"] for r in second) == [6, 7, 8]
