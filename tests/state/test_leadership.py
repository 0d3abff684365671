"""Leadership and the ISR as nodes stop and start (state/cluster/leadership.py), without sockets."""

from __future__ import annotations

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import leadership
from mockbroker.state.cluster.cluster import Cluster, Partition


def _cluster_with(replicas: list[int], config: dict[str, object] | None = None) -> tuple[Cluster, Partition]:
    cluster = Cluster(node_ids=[1, 2, 3])
    topic = cluster.create_topic("t", assignments=[(0, replicas)], configs=config)
    assert topic is not None
    return cluster, topic.partitions[0]


def test_stopping_the_leader_elects_the_next_isr_member_and_bumps_the_epoch() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    assert (p.leader_id, p.leader_epoch) == (1, 0)
    leadership.stop_node(cluster, 1)
    state = leadership.state_of(cluster, p)
    assert (state.leader, state.leader_epoch, state.isr, state.offline_replicas) == (2, 1, [2, 3], [1])
    assert cluster.controller_id == 2


def test_stopping_a_follower_shrinks_the_isr_without_an_epoch_bump() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    leadership.stop_node(cluster, 3)
    assert (p.leader_id, p.leader_epoch, p.isr) == (1, 0, [1, 2])


def test_a_restarted_node_rejoins_the_isr_in_replica_order_and_preferred_election_gives_it_back() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    leadership.stop_node(cluster, 1)
    leadership.start_node(cluster, 1)
    assert (p.leader_id, p.leader_epoch, p.isr) == (2, 1, [1, 2, 3])
    assert leadership.elect_preferred_leaders(cluster) == [p]
    assert (p.leader_id, p.leader_epoch) == (1, 2)
    assert leadership.elect_preferred_leaders(cluster) == []


def test_losing_every_isr_member_takes_the_partition_offline_and_the_last_member_brings_it_back() -> None:
    cluster, p = _cluster_with([1, 2])
    leadership.stop_node(cluster, 2)
    leadership.stop_node(cluster, 1)
    # Kafka keeps the last ISR member in the ISR: only it may lead again (no unclean election by default).
    assert (p.leader_id, p.isr, leadership.offline_replicas(cluster, p)) == (-1, [1], [1, 2])
    epoch = p.leader_epoch
    leadership.start_node(cluster, 2)
    assert p.leader_id == -1, "a replica outside the ISR does not lead unless unclean election is on"
    leadership.start_node(cluster, 1)
    assert (p.leader_id, p.leader_epoch, p.isr) == (1, epoch + 1, [1, 2])


def test_unclean_election_when_enabled_elects_a_live_replica_outside_the_isr() -> None:
    cluster, p = _cluster_with([1, 2], {"unclean.leader.election.enable": "true"})
    leadership.set_isr(cluster, p, [1])
    leadership.stop_node(cluster, 1)
    assert (p.leader_id, p.isr) == (2, [2])


def test_move_leader_needs_a_live_isr_member() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    leadership.move_leader(cluster, p, 3)
    assert (p.leader_id, p.leader_epoch) == (3, 1)
    leadership.move_leader(cluster, p, 3)
    assert p.leader_epoch == 1, "moving to the current leader changes nothing"
    leadership.stop_node(cluster, 2)
    with pytest.raises(KafkaError):
        leadership.move_leader(cluster, p, 2)
    with pytest.raises(KeyError):
        leadership.move_leader(cluster, p, 9)


def test_set_isr_hands_leadership_to_a_member_and_refuses_strangers() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    leadership.set_isr(cluster, p, [3, 2])
    assert (p.isr, p.leader_id, p.leader_epoch) == ([2, 3], 2, 1)
    for bad in ([], [4], [2, 2]):
        with pytest.raises(KafkaError):
            leadership.set_isr(cluster, p, bad)


def test_min_insync_replicas_is_checked_against_the_isr() -> None:
    cluster, p = _cluster_with([1, 2, 3], {"min.insync.replicas": "2"})
    leadership.check_min_insync(p)
    leadership.stop_node(cluster, 2)
    leadership.check_min_insync(p)
    leadership.stop_node(cluster, 3)
    with pytest.raises(KafkaError) as exc:
        leadership.check_min_insync(p)
    assert exc.value.code == ErrorCode.NOT_ENOUGH_REPLICAS
    leadership.start_node(cluster, 3)
    leadership.check_min_insync(p)


def test_batches_appended_after_a_leader_change_carry_the_new_epoch() -> None:
    from mockbroker.protocol.records.batch import RecordBatch
    from tests.handlers.conftest import make_batch

    cluster, p = _cluster_with([1, 2])
    p.log.append(RecordBatch(make_batch(b"a")), 0)
    leadership.move_leader(cluster, p, 2)
    p.log.append(RecordBatch(make_batch(b"b")), 0)
    assert [b.leader_epoch for b in p.log.batches] == [0, 1]
    assert p.log.end_offset_for_epoch(0) == (0, 1)
