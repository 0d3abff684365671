"""The log cleaner on a partition log, batch by batch: what survives a pass, how rewritten batches look,
which empty batches stay, tombstones and transaction markers over time, and the range a pass may clean."""

from __future__ import annotations

import time

import pytest

from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import RECORD_BATCH_OVERHEAD, Codec, ControlType, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.state.log.cleaner import (
    AbortedTxn,
    aborted_transactions,
    clean,
    clean_now,
    log_to_clean,
    prune_aborted_index,
)
from mockbroker.state.log.producers import ProducerStateTable
from mockbroker.state.log.validation import BatchRejected, validate_batch
from tests.state.loghelpers import T0, all_valid, append, compacted_log, infos, kv, marker, offsets

# -- what a pass keeps ----------------------------------------------------------------------------


def test_the_latest_record_of_each_key_survives_and_offsets_are_not_renumbered() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1"), (b"b", b"1")])  # 0, 1
    append(log, [(b"a", b"2")])  # 2
    append(log, [(b"c", b"1"), (b"b", b"2")])  # 3, 4
    stats = clean_now(log, topic.config, T0)
    assert kv(log) == [(2, b"a", b"2"), (3, b"c", b"1"), (4, b"b", b"2")]
    assert [(i.base_offset, i.last_offset, i.record_count) for i in infos(log)] == [(2, 2, 1), (3, 4, 2)]
    assert (log.log_start_offset, log.log_end_offset) == (0, 5)
    assert (stats.first_dirty_offset, stats.end_offset, stats.records_removed) == (0, 5, 2)
    assert (stats.batches_before, stats.batches_after) == (3, 2)
    assert all_valid(log)


def test_the_active_segment_is_never_cleaned() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")])
    append(log, [(b"a", b"2")])
    target = log_to_clean(log, topic.config, T0)
    assert (target.first_dirty_offset, target.first_uncleanable_offset, target.cleanable_bytes) == (0, 0, 0)
    assert not target.should_clean
    stats = clean(log, topic.config, T0, target.first_dirty_offset, target.first_uncleanable_offset)
    assert stats.batches_before == 0 and kv(log) == [(0, b"a", b"1"), (1, b"a", b"2")]


def test_records_superseded_only_in_the_active_segment_stay() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1"), (b"b", b"1")])
    append(log, [(b"b", b"2")])
    log.segments.roll(log.log_end_offset, T0)
    append(log, [(b"a", b"3")])  # the active segment: not in the offset map
    target = log_to_clean(log, topic.config, T0)
    clean(log, topic.config, T0, target.first_dirty_offset, target.first_uncleanable_offset)
    assert kv(log) == [(0, b"a", b"1"), (2, b"b", b"2"), (3, b"a", b"3")]


def test_dirty_section_is_cleaned_against_the_clean_one_from_the_checkpoint() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1"), (b"b", b"1")])
    clean_now(log, topic.config, T0)
    assert log.segments.cleaner_checkpoint == 2
    append(log, [(b"a", b"2")])
    stats = clean_now(log, topic.config, T0)
    # the map holds only the dirty section [2, 3): b, known only in the clean section, stays
    assert (stats.first_dirty_offset, stats.end_offset) == (2, 3)
    assert kv(log) == [(1, b"b", b"1"), (2, b"a", b"2")]
    assert log.segments.cleaner_checkpoint == 3


def test_a_checkpoint_below_the_log_start_offset_restarts_at_the_log_start() -> None:
    topic, log = compacted_log()
    for v in (b"1", b"2", b"3"):
        append(log, [(b"a", v)])
    log.segments.cleaner_checkpoint = 1
    log.truncate_before(2, T0)
    target = log_to_clean(log, topic.config, T0)
    assert target.first_dirty_offset == 2


