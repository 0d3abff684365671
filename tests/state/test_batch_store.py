"""BatchStore (mockbroker/state/log/batch_store.py): batches copied into shared chunks, indexed by columns."""

from __future__ import annotations

import copy
import ctypes
import gc
import os

import pytest

from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.state.log import batch_store
from mockbroker.state.log.batch_store import BatchStore, StoredBatches
from mockbroker.state.log.partition_log import PartitionLog

T0 = 1_700_000_000_000


def _batch(base: int, value: bytes, timestamp: int = T0) -> bytes:
    view = RecordBatch(memoryview(bytearray(build_batch([RecordInput(b"k", value, timestamp=timestamp)]))))
    view.set_base_offset(base)
    return bytes(view.buffer)


def _fill(store: BatchStore, sizes: list[int]) -> list[bytes]:
    sent = []
    for base, size in enumerate(sizes):
        data = _batch(base, bytes([base % 251]) * size, T0 + base)
        store.append(memoryview(bytearray(data)), base, T0 + base)  # a frame of its own, dropped after
        sent.append(data)
    return sent


def test_batches_come_back_byte_for_byte_across_chunks_and_one_larger_than_a_chunk() -> None:
    store = BatchStore()
    sizes = [100, 70_000, 5, 200_000, batch_store.CHUNK_MAX + 10, 300, 150_000, 1] * 3
    sent = _fill(store, sizes)
    assert len(store) == len(sent) and len(store._views) > 3
    assert [bytes(store.data(i)) for i in range(len(store))] == sent
    assert [store.size(i) for i in range(len(store))] == [len(d) for d in sent]
    assert list(store.positions) == sorted(store.positions)
    batches = StoredBatches(store)
    assert [b.base_offset for b in batches] == list(store.base_offsets) == list(range(len(sent)))
    assert batches[-1].max_timestamp == T0 + len(sent) - 1 and bytes(batches[3].data) == sent[3]
    assert [bytes(b.data) for b in batches[2:5]] == sent[2:5]


def test_read_stops_at_the_limit_and_at_max_bytes_but_serves_one_when_min_one() -> None:
    store = BatchStore()
    sent = _fill(store, [1000] * 10)
    views, total = store.read(2, 7, 1 << 20, False)
    assert [bytes(v) for v in views] == sent[2:7] and total == sum(len(d) for d in sent[2:7])
    views, total = store.read(0, 10, len(sent[0]) * 2 + 1, False)
    assert len(views) == 2
    assert store.read(0, 10, 10, False) == ([], 0)
    views, _ = store.read(9, 10, 10, True)
    assert [bytes(v) for v in views] == [sent[9]]


def test_a_truncation_never_rewrites_bytes_already_handed_out() -> None:
    store = BatchStore()
    sent = _fill(store, [500] * 4)
    held = store.data(3)
    store.truncate(2)
    replacement = _batch(2, b"z" * 900)
    store.append(replacement, 2, T0)
    assert bytes(held) == sent[3] and bytes(store.data(2)) == replacement
    assert len(store) == 3 and list(store.max_ts_running) == [T0, T0 + 1, T0 + 1]


def test_dropping_from_the_front_lets_chunks_go_and_recomputes_the_time_index() -> None:
    store = BatchStore()
    sent = _fill(store, [200_000] * 12)
    chunks = len(store._views)
    assert store.drop_front(10) == sum(len(d) for d in sent[:10])
    assert len(store._views) < chunks
    assert [bytes(store.data(i)) for i in range(2)] == sent[10:]
    assert list(store.max_ts_running) == [T0 + 10, T0 + 11]
    store.drop_front(2)
    assert len(store) == 0 and store.read(0, 100, 1 << 20, True) == ([], 0)


def test_a_copy_and_its_original_never_write_into_each_others_bytes() -> None:
    store = BatchStore()
    sent = _fill(store, [300] * 3)
    twin = copy.deepcopy(store)
    assert twin.data(0).obj is store.data(0).obj  # the chunk is shared
    later = _batch(3, b"o" * 300)
    store.append(later, 3, T0)
    mine = _batch(3, b"t" * 300)
    twin.append(mine, 3, T0)
    assert bytes(store.data(3)) == later and bytes(twin.data(3)) == mine
    assert [bytes(twin.data(i)) for i in range(3)] == [bytes(store.data(i)) for i in range(3)] == sent
    twin.truncate(1)
    assert len(store) == 4 and bytes(store.data(2)) == sent[2]


def test_replace_holds_exactly_the_batches_given() -> None:
    store = BatchStore()
    sent = _fill(store, [100] * 5)
    store.replace([sent[1], store.data(3), sent[4]])
    assert [bytes(store.data(i)) for i in range(3)] == [sent[1], sent[3], sent[4]]
    assert list(store.base_offsets) == [1, 3, 4] and list(store.max_ts_running) == [T0 + 1, T0 + 3, T0 + 4]


