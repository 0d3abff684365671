"""The internal topics (state/cluster/internal_topics.py), the coordinators' records in them
(mockbroker/protocol/coordinator_records.py, state/coordinators/log.py) and rebuilding state from those records
(state/coordinators/replay.py), without sockets."""

from __future__ import annotations

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.coordinator_records import (
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetCommitValue,
    TransactionLogKey,
    TransactionLogValue,
    decode_offsets_key,
    decode_txn_key,
    decode_txn_log_value,
    encode_key,
    encode_offset_commit_value,
    encode_txn_log_value,
)
from mockbroker.scheduler import Scheduler
from mockbroker.state.cluster import leadership
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.cluster.internal_topics import (
    OFFSETS_TOPIC,
    TXN_TOPIC,
    coordinator_node,
    ensure_topic,
    java_string_hash,
    partition_for,
    partition_of,
)
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.coordinators.log import CoordinatorLog
from mockbroker.state.coordinators.replay import (
    replay_group_metadata,
    replay_offsets,
    replay_transactions,
    topic_records,
)
from mockbroker.state.groups.offsets import CommittedOffset
from mockbroker.state.txn.coordinator import TxnCoordinator
from mockbroker.state.txn.states import TxnState
from tests.state.groups_env import START_MS, GroupEnv

# (key, Java's key.hashCode(), Utils.abs(hashCode) % 50), printed by a JVM (java 17).
JAVA_HASHES = [
    ("", 0, 0),
    ("a", 97, 47),
    ("my-group", -1906497762, 12),
    ("polygenelubricants", -2147483648, 0),  # Integer.MIN_VALUE: Utils.abs gives 0, not a negative number
    ("console-consumer-12345", 158455506, 6),
    ("tx-\u00e9\u4e2d", 110773837, 37),
    ("group-\U0001F600", 508083057, 7),  # a surrogate pair: two UTF-16 code units
    ("zzzzzzzzzz", -1580979136, 36),
]


@pytest.mark.parametrize(("key", "java_hash", "partition"), JAVA_HASHES)
def test_keys_hash_as_java_string_hashcode_and_partition_as_kafka(key: str, java_hash: int, partition: int) -> None:
    assert java_string_hash(key) == java_hash
    assert partition_for(key, 50) == partition


def test_internal_topics_are_made_with_kafkas_partitions_configs_and_at_most_the_running_nodes() -> None:
    cluster = Cluster(node_ids=[1, 2, 3, 4])
    offsets = ensure_topic(cluster, OFFSETS_TOPIC)
    assert offsets.internal and len(offsets.partitions) == 50
    assert {len(p.replicas) for p in offsets.partitions} == {3}  # offsets.topic.replication.factor
    assert offsets.config.overrides() == {"cleanup.policy": "compact", "compression.type": "producer",
                                          "segment.bytes": "104857600"}
    assert ensure_topic(cluster, OFFSETS_TOPIC) is offsets
    one = Cluster(config=BrokerConfig({"transaction.state.log.num.partitions": 5}))
    txn = ensure_topic(one, TXN_TOPIC)
    assert txn.internal and len(txn.partitions) == 5 and {len(p.replicas) for p in txn.partitions} == {1}
    assert txn.config.overrides() == {"cleanup.policy": "compact", "compression.type": "uncompressed",
                                      "min.insync.replicas": "2", "segment.bytes": "104857600",
                                      "unclean.leader.election.enable": "false"}


def test_the_coordinator_is_the_leader_of_the_keys_partition_and_follows_it() -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    p = partition_of(cluster, OFFSETS_TOPIC, "my-group")
    assert p.index == 12
    assert coordinator_node(cluster, OFFSETS_TOPIC, "my-group") == p.leader_id
    other = next(n for n in p.isr if n != p.leader_id)
    leadership.move_leader(cluster, p, other)
    assert coordinator_node(cluster, OFFSETS_TOPIC, "my-group") == other
    leadership.stop_node(cluster, other)
    assert coordinator_node(cluster, OFFSETS_TOPIC, "my-group") not in (other, -1)


