"""The coordinators load their state from __consumer_offsets / __transaction_state when a broker starts on
a data dir that holds them (state/coordinators/load.py): committed offsets, classic groups and
transactional ids come back as Kafka's coordinators load them. Brokers without sockets, on a frozen clock
(timers run with `advance`)."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import TXN_TOPIC, partition_of
from tests.storage.helpers import T0, open_broker, part, produce


def start(data_dir: Path, **config: Any) -> MockBroker:
    return open_broker(data_dir, clock=Clock(start_ms=T0, frozen=True), config=config or None)


def restart(data_dir: Path, old: MockBroker, **config: Any) -> MockBroker:
    assert old.storage is not None
    old.storage.close()
    return start(data_dir, **config)


def advance(broker: MockBroker, ms: int) -> None:
    broker.clock.advance(ms / 1000)
    broker.scheduler.run_due()


def commit(broker: MockBroker, group: str, topic: str, partition: int, offset: int, *, member: str = "",
           generation: int = -1, retention_ms: int = -1) -> None:
    gc = broker.node.group_coordinator
    g = gc.validate_offset_commit(group, generation, member, None, 8)
    assert gc.commit_offset(g, member, topic, partition, offset, 3, f"m{offset}", retention_ms) == ErrorCode.NONE


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def stable_group(broker: MockBroker, group: str, topic: str, session_ms: int = 10_000) -> tuple[str, int]:
    """A one-member classic group through JoinGroup v3 and SyncGroup: (member id, generation)."""
    gc = broker.node.group_coordinator
    joined: list[Msg] = []
    gc.join_group(group_id=group, member_id="", group_instance_id=None, session_timeout_ms=session_ms,
                  rebalance_timeout_ms=30_000, protocol_type="consumer", protocols=[("range", subscription(topic))],
                  client_id="c1", client_host="/127.0.0.1", api_version=3, respond=joined.append)
    advance(broker, 6000)
    [join] = joined
    synced: list[Msg] = []
    assignment = struct.pack(">hi", 0, 1) + struct.pack(">h", len(topic)) + topic.encode() + struct.pack(">ii", 1, 0) \
        + struct.pack(">i", -1)
    gc.sync_group(group_id=group, generation_id=join.generation_id, member_id=join.member_id, group_instance_id=None,
                  protocol_type="consumer", protocol_name="range", assignments={join.member_id: assignment},
                  respond=synced.append)
    assert synced[0].error_code == ErrorCode.NONE
    return str(join.member_id), int(join.generation_id)


# -- offsets -------------------------------------------------------------------------------------


def test_committed_offsets_come_back_with_their_times_and_deleted_ones_stay_gone(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t", 3)
    commit(b1, "g", "t", 0, 5)
    commit(b1, "g", "t", 1, 7, retention_ms=3_600_000)
    advance(b1, 1000)
    commit(b1, "g", "t", 0, 6)  # the last commit wins
    commit(b1, "other", "t", 2, 9)
    commit(b1, "gone", "t", 0, 1)
    assert b1.node.group_coordinator.delete_groups(["gone"]) == [("gone", ErrorCode.NONE)]
    commit(b1, "g", "t", 2, 3)
    assert b1.node.group_coordinator.delete_offsets("g", [("t", 2)]) == [ErrorCode.NONE]
    before = {g: b1.committed(g) for g in ("g", "other", "gone")}
    values = b1.node.group_coordinator.fetch_all_offsets("g")
    b2 = restart(tmp_path, b1)
    assert {g: b2.committed(g) for g in ("g", "other", "gone")} == before
    assert before["g"] == {("t", 0): 6, ("t", 1): 7} and before["gone"] == {}
    loaded = b2.node.group_coordinator.fetch_all_offsets("g")
    assert loaded[("t", 0)] == values[("t", 0)]  # offset, leader epoch, metadata, commit time, topic id
    # an offset with an expiry time is OffsetCommitValue v1, which has no leader epoch (Kafka loses it too)
    assert loaded[("t", 1)] == dataclasses.replace(values[("t", 1)], leader_epoch=-1)
    assert loaded[("t", 1)].expire_timestamp_ms == T0 + 3_600_000
    assert loaded[("t", 0)].commit_timestamp_ms == T0 + 1000 and loaded[("t", 0)].metadata == "m6"
    # groups that only committed offsets come back as Kafka's simple consumer groups (Empty, no protocol)
    assert [(s.group_id, s.state, s.protocol_type) for s in b2.groups()] == [("g", "Empty", ""),
                                                                               ("other", "Empty", "")]


def test_loading_writes_nothing_and_later_commits_go_on_being_logged(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    commit(b1, "g", "t", 0, 5)
    b2 = restart(tmp_path, b1)
    offsets_log_end = {p.index: p.log.log_end_offset for p in b2.cluster.topics["__consumer_offsets"].partitions}
    b2.storage.close()  # type: ignore[union-attr]
    b3 = start(tmp_path)
    assert {p.index: p.log.log_end_offset for p in b3.cluster.topics["__consumer_offsets"].partitions} == \
        offsets_log_end
    commit(b3, "g", "t", 0, 8)
    assert restart(tmp_path, b3).committed("g") == {("t", 0): 8}


def test_expiry_after_the_restart_counts_from_the_stored_times(tmp_path: Path) -> None:
    b1 = start(tmp_path, **{"offsets.retention.minutes": 10, "offsets.retention.check.interval.ms": 1000})
    b1.create_topic("t")
    commit(b1, "g", "t", 0, 5)
    advance(b1, 5 * 60_000)
    b2 = restart(tmp_path, b1, **{"offsets.retention.minutes": 10, "offsets.retention.check.interval.ms": 1000})
    b2.clock.advance(5 * 60)  # the new broker's clock starts at T0 again: 5 minutes after the commit
    advance(b2, 1000)
    assert b2.committed("g") == {("t", 0): 5}
    advance(b2, 5 * 60_000)  # 10 minutes after the commit time stored
    assert b2.committed("g") == {} and b2.groups() == []


# -- classic groups -------------------------------------------------------------------------------


def test_a_stable_group_comes_back_with_its_members_and_loses_them_without_heartbeats(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    member, generation = stable_group(b1, "g", "t")
    commit(b1, "g", "t", 0, 4, member=member, generation=generation)
    [before] = b1.groups()
    b2 = restart(tmp_path, b1)
    [after] = b2.groups()
    assert after == before
    assert (after.state, after.generation_or_epoch, after.protocol, after.leader) == ("Stable", generation, "range",
                                                                                      member)
    assert after.members[0].assignment == {"t": [0]}
    gc = b2.node.group_coordinator
    # the member may heartbeat and commit in its generation, as before the restart
    assert gc.heartbeat("g", generation, member, None) == ErrorCode.NONE
    advance(b2, 8000)
    assert gc.heartbeat("g", generation, member, None) == ErrorCode.NONE
    commit(b2, "g", "t", 0, 5, member=member, generation=generation)
    # silent for its session timeout: removed, the group rebalances to Empty, the offsets stay
    advance(b2, 10_001)
    [gone] = b2.groups()
    assert (gone.state, gone.members, gone.generation_or_epoch) == ("Empty", [], generation + 1)
    assert b2.committed("g") == {("t", 0): 5}
    b3 = restart(tmp_path, b2)
    assert [(s.state, s.generation_or_epoch) for s in b3.groups()] == [("Empty", generation + 1)]
    assert b3.committed("g") == {("t", 0): 5}


def test_a_deleted_group_does_not_come_back(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    member, generation = stable_group(b1, "g", "t")
    commit(b1, "g", "t", 0, 4, member=member, generation=generation)
    gc = b1.node.group_coordinator
    assert gc.leave_group("g", [(member, None)])[1] == [ErrorCode.NONE]
    assert [s.state for s in b1.groups()] == ["Empty"]
    assert gc.delete_groups(["g"]) == [("g", ErrorCode.NONE)]
    b2 = restart(tmp_path, b1)
    assert b2.groups() == [] and b2.committed("g") == {}


# -- transactions ---------------------------------------------------------------------------------


def open_transaction(broker: MockBroker, tid: str, topic: str, timeout_ms: int = 60_000) -> tuple[int, int]:
    tc = broker.txn_coordinator
    pid, epoch = tc.init_producer_id(tid, timeout_ms)
    tc.add_partitions(tid, pid, epoch, [(topic, 0)])
    produce(broker, topic, b"in-txn", pid=pid, epoch=epoch, seq=0, txn=True)
    return pid, epoch


def test_an_ongoing_transaction_is_resumed_and_aborted_after_its_timeout(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    pid, epoch = open_transaction(b1, "tx", "t", timeout_ms=60_000)
    produce(b1, "t", b"after")
    txn_epoch_before = partition_of(b1.cluster, TXN_TOPIC, "tx").leader_epoch
    assert b1.offsets("t")["last_stable_offset"] == 0
    b2 = restart(tmp_path, b1)
    [info] = b2.transactions()
    assert (info.transactional_id, info.state, info.producer_id, info.producer_epoch, info.timeout_ms,
            info.partitions) == ("tx", "Ongoing", pid, epoch, 60_000, [("t", 0)])
    assert b2.offsets("t")["last_stable_offset"] == 0
    advance(b2, 60_000)
    assert b2.transactions()[0].state == "Ongoing"
    advance(b2, 1)
    [info] = b2.transactions()
    # fenced (epoch + 1), and the abort bumps once more (transaction.version 2, the broker's default)
    assert (info.state, info.producer_id, info.producer_epoch) == ("CompleteAbort", pid, epoch + 2)
    assert b2.offsets("t") == {"log_start_offset": 0, "high_watermark": 3, "last_stable_offset": 3}
    # the marker carries the coordinator epoch of the restarted __transaction_state partition
    txn_epoch = partition_of(b2.cluster, TXN_TOPIC, "tx").leader_epoch
    assert txn_epoch > txn_epoch_before
    marker = part(b2, "t").log.producers.entries[pid]
    assert marker.coordinator_epoch == txn_epoch
    assert b2.node.aborted_transactions(part(b2, "t"), 0, 3) == [(pid, 0)]
    # and the abort is logged: a restart now finds it complete
    b3 = restart(tmp_path, b2)
    assert [(i.state, i.producer_epoch) for i in b3.transactions()] == [("CompleteAbort", epoch + 2)]
    assert b3.node.aborted_transactions(part(b3, "t"), 0, 3) == [(pid, 0)]


def test_the_producer_of_a_resumed_transaction_may_go_on_and_commit_it(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t", 2)
    pid, epoch = open_transaction(b1, "tx", "t")
    b2 = restart(tmp_path, b1)
    tc = b2.txn_coordinator
    tc.add_partitions("tx", pid, epoch, [("t", 1)])
    produce(b2, "t", b"more", partition=1, pid=pid, epoch=epoch, seq=0, txn=True)
    tc.end_txn("tx", pid, epoch, commit=True)
    [info] = b2.transactions()
    assert (info.state, info.producer_epoch) == ("CompleteCommit", epoch)
    assert b2.offsets("t", 0)["last_stable_offset"] == 2 and b2.offsets("t", 1)["last_stable_offset"] == 2
    assert b2.node.aborted_transactions(part(b2, "t"), 0, 2) == []


def test_a_transaction_left_in_prepare_commit_completes_at_load(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    pid, epoch = open_transaction(b1, "tx", "t")
    tc = b1.txn_coordinator
    tc.hold_markers = True
    tc.end_txn("tx", pid, epoch, commit=True)
    assert b1.transactions()[0].state == "PrepareCommit"
    b2 = restart(tmp_path, b1)
    [info] = b2.transactions()
    assert (info.state, info.producer_id, info.producer_epoch) == ("CompleteCommit", pid, epoch)
    assert b2.offsets("t")["last_stable_offset"] == 2
    assert b2.node.aborted_transactions(part(b2, "t"), 0, 2) == []


def test_a_transaction_left_in_prepare_abort_completes_at_load(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    pid, epoch = open_transaction(b1, "tx", "t")
    tc = b1.txn_coordinator
    tc.hold_markers = True
    tc.end_txn("tx", pid, epoch, commit=False)
    b2 = restart(tmp_path, b1)
    assert [(i.state, i.producer_epoch) for i in b2.transactions()] == [("CompleteAbort", epoch)]
    assert b2.offsets("t")["last_stable_offset"] == 2
    assert b2.node.aborted_transactions(part(b2, "t"), 0, 2) == [(pid, 0)]


def test_a_producer_reinitialising_after_the_restart_is_bumped_and_producer_ids_are_not_reused(
        tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    pid, epoch = b1.txn_coordinator.init_producer_id("done", 30_000)
    open_pid, open_epoch = open_transaction(b1, "open", "t")
    b2 = restart(tmp_path, b1)
    tc = b2.txn_coordinator
    assert tc.init_producer_id("done", 30_000) == (pid, epoch + 1)
    # an open transaction: its producer is fenced and the transaction aborted first, then the retry bumps
    with pytest.raises(KafkaError) as concurrent:
        tc.init_producer_id("open", 30_000)
    assert concurrent.value.code == ErrorCode.CONCURRENT_TRANSACTIONS
    # fence + abort (two bumps with transaction.version 2), then this InitProducerId's own
    assert tc.init_producer_id("open", 30_000) == (open_pid, open_epoch + 3)
    assert b2.offsets("t")["last_stable_offset"] == 2
    # the old epoch is fenced
    with pytest.raises(KafkaError) as fenced:
        tc.add_partitions("open", open_pid, open_epoch, [("t", 0)])
    assert fenced.value.code == ErrorCode.PRODUCER_FENCED
    new_pid, _ = tc.init_producer_id("new", 30_000)
    assert new_pid not in (pid, open_pid) and new_pid > max(pid, open_pid)


def test_a_broker_without_internal_topics_loads_nothing(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t")
    b2 = restart(tmp_path, b1)
    assert b2.transactions() == [] and not b2.node.group_coordinator_started
    assert "__consumer_offsets" not in b2.topics()


def test_a_cluster_in_one_process_loads_its_shared_coordinators(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path, brokers=3, clock=Clock(start_ms=T0, frozen=True))
    b1.create_topic("t", 1)
    commit(b1, "g", "t", 0, 5)
    pid, epoch = open_transaction(b1, "tx", "t")
    assert b1.storage is not None
    b1.storage.close()
    b2 = open_broker(tmp_path, brokers=3, clock=Clock(start_ms=T0, frozen=True))
    assert b2.committed("g") == {("t", 0): 5}
    assert [(i.state, i.producer_id) for i in b2.transactions()] == [("Ongoing", pid)]
    # every node serves the same coordinators: the one leading the keys' partitions answers for them
    assert all(n.group_coordinator is b2.node.group_coordinator for n in b2.nodes.values())
    advance(b2, 60_001)
    assert [(i.state, i.producer_epoch) for i in b2.transactions()] == [("CompleteAbort", epoch + 2)]
    assert b2.offsets("t")["last_stable_offset"] == 2


def test_a_record_that_does_not_decode_is_skipped_with_a_warning_and_the_rest_loads(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from mockbroker.protocol.coordinator_records import OffsetCommitKey, TransactionLogKey, encode_key
    from mockbroker.protocol.records.batch import RecordBatch
    from mockbroker.protocol.records.builder import build_batch
    from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC

    b1 = start(tmp_path)
    b1.create_topic("t")
    commit(b1, "g", "t", 0, 5)
    b1.txn_coordinator.init_producer_id("tx", 30_000)
    now = b1.clock.now_ms()
    for topic, key, record in [(OFFSETS_TOPIC, "g", (b"\x00\x01\xff", b"junk")),
                               (OFFSETS_TOPIC, "g", (encode_key(OffsetCommitKey("g", "t", 1)), b"\x00\x09junk")),
                               (TXN_TOPIC, "tx", (encode_key(TransactionLogKey("tx")), b"\x00"))]:
        partition_of(b1.cluster, topic, key).log.append(RecordBatch(build_batch([record], base_timestamp=now)), now)
    b2 = restart(tmp_path, b1)
    assert b2.committed("g") == {("t", 0): 5}
    assert [(i.transactional_id, i.state) for i in b2.transactions()] == [("tx", "Empty")]
    skipped = [r.getMessage() for r in caplog.records if "does not decode" in r.getMessage()]
    assert len(skipped) == 3 and sum(TXN_TOPIC in m for m in skipped) == 1
