"""Snapshots and share groups (KIP-932; mockbroker/snapshots.py, docs/snapshots.md): a restore brings back every
share group, member, share partition (start offset, in-flight records with their state, delivery count, holder
and lock expiry), share session, group config and the share coordinator's persisted state, field by field; reset()
clears them; restored locks and members run out on the broker clock; a member carries on after a restore."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.server import MockBroker
from mockbroker.snapshots import Snapshot, restore, take
from mockbroker.state.configs import OP_SET
from tests.handlers.conftest import connect
from tests.handlers.test_share_groups import acquired, heartbeat, produce_values, share_fetch
from tests.rawclient import RawClient
from tests.state_walk import differences, state_of

ACK, ACCEPT, RELEASE, REJECT = 79, 1, 2, 3
NONE, UNKNOWN_MEMBER_ID, INVALID_SESSION_EPOCH = 0, 25, 123
LOCK_MS = 30_000


@pytest.fixture
def broker() -> Iterator[MockBroker]:
    # A frozen clock: locks and sessions run out only when the test moves it.
    with MockBroker(clock=Clock(frozen=True), config={"share.auto.offset.reset": "earliest"}).run_in_thread() as b:
        b.create_topic("q", 2)
        yield b


@pytest.fixture
def client(broker: MockBroker) -> Iterator[RawClient]:
    with connect(broker) as c:
        yield c


def _topic_id(broker: MockBroker) -> uuid.UUID:
    return broker._call(lambda: broker.cluster.topic("q").topic_id)


def _ack(client: RawClient, topic_id: uuid.UUID, member: str, epoch: int,
         batches: list[tuple[int, int, list[int]]]) -> int:
    """ShareAcknowledge of partition 0's batches (first, last, types); the partition's error code."""
    r = client.request(ACK, 1, {"group_id": "sg", "member_id": member, "share_session_epoch": epoch, "topics": [
        {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": la, "acknowledge_types": t} for f, la, t in batches]}]}]})
    assert r.error_code == NONE
    [code] = [p.error_code for t in r.responses for p in t.partitions]
    return int(code)


def _set_group_config(broker: MockBroker, group: str, name: str, value: str) -> None:
    broker._call(lambda: broker.node.share_coordinator.group_configs.alter(group, [(name, OP_SET, value)]))


def _snapshot_and_walk(broker: MockBroker) -> tuple[Snapshot, dict[str, Any]]:
    return broker._call(lambda: (take(broker), state_of(broker)))


def _restore_and_walk(broker: MockBroker, snap: Snapshot) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        restore(broker, snap)
        return state_of(broker)
    return broker._call(run)


def _records(broker: MockBroker, group: str = "sg", partition: str = "q-0") -> list[tuple[int, str, int, str | None]]:
    """(offset, state, delivery count, holder) of every in-flight record of a share partition."""
    sp: Any = broker.share_groups()[group]["partitions"][partition]
    return [(r["offset"], r["state"], r["delivery_count"], r["member_id"]) for r in sp["records"]]


def _share_state(broker: MockBroker) -> dict[str, Any]:
    """The share coordinator's rooms as plain values, read without expiring anything (describe() would)."""
    return broker._call(lambda: state_of(broker)["share"])