def test_keyless_records_are_refused_on_a_compacted_topic() -> None:
    topic, _ = compacted_log()
    batch = RecordBatch(build_batch([RecordInput(b"k", b"v"), RecordInput(None, b"v")]))
    with pytest.raises(BatchRejected) as info:
        validate_batch(batch, topic.config, int(time.time() * 1000), "t-0")
    assert info.value.code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in info.value.record_errors] == [1]
    assert isinstance(info.value, KafkaError)


# -- rewritten batches ----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", list(Codec))
def test_a_rewritten_batch_keeps_its_identity_codec_and_gets_a_fresh_crc(codec: Codec) -> None:
    topic, log = compacted_log()
    data = build_batch([RecordInput(b"a", b"1", (), T0 + 1), RecordInput(b"b", b"1", (), T0 + 2),
                        RecordInput(b"c", b"1", (), T0 + 3)],
                       codec=codec, producer_id=7, producer_epoch=3, base_sequence=10)
    log.append(RecordBatch(data), T0)
    append(log, [(b"a", b"2")], pid=8, epoch=0, seq=0)
    before = infos(log)[0]
    clean_now(log, topic.config, T0)
    after = infos(log)[0]
    assert (after.base_offset, after.last_offset, after.record_count) == (0, 2, 2)
    assert (after.producer_id, after.producer_epoch) == (7, 3)
    assert (after.base_sequence, after.last_sequence) == (10, 12)
    assert after.codec == codec
    assert (after.is_transactional, after.is_control, after.timestamp_type) == (False, False, 0)
    assert after.base_timestamp == T0 + 2 != before.base_timestamp  # the first kept record's
    assert after.max_timestamp == T0 + 3
    assert after.delete_horizon_ms is None
    RecordBatch(after.raw).validate()
    assert after.raw != before.raw
    assert [(r.offset, r.key, r.timestamp) for r in RecordBatch(after.raw).records()] == [
        (1, b"b", T0 + 2), (2, b"c", T0 + 3)]


def test_a_batch_that_keeps_all_its_records_stays_byte_for_byte() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")])
    kept = append(log, [(b"b", b"1"), (b"c", b"1")], codec=Codec.GZIP)
    raw = bytes(kept.data)
    clean_now(log, topic.config, T0)
    assert log.batches[1] == kept and bytes(log.batches[1].data) == raw


def test_log_append_time_batches_keep_their_append_time() -> None:
    topic, log = compacted_log(message_timestamp_type="LogAppendTime")
    data = build_batch([RecordInput(b"a", b"1", (), 5), RecordInput(b"b", b"1", (), 6)])
    log.append(RecordBatch(data), T0 + 77, log_append_time=True)
    append(log, [(b"a", b"2")])
    clean_now(log, topic.config, T0 + 100)
    first = infos(log)[0]
    assert first.timestamp_type == 1 and first.max_timestamp == T0 + 77 and first.record_count == 1
    assert [r.timestamp for r in RecordBatch(first.raw).records()] == [T0 + 77]


def test_indexes_are_rebuilt_and_offsets_in_gaps_read_the_next_batch() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")], timestamp=T0 + 10)  # 0
    append(log, [(b"b", b"1")], timestamp=T0 + 20)  # 1
    append(log, [(b"a", b"2")], timestamp=T0 + 5)  # 2
    append(log, [(b"b", b"2")], timestamp=T0 + 30)  # 3
    clean_now(log, topic.config, T0)
    assert list(log.base_offsets) == [b.base_offset for b in log.batches] == [2, 3]
    assert list(log.max_ts_running) == [T0 + 5, T0 + 30]
    assert log.size_bytes == sum(b.size for b in log.batches)
    chunks, _ = log.read(0, 1 << 20, min_one=True)
    assert [RecordBatch(c).base_offset for c in chunks] == [2, 3]
    chunks, _ = log.read(1, 1 << 20, min_one=True)
    assert [RecordBatch(c).base_offset for c in chunks] == [2, 3]
    assert log.offset_for_timestamp(T0 + 6)[:2] == (3, T0 + 30)  # type: ignore[index]