def test_record_bytes_are_kafkas_version_prefixed_schemas() -> None:
    assert encode_key(OffsetCommitKey("g", "t", 2)) == b"\x00\x01" b"\x00\x01g" b"\x00\x01t" b"\x00\x00\x00\x02"
    assert encode_key(GroupMetadataKey("g")) == b"\x00\x02" b"\x00\x01g"
    assert encode_key(TransactionLogKey("tx")) == b"\x00\x00" b"\x00\x02tx"
    # OffsetCommitValue v3: offset, leader epoch, metadata, commit timestamp.
    assert encode_offset_commit_value(OffsetCommitValue(5, 7, "m", 1000)) == (
        b"\x00\x03" + (5).to_bytes(8, "big") + (7).to_bytes(4, "big") + b"\x00\x01m" + (1000).to_bytes(8, "big"))
    # v1 when the commit carries an expiry: no leader epoch, an expire timestamp.
    assert encode_offset_commit_value(OffsetCommitValue(5, 7, "", 1000, 2000)) == (
        b"\x00\x01" + (5).to_bytes(8, "big") + b"\x00\x00" + (1000).to_bytes(8, "big") + (2000).to_bytes(8, "big"))
    value = TransactionLogValue(1000, 3, 60000, 1, {"t": [0, 2]}, 50, 40, previous_producer_id=999,
                                client_transaction_version=2)
    v0 = encode_txn_log_value(value, 0)
    assert v0 == (b"\x00\x00" + (1000).to_bytes(8, "big") + b"\x00\x03" + (60000).to_bytes(4, "big") + b"\x01"
                  + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x00\x00\x02"
                  + (50).to_bytes(8, "big") + (40).to_bytes(8, "big"))
    v1 = encode_txn_log_value(value, 1)
    # Flexible: compact array/string, tagged PreviousProducerId (tag 0) and ClientTransactionVersion (tag 2).
    assert v1 == (b"\x00\x01" + (1000).to_bytes(8, "big") + b"\x00\x03" + (60000).to_bytes(4, "big") + b"\x01"
                  + b"\x02" + b"\x02t" + b"\x03" + b"\x00\x00\x00\x00\x00\x00\x00\x02" + b"\x00"
                  + (50).to_bytes(8, "big") + (40).to_bytes(8, "big")
                  + b"\x02" + b"\x00\x08" + (999).to_bytes(8, "big") + b"\x02\x02" + b"\x00\x02")
    assert decode_txn_log_value(v0) == TransactionLogValue(1000, 3, 60000, 1, {"t": [0, 2]}, 50, 40)
    assert decode_txn_log_value(v1) == value
    assert decode_offsets_key(encode_key(OffsetCommitKey("g", "t", 2))) == OffsetCommitKey("g", "t", 2)
    assert decode_offsets_key(b"\x00\x03\x00\x01g") == 3  # a KIP-848 record type: not modelled
    assert decode_txn_key(encode_key(TransactionLogKey("tx"))) == TransactionLogKey("tx")


def _wired_groups() -> tuple[GroupEnv, CoordinatorLog]:
    env = GroupEnv()
    log = CoordinatorLog(env.cluster, env.clock)
    env.coordinator.offsets.listener = log.offset_changed
    env.coordinator.group_listener = log.group_changed
    return env, log


def test_offsets_and_group_metadata_are_written_and_replayed() -> None:
    env, _ = _wired_groups()
    env.topic("t", 3)
    ids, generation = env.stable_group("g", members=2)
    group = env.coordinator.groups["g"]
    env.coordinator.commit_offset(group, ids[0], "t", 0, 42, 3, "meta")
    env.coordinator.commit_offset(group, ids[0], "t", 1, 7, -1, None, retention_ms=60_000)
    env.coordinator.commit_offset(group, ids[0], "t", 0, 43, 3, "again")
    simple = env.coordinator.validate_offset_commit("simple", -1, "", None, 9)
    env.coordinator.commit_offset(simple, "", "t", 2, 5, -1, None)
    env.coordinator.delete_offsets("simple", [("t", 2)])

    topic = env.cluster.topic(OFFSETS_TOPIC)
    assert topic is not None and topic.internal
    # Every record went to the group's partition.
    used = {p.index for p in topic.partitions if p.log.high_watermark > 0}
    assert used == {partition_for("g", 50), partition_for("simple", 50)}
    offsets = replay_offsets(topic_records(topic), env.cluster)
    assert offsets.group_offsets("g") == env.coordinator.offsets.group_offsets("g")
    assert offsets.group_offsets("g")[("t", 0)].offset == 43
    assert offsets.group_offsets("g")[("t", 1)].expire_timestamp_ms == env.clock.now_ms() + 60_000
    assert not offsets.has_offsets("simple")  # the tombstone removed it

    [metadata] = replay_group_metadata(topic_records(topic)).values()
    assert (metadata.protocol_type, metadata.generation, metadata.protocol) == ("consumer", generation, "range")
    assert metadata.leader == group.leader_id
    assert sorted(m.member_id for m in metadata.members) == sorted(ids)
    assert {m.member_id: m.assignment for m in metadata.members} == {m: m.encode() for m in ids}
    assert {m.subscription for m in metadata.members} == {b"range-meta"}

    for mid in ids:
        env.coordinator.leave_group("g", [(mid, None)])
    assert env.coordinator.delete_groups(["g"]) == [("g", 0)]
    assert replay_group_metadata(topic_records(topic)) == {}
    assert not replay_offsets(topic_records(topic)).has_offsets("g")


