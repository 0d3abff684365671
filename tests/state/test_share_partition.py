"""The share-partition model (state/share/partition.py) and share groups (state/share/group.py), without
sockets: acquisition, acknowledgement, lock timeouts, the delivery limit, the in-flight limit, the start
offset; members, epochs, fencing and the simple assignor."""

from __future__ import annotations

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.share.group import ShareGroup, assign_simple
from mockbroker.state.share.partition import AcquiredRange, RecordState, SharePartition

ACCEPT, RELEASE, REJECT, GAP = 1, 2, 3, 0


def states(sp: SharePartition) -> dict[int, tuple[str, int]]:
    return {o: (r.state.name, r.delivery_count) for o, r in sorted(sp.records.items())}


def test_acquire_hands_out_each_record_to_one_member_until_released() -> None:
    sp = SharePartition(0)
    assert sp.acquire("a", 10, 4, now_ms=0) == [AcquiredRange(0, 3, 1)]
    assert sp.acquire("b", 10, 100, now_ms=0) == [AcquiredRange(4, 9, 1)]
    assert sp.acquire("c", 10, 100, now_ms=0) == []
    sp.acknowledge("a", 1, 2, [RELEASE], now_ms=0)
    assert sp.acquire("c", 10, 100, now_ms=0) == [AcquiredRange(1, 2, 2)]


def test_accept_moves_the_start_offset_past_acknowledged_records() -> None:
    sp = SharePartition(5)
    sp.acquire("a", 9, 10, now_ms=0)
    sp.acknowledge("a", 6, 7, [ACCEPT], now_ms=0)
    assert sp.start_offset == 5
    sp.acknowledge("a", 5, 5, [ACCEPT], now_ms=0)
    assert (sp.start_offset, sp.end_offset) == (8, 9)
    assert states(sp) == {8: ("ACQUIRED", 1)}


def test_per_offset_types_and_gaps() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 4, 10, now_ms=0)
    sp.acknowledge("a", 0, 3, [ACCEPT, GAP, REJECT, RELEASE], now_ms=0)
    assert sp.start_offset == 3
    assert states(sp) == {3: ("AVAILABLE", 1)}


def test_acknowledging_a_record_another_member_holds_is_invalid_record_state() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 2, 10, now_ms=0)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("b", 0, 1, [ACCEPT], now_ms=0)
    assert e.value.code == ErrorCode.INVALID_RECORD_STATE
    assert states(sp) == {0: ("ACQUIRED", 1), 1: ("ACQUIRED", 1)}
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("a", 0, 1, [ACCEPT, ACCEPT, ACCEPT], now_ms=0)
    assert e.value.code == ErrorCode.INVALID_REQUEST


def test_lock_timeout_makes_records_available_again_with_the_delivery_count_up() -> None:
    sp = SharePartition(0, lock_duration_ms=1000)
    sp.acquire("a", 3, 10, now_ms=0)
    assert sp.next_lock_expiry() == 1000
    assert sp.expire(999) == 0
    assert sp.expire(1000) == 3
    assert sp.acquire("b", 3, 10, now_ms=1000) == [AcquiredRange(0, 2, 2)]
    with pytest.raises(KafkaError):
        sp.acknowledge("a", 0, 0, [ACCEPT], now_ms=1000)


def test_delivery_limit_archives_on_release_and_on_timeout() -> None:
    sp = SharePartition(0, lock_duration_ms=100, delivery_limit=2)
    sp.acquire("a", 2, 10, now_ms=0)
    sp.acknowledge("a", 0, 1, [RELEASE], now_ms=0)
    assert sp.acquire("a", 2, 10, now_ms=0) == [AcquiredRange(0, 1, 2)]
    sp.acknowledge("a", 0, 0, [RELEASE], now_ms=0)  # second delivery released: the limit is reached
    sp.expire(100)  # offset 1's second lock ran out: archived too
    assert sp.acquire("a", 2, 10, now_ms=100) == []
    assert (sp.start_offset, sp.records) == (2, {})


def test_reject_archives_at_once() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 1, 10, now_ms=0)
    sp.acknowledge("a", 0, 0, [REJECT], now_ms=0)
    assert sp.acquire("a", 1, 10, now_ms=0) == [] and sp.start_offset == 1