# -- empty batches ----------------------------------------------------------------------------------


def test_the_last_batch_of_a_producer_stays_as_an_empty_batch_with_its_sequences() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")], pid=7, epoch=0, seq=0)  # 0
    append(log, [(b"b", b"1"), (b"x", b"1")], pid=7, epoch=0, seq=1)  # 1, 2
    append(log, [(b"a", b"2"), (b"b", b"2"), (b"x", b"2")], pid=8, epoch=0, seq=0)  # 3..5
    append(log, [(b"c", b"1")])  # 6, no producer id
    clean_now(log, topic.config, T0)
    got = infos(log)
    assert [(i.base_offset, i.last_offset, i.record_count, i.producer_id) for i in got] == [
        (1, 2, 0, 7), (3, 5, 3, 8), (6, 6, 1, -1)]
    empty = got[0]
    assert (empty.base_sequence, empty.last_sequence, empty.producer_epoch) == (1, 2, 0)
    assert empty.size == RECORD_BATCH_OVERHEAD and empty.codec == Codec.NONE
    assert empty.base_timestamp == -1 and empty.max_timestamp == T0
    RecordBatch(empty.raw).validate()
    # the producer goes on with its next sequence; a retry of its last batch is still a duplicate
    nxt = RecordBatch(build_batch([RecordInput(b"a", b"3")], producer_id=7, producer_epoch=0, base_sequence=3))
    assert log.producers.check(nxt) is None
    retry = RecordBatch(build_batch([RecordInput(b"b", b"1"), RecordInput(b"x", b"1")], producer_id=7,
                                    producer_epoch=0, base_sequence=1))
    dup = log.producers.check(retry)
    assert dup is not None and dup.first_offset == 1
    with pytest.raises(KafkaError) as info:
        log.producers.check(RecordBatch(build_batch([RecordInput(b"a", b"3")], producer_id=7, producer_epoch=0,
                                                    base_sequence=5)))
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # a second pass leaves the empty batch as it is
    kept = log.batches[0]
    clean_now(log, topic.config, T0)
    assert log.batches[0] == kept  # the same header and bytes


def test_producer_state_is_untouched_and_agrees_with_a_rebuild_from_the_cleaned_log() -> None:
    topic, log = compacted_log()
    for i in range(6):
        append(log, [(b"k", b"%d" % i)], pid=7, epoch=1, seq=i)
        append(log, [(b"k", b"x%d" % i)], pid=9, epoch=0, seq=2 * i)
    before = {pid: (e.epoch, e.last_seq, [(b.first_seq, b.last_seq, b.first_offset) for b in e.batches])
              for pid, e in log.producers.entries.items()}
    clean_now(log, topic.config, T0)
    after = {pid: (e.epoch, e.last_seq, [(b.first_seq, b.last_seq, b.first_offset) for b in e.batches])
             for pid, e in log.producers.entries.items()}
    assert after == before
    rebuilt = ProducerStateTable()
    rebuilt.rebuild(log.batches, T0)
    assert {pid: (e.epoch, e.last_seq) for pid, e in rebuilt.entries.items()} == {7: (1, 5), 9: (0, 10)}
    assert log.last_stable_offset == log.log_end_offset


def test_a_batch_without_producer_id_whose_records_all_went_is_deleted() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")])
    append(log, [(b"a", b"2")], pid=3, epoch=0, seq=0)
    append(log, [(b"z", b"1")])
    clean_now(log, topic.config, T0)
    assert [i.base_offset for i in infos(log)] == [1, 2]


def test_the_last_batch_before_the_uncleanable_offset_stays_even_empty() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"a", b"1")])
    append(log, [(b"a", None)])
    clean_now(log, topic.config, T0)
    clean_now(log, topic.config, T0 + 1000)  # the tombstone's horizon has passed
    [info] = infos(log)
    assert (info.base_offset, info.last_offset, info.record_count, info.producer_id) == (1, 1, 0, -1)
    assert log.log_end_offset == 2