def test_restore_gives_back_share_groups_partitions_sessions_and_configs_field_by_field(
        broker: MockBroker, client: RawClient) -> None:
    tid = _topic_id(broker)
    produce_values(client, 10)
    _set_group_config(broker, "sg", "share.delivery.count.limit", "3")
    assert heartbeat(client, "a", 0, ["q"]).error_code == NONE
    assert heartbeat(client, "b", 0, ["q"]).error_code == NONE  # a: q-0, b: q-1
    assert heartbeat(client, "a", 1).error_code == NONE
    first = share_fetch(client, tid, "a", 0, max_records=6)
    assert acquired(first) == [(0, 0, 5, 1)]
    assert _ack(client, tid, "a", 1, [(0, 1, [ACCEPT]), (2, 2, [REJECT])]) == NONE
    broker.clock.advance(2)
    snap, before = _snapshot_and_walk(broker)
    assert before["share"] is not None
    at_snapshot = broker.share_groups()
    assert _records(broker) == [(3, "ACQUIRED", 1, "a"), (4, "ACQUIRED", 1, "a"), (5, "ACQUIRED", 1, "a")]

    # Change every part of the share state: acks, releases, a lock running out, members, sessions, configs.
    _ack(client, tid, "a", 2, [(3, 4, [ACCEPT]), (5, 5, [RELEASE])])
    assert heartbeat(client, "c", 0, ["q"]).error_code == NONE
    assert heartbeat(client, "z", 0, ["q"], group="other").error_code == NONE
    _set_group_config(broker, "sg", "share.delivery.count.limit", "7")
    _set_group_config(broker, "other", "share.auto.offset.reset", "latest")
    assert acquired(share_fetch(client, tid, "b", 0, partitions=(1,))) == []
    broker.clock.advance(LOCK_MS / 1000 + 5)
    assert heartbeat(client, "b", -1).error_code == NONE
    assert broker.share_groups() != at_snapshot

    after = _restore_and_walk(broker, snap)
    # Field by field as at the snapshot, but for one field: a restored share session belongs to no live connection
    # (the restore closes them all; docs/snapshots.md), so each session's connection id is cleared, and only that.
    diffs = differences(before, after)
    restored = broker._call(lambda: dict(broker.node.share_coordinator.sessions))
    assert restored and len(diffs) == len(restored)
    assert all(re.fullmatch(r"\.share\.sessions\[\d+\]\[1\]\[1\]\.connection_id: \d+ != None", d) for d in diffs), diffs
    assert all(s.connection_id is None for s in restored.values())
    assert broker.share_groups() == at_snapshot
    assert _records(broker) == [(3, "ACQUIRED", 1, "a"), (4, "ACQUIRED", 1, "a"), (5, "ACQUIRED", 1, "a")]
    groups = broker.share_groups()
    assert sorted(groups) == ["sg"]
    assert sorted(groups["sg"]["members"]) == ["a", "b"]
    assert groups["sg"]["partitions"]["q-0"]["start_offset"] == 3
    configs = broker._call(lambda: broker.node.share_coordinator.group_configs.configs)
    assert configs == {"sg": {"share.delivery.count.limit": "3"}}
    # What the node wired in reads the restored state: the restored transaction coordinator's aborted index.
    share = broker._call(lambda: broker.node.share_coordinator)
    assert broker._call(lambda: share.aborted_entries.__self__ is broker.node.txn_coordinator.aborted)
    assert broker._call(lambda: share.store.append.__self__ is broker.node.coordinator_log)


def test_a_snapshot_can_be_restored_again_after_more_share_traffic(broker: MockBroker, client: RawClient) -> None:
    tid = _topic_id(broker)
    produce_values(client, 4)
    heartbeat(client, "a", 0, ["q"])
    snap, before = _snapshot_and_walk(broker)
    for round_ in range(2):
        with connect(broker) as again:  # a restore closes every connection
            got = share_fetch(again, tid, "a", 0)
            assert acquired(got) == [(0, 0, 3, 1)]  # each time as from the snapshot: nothing delivered before
            _ack(again, tid, "a", 1, [(0, 3, [ACCEPT])])
        assert differences(before, _restore_and_walk(broker, snap)) == [], round_