def test_in_flight_limit_stops_acquisition_until_the_start_moves() -> None:
    sp = SharePartition(0, max_in_flight=3)
    assert sp.acquire("a", 10, 100, now_ms=0) == [AcquiredRange(0, 2, 1)]
    assert sp.acquire("b", 10, 100, now_ms=0) == []
    sp.acknowledge("a", 0, 0, [ACCEPT], now_ms=0)
    assert sp.acquire("b", 10, 100, now_ms=0) == [AcquiredRange(3, 3, 1)]


def test_release_member_hands_back_only_its_records() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 2, 1, now_ms=0)
    sp.acquire("b", 2, 1, now_ms=0)
    assert sp.release_member("a") == 1
    assert sp.records[0].state == RecordState.AVAILABLE and sp.records[1].member_id == "b"


def test_ranges_split_where_delivery_counts_differ() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 2, 10, now_ms=0)
    sp.acknowledge("a", 0, 0, [RELEASE], now_ms=0)
    sp.acknowledge("a", 1, 1, [ACCEPT], now_ms=0)
    assert sp.acquire("a", 4, 10, now_ms=0) == [AcquiredRange(0, 0, 2), AcquiredRange(2, 3, 1)]


def test_skip_to_drops_records_below_the_log_start() -> None:
    sp = SharePartition(0)
    sp.acquire("a", 3, 10, now_ms=0)
    sp.skip_to(2)
    assert (sp.start_offset, list(sp.records)) == (2, [2])


# -- groups ----------------------------------------------------------------------------------------

def test_members_join_get_partitions_and_move_to_the_group_epoch() -> None:
    g = ShareGroup("g")
    a = g.heartbeat("a", 0, ["t"], {"t": 4}, now_ms=0)
    assert a is not None and (a.member_epoch, a.assignment) == (1, {"t": [0, 1, 2, 3]})
    b = g.heartbeat("b", 0, ["t"], {"t": 4}, now_ms=0)
    assert b is not None and (b.member_epoch, b.assignment) == (2, {"t": [1, 3]})
    a = g.heartbeat("a", 1, None, {"t": 4}, now_ms=0)
    assert a is not None and (a.member_epoch, a.assignment) == (2, {"t": [0, 2]})


def test_more_members_than_partitions_share_partitions() -> None:
    assert sorted(assign_simple(["a", "b", "c"], 2)) == [(0, "a"), (0, "c"), (1, "b")]


def test_fencing_and_unknown_members() -> None:
    g = ShareGroup("g")
    g.heartbeat("a", 0, ["t"], {"t": 1}, now_ms=0)
    for epoch, code in ((5, ErrorCode.FENCED_MEMBER_EPOCH), (3, ErrorCode.FENCED_MEMBER_EPOCH)):
        with pytest.raises(KafkaError) as e:
            g.heartbeat("a", epoch, None, {"t": 1}, now_ms=0)
        assert e.value.code == code
    with pytest.raises(KafkaError) as e:
        g.heartbeat("x", 1, None, {"t": 1}, now_ms=0)
    assert e.value.code == ErrorCode.UNKNOWN_MEMBER_ID
    assert g.heartbeat("a", -1, None, {"t": 1}, now_ms=0) is None and g.state == "Empty"


def test_silent_members_expire() -> None:
    g = ShareGroup("g")
    g.heartbeat("a", 0, ["t"], {"t": 1}, now_ms=0)
    g.heartbeat("b", 0, ["t"], {"t": 1}, now_ms=500)
    assert g.expire_members(1000, 1000, {"t": 1}) == ["a"]
    assert list(g.members) == ["b"]


def test_skipped_offsets_are_archived_never_acquired_and_the_start_moves_past_them() -> None:
    sp = SharePartition(0)
    ranges = sp.acquire("a", 5, 10, 0, skip=frozenset({1, 2}))
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in ranges] == [(0, 0, 1), (3, 4, 1)]
    assert [(r["offset"], r["state"], r["delivery_count"]) for r in sp.describe()["records"]] == [
        (0, "ACQUIRED", 1), (1, "ARCHIVED", 0), (2, "ARCHIVED", 0), (3, "ACQUIRED", 1), (4, "ACQUIRED", 1)]
    sp.acknowledge("a", 0, 0, [1], 0)
    assert sp.start_offset == 3
