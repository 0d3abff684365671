"""ElectLeaders' elections and partition reassignments on the cluster model (state/cluster/leadership.py,
state/cluster/reassignments.py), without sockets."""

from __future__ import annotations

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import leadership, reassignments
from mockbroker.state.cluster.cluster import Cluster, Partition


def _cluster_with(replicas: list[int], config: dict[str, object] | None = None,
                  nodes: int = 4) -> tuple[Cluster, Partition]:
    cluster = Cluster(node_ids=list(range(1, nodes + 1)))
    topic = cluster.create_topic("t", assignments=[(0, replicas)], configs=config)
    assert topic is not None
    return cluster, topic.partitions[0]


def test_preferred_election_moves_the_leader_back_or_says_why_not() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    assert leadership.elect_leader(cluster, p, leadership.PREFERRED) == (
        ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
    leadership.move_leader(cluster, p, 2)
    leadership.set_isr(cluster, p, [2, 3])
    assert leadership.elect_leader(cluster, p, leadership.PREFERRED) == (
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, "The preferred leader was not available.")
    leadership.set_isr(cluster, p, [1, 2, 3])
    assert leadership.elect_leader(cluster, p, leadership.PREFERRED) == (ErrorCode.NONE, None)
    assert (p.leader_id, p.leader_epoch) == (1, 2)


def test_unclean_election_needs_a_leaderless_partition_and_a_live_replica() -> None:
    cluster, p = _cluster_with([1, 2])
    assert leadership.elect_leader(cluster, p, leadership.UNCLEAN)[0] == ErrorCode.ELECTION_NOT_NEEDED
    leadership.set_isr(cluster, p, [1])
    leadership.stop_node(cluster, 1)
    assert p.leader_id == -1  # unclean.leader.election.enable is off: no automatic unclean election
    assert leadership.elect_leader(cluster, p, leadership.UNCLEAN) == (ErrorCode.NONE, None)
    assert (p.leader_id, p.isr) == (2, [2])
    leadership.stop_node(cluster, 2)
    assert leadership.elect_leader(cluster, p, leadership.UNCLEAN) == (
        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, "Eligible topic partition leaders are not available.")


def test_the_periodic_check_elects_unclean_leaders_once_the_topic_allows_it() -> None:
    cluster, p = _cluster_with([1, 2])
    leadership.set_isr(cluster, p, [1])
    leadership.stop_node(cluster, 1)
    assert leadership.elect_unclean_where_enabled(cluster) == []
    cluster.alter_topic_config("t", [("unclean.leader.election.enable", 0, "true")])
    assert leadership.elect_unclean_where_enabled(cluster) == [p]
    assert p.leader_id == 2


def test_a_reassignment_without_new_replicas_completes_at_once_and_moves_a_leaving_leader() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    reassignments.alter(cluster, "t", 0, [3, 2], now_ms=0)
    assert (p.replicas, p.isr, p.leader_id, p.leader_epoch, p.reassignment) == ([3, 2], [3, 2], 3, 1, None)


def test_removing_a_follower_bumps_the_epoch_and_reordering_does_not() -> None:
    cluster, p = _cluster_with([1, 2, 3])
    cluster.config.set("mockbroker.reassignment.ms", 60_000)  # nothing to catch up: done at once anyway
    reassignments.alter(cluster, "t", 0, [1, 3, 2], now_ms=0)
    assert (p.replicas, p.leader_epoch) == ([1, 3, 2], 0)
    reassignments.alter(cluster, "t", 0, [1, 2], now_ms=0)
    assert (p.replicas, p.isr, p.leader_id, p.leader_epoch) == ([1, 2], [1, 2], 1, 1)


def test_new_replicas_catch_up_after_the_configured_delay() -> None:
    cluster, p = _cluster_with([1, 2], {})
    cluster.config.set("mockbroker.reassignment.ms", 1000)
    reassignments.alter(cluster, "t", 0, [3, 4], now_ms=0)
    assert (p.replicas, p.isr, p.leader_id) == ([3, 4, 1, 2], [1, 2], 1)
    [ongoing] = reassignments.ongoing(cluster, None)
    assert (ongoing.replicas, ongoing.adding, ongoing.removing) == ([3, 4, 1, 2], [3, 4], [1, 2])
    assert reassignments.complete_due(cluster, 999) == []
    leadership.stop_node(cluster, 4)
    assert reassignments.complete_due(cluster, 1000) == []  # node 4 is down: it cannot catch up
    leadership.start_node(cluster, 4)
    assert reassignments.complete_due(cluster, 1000) == [p]
    assert (p.replicas, p.isr, p.leader_id, p.reassignment) == ([3, 4], [3, 4], 3, None)
    assert reassignments.ongoing(cluster, None) == []


def test_cancelling_restores_the_original_replicas_or_says_none_is_in_progress() -> None:
    cluster, p = _cluster_with([1, 2])
    cluster.config.set("mockbroker.reassignment.ms", 1000)
    with pytest.raises(KafkaError) as err:
        reassignments.alter(cluster, "t", 0, None, now_ms=0)
    assert err.value.code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    reassignments.alter(cluster, "t", 0, [2, 3], now_ms=0)
    reassignments.alter(cluster, "t", 0, None, now_ms=0)
    # Kafka's revert keeps the order the reassignment gave them (target first, then the ones removed).
    assert (p.replicas, p.isr, p.reassignment) == ([2, 1], [2, 1], None)


@pytest.mark.parametrize("target", [[], [1, 9], [2, 2]])
def test_bad_targets_are_invalid_replica_assignments(target: list[int]) -> None:
    cluster, _ = _cluster_with([1, 2])
    with pytest.raises(KafkaError) as err:
        reassignments.alter(cluster, "t", 0, target, now_ms=0)
    assert err.value.code == ErrorCode.INVALID_REPLICA_ASSIGNMENT


def test_unknown_topics_and_partitions() -> None:
    cluster, _ = _cluster_with([1, 2])
    for topic, index in (("nope", 0), ("t", 5)):
        with pytest.raises(KafkaError) as err:
            reassignments.alter(cluster, topic, index, [1], now_ms=0)
        assert err.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
