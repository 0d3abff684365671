"""A share partition follows its partition's leader (raw protocol, 3 nodes): when the leader moves, the
records acquired through the old leader are available again at once with their delivery counts (Kafka's new
leader loads the share state, where nothing is acquired), and the new leader hands them out again with the
count up; a share partition whose leader did not move keeps its locks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker.server import MockBroker
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_cluster import connect_to
from tests.handlers.test_share_groups import EARLIEST, acquired, heartbeat, share_fetch


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3, config=dict(EARLIEST)).run_in_thread() as broker:
        broker.create_topic("q", assignments=[[1, 2, 3], [1, 2, 3]])
        yield broker


def records(broker: MockBroker, partition: int) -> list[tuple[int, str, int, str | None]]:
    return [(r["offset"], r["state"], r["delivery_count"], r["member_id"])
            for r in broker.share_groups()["sg"]["partitions"][f"q-{partition}"]["records"]]


def test_a_leader_move_gives_back_what_was_acquired_through_the_old_leader(cluster: MockBroker) -> None:
    topic = cluster.node.cluster.topic("q")
    assert topic is not None
    with connect_to(cluster, 1) as one, connect_to(cluster, 2) as two:
        for p in (0, 1):
            produce(one, "q", make_batch(b"a", b"b", b"c"), partition=p)
        with connect_to(cluster, cluster.node.group_coordinator_id("sg")) as coordinator:
            assert heartbeat(coordinator, "a", 0, ["q"]).error_code == 0
        got = share_fetch(one, topic.topic_id, "a", 0, partitions=(0, 1), max_records=4)
        assert acquired(got) == [(0, 0, 2, 1), (1, 0, 0, 1)]
        assert records(cluster, 0) == [(o, "ACQUIRED", 1, "a") for o in range(3)]
        cluster.move_leader("q", 0, 2)
        assert records(cluster, 0) == [(o, "AVAILABLE", 1, None) for o in range(3)]  # at once, counts kept
        assert records(cluster, 1) == [(0, "ACQUIRED", 1, "a")]  # its leader did not move
        assert acquired(share_fetch(two, topic.topic_id, "a", 0, partitions=(0,))) == [(0, 0, 2, 2)]
        assert records(cluster, 0) == [(o, "ACQUIRED", 2, "a") for o in range(3)]


def test_a_share_session_opened_again_or_closed_on_one_node_releases_only_what_that_node_leads() -> None:
    with MockBroker(brokers=3, config=dict(EARLIEST)).run_in_thread() as broker:
        broker.create_topic("q", assignments=[[1, 2, 3], [2, 3, 1]])  # q-0 led by node 1, q-1 by node 2
        topic = broker.node.cluster.topic("q")
        assert topic is not None
        with connect_to(broker, 1) as one, connect_to(broker, 2) as two:
            produce(one, "q", make_batch(b"a", b"b"), partition=0)
            produce(two, "q", make_batch(b"c", b"d"), partition=1)
            with connect_to(broker, broker.node.group_coordinator_id("sg")) as coordinator:
                assert heartbeat(coordinator, "a", 0, ["q"]).error_code == 0
            assert acquired(share_fetch(one, topic.topic_id, "a", 0, partitions=(0,))) == [(0, 0, 1, 1)]
            assert acquired(share_fetch(two, topic.topic_id, "a", 0, partitions=(1,))) == [(1, 0, 1, 1)]
            # a new session on node 1 replaces the old one there: q-0 is handed back (and taken again)
            assert acquired(share_fetch(one, topic.topic_id, "a", 0, partitions=(0,))) == [(0, 0, 1, 2)]
            assert records(broker, 1) == [(0, "ACQUIRED", 1, "a"), (1, "ACQUIRED", 1, "a")]  # node 2's kept
            closed = two.request(79, 1, {"group_id": "sg", "member_id": "a", "share_session_epoch": -1, "topics": []})
            assert closed.error_code == 0
            assert records(broker, 1) == [(0, "AVAILABLE", 1, None), (1, "AVAILABLE", 1, None)]
            assert records(broker, 0) == [(0, "ACQUIRED", 2, "a"), (1, "ACQUIRED", 2, "a")]  # node 1's kept
