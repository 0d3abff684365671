"""Replica placement (state/cluster/placement.py) as Kafka's AdminUtils spreads replicas, and the cluster's use
of it: replication factors, manual assignments and the live nodes."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.cluster.placement import Stripe, place, rack_alternated


def test_rack_unaware_placement_is_kafkas_documented_example() -> None:
    # AdminUtils' example: 5 brokers, 10 partitions, replication factor 3, start index and shift 0.
    lists = place({b: None for b in range(5)}, 10, 3, Stripe(0, 0))
    assert lists[:5] == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1]]
    # Every 5 partitions the followers shift one further.
    assert lists[5:] == [[0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2]]


def test_added_partitions_continue_the_topics_stripe() -> None:
    brokers: dict[int, str | None] = {1: None, 2: None, 3: None}
    whole = place(brokers, 7, 2, Stripe(2, 1))
    assert place(brokers, 4, 2, Stripe(2, 1)) + place(brokers, 3, 2, Stripe(2, 1), first_partition=4) == whole


def test_rack_alternated_list_interleaves_racks_in_order() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated(racks) == [0, 3, 1, 5, 4, 2]


@pytest.mark.parametrize("seed", range(20))
def test_rack_aware_placement_puts_each_partitions_replicas_on_different_racks(seed: int) -> None:
    rng = random.Random(seed)
    racks: dict[int, str | None] = {b: f"r{b % 3}" for b in range(1, 7)}
    lists = place(racks, 12, 3, Stripe(rng.randrange(6), rng.randrange(6)))
    for replicas in lists:
        assert len(set(replicas)) == 3
        assert {racks[b] for b in replicas} == {"r0", "r1", "r2"}
    # Leaders spread evenly: each broker leads 12 / 6 partitions.
    assert Counter(r[0] for r in lists) == {b: 2 for b in racks}


def test_rack_aware_placement_with_fewer_racks_than_replicas_uses_every_rack_then_repeats() -> None:
    racks: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b"}
    for replicas in place(racks, 8, 3, Stripe(1, 3)):
        assert len(set(replicas)) == 3 and {racks[b] for b in replicas} == {"a", "b"}


@pytest.mark.parametrize("seed", range(10))
def test_a_created_topic_spreads_leaders_and_replicas_over_the_nodes(seed: int) -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    cluster.random.seed(seed)
    topic = cluster.create_topic("t", 6, 3)
    assert topic is not None
    for p in topic.partitions:
        assert sorted(p.replicas) == [1, 2, 3] and p.isr == p.replicas and p.leader_id == p.replicas[0]
    assert Counter(p.leader_id for p in topic.partitions) == {1: 2, 2: 2, 3: 2}


def test_default_replication_factor_is_one_and_configurable() -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    topic = cluster.create_topic("one", 3)
    assert topic is not None and all(len(p.replicas) == 1 for p in topic.partitions)
    cluster.config.values["default.replication.factor"] = 2
    topic = cluster.create_topic("two", 3)
    assert topic is not None and all(len(set(p.replicas)) == 2 for p in topic.partitions)


def test_replication_factor_beyond_the_live_nodes_is_invalid() -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    with pytest.raises(KafkaError) as exc:
        cluster.create_topic("t", 1, 4)
    assert exc.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    cluster.nodes[3].alive = False
    with pytest.raises(KafkaError) as exc:
        cluster.create_topic("t", 1, 3)
    assert exc.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert "only 2 broker(s)" in exc.value.message
    topic = cluster.create_topic("t", 4, 2)
    assert topic is not None and all(3 not in p.replicas for p in topic.partitions)


def test_create_partitions_keeps_the_replication_factor_and_checks_it_against_live_nodes() -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    cluster.create_topic("t", 2, 3)
    cluster.create_partitions("t", 4)
    topic = cluster.topics["t"]
    assert all(sorted(p.replicas) == [1, 2, 3] for p in topic.partitions)
    cluster.nodes[2].alive = False
    with pytest.raises(KafkaError) as exc:
        cluster.create_partitions("t", 5)
    assert exc.value.code == ErrorCode.INVALID_REPLICATION_FACTOR


@pytest.mark.parametrize(("assignment", "message"), [
    ([[1, 4]], "no such broker"),
    ([[1, 1]], "more than once"),
    ([[1, 2], [3]], "not consistent"),
    ([[]], "empty replica list"),
])
def test_bad_manual_assignments_are_invalid_replica_assignment(assignment: list[list[int]], message: str) -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    with pytest.raises(KafkaError) as exc:
        cluster.create_topic("t", assignments=list(enumerate(assignment)))
    assert exc.value.code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert message in exc.value.message


def test_manual_assignment_on_stopped_nodes_only_is_refused_and_otherwise_leads_from_a_live_one() -> None:
    cluster = Cluster(node_ids=[1, 2, 3])
    cluster.nodes[2].alive = False
    with pytest.raises(KafkaError) as exc:
        cluster.create_topic("t", assignments=[(0, [2])])
    assert exc.value.code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    topic = cluster.create_topic("t", assignments=[(0, [2, 3])])
    assert topic is not None
    [p] = topic.partitions
    assert (p.replicas, p.isr, p.leader_id) == ([2, 3], [3], 3)
