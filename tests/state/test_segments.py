"""Segments of the in-memory log roll as Kafka's do: by segment.bytes and segment.ms, on append."""

from __future__ import annotations

from mockbroker.state.log.segments import describe_segments
from tests.state.loghelpers import DAY_MS, T0, append, compacted_log, topic_log


def bases(log: object) -> list[int]:
    return log.segments.bases()  # type: ignore[attr-defined]


def test_a_new_log_has_one_empty_active_segment_at_offset_zero() -> None:
    _, log = topic_log({})
    assert bases(log) == [0]
    assert log.segments.active.size == 0 and not log.segments.active.has_batches


def test_segment_rolls_when_the_next_batch_would_pass_segment_bytes() -> None:
    _, log = compacted_log(segment_bytes=300)
    sizes = [append(log, [(b"k", b"v" * 20)]).size for _ in range(8)]
    per = sizes[0]
    assert len(set(sizes)) == 1
    fits = 300 // per  # batches that fit in one segment
    assert bases(log) == list(range(0, 8, fits))
    for seg in log.segments.segments[:-1]:
        assert seg.size == fits * per <= 300


def test_a_batch_larger_than_segment_bytes_gets_a_segment_of_its_own() -> None:
    _, log = compacted_log(segment_bytes=100)
    append(log, [(b"k", b"small")])
    append(log, [(b"k", b"x" * 500)])
    append(log, [(b"k", b"small")])
    assert bases(log) == [0, 1, 2]


def test_segment_rolls_by_record_timestamps_past_segment_ms() -> None:
    _, log = compacted_log(segment_ms=60_000)
    append(log, [(b"a", b"1")], T0, timestamp=T0)
    append(log, [(b"a", b"2")], T0, timestamp=T0 + 60_000)  # exactly segment.ms: no roll
    assert bases(log) == [0]
    append(log, [(b"a", b"3")], T0, timestamp=T0 + 60_001)
    assert bases(log) == [0, 2]


def test_segment_rolls_by_the_broker_clock_past_segment_ms() -> None:
    _, log = compacted_log(segment_ms=60_000)
    append(log, [(b"a", b"1")], T0, timestamp=T0)
    # the client's timestamps do not move, the broker clock does
    append(log, [(b"a", b"2")], T0 + 60_001, timestamp=T0)
    assert bases(log) == [0, 1]


def test_only_a_non_empty_segment_rolls_by_time() -> None:
    _, log = compacted_log(segment_ms=1)
    append(log, [(b"a", b"1")], T0)
    assert bases(log) == [0]  # the first batch lands in the empty active segment, whatever the time


def test_segment_config_changes_apply_to_the_next_append() -> None:
    topic, log = compacted_log()
    for _ in range(3):
        append(log, [(b"k", b"v" * 50)])
    assert bases(log) == [0]
    topic.config.set("segment.bytes", "1")  # AlterConfigs replaces the values of the same TopicConfig
    append(log, [(b"k", b"v")])
    assert bases(log) == [0, 3]


def test_roll_starts_a_segment_at_the_log_end_offset_once() -> None:
    _, log = compacted_log()
    append(log, [(b"k", b"v")])
    append(log, [(b"k", b"v")])
    log.segments.roll(log.log_end_offset, T0)
    log.segments.roll(log.log_end_offset, T0)  # the active segment is empty: nothing more
    assert bases(log) == [0, 2]
    append(log, [(b"k", b"v")])
    assert bases(log) == [0, 2]
    assert [s["batches"] for s in describe_segments(log)] == [2, 1]


def test_segment_bookkeeping_sizes_timestamps_and_delete_records() -> None:
    _, log = topic_log({"segment.bytes": "1000"})
    b1 = append(log, [(b"k", b"v" * 40)], T0, timestamp=T0 + 5)
    b2 = append(log, [(b"k", b"v" * 40)], T0 + 10, timestamp=T0 + 3)
    [seg] = log.segments.segments
    assert seg.size == b1.size + b2.size == log.size_bytes
    assert seg.first_batch_timestamp == T0 + 5
    assert seg.largest_timestamp == T0 + 5
    assert seg.created_ms == T0 and seg.last_modified_ms == T0 + 10
    log.truncate_before(1, T0)
    # as Kafka's segment file, a segment does not shrink when the log start offset moves into it
    assert log.segments.size_bytes() == b1.size + b2.size
    assert log.size_bytes == b2.size


def test_largest_timestamp_falls_back_to_the_last_append_time() -> None:
    _, log = topic_log({})
    append(log, [(b"k", b"v")], T0 + DAY_MS, timestamp=-1)
    seg = log.segments.active
    assert seg.max_timestamp == -1
    assert seg.largest_timestamp == T0 + DAY_MS