# -- tombstones ---------------------------------------------------------------------------------------


def test_tombstones_stay_for_delete_retention_ms_after_the_pass_that_found_them() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"a", b"1"), (b"b", b"1")])  # 0, 1
    append(log, [(b"a", None)], timestamp=T0 - 5)  # 2: a tombstone
    append(log, [(b"c", b"1")])  # 3
    clean_now(log, topic.config, T0)
    tomb = infos(log)[1]
    assert (tomb.base_offset, tomb.record_count) == (2, 1)
    assert tomb.delete_horizon_ms == T0 + 1000 == tomb.base_timestamp  # KIP-534: base timestamp = horizon
    assert [(r.key, r.value, r.timestamp) for r in RecordBatch(tomb.raw).records()] == [(b"a", None, T0 - 5)]
    assert infos(log)[0].delete_horizon_ms is None  # no tombstone kept: no horizon
    RecordBatch(tomb.raw).validate()

    before = log.batches[1]
    clean_now(log, topic.config, T0 + 999)
    assert log.batches[1] == before  # still within the horizon: the batch is not even rewritten

    clean_now(log, topic.config, T0 + 1000)
    assert kv(log) == [(1, b"b", b"1"), (3, b"c", b"1")]
    assert all_valid(log)


def test_a_later_pass_keeps_the_delete_horizon_a_batch_already_carries() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"x", None), (b"y", b"1")])
    append(log, [(b"z", b"1")])
    clean_now(log, topic.config, T0)
    assert infos(log)[0].delete_horizon_ms == T0 + 1000
    append(log, [(b"y", b"2")])
    clean_now(log, topic.config, T0 + 500)
    first = infos(log)[0]
    assert first.record_count == 1 and first.delete_horizon_ms == T0 + 1000
    assert [(r.offset, r.key) for r in RecordBatch(first.raw).records()] == [(0, b"x")]


# -- transactions -------------------------------------------------------------------------------------


def test_aborted_transactions_are_read_from_the_markers() -> None:
    _, log = compacted_log()
    append(log, [(b"a", b"1")], pid=5, epoch=0, seq=0, txn=True)  # 0
    append(log, [(b"b", b"1")], pid=6, epoch=0, seq=0, txn=True)  # 1
    append(log, [(b"a", b"2")], pid=5, epoch=0, seq=1, txn=True)  # 2
    marker(log, ControlType.ABORT, 5, 0)  # 3
    marker(log, ControlType.COMMIT, 6, 0)  # 4
    marker(log, ControlType.ABORT, 6, 0)  # 5: no data
    assert aborted_transactions(log) == [AbortedTxn(5, 0, 3), AbortedTxn(6, 5, 5)]


def test_aborted_records_go_and_the_abort_marker_after_its_delete_horizon() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"k", b"aborted")], pid=5, epoch=0, seq=0, txn=True)  # 0
    marker(log, ControlType.ABORT, 5, 0)  # 1
    append(log, [(b"k2", b"committed")], pid=5, epoch=0, seq=1, txn=True)  # 2
    marker(log, ControlType.COMMIT, 5, 0)  # 3
    append(log, [(b"z", b"1")], pid=6, epoch=0, seq=0)  # 4

    clean_now(log, topic.config, T0)
    # the aborted batch is gone; its marker stays this pass (a batch of the transaction was seen)
    assert [(i.base_offset, i.is_control, i.delete_horizon_ms) for i in infos(log)] == [
        (1, True, None), (2, False, None), (3, True, None), (4, False, None)]
    assert kv(log) == [(2, b"k2", b"committed"), (4, b"z", b"1")]

    clean_now(log, topic.config, T0 + 10)
    # now no data of the transaction is left: the marker gets a delete horizon
    abort = infos(log)[0]
    assert (abort.base_offset, abort.control_type, abort.delete_horizon_ms) == (1, ControlType.ABORT, T0 + 1010)
    assert abort.base_timestamp == T0 + 1010
    RecordBatch(abort.raw).validate()

    clean_now(log, topic.config, T0 + 1009)
    assert infos(log)[0].base_offset == 1
    clean_now(log, topic.config, T0 + 1010)
    assert [(i.base_offset, i.control_type) for i in infos(log)] == [
        (2, None), (3, ControlType.COMMIT), (4, None)]
    assert offsets(log) == [2, 3, 4]
    assert all_valid(log)


