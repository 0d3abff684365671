"""state/copying.py: the fast copies snapshots make (the same as copy.deepcopy's, for each kind of value); and the
rooms' __deepcopy__ built on them (a partition log's stored batches shared, its indexes copied, its listeners left
out)."""

from __future__ import annotations

import copy
import enum
import random
import uuid
from dataclasses import dataclass
from typing import Any

from mockbroker.clock import Clock
from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.cluster.placement import Stripe
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


@dataclass
class Plain:
    numbers: list[int]
    label: str = "x"


@dataclass(slots=True)
class Slotted:
    numbers: list[int]


class OwnCopy:
    calls = 0

    def __init__(self) -> None:
        self.items = [1]

    def __deepcopy__(self, memo: dict[int, Any]) -> OwnCopy:
        OwnCopy.calls += 1
        twin = OwnCopy()
        twin.items = list(self.items)
        return twin


class WithState:
    def __init__(self) -> None:
        self.items = [1]
        self.dropped = "gone"

    def __getstate__(self) -> dict[str, Any]:
        return {"items": self.items}


class Color(enum.Enum):
    RED = 1


def test_copy_value_gives_what_deepcopy_gives_for_each_kind_of_value() -> None:
    plain = Plain([1, 2])
    slotted = Slotted([3])
    with_state = WithState()
    value = {"plain": plain, "again": plain, "slotted": slotted, "state": with_state, "color": Color.RED,
             "fn": print, "kind": Plain, "pair": ("a", 1), "holder": ("a", [1])}
    twin = copy_value(value, {})
    assert twin["plain"] == plain and twin["plain"] is not plain and twin["plain"].numbers is not plain.numbers
    assert twin["again"] is twin["plain"]  # reached twice, copied once
    assert twin["slotted"] == slotted and twin["slotted"] is not slotted and twin["slotted"].numbers is not slotted.numbers
    assert twin["state"].items == [1] and not hasattr(twin["state"], "dropped")  # its own __getstate__, as deepcopy
    assert twin["color"] is Color.RED and twin["fn"] is print and twin["kind"] is Plain
    assert twin["pair"] is value["pair"]  # nothing in it changes: kept, as deepcopy keeps it
    assert twin["holder"] == ("a", [1]) and twin["holder"][1] is not value["holder"][1]
    deep = copy.deepcopy(value)
    assert {k: repr(v) for k, v in twin.items() if k != "state"} == {k: repr(v) for k, v in deep.items() if k != "state"}


def test_copy_value_calls_a_class_own_deepcopy_once_per_object() -> None:
    own = OwnCopy()
    OwnCopy.calls = 0
    twin = copy_value([own, own], {})
    assert OwnCopy.calls == 1 and twin[0] is twin[1] and twin[0] is not own and twin[0].items == [1]


def test_a_copied_random_gives_the_same_numbers_on_its_own() -> None:
    rng = random.Random(7)
    rng.random()
    twin = copy_value(rng, {})
    assert twin is not rng and [twin.random() for _ in range(3)] == [rng.random() for _ in range(3)]
    twin.random()
    assert twin.getstate() != rng.getstate()


def test_a_stripe_is_kept_as_it_is() -> None:
    stripe = Stripe(1, 2)
    assert copy_value({"s": stripe}, {})["s"] is stripe and copy.deepcopy(stripe) is stripe