def test_stored_batches_add_no_object_the_garbage_collector_tracks() -> None:
    log = PartitionLog("t", 0)
    frame = _batch(0, b"v" * 100)
    log.append(RecordBatch(memoryview(bytearray(frame))), T0)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(5000):
        log.append(RecordBatch(memoryview(bytearray(frame))), T0)
    gc.collect()
    assert len(log.batches) == 5001
    assert len(gc.get_objects()) - before < 100  # a few chunks and arrays, not one object per batch


def test_the_time_index_after_a_front_drop_forgets_the_dropped_maximum() -> None:
    store = BatchStore()
    stamps = [50, 900, 10, 20, 950, 30, 1000]
    for base, ts in enumerate(stamps):
        store.append(_batch(base, b"v", T0 + ts), base, T0 + ts)
    store.drop_front(2)  # the 900 goes: the running maximum starts again from the kept batches
    assert list(store.max_ts_running) == [T0 + 10, T0 + 20, T0 + 950, T0 + 950, T0 + 1000]
    store.drop_front(3)
    assert list(store.max_ts_running) == [T0 + 30, T0 + 1000]


def test_the_time_index_after_front_drops_matches_the_running_maximum_recomputed() -> None:
    import random

    rng = random.Random(37)
    for case in range(200):
        store = BatchStore()
        stamps = [rng.choice([rng.randrange(0, 50), 7, 7, 7]) for _ in range(rng.randrange(1, 40))]  # runs of equals
        for base, ts in enumerate(stamps):
            store.append(_batch(base, b"v", T0 + ts), base, T0 + ts)
        left = list(stamps)
        while left:
            count = rng.randrange(1, len(left) + 1)
            store.drop_front(count)
            left = left[count:]
            expected = [T0 + max(left[: i + 1]) for i in range(len(left))]
            assert list(store.max_ts_running) == expected, (case, stamps, count)


def test_a_front_drop_with_equal_timestamps_does_not_recompute_the_time_index() -> None:
    store = BatchStore()
    for base in range(1000):
        store.append(_batch(base, b"v"), base, T0)
    read = []
    real = store.max_timestamp
    store.max_timestamp = lambda i: read.append(i) or real(i)  # type: ignore[method-assign]
    store.drop_front(10)
    assert list(store.max_ts_running) == [T0] * 990 and len(read) <= 1  # one entry read, not the 990 kept


def test_an_adopted_chunk_is_served_without_a_copy_and_never_written() -> None:
    store = BatchStore()
    sent = [_batch(base, b"r" * (10 * base + 1), T0 + base) for base in range(4)]
    segment = b"".join(sent)  # a segment file's bytes, as recovery reads them
    store.adopt(memoryview(segment), [len(d) for d in sent])
    assert [bytes(store.data(i)) for i in range(4)] == sent and store.data(2).obj is segment
    assert list(store.base_offsets) == [0, 1, 2, 3] and store.max_ts_running[-1] == T0 + 3
    later = _batch(4, b"n")
    store.append(later, 4, T0)  # into a chunk of its own: the adopted bytes are read-only
    assert bytes(store.data(4)) == later and store.data(4).obj is not segment
    views, _ = store.read(0, 5, 1 << 20, False)
    assert [bytes(v) for v in views] == [*sent, later]


def _mapping_of(view: memoryview) -> str:
    """The /proc/self/maps line of the mapping holding view's first byte."""
    address = ctypes.addressof(ctypes.c_char.from_buffer(view))
    with open("/proc/self/maps") as maps:
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= address < hi:
                return line
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads Linux's /proc/self/maps")
def test_chunks_are_private_anonymous_memory_not_shared_memory() -> None:
    # Shared anonymous memory is shmem on Linux: every first touch of a page costs several times more.
    store = BatchStore()
    sizes = [batch_store.CHUNK_MAX // 2, 100, batch_store.POPULATE_MIN + 1, batch_store.CHUNK_MAX + 10] * 3
    sent = _fill(store, sizes)
    assert [bytes(store.data(i)) for i in range(len(store))] == sent
    for view in store._views:
        perms = _mapping_of(view).split()[1]
        assert perms[3] == "p", perms


def test_large_batches_are_right_whether_their_pages_are_populated_first_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    # Populating first (madvise MADV_POPULATE_WRITE), an advice the kernel refuses (it is then no longer
    # asked), no advice at all: the same bytes come back, at unaligned positions and in an own-size chunk.
    sizes = [100, batch_store.POPULATE_MIN, 5, batch_store.POPULATE_MIN * 3 + 7, batch_store.CHUNK_MAX + 10, 300]
    for advice in (batch_store._POPULATE_WRITE, 987_654, None):
        monkeypatch.setattr(batch_store, "_POPULATE_WRITE", advice)
        store = BatchStore()
        sent = _fill(store, sizes * 2)
        assert [bytes(store.data(i)) for i in range(len(store))] == sent
        if advice == 987_654:
            assert batch_store._POPULATE_WRITE is None
