"""Replication on the wire: unclean elections that cut the log back (OffsetForLeaderEpoch's divergent end
offsets, Fetch v12+ diverging_epoch), stalled followers (the ISR shrinks after replica.lag.time.max.ms on
the broker clock; acks=all waits, NOT_ENOUGH_REPLICAS_AFTER_APPEND), per-node faults and latency,
and follower fetching (KIP-392 preferred_read_replica)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    FETCH,
    PRODUCE,
    fetch,
    fetch_body,
    fetch_partition,
    fetch_topic,
    make_batch,
    produce,
    produce_body,
    values_of,
)
from tests.handlers.test_cluster import connect_to
from tests.rawclient import RawClient

OFFSET_FOR_LEADER_EPOCH, METADATA = 23, 3
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def wait_for(check: Callable[[], bool]) -> None:
    """Wait (generously) for a state the broker reaches on its own loop."""
    for _ in range(400):
        if check():
            return
        time.sleep(0.025)
    assert check()


def end_offset(c: RawClient, topic: str, epoch: int, current: int) -> tuple[int, int, int]:
    resp = c.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": current, "leader_epoch": epoch}]}]})
    p = resp.topics[0].partitions[0]
    return p.error_code, p.leader_epoch, p.end_offset


def fetch_after(c: RawClient, topic: str, offset: int, last_fetched_epoch: int, current: int,
                version: int = 12) -> Any:
    part = {**fetch_partition(0, offset, current_leader_epoch=current), "last_fetched_epoch": last_fetched_epoch}
    resp = c.request(FETCH, version, fetch_body([fetch_topic(topic, part)]))
    return resp.responses[0].partitions[0]


@pytest.fixture
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3, racks=["a", "b", "c"]).run_in_thread() as broker:
        yield broker


# -- unclean elections and divergence -----------------------------------------------------------------
def _diverge(cluster: MockBroker, unclean: bool) -> None:
    """Node 2 falls out of the ISR at offset 2, node 1 writes two more records, then stops."""
    cluster.create_topic("u", assignments=[[1, 2]],
                         config={"unclean.leader.election.enable": str(unclean).lower()})
    with connect_to(cluster, 1) as c:
        assert produce(c, "u", make_batch(b"a", b"b"), acks=1).error_code == ErrorCode.NONE
        cluster.set_isr("u", 0, [1])
        assert produce(c, "u", make_batch(b"c", b"d"), acks=1).error_code == ErrorCode.NONE
    cluster.stop_node(1)


def test_an_unclean_election_cuts_the_log_back_and_clients_see_the_divergence(cluster: MockBroker) -> None:
    _diverge(cluster, unclean=True)
    state = cluster.partition_state("u", 0)
    assert (state.leader, state.leader_epoch, state.isr) == (2, 1, [2])
    assert [r.value for r in cluster.records("u")] == [b"a", b"b"]
    assert cluster.offsets("u")["high_watermark"] == 2
    with connect_to(cluster, 2) as c:
        # A consumer that read offsets 0-3 in epoch 0 asks where epoch 0 ends: at 2, below its position.
        assert end_offset(c, "u", 0, 1) == (ErrorCode.NONE, 0, 2)
        diverged = fetch_after(c, "u", 4, last_fetched_epoch=0, current=1)
        assert (diverged.error_code, diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (0, 0, 2)
        assert not diverged.records and diverged.high_watermark == 2
        # Fetching from where the log now ends is fine.
        assert fetch_after(c, "u", 2, last_fetched_epoch=0, current=1).diverging_epoch.epoch == -1
        assert produce(c, "u", make_batch(b"e"), acks=1).error_code == ErrorCode.NONE
        assert end_offset(c, "u", 0, 1) == (ErrorCode.NONE, 0, 2)
        assert end_offset(c, "u", 1, 1) == (ErrorCode.NONE, 1, 3)
        assert values_of(fetch(c, "u", 2, current_leader_epoch=1).records) == [b"e"]
    assert [b.partition_leader_epoch for b in cluster.batches("u")] == [0, 1]
    # The old leader comes back as a follower of the new log.
    cluster.start_node(1)
    assert cluster.partition_state("u", 0).isr == [1, 2]
    assert [r.value for r in cluster.records("u")] == [b"a", b"b", b"e"]


def test_without_unclean_election_the_partition_stays_offline_until_the_topic_allows_it(cluster: MockBroker) -> None:
    _diverge(cluster, unclean=False)
    assert cluster.partition_state("u", 0).leader == -1
    assert [r.value for r in cluster.records("u")] == [b"a", b"b", b"c", b"d"]
    with connect_to(cluster, 2) as c:
        body = {"resources": [{"resource_type": 2, "resource_name": "u", "configs": [
            {"name": "unclean.leader.election.enable", "config_operation": 0, "value": "true"}]}],
            "validate_only": False}
        assert c.request(44, 1, body).responses[0].error_code == ErrorCode.NONE
    cluster.clock.advance(300)  # Kafka's controller checks every unclean.leader.election.interval.ms
    wait_for(lambda: cluster.partition_state("u", 0).leader == 2)
    assert [r.value for r in cluster.records("u")] == [b"a", b"b"]


def test_a_fetch_whose_last_epoch_the_log_cannot_place_is_out_of_range(cluster: MockBroker) -> None:
    cluster.create_topic("t", assignments=[[1, 2, 3]])
    with connect_to(cluster, 1) as c:
        assert produce(c, "t", make_batch(b"x")).error_code == ErrorCode.NONE
        assert fetch_after(c, "t", 1, last_fetched_epoch=0, current=0).error_code == ErrorCode.NONE
        assert fetch_after(c, "t", 1, last_fetched_epoch=7, current=0).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


# -- stalled followers and acks=all ---------------------------------------------------------------------
def test_a_stalled_follower_holds_acks_all_until_it_leaves_the_isr(cluster: MockBroker) -> None:
    cluster.create_topic("s", assignments=[[1, 2, 3]], config={"min.insync.replicas": "2"})
    cluster.stall_node(3)
    with connect_to(cluster, 1) as c, connect_to(cluster, 1) as reader:
        c.send(PRODUCE, 9, produce_body("s", make_batch(b"x"), acks=-1))
        wait_for(lambda: cluster.offsets("s")["high_watermark"] == 0 and len(cluster.records("s")) == 1)
        # Appended but not replicated to node 3: the high watermark stays, consumers see nothing yet.
        held = fetch(reader, "s", 0)
        assert (held.high_watermark, values_of(held.records)) == (0, [])
        assert cluster.partition_state("s", 0).isr == [1, 2, 3]
        cluster.clock.advance(31)  # past replica.lag.time.max.ms (30 s)
        _, resp = c.recv(PRODUCE, 9)
        part = resp.responses[0].partition_responses[0]
        assert (part.error_code, part.base_offset) == (ErrorCode.NONE, 0)
        assert cluster.partition_state("s", 0).isr == [1, 2]
        assert values_of(fetch(reader, "s", 0).records) == [b"x"]
    cluster.resume_node(3)
    assert cluster.partition_state("s", 0).isr == [1, 2, 3]


def test_the_isr_shrinking_below_min_insync_while_waiting_is_not_enough_replicas_after_append(
        cluster: MockBroker) -> None:
    cluster.create_topic("s", assignments=[[1, 2]], config={"min.insync.replicas": "2"})
    cluster.stall_node(2)
    with connect_to(cluster, 1) as c:
        c.send(PRODUCE, 9, produce_body("s", make_batch(b"x"), acks=-1))
        wait_for(lambda: len(cluster.records("s")) == 1)
        cluster.clock.advance(31)
        _, resp = c.recv(PRODUCE, 9)
        part = resp.responses[0].partition_responses[0]
        assert (part.error_code, part.base_offset) == (ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 0)
        # The next acks=all produce is refused before the append.
        assert produce(c, "s", make_batch(b"y"), acks=-1).error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert [r.value for r in cluster.records("s")] == [b"x"]


def test_a_resumed_follower_catches_up_and_completes_the_waiting_produce(cluster: MockBroker) -> None:
    cluster.create_topic("s", assignments=[[1, 2]], config={"min.insync.replicas": "2"})
    cluster.stall_node(2)
    with connect_to(cluster, 1) as c:
        c.send(PRODUCE, 9, produce_body("s", make_batch(b"x"), acks=-1))
        wait_for(lambda: len(cluster.records("s")) == 1)
        cluster.resume_node(2)
        _, resp = c.recv(PRODUCE, 9)
        assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    assert cluster.partition_state("s", 0).isr == [1, 2]


def test_a_stalled_follower_that_has_everything_stays_in_the_isr(cluster: MockBroker) -> None:
    cluster.create_topic("s", assignments=[[1, 2]])
    cluster.stall_node(2)
    cluster.clock.advance(120)
    time.sleep(0.1)
    assert cluster.partition_state("s", 0).isr == [1, 2]
    with connect_to(cluster, 1) as c:  # acks=1 is not held back
        assert produce(c, "s", make_batch(b"x"), acks=1).error_code == ErrorCode.NONE
    cluster.clock.advance(31)
    wait_for(lambda: cluster.partition_state("s", 0).isr == [1])


# -- per-node faults and latency ------------------------------------------------------------------------
def test_fault_rules_can_target_one_node_and_the_record_names_the_node(cluster: MockBroker) -> None:
    cluster.create_topic("t", assignments=[[1, 2, 3]])
    cluster.inject(METADATA, error=ErrorCode.NOT_CONTROLLER, node=2)
    body = {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}
    with connect_to(cluster, 1) as c1, connect_to(cluster, 2) as c2:
        assert c1.request(METADATA, 12, body).topics[0].error_code == ErrorCode.NONE
        assert c2.request(METADATA, 12, body).topics[0].error_code == ErrorCode.NOT_CONTROLLER
        assert c2.request(METADATA, 12, body).topics[0].error_code == ErrorCode.NONE
    assert [r.node_id for r in cluster.received(METADATA)] == [1, 2, 2]


def test_latency_holds_back_the_answers_of_one_node_only(cluster: MockBroker) -> None:
    cluster.set_latency(2, 60_000)
    body = {"topics": None}
    with connect_to(cluster, 1) as c1, connect_to(cluster, 2) as c2:
        assert c1.request(METADATA, 12, body).brokers
        c2.send(METADATA, 12, body)
        c2.sock.settimeout(0.5)
        with pytest.raises(socket.timeout):
            c2.recv(METADATA, 12)
    cluster.set_latency(2, 0)
    with connect_to(cluster, 2) as c2:
        assert c2.request(METADATA, 12, body).brokers
    with pytest.raises(ValueError):
        cluster.set_latency(2, -1)
    with pytest.raises(KeyError):
        cluster.set_latency(9, 10)


# -- follower fetching (KIP-392) ------------------------------------------------------------------------
def rack_fetch(c: RawClient, topic: str, rack: str, version: int = 11) -> Any:
    body = {**fetch_body([fetch_topic(topic, fetch_partition(0, 0))]), "rack_id": rack}
    return c.request(FETCH, version, body).responses[0].partitions[0]


def test_the_leader_sends_a_consumer_to_an_in_sync_follower_in_its_rack() -> None:
    with MockBroker(brokers=3, racks=["a", "b", "c"],
                    config={"replica.selector.class": RACK_AWARE}).run_in_thread() as broker:
        broker.create_topic("t", assignments=[[1, 2, 3]])
        with connect_to(broker, 1) as leader, connect_to(broker, 2) as follower:
            assert produce(leader, "t", make_batch(b"x")).error_code == ErrorCode.NONE
            sent = rack_fetch(leader, "t", "b")
            assert (sent.error_code, sent.preferred_read_replica, sent.high_watermark) == (0, 2, 1)
            assert values_of(sent.records) == []
            served = rack_fetch(follower, "t", "b")
            assert (served.preferred_read_replica, values_of(served.records)) == (-1, [b"x"])
            # The leader's own rack, no rack, or an unknown one: the leader serves.
            for rack in ("a", "", "z"):
                here = rack_fetch(leader, "t", rack)
                assert (here.preferred_read_replica, values_of(here.records)) == (-1, [b"x"])
            broker.set_isr("t", 0, [1, 3])
            assert rack_fetch(leader, "t", "b").preferred_read_replica == -1  # out of the ISR
            broker.stop_node(3)
            assert rack_fetch(leader, "t", "c").preferred_read_replica == -1  # stopped
        assert [r.node_id for r in broker.received(FETCH)][:2] == [1, 2]


def test_without_a_replica_selector_there_is_no_preferred_replica(cluster: MockBroker) -> None:
    cluster.create_topic("t", assignments=[[1, 2, 3]])
    with connect_to(cluster, 1) as c:
        assert rack_fetch(c, "t", "b").preferred_read_replica == -1


def test_a_parked_fetch_wakes_when_a_stalled_follower_stops_holding_the_high_watermark(cluster: MockBroker) -> None:
    cluster.create_topic("s", assignments=[[1, 2]])
    cluster.stall_node(2)
    with connect_to(cluster, 1) as producer, connect_to(cluster, 1) as reader:
        assert produce(producer, "s", make_batch(b"x"), acks=1).error_code == ErrorCode.NONE
        # A long poll (60 s) parked below the held high watermark.
        reader.send(FETCH, 12, fetch_body([fetch_topic("s", fetch_partition(0, 0))], max_wait_ms=60_000))
        cluster.clock.advance(31)  # node 2 leaves the ISR: the high watermark jumps to 1
        _, resp = reader.recv(FETCH, 12)
        assert values_of(resp.responses[0].partitions[0].records) == [b"x"]
