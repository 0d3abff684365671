"""state/copying.py: the fast copies snapshots make; and the rooms' __deepcopy__ built on them (a partition log's
stored batches shared, its indexes copied, its listeners left out)."""

from __future__ import annotations

import copy
import uuid

from mockbroker.clock import Clock
from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.copying import copy_attrs, copy_value


class Box:
    def __init__(self) -> None:
        self.topic_id = uuid.uuid4()
        self.numbers = [1, 2, [3]]
        self.by_name = {"a": {"b": 1}}
        self.entries = [("x", 1)]
        self.listeners = [print]


def test_copy_attrs_keeps_immutables_and_copies_the_rest_once() -> None:
    box = Box()
    box.alias = box.by_name  # type: ignore[attr-defined]
    twin = copy_attrs(box, {}, shallow=("entries",), empty=("listeners",))
    assert twin is not box and type(twin) is Box
    assert twin.topic_id is box.topic_id
    assert twin.numbers == box.numbers and twin.numbers is not box.numbers and twin.numbers[2] is not box.numbers[2]
    assert twin.by_name == box.by_name and twin.by_name["a"] is not box.by_name["a"]
    assert twin.alias is twin.by_name  # type: ignore[attr-defined]  # reached twice, copied once
    assert twin.entries == box.entries and twin.entries is not box.entries and twin.entries[0] is box.entries[0]
    assert twin.listeners == []


def test_copy_value_keeps_what_the_memo_maps_to_itself() -> None:
    kept = Box()
    assert copy_value({"k": kept}, {id(kept): kept})["k"] is kept


def test_a_copied_cluster_shares_stored_batches_and_diverges_on_append() -> None:
    clock = Clock(frozen=True)
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    assert partition is not None
    appender = Appender()
    appender.append_records(partition, memoryview(build_batch([RecordInput(b"k", b"v")])), 9, clock.now_ms())
    partition.log.add_append_listener(lambda: None)
    memo = {id(cluster.config): cluster.config, id(clock): clock}
    topics = copy.deepcopy(cluster.topics, memo)
    twin = topics["t"].partitions[0]
    assert twin.topic is topics["t"] and twin.log is not partition.log
    assert twin.log.batches[0].data.obj is partition.log.batches[0].data.obj  # the stored bytes shared, never copied
    held_first = bytes(twin.log.batches[0].data)
    assert twin.log.segments is not partition.log.segments and twin.log.producers is not partition.log.producers
    assert twin.log._listeners == [] and topics["t"].config.broker is cluster.config
    appender.append_records(partition, memoryview(build_batch([RecordInput(b"k", b"w")])), 9, clock.now_ms())
    assert (partition.log.log_end_offset, twin.log.log_end_offset) == (2, 1)
    assert len(twin.log.batches) == 1 and twin.log.segments.active.size < partition.log.segments.active.size
    # the twin never writes into the chunk it shares: its appends leave the original's bytes as they were
    held = bytes(partition.log.batches[1].data)
    twin.log.append(RecordBatch(memoryview(build_batch([RecordInput(b"k", b"x")]))), clock.now_ms())
    assert bytes(partition.log.batches[1].data) == held and bytes(twin.log.batches[0].data) == held_first
