"""Retention deletes whole segments from the front of a log (Kafka's deleteOldSegments)."""

from __future__ import annotations

from mockbroker.state.log.retention import delete_old_segments
from tests.state.loghelpers import DAY_MS, T0, append, kv, topic_log


def three_segments(settings: dict[str, str], stamps: tuple[int, int, int] = (T0, T0, T0)) -> tuple:
    """A log with segments [0, 2), [2, 4) and the active [4, 6), records stamped per segment."""
    topic, log = topic_log(settings)
    for seg, ts in enumerate(stamps):
        for i in range(2):
            append(log, [(b"k%d" % (seg * 2 + i), b"v")], T0, timestamp=ts)
        if seg < 2:
            log.segments.roll(log.log_end_offset, T0)
    assert log.segments.bases() == [0, 2, 4]
    return topic, log


def test_segments_past_retention_ms_by_their_largest_timestamp_are_deleted() -> None:
    topic, log = three_segments({"retention.ms": "1000"}, (T0, T0 + 500, T0 + 2000))
    assert delete_old_segments(log, topic.config, T0 + 1000) == 0  # 1000 is not past 1000
    assert delete_old_segments(log, topic.config, T0 + 1001) == 1
    assert (log.log_start_offset, log.segments.bases()) == (2, [2, 4])
    assert [o for o, _, _ in kv(log)] == [2, 3, 4, 5]
    assert delete_old_segments(log, topic.config, T0 + 1501) == 1
    assert (log.log_start_offset, log.segments.bases()) == (4, [4])


def test_a_newer_segment_stops_deletion_of_the_ones_after_it() -> None:
    topic, log = three_segments({"retention.ms": "1000"}, (T0 + 5000, T0, T0))
    assert delete_old_segments(log, topic.config, T0 + 3000) == 0
    assert log.log_start_offset == 0


def test_when_every_segment_aged_out_the_log_rolls_and_is_empty_at_its_end_offset() -> None:
    topic, log = three_segments({"retention.ms": "1000"})
    assert delete_old_segments(log, topic.config, T0 + DAY_MS) == 3
    assert (log.log_start_offset, log.log_end_offset, log.batches) == (6, 6, [])
    assert log.segments.bases() == [6]
    assert delete_old_segments(log, topic.config, T0 + 2 * DAY_MS) == 0  # an empty active segment stays
    append(log, [(b"n", b"v")], T0 + 2 * DAY_MS)
    assert [o for o, _, _ in kv(log)] == [6]


def test_retention_bytes_deletes_oldest_whole_segments_while_the_excess_allows() -> None:
    topic, log = three_segments({})
    sizes = [s.size for s in log.segments.segments]
    total = sum(sizes)
    topic.config.set("retention.bytes", str(total - sizes[0]))  # exactly one segment too much
    assert delete_old_segments(log, topic.config, T0) == 1
    assert log.log_start_offset == 2
    topic.config.set("retention.bytes", str(sizes[2] + 1))  # the excess is less than the oldest segment
    assert delete_old_segments(log, topic.config, T0) == 0
    topic.config.set("retention.bytes", str(sizes[2] - 1))  # one segment and a byte too much: one goes
    assert delete_old_segments(log, topic.config, T0) == 1
    assert log.log_start_offset == 4


def test_retention_is_off_with_minus_one_and_for_compact_only_topics() -> None:
    topic, log = three_segments({"retention.ms": "-1", "retention.bytes": "-1"})
    assert delete_old_segments(log, topic.config, T0 + 100 * DAY_MS) == 0
    topic2, log2 = three_segments({"cleanup.policy": "compact", "retention.ms": "1", "retention.bytes": "0"})
    assert delete_old_segments(log2, topic2.config, T0 + DAY_MS) == 0
    topic3, log3 = three_segments({"cleanup.policy": "compact,delete", "retention.ms": "1"})
    assert delete_old_segments(log3, topic3.config, T0 + DAY_MS) == 3


def test_segments_below_the_log_start_offset_go_at_the_next_check() -> None:
    topic, log = three_segments({"retention.ms": "-1"})
    log.truncate_before(3, T0)  # DeleteRecords
    assert log.segments.bases() == [0, 2, 4]
    assert delete_old_segments(log, topic.config, T0) == 1
    assert (log.segments.bases(), log.log_start_offset) == ([2, 4], 3)


def test_producer_state_follows_the_remaining_batches() -> None:
    topic, log = topic_log({"retention.ms": "1000"})
    append(log, [(b"a", b"1")], T0, pid=4, epoch=0, seq=0)
    log.segments.roll(log.log_end_offset, T0)
    append(log, [(b"b", b"1")], T0 + 5000, timestamp=T0 + 5000, pid=5, epoch=0, seq=0)
    delete_old_segments(log, topic.config, T0 + 2000)
    assert sorted(log.producers.entries) == [5]