def test_a_commit_marker_goes_once_its_transaction_has_no_data_left() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"k", b"1")], pid=5, epoch=0, seq=0, txn=True)  # 0
    marker(log, ControlType.COMMIT, 5, 0)  # 1
    append(log, [(b"k", b"2")], pid=5, epoch=0, seq=1, txn=True)  # 2
    marker(log, ControlType.COMMIT, 5, 0)  # 3
    append(log, [(b"z", b"1")])  # 4
    clean_now(log, topic.config, T0)
    assert [(i.base_offset, i.delete_horizon_ms) for i in infos(log)] == [
        (1, None), (2, None), (3, None), (4, None)]
    clean_now(log, topic.config, T0 + 10)
    assert [(i.base_offset, i.delete_horizon_ms) for i in infos(log)] == [
        (1, T0 + 1010), (2, None), (3, None), (4, None)]
    clean_now(log, topic.config, T0 + 1010)
    assert [i.base_offset for i in infos(log)] == [2, 3, 4]  # the second COMMIT stays: its data is there


def test_a_marker_that_is_its_producers_last_entry_stays_as_an_empty_control_batch() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"k", b"1")], pid=9, epoch=0, seq=0, txn=True)  # 0
    marker(log, ControlType.ABORT, 9, 1)  # 1: written with a bumped epoch
    append(log, [(b"k", b"2")])  # 2
    clean_now(log, topic.config, T0)
    clean_now(log, topic.config, T0 + 10)
    assert infos(log)[0].delete_horizon_ms == T0 + 1010
    clean_now(log, topic.config, T0 + 1010)
    first = infos(log)[0]
    assert (first.base_offset, first.record_count, first.is_control, first.is_transactional) == (1, 0, True, True)
    assert (first.producer_id, first.producer_epoch, first.base_sequence, first.control_type) == (9, 1, -1, None)
    kept = log.batches[0]
    clean_now(log, topic.config, T0 + 5000)
    assert log.batches[0] == kept  # the same header and bytes
    rebuilt = ProducerStateTable()
    rebuilt.rebuild(log.batches, T0)
    assert rebuilt.entries[9].epoch == 1


def test_cleaning_stops_at_the_last_stable_offset() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")], pid=5, epoch=0, seq=0, txn=True)  # 0: an open transaction
    log.open_txn_first_offsets[5] = 0
    append(log, [(b"a", b"2")])  # 1
    stats = clean_now(log, topic.config, T0)
    assert stats.end_offset == 0 and stats.batches_before == 0
    assert kv(log) == [(0, b"a", b"1"), (1, b"a", b"2")]
    marker(log, ControlType.COMMIT, 5, 0)  # 2
    clean_now(log, topic.config, T0)
    # committed now; its record is superseded, but the batch is the producer's last: kept empty
    assert [(i.base_offset, i.record_count) for i in infos(log)] == [(0, 0), (1, 1), (2, 1)]


# -- the cleanable range --------------------------------------------------------------------------------


def test_min_compaction_lag_keeps_recent_segments_out_of_the_pass() -> None:
    topic, log = compacted_log(min_compaction_lag_ms=60_000)
    append(log, [(b"a", b"1")], timestamp=T0)
    log.segments.roll(log.log_end_offset, T0)
    append(log, [(b"a", b"2")], timestamp=T0 + 50_000)
    log.segments.roll(log.log_end_offset, T0)
    stats = clean_now(log, topic.config, T0 + 70_000)
    assert stats.end_offset == 1
    assert kv(log) == [(0, b"a", b"1"), (1, b"a", b"2")]
    stats = clean_now(log, topic.config, T0 + 110_001)
    assert stats.end_offset == 2
    assert kv(log) == [(1, b"a", b"2")]


