"""Snapshots and each kind of per-partition state (mockbroker/snapshots.py): after a snapshot, one kind of a
partition's state is changed (records appended, the log truncated from either end, the leader, ISR, replica ends,
a reassignment, the topic's config, segments rolled and compacted, partitions added); restore gives back the
snapshot field by field (tests/state_walk.py), a second restore too, and the partitions then keep working."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.server import MockBroker
from mockbroker.snapshots import Snapshot, restore, take
from mockbroker.state.cluster import leadership, reassignments, replicas
from mockbroker.state.cluster.cluster import Cluster, Partition
from tests.state_walk import differences, state_of

PRODUCER_ID = 777


@pytest.fixture
def broker() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as b:
        b.create_topic("t", 2, replication_factor=3)
        b.create_topic("compacted", 1, config={"cleanup.policy": "compact"}, replication_factor=3)
        b.create_topic("untouched", 1)
        for name, index, batches in (("t", 0, 4), ("t", 1, 2), ("compacted", 0, 3), ("untouched", 0, 2)):
            for n in range(batches):
                _append(b, name, index, n)
        yield b


def _append(broker: MockBroker, topic: str, index: int, n: int, producer_id: int = PRODUCER_ID) -> None:
    """The n-th idempotent batch of producer_id on a partition (two records, the same keys every batch)."""
    def run() -> None:
        partition = broker.cluster.partition(topic, index)
        assert partition is not None
        batch = build_batch([RecordInput(b"k1", b"v%d" % n), RecordInput(b"k2", b"w%d" % n)],
                            producer_id=producer_id, producer_epoch=0, base_sequence=n * 2)
        broker.appender.append_records(partition, memoryview(batch), 9, broker.clock.now_ms())
    broker._call(run)


def _t0(cluster: Cluster) -> Partition:
    partition = cluster.partition("t", 0)
    assert partition is not None
    return partition


def _not_leader(partition: Partition) -> int:
    return next(n for n in partition.isr if n != partition.leader_id)


# Each kind of change: what it does to the state, on the broker's loop (the broker, its cluster).
CHANGES: dict[str, Callable[[MockBroker, Cluster], Any]] = {
    "append": lambda b, c: b.appender.append_records(
        _t0(c), memoryview(build_batch([RecordInput(b"k", b"new")], producer_id=PRODUCER_ID, producer_epoch=0,
                                       base_sequence=8)), 9, b.clock.now_ms()),
    "new producer": lambda b, c: b.appender.append_records(
        _t0(c), memoryview(build_batch([RecordInput(b"k", b"p")], producer_id=9999, producer_epoch=3,
                                       base_sequence=0)), 9, b.clock.now_ms()),
    "truncate the end": lambda b, c: _t0(c).log.truncate_to(4, b.clock.now_ms()),
    "delete records": lambda b, c: c.delete_records(_t0(c), 3),
    "move the leader": lambda b, c: leadership.move_leader(c, _t0(c), _not_leader(_t0(c))),
    "shrink the ISR": lambda b, c: leadership.set_isr(c, _t0(c), [_t0(c).leader_id]),
    "a replica falls behind": lambda b, c: replicas.fall_behind(_t0(c), _not_leader(_t0(c))),
    "reassign": lambda b, c: reassignments.alter(c, "t", 0, list(reversed(_t0(c).replicas)), b.clock.now_ms()),
    "topic config": lambda b, c: c.alter_topic_config("t", [("retention.ms", 0, "1000")]),
    "add partitions": lambda b, c: c.create_partitions("t", 4),
    "compact": lambda b, c: b.log_maintenance.compact("compacted", None),
    "retention": lambda b, c: (c.alter_topic_config("t", [("retention.bytes", 0, "1")]),
                               b.log_maintenance.enforce_retention("t")),
}


def _snapshot(broker: MockBroker) -> tuple[Snapshot, dict[str, Any]]:
    return broker._call(lambda: (take(broker), state_of(broker)))


def _restore(broker: MockBroker, snap: Snapshot) -> dict[str, Any]:
    return broker._call(lambda: (restore(broker, snap), state_of(broker))[1])


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_restore_gives_back_each_kind_of_partition_state(broker: MockBroker, kind: str) -> None:
    snap, before = _snapshot(broker)
    broker._call(CHANGES[kind], broker, broker.cluster)
    assert differences(before, broker._call(state_of, broker)), f"{kind} changed nothing: the test could not fail"
    assert differences(before, _restore(broker, snap)) == []
    # Changed again after the restore (the restored objects, not the snapshot's), and restored again.
    broker._call(CHANGES[kind], broker, broker.cluster)
    assert differences(before, _restore(broker, snap)) == []


def test_partitions_keep_working_after_restore_and_the_snapshot_stays_as_taken(broker: MockBroker) -> None:
    snap, before = _snapshot(broker)
    broker.create_topic("later")
    assert differences(before, _restore(broker, snap)) == []
    # An unchanged topic takes records again (its producer continues its sequence), and so does a changed one.
    _append(broker, "untouched", 0, 2)
    _append(broker, "t", 0, 4)
    assert [r.value for r in broker.records("untouched")][-2:] == [b"v2", b"w2"]
    assert broker.offsets("t", 0)["high_watermark"] == 10
    # What was written after the restore went to the broker's objects, not to the snapshot's.
    assert differences(before, _restore(broker, snap)) == []
    assert broker.offsets("t", 0)["high_watermark"] == 8 and len(broker.records("untouched")) == 4