def test_reset_clears_share_groups_partitions_sessions_and_group_configs(broker: MockBroker, client: RawClient) -> None:
    tid = _topic_id(broker)
    produce_values(client, 3)
    _set_group_config(broker, "sg", "share.auto.offset.reset", "latest")
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, tid, "a", 0)) == []  # latest: nothing yet
    produce_values(client, 2)
    assert acquired(share_fetch(client, tid, "a", 1)) == [(0, 3, 4, 1)]
    share = broker._call(lambda: broker.node.share_coordinator)

    broker.reset()
    assert broker.share_groups() == {}
    state = _share_state(broker)
    with MockBroker(config={"share.auto.offset.reset": "earliest"}).run_in_thread() as other:
        fresh = other._call(lambda: (other.node.share_coordinator, state_of(other)["share"])[1])
    # As a share coordinator just made (the node's wiring included); the state topic's jobs are armed from each
    # broker's own clock, so only that they are armed is compared.
    assert [d for d in differences(fresh, state) if not d.startswith(".state_jobs")] == []
    jobs = broker._call(lambda: broker.node.share_coordinator.state_jobs)
    assert jobs.next_prune_ms is not None and jobs.next_cold_snapshot_ms is not None
    assert broker._call(lambda: broker.node.share_coordinator) is share  # emptied in place: the node's hooks hold it
    # read_committed share groups read the restored transaction coordinator's aborted index, not the one replaced
    assert broker._call(lambda: share.aborted_entries.__self__ is broker.node.txn_coordinator.aborted)
    assert broker._call(lambda: share.store.append.__self__ is broker.node.coordinator_log)  # the node's one log

    # A share group starts again from nothing: the broker-wide earliest, a new member epoch, a new session.
    broker.create_topic("q", 2)
    tid = _topic_id(broker)
    with connect(broker) as again:
        produce_values(again, 2)
        assert heartbeat(again, "a", 0, ["q"]).member_epoch == 1
        assert acquired(share_fetch(again, tid, "a", 0)) == [(0, 0, 1, 1)]
        assert share_fetch(again, tid, "a", 2).error_code == INVALID_SESSION_EPOCH


def test_restored_locks_and_members_run_out_on_the_broker_clock(
        broker: MockBroker, client: RawClient) -> None:
    tid = _topic_id(broker)
    produce_values(client, 3)
    heartbeat(client, "a", 0, ["q"])
    heartbeat(client, "b", 0, ["q"])  # a: q-0
    heartbeat(client, "a", 1)
    assert acquired(share_fetch(client, tid, "a", 0)) == [(0, 0, 2, 1)]
    snap = broker.snapshot()
    _ack(client, tid, "a", 1, [(0, 2, [ACCEPT])])
    broker.restore(snap)
    # The restore closed the connection that opened a's session; once the broker has handled that close, the
    # restored records are still a's: a restored session belongs to no connection (docs/snapshots.md).
    assert client.is_closed_by_peer()
    deadline = time.monotonic() + 20
    while broker._call(lambda: len(broker._connections)) > 0:
        assert time.monotonic() < deadline, "the restore's closes were never handled"
        time.sleep(0.02)
    assert _records(broker) == [(0, "ACQUIRED", 1, "a"), (1, "ACQUIRED", 1, "a"), (2, "ACQUIRED", 1, "a")]

    # The lock restored as it was: the records still held by a until the lock duration has passed.
    broker.clock.advance(LOCK_MS / 1000 - 1)
    assert [s for _o, s, _c, _m in _records(broker)] == ["ACQUIRED"] * 3
    broker.clock.advance(1)
    assert _records(broker) == [(0, "AVAILABLE", 1, None), (1, "AVAILABLE", 1, None), (2, "AVAILABLE", 1, None)]

    # Members restored as in the snapshot time out by their session on the broker clock (45 s by default).
    broker.clock.advance(45 - LOCK_MS / 1000)
    assert broker.share_groups()["sg"]["members"] == {}


