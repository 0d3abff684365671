"""One object per node (mockbroker/node.py): each connection is bound to the node whose listener accepted
it, and handlers reach state through that node, so a second node is one more BrokerNode over the same
cluster (what the cluster issue builds on)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mockbroker.node import BrokerNode
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster import internal_topics, leadership
from mockbroker.state.cluster.cluster import Listener, Node
from mockbroker.state.txn.inspection import transactions
from tests.handlers.conftest import API_VERSIONS, INIT_PRODUCER_ID, fetch, make_batch, produce, values_of
from tests.rawclient import RawClient


def wait_for(condition: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_the_default_broker_runs_one_node_that_owns_the_coordinators(mockbroker: MockBroker) -> None:
    node = mockbroker.node
    assert mockbroker.nodes == {mockbroker.node_id: node}
    assert node.listeners == mockbroker.cluster.listeners
    assert mockbroker.group_coordinator is node.group_coordinator
    assert mockbroker.txn_coordinator is node.txn_coordinator
    assert mockbroker.fetch_sessions is node.fetch_sessions


def test_a_connection_is_bound_to_the_node_of_its_listener(mockbroker: MockBroker, client: RawClient) -> None:
    client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    wait_for(lambda: mockbroker._call(lambda: len(mockbroker._connections)) == 1, "the connection")
    [conn] = mockbroker._call(lambda: list(mockbroker._connections))
    assert conn.ctx is not None and conn.ctx.node is mockbroker.node
    assert conn.ctx.listener is mockbroker.cluster.listeners[0] and conn.ctx.node_id == mockbroker.node_id


def test_a_listener_of_a_node_the_broker_does_not_run_is_refused() -> None:
    with pytest.raises(ValueError, match="belongs to node 2"):
        MockBroker(node_id=1, listeners=[Listener("PLAINTEXT", 2, "127.0.0.1", 0)])


def test_rack_is_the_clusters_record_of_the_node(mockbroker: MockBroker) -> None:
    mockbroker._call(setattr, mockbroker.node, "rack", "rack-a")
    assert mockbroker.cluster.nodes[mockbroker.node_id].rack == "rack-a"


@pytest.fixture
def two_nodes() -> Iterator[MockBroker]:
    """A broker whose process also runs node 2, with a listener of its own: what MockBroker(brokers=N) will
    build, made by hand here to show that handlers need nothing more than the node of their connection."""
    broker = MockBroker(node_id=1)
    second = BrokerNode(2, broker.cluster, broker.clock, broker.scheduler, security=broker.security)
    broker.cluster.nodes[2] = Node(2)
    broker.nodes[2] = second
    broker.cluster.listeners.append(Listener("PLAINTEXT", 2, "127.0.0.1", 0))
    with broker.run_in_thread():
        yield broker


def test_each_node_serves_the_partitions_it_leads(two_nodes: MockBroker) -> None:
    broker = two_nodes
    broker._call(lambda: broker.cluster.create_topic("on-two", assignments=[(0, [2]), (1, [1])]))
    [first, second] = broker.cluster.listeners
    with RawClient(first.host, first.port) as one, RawClient(second.host, second.port) as two:
        assert produce(one, "on-two", make_batch(b"a"), partition=0).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert produce(two, "on-two", make_batch(b"b"), partition=0).error_code == ErrorCode.NONE
        assert produce(two, "on-two", make_batch(b"c"), partition=1).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert produce(one, "on-two", make_batch(b"d"), partition=1).error_code == ErrorCode.NONE
        assert fetch(one, "on-two", partition=0).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert values_of(fetch(two, "on-two", partition=0).records) == [b"b"]
    assert [r.value for r in broker.records("on-two")] == [b"b", b"d"]


def test_a_transaction_lands_in_the_coordinator_of_the_node_asked(two_nodes: MockBroker) -> None:
    broker = two_nodes
    second = broker.cluster.listeners[1]
    # Node 2 leads the id's __transaction_state partition, so it coordinates the id.
    broker._call(lambda: leadership.move_leader(
        broker.cluster, internal_topics.partition_of(broker.cluster, "__transaction_state", "txn-on-two"), 2))
    with RawClient(second.host, second.port) as two:
        resp = two.request(INIT_PRODUCER_ID, 4, {"transactional_id": "txn-on-two", "transaction_timeout_ms": 60000,
                                                 "producer_id": -1, "producer_epoch": -1})
    assert resp.error_code == ErrorCode.NONE
    on_two = broker._call(lambda: transactions(broker.nodes[2].txn_coordinator))
    on_one = broker._call(lambda: transactions(broker.nodes[1].txn_coordinator))
    assert [t.transactional_id for t in on_two] == ["txn-on-two"] and on_one == []