def test_max_compaction_lag_makes_a_log_due_whatever_its_dirty_ratio() -> None:
    topic, log = compacted_log(max_compaction_lag_ms=60_000, min_cleanable_dirty_ratio=1.0)
    append(log, [(b"a", b"1")], timestamp=T0)
    log.segments.roll(log.log_end_offset, T0)
    assert log_to_clean(log, topic.config, T0).cleanable_ratio == 1.0
    assert not log_to_clean(log, topic.config, T0 + 60_000).should_clean  # ratio 1.0 is not above 1.0
    due = log_to_clean(log, topic.config, T0 + 60_001)
    assert due.need_compaction_now and due.should_clean


def test_dirty_ratio_is_cleanable_over_clean_plus_cleanable_bytes() -> None:
    topic, log = compacted_log()
    for i in range(4):
        append(log, [(b"k%d" % i, b"v" * 30)])
    clean_now(log, topic.config, T0)
    clean_size = log.segments.segments[0].size
    append(log, [(b"k0", b"w" * 30)])
    log.segments.roll(log.log_end_offset, T0)
    dirty_size = log.segments.segments[1].size
    target = log_to_clean(log, topic.config, T0)
    assert (target.first_dirty_offset, target.first_uncleanable_offset) == (4, 5)
    assert (target.clean_bytes, target.cleanable_bytes) == (clean_size, dirty_size)
    assert target.cleanable_ratio == dirty_size / (clean_size + dirty_size)
    topic.config.set("min.cleanable.dirty.ratio", str(target.cleanable_ratio))
    assert not log_to_clean(log, topic.config, T0).should_clean  # must be above the ratio
    topic.config.set("min.cleanable.dirty.ratio", str(target.cleanable_ratio - 0.01))
    assert log_to_clean(log, topic.config, T0).should_clean


def test_cleaned_segments_are_merged_while_they_fit_in_segment_bytes() -> None:
    topic, log = compacted_log()
    append(log, [(b"a", b"1")])
    clean_now(log, topic.config, T0)
    append(log, [(b"b", b"1")])
    clean_now(log, topic.config, T0)
    assert log.segments.bases() == [0, 2]
    assert log.segments.segments[0].size == log.size_bytes

    topic2, log2 = compacted_log()
    append(log2, [(b"a", b"1")])
    clean_now(log2, topic2.config, T0)
    topic2.config.set("segment.bytes", "100")
    append(log2, [(b"b", b"1")])
    clean_now(log2, topic2.config, T0)
    assert log2.segments.bases() == [0, 1, 2]


def test_the_aborted_transaction_index_keeps_only_transactions_whose_marker_stays_for_data() -> None:
    topic, log = compacted_log(delete_retention_ms=1000)
    append(log, [(b"k", b"aborted")], pid=5, epoch=0, seq=0, txn=True)  # 0
    marker(log, ControlType.ABORT, 5, 0)  # 1
    append(log, [(b"k2", b"1")], pid=5, epoch=0, seq=1, txn=True)  # 2
    marker(log, ControlType.COMMIT, 5, 0)  # 3
    append(log, [(b"z", b"1")])  # 4
    index = [AbortedTxn(5, 0, 1), AbortedTxn(7, 9, 12)]  # the second: past what the pass cleans
    first = clean_now(log, topic.config, T0)
    assert first.aborted_retained == [AbortedTxn(5, 0, 1)]
    assert prune_aborted_index(index, first) == index
    second = clean_now(log, topic.config, T0 + 10)
    assert second.aborted_retained == []
    # the marker stays until its horizon, but no batch of the transaction is left: out of the index
    assert prune_aborted_index(index, second) == [AbortedTxn(7, 9, 12)]
