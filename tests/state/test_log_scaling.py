"""Lookups whose cost must not grow with the log (issue #37): ListOffsets MAX_TIMESTAMP, the log start offset moving
(DeleteRecords, retention) with idempotent producers, a follower's replica size. Each test counts the stored
batches a call makes StoredBatch objects of (BatchStore.batch) or sizes (BatchStore.size), and checks the answer
against a walk over every batch."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.protocol.records.batch import ControlType
from mockbroker.state.log.partition_log import PartitionLog
from tests.state.loghelpers import T0, append, marker, topic_log

N = 300


class Counted:
    """Counts the calls of one BatchStore method of a log (wraps it on the instance)."""

    def __init__(self, log: PartitionLog, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = getattr(log.store, name)

        def counted(*args: Any) -> Any:
            self.calls += 1
            return real(*args)

        monkeypatch.setattr(log.store, name, counted)


def walked_max_timestamp(log: PartitionLog) -> tuple[int, int, int] | None:
    """What MAX_TIMESTAMP answers, by a walk over every batch (the first data batch with the largest timestamp)."""
    best = None
    for b in log.batches:
        if b.base_offset >= 0 and not b.is_control and b.last_offset >= log.log_start_offset:
            if best is None or b.max_timestamp > best.max_timestamp:
                best = b
    if best is None:
        return None
    rec = next(r for r in best.view().records() if r.timestamp == best.max_timestamp)
    return rec.offset, rec.timestamp, best.leader_epoch


def filled(timestamps: list[int]) -> PartitionLog:
    _, log = topic_log({"retention.ms": "-1"})
    for ts in timestamps:
        append(log, [(b"k", b"v")], timestamp=ts)
    return log


def test_max_timestamp_lookup_makes_one_batch_not_one_per_stored_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    log = filled([T0 + (i * 37) % 101 for i in range(N)])
    walked = walked_max_timestamp(log)
    made = Counted(log, "batch", monkeypatch)
    assert log.max_timestamp_offset() == walked
    assert made.calls == 1


def test_max_timestamp_follows_appends_markers_and_truncations() -> None:
    _, log = topic_log({"retention.ms": "-1"})
    assert log.max_timestamp_offset() is None
    append(log, [(b"a", b"1")], timestamp=T0 + 5)
    append(log, [(b"b", b"2")], timestamp=T0 + 9)
    append(log, [(b"c", b"3")], timestamp=T0 + 9)  # a tie: the first one stays
    append(log, [(b"d", b"4")], pid=7, epoch=0, seq=0, txn=True, timestamp=T0 + 1)
    marker(log, ControlType.COMMIT, 7, 0, now=T0 + 50)  # a marker's timestamp does not count
    assert log.max_timestamp_offset() == walked_max_timestamp(log) == (1, T0 + 9, 0)
    log.truncate_to(2)  # the largest stays
    assert log.max_timestamp_offset() == walked_max_timestamp(log) == (1, T0 + 9, 0)
    log.truncate_to(1)  # the largest is cut off
    assert log.max_timestamp_offset() == walked_max_timestamp(log) == (0, T0 + 5, 0)
    append(log, [(b"e", b"5")], timestamp=T0 + 20)
    append(log, [(b"f", b"6")], timestamp=T0 + 30)
    log.truncate_before(2)  # the largest stays
    assert log.max_timestamp_offset() == walked_max_timestamp(log) == (2, T0 + 30, 0)
    append(log, [(b"g", b"7")], timestamp=T0 + 3)
    log.truncate_before(3)  # the largest goes
    assert log.max_timestamp_offset() == walked_max_timestamp(log) == (3, T0 + 3, 0)


def test_log_start_move_with_idempotent_producers_walks_no_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    _, log = topic_log({"retention.ms": "-1"})
    for i in range(N):  # producer 1 writes the first half, producer 2 all along
        append(log, [(b"k", b"v")], pid=1 + (i >= N // 2 or i % 2), epoch=0, seq=i // 2 if i < N // 2 else i - N // 4)
    seq1 = log.producers.entries[1].last_seq
    made = Counted(log, "batch", monkeypatch)
    log.truncate_before(N // 2 + 10)
    assert made.calls == 0
    assert 1 not in log.producers.entries  # every batch of producer 1 went: forgotten (KIP-360)
    entry = log.producers.entries[2]
    assert all(b.first_offset >= N // 2 + 10 for b in entry.batches)
    assert seq1 >= 0
    # Producer 2's sequence state is kept: its next batch in sequence is taken, a gap is refused.
    from mockbroker.errors import KafkaError
    from mockbroker.protocol.records.batch import RecordBatch
    from mockbroker.protocol.records.builder import RecordInput, build_batch

    def batch(seq: int) -> RecordBatch:
        return RecordBatch(build_batch([RecordInput(b"k", b"v", (), T0)], producer_id=2, producer_epoch=0,
                                       base_sequence=seq))

    assert log.producers.check(batch(entry.last_seq + 1)) is None
    with pytest.raises(KafkaError):
        log.producers.check(batch(entry.last_seq + 5))


def test_log_start_move_inside_an_open_transaction_rebuilds() -> None:
    _, log = topic_log({"retention.ms": "-1"})
    for i in range(4):
        append(log, [(b"k", b"v")], pid=3, epoch=0, seq=i, txn=True)
    log.truncate_before(2)
    assert log.producers.entries[3].current_txn_first_offset == 2  # from the batches left, as before
    assert log.last_stable_offset == 2


def test_replica_size_sizes_only_the_batches_above_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    log = filled([T0] * N)
    end = N - 5
    walked = sum(b.size for b in log.batches if b.last_offset < end)
    sized = Counted(log, "size", monkeypatch)
    assert log.bytes_below(end) == walked
    assert sized.calls == 5
    assert log.bytes_below(N) == log.size_bytes