def test_offset_expiry_writes_tombstones() -> None:
    env, _ = _wired_groups()
    env.topic("t", 1)
    simple = env.coordinator.validate_offset_commit("old", -1, "", None, 9)
    env.coordinator.commit_offset(simple, "", "t", 0, 1, -1, None)
    env.coordinator.offsets.expire("old", START_MS + 1, 0, lambda v: v.commit_timestamp_ms, lambda t, p: False)
    topic = env.cluster.topic(OFFSETS_TOPIC)
    assert topic is not None
    [(_, value)] = [kv for kv in topic_records(topic)][-1:]
    assert value is None and not replay_offsets(topic_records(topic)).has_offsets("old")


def test_transaction_state_is_written_and_replayed() -> None:
    clock = Clock(START_MS, frozen=True)
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 3)
    coordinator = TxnCoordinator(cluster, clock, Scheduler(clock))
    log = CoordinatorLog(cluster, clock)
    coordinator.listener = lambda tid, meta: log.txn_changed(tid, meta, coordinator.transaction_version)
    pid, epoch = coordinator.init_producer_id("tx", 60_000)
    coordinator.add_partitions("tx", pid, epoch, [("t", 0), ("t", 2)])
    topic = cluster.topic(TXN_TOPIC)
    assert topic is not None and topic.internal
    ongoing = replay_transactions(topic_records(topic))["tx"]
    assert (ongoing.state, ongoing.partitions, ongoing.producer_id) == (TxnState.ONGOING, {("t", 0), ("t", 2)}, pid)
    coordinator.end_txn("tx", pid, epoch, commit=True)
    coordinator.init_producer_id("other", 30_000)
    replayed = replay_transactions(topic_records(topic))
    live = coordinator.txns
    assert set(replayed) == {"tx", "other"}
    for tid, txn in replayed.items():
        mine = live[tid]
        assert (txn.state, txn.producer_id, txn.producer_epoch, txn.timeout_ms, txn.partitions, txn.start_ms,
                txn.last_update_ms) == (mine.state, mine.producer_id, mine.producer_epoch, mine.timeout_ms,
                                        mine.partitions, mine.start_ms, mine.last_update_ms)
    assert replayed["tx"].state == TxnState.COMPLETE_COMMIT
    # Values are v1 (transaction.version 2 is finalized by default).
    assert {bytes(v[:2]) for _, v in topic_records(topic) if v is not None} == {b"\x00\x01"}
    clock.advance(8 * 24 * 3600)
    assert sorted(coordinator.expire_transactional_ids()) == ["other", "tx"]
    assert replay_transactions(topic_records(topic)) == {}


def test_committed_offset_value_keeps_what_offsetfetch_answers() -> None:
    value = CommittedOffset(9, 2, "x", 100, None)
    store = replay_offsets([(encode_key(OffsetCommitKey("g", "t", 0)),
                             encode_offset_commit_value(OffsetCommitValue(9, 2, "x", 100)))])
    assert store.get("g", "t", 0) == value


def test_markers_carry_the_leader_epoch_of_the_transactional_ids_partition_as_coordinator_epoch() -> None:
    clock = Clock(START_MS, frozen=True)
    cluster = Cluster(node_ids=[1, 2], clock=clock)
    cluster.create_topic("t", 1)
    coordinator = TxnCoordinator(cluster, clock, Scheduler(clock))
    log = cluster.topics["t"].partitions[0].log

    def marker_epochs() -> list[int]:
        return [b.view().control_record().coordinator_epoch for b in log.batches if b.is_control]

    pid, epoch = coordinator.init_producer_id("tx", 60_000)
    coordinator.add_partitions("tx", pid, epoch, [("t", 0)])
    coordinator.end_txn("tx", pid, epoch, commit=False)
    assert marker_epochs() == [0]
    p = partition_of(cluster, TXN_TOPIC, "tx")
    leadership.move_leader(cluster, p, next(n for n in p.isr if n != p.leader_id))  # the coordinator moves
    pid, epoch = coordinator.init_producer_id("tx", 60_000)
    coordinator.add_partitions("tx", pid, epoch, [("t", 0)])
    coordinator.end_txn("tx", pid, epoch, commit=False)
    assert marker_epochs() == [0, 1]