def test_a_member_carries_on_after_a_restore_with_what_the_snapshot_says(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    with connect(broker) as client:
        produce_values(client, 6)
        heartbeat(client, "a", 0, ["q"])
        assert acquired(share_fetch(client, tid, "a", 0, max_records=2)) == [(0, 0, 1, 1)]
        _ack(client, tid, "a", 1, [(0, 1, [ACCEPT])])
        snap = broker.snapshot()  # session epoch 2; offsets 0-1 acknowledged
        share_fetch(client, tid, "a", 2, max_records=4)
        _ack(client, tid, "a", 3, [(2, 5, [ACCEPT])])
        heartbeat(client, "late", 0, ["q"])  # joined after the snapshot
        broker.restore(snap)
        assert client.is_closed_by_peer()
    with connect(broker) as client:
        assert heartbeat(client, "a", 1).error_code == NONE  # the member and its epoch are the snapshot's
        assert heartbeat(client, "late", 1).error_code == UNKNOWN_MEMBER_ID
        assert share_fetch(client, tid, "a", 4).error_code == INVALID_SESSION_EPOCH  # the session is the snapshot's
        # The records acknowledged after the snapshot come again, delivered once more as the snapshot says.
        assert acquired(share_fetch(client, tid, "a", 2)) == [(0, 2, 5, 1)]
        _ack(client, tid, "a", 3, [(2, 5, [ACCEPT])])
        assert broker.share_groups()["sg"]["partitions"]["q-0"]["start_offset"] == 6


def test_restored_locks_end_in_real_time_and_wake_a_waiting_share_fetch() -> None:
    # A clock that moves with the wall clock and locks of 5 s: nothing but the wake-ups the restore sets for the
    # restored locks ends them before the fetch's long poll (60 s) does; the client would give up after 20 s.
    config = {"share.auto.offset.reset": "earliest", "group.share.min.record.lock.duration.ms": 1000,
              "group.share.record.lock.duration.ms": 5000}
    with MockBroker(config=config).run_in_thread() as broker:
        broker.create_topic("q", 1)
        tid = _topic_id(broker)
        with connect(broker) as client:
            produce_values(client, 2)
            heartbeat(client, "a", 0, ["q"])
            assert acquired(share_fetch(client, tid, "a", 0, max_records=1)) == [(0, 0, 0, 1)]
            broker.clock.advance(2)
            assert acquired(share_fetch(client, tid, "a", 1, max_records=1)) == [(0, 1, 1, 1)]  # a later lock
            snap = broker.snapshot()
            broker.clock.advance(10)  # the locks' own wake-ups come and go
            assert _records(broker) == [(0, "AVAILABLE", 1, None), (1, "AVAILABLE", 1, None)]
            broker.restore(snap)
        assert [s for _o, s, _c, _m in _records(broker)] == ["ACQUIRED"] * 2
        with RawClient(broker.host, broker.port, timeout=20.0) as client:
            # a's restored session, its next epochs: each lock ends at its own time, each wakes the fetch
            assert acquired(share_fetch(client, tid, "a", 2, max_wait_ms=60_000)) == [(0, 0, 0, 2)]
            assert acquired(share_fetch(client, tid, "a", 3, max_wait_ms=60_000)) == [(0, 1, 1, 2)]


def _wait_until(what: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a state (a generous bound; no timing asserted)."""
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.02)


def test_a_waiting_share_fetch_is_left_out_of_a_snapshot_and_goes_with_its_connection_on_restore(
        broker: MockBroker, client: RawClient) -> None:
    tid = _topic_id(broker)
    heartbeat(client, "a", 0, ["q"])
    listeners = broker._call(lambda: broker.node.share_coordinator.listeners)
    answers: list[Any] = []

    def wait_for_records(c: RawClient, epoch: int) -> None:
        try:
            answers.append(acquired(share_fetch(c, tid, "a", epoch, max_wait_ms=60_000)))
        except ConnectionError as e:
            answers.append(e)

    with RawClient(broker.host, broker.port, timeout=30.0) as waiting:
        fetch = threading.Thread(target=wait_for_records, args=(waiting, 0))
        fetch.start()
        _wait_until(lambda: bool(broker._call(lambda: list(listeners))))
        snap = broker.snapshot()  # taken while the fetch waits: its wake-up is no state
        produce_values(client, 2)
        fetch.join(30)
        assert answers == [[(0, 0, 1, 1)]]  # the wake-up still works after the snapshot

        fetch = threading.Thread(target=wait_for_records, args=(waiting, 1))
        fetch.start()
        _wait_until(lambda: bool(broker._call(lambda: list(listeners))))
        broker.restore(snap)
        fetch.join(30)
    assert isinstance(answers[1], ConnectionError)  # the waiting fetch went with its connection
    assert broker._call(lambda: broker.node.share_coordinator.listeners) is listeners
    _wait_until(lambda: not broker._call(lambda: list(listeners)))
    # As at the snapshot: the share partition the first fetch made, nothing acquired yet.
    assert broker.share_groups()["sg"]["partitions"] == {"q-0": {"start_offset": 0, "end_offset": 0, "records": []}}
