"""The fault proxy (mockbroker/remote/proxy.py) in front of a MockBroker(brokers=3) reached only over the wire:
real clients (confluent-kafka, aiokafka) bootstrap from RemoteBroker(..., proxy=True).bootstrap_servers,
never reach the cluster's own ports, and see inject(...)'s faults as the embedded broker gives them;
received() records what passed; the endpoints in Metadata, FindCoordinator, DescribeCluster and KIP-951
leader hints name the proxy."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.records.builder import build_batch
from mockbroker.remote import NotOnRemoteTarget, RemoteBroker
from mockbroker.remote.client import Connection
from mockbroker.remote.proxy import parse_servers

QUIET = {"log_level": 3}


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        yield broker


@pytest.fixture
def remote(cluster: MockBroker) -> Iterator[RemoteBroker]:
    with RemoteBroker(cluster.bootstrap_servers, proxy=True) as target:
        yield target


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def proxy_ports(remote: RemoteBroker) -> set[int]:
    assert remote.proxy is not None
    return {port for _, port in remote.proxy.routes().values()}


def real_ports(cluster: MockBroker) -> set[int]:
    return {port for _, port in parse_servers(cluster.bootstrap_servers)}


def produce(bootstrap: str, topic: str, count: int, **conf: object) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                            **QUIET, **conf})
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=i % 3)
    assert producer.flush(60) == 0


def consume(bootstrap: str, topic: str, count: int, group: str) -> list[bytes]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                            "client.id": group, **QUIET})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


def test_clients_reach_only_the_proxy(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic, group = unique("through"), unique("g")
    remote.create_topic(topic, 3)
    assert remote.bootstrap_servers != cluster.bootstrap_servers
    producer = ck.Producer({"bootstrap.servers": remote.bootstrap_servers, "client.id": group, **QUIET})
    brokers = producer.list_topics(timeout=30).brokers
    assert sorted(brokers) == [1, 2, 3]
    assert {b.host for b in brokers.values()} == {"127.0.0.1"}
    assert {b.port for b in brokers.values()} <= proxy_ports(remote)
    assert not {b.port for b in brokers.values()} & real_ports(cluster)
    for i in range(9):
        producer.produce(topic, value=b"v%d" % i, partition=i % 3)
    assert producer.flush(60) == 0
    # while the producer is connected: every connection the cluster sees from it comes from the proxy
    mine = {r.connection_id for r in cluster.received() if r.client_id == group}
    peers = cluster._call(lambda: {c.ctx.connection_id: (c.ctx.client_host, c.ctx.client_port)
                                   for c in cluster._connections if c.ctx is not None})
    assert mine and all(peers[c] in remote.proxy.upstream_sockets() for c in mine if c in peers)  # type: ignore[union-attr]
    assert {peers[c] for c in mine if c in peers}, "the producer's connections are open"
    del producer
    assert sorted(consume(remote.bootstrap_servers, topic, 9, group)) == sorted(b"v%d" % i for i in range(9))
    assert remote.committed(group) == {(topic, p): 3 for p in range(3)}
    seen = {r.api_key for r in remote.received() if r.client_id == group}
    assert {ApiKey.METADATA, ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.JOIN_GROUP, ApiKey.OFFSET_COMMIT} <= seen


def test_endpoints_in_answers_name_the_proxy(cluster: MockBroker, remote: RemoteBroker) -> None:
    group = unique("coord")
    [(host, port)] = parse_servers(remote.bootstrap_servers)[:1]
    conn = Connection(host, port)
    try:
        proxied = proxy_ports(remote)
        brokers = conn.request(ApiKey.METADATA, {"topics": None, "allow_auto_topic_creation": False},
                               newest=12).brokers
        assert sorted(b.node_id for b in brokers) == [1, 2, 3]
        assert {(b.host, b.port in proxied) for b in brokers} == {("127.0.0.1", True)}
        old = conn.send(ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
        assert old.error_code == 0 and (old.host, old.port in proxied) == ("127.0.0.1", True)
        new = conn.request(ApiKey.FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": [group]}, newest=6, oldest=4)
        assert [(c.host, c.port in proxied, c.node_id) for c in new.coordinators] == [("127.0.0.1", True, old.node_id)]
        described = conn.request(ApiKey.DESCRIBE_CLUSTER, {"include_cluster_authorized_operations": False},
                                 newest=1).brokers
        assert {(b.host, b.port in proxied) for b in described} == {("127.0.0.1", True)}
        assert len(described) == 3
    finally:
        conn.close()


def metadata_through(remote: RemoteBroker) -> dict[int, tuple[str, int]]:
    """Send one Metadata through the proxy's bootstrap listener; {node id: the proxy's address for it}."""
    conn = Connection(*parse_servers(remote.bootstrap_servers)[0])
    try:
        conn.request(ApiKey.METADATA, {"topics": None, "allow_auto_topic_creation": False}, newest=12)
    finally:
        conn.close()
    assert remote.proxy is not None
    return remote.proxy.node_routes()


def test_leader_hints_name_the_proxy(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic = unique("hint")
    remote.create_topic(topic, 1, replication_factor=3)
    leader = cluster.partition_state(topic, 0).leader
    follower = next(n for n in (1, 2, 3) if n != leader)
    conn = Connection(*metadata_through(remote)[follower])
    try:
        answer = conn.request(ApiKey.PRODUCE, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                               "topic_data": [{"name": topic, "partition_data": [
                                                   {"index": 0, "records": bytes(build_batch([(b"k", b"v")]))}]}]},
                              newest=12, oldest=10)
        part = answer.responses[0].partition_responses[0]
        assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert part.current_leader.leader_id == leader
        [hint] = answer.node_endpoints
        assert (hint.node_id, hint.host, hint.port in proxy_ports(remote)) == (leader, "127.0.0.1", True)
        assert hint.port not in real_ports(cluster)
    finally:
        conn.close()


def test_an_injected_error_is_answered_by_the_proxy_and_retried(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic, client = unique("err"), unique("producer")
    remote.create_topic(topic, 3)
    remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, count=2, topic=topic)
    produce(remote.bootstrap_servers, topic, 6, **{"client.id": client})
    assert sorted(r.value for r in remote.records(topic)) == sorted(b"v%d" % i for i in range(6))
    through = [r for r in remote.received(ApiKey.PRODUCE) if r.client_id == client]
    reached = [r for r in cluster.received(ApiKey.PRODUCE) if r.client_id == client]
    assert len(through) - len(reached) == 2  # two answered with the error by the proxy, then retried


def test_the_error_answer_is_the_apis_own_per_partition(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic = unique("lo")
    remote.create_topic(topic, 2)
    routes = metadata_through(remote)
    remote.inject(ApiKey.LIST_OFFSETS, error=ErrorCode.UNKNOWN_LEADER_EPOCH, topic=topic, partition=1)

    def list_offsets(partition: int) -> int:
        conn = Connection(*routes[cluster.partition_state(topic, partition).leader])
        try:
            answer = conn.request(ApiKey.LIST_OFFSETS, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                                "timestamp": -1}]}]}, newest=7, oldest=1)
        finally:
            conn.close()
        [found] = answer.topics[0].partitions
        assert found.partition_index == partition
        return int(found.error_code)

    before = len(cluster.received(ApiKey.LIST_OFFSETS))
    assert list_offsets(0) == ErrorCode.NONE  # the other partition: not matched, sent on
    assert list_offsets(1) == ErrorCode.UNKNOWN_LEADER_EPOCH  # answered by the proxy, not sent on
    assert list_offsets(1) == ErrorCode.NONE  # count 1: used up
    assert len(cluster.received(ApiKey.LIST_OFFSETS)) - before == 2
    assert len([r for r in remote.received(ApiKey.LIST_OFFSETS) if r.client_id == "mockbroker-remote"]) >= 3


def test_a_node_filter_faults_only_that_brokers_listener(remote: RemoteBroker) -> None:
    assert remote.proxy is not None
    routes = remote.proxy.node_routes()  # known from the start: the proxy asked the cluster for its brokers
    assert sorted(routes) == [1, 2, 3] and routes == metadata_through(remote)
    remote.inject(ApiKey.METADATA, error=ErrorCode.NOT_CONTROLLER, node=2, count=5)
    answers = {}
    for node, address in sorted(routes.items()):
        conn = Connection(*address)
        try:
            answers[node] = conn.request(ApiKey.METADATA, {"topics": None, "allow_auto_topic_creation": False},
                                         newest=12)
        finally:
            conn.close()
    assert [len(answers[n].brokers) for n in (1, 2, 3)] == [3, 0, 3]  # Metadata's error answer has no brokers
    assert {r.node_id for r in remote.received(ApiKey.METADATA)} >= {1, 2, 3}
    remote.clear_faults()
    assert remote.proxy is not None and remote.proxy.faults.rules == []


def test_drop_after_is_applied_then_retried_and_deduplicated(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic = unique("drop-after")
    remote.create_topic(topic, 3)
    remote.inject(ApiKey.PRODUCE, drop="after", topic=topic)
    produce(remote.bootstrap_servers, topic, 9)
    assert len(remote.received(ApiKey.PRODUCE)) >= 2
    values = [r.value for r in remote.records(topic)]
    assert sorted(values) == sorted(b"v%d" % i for i in range(9))  # idempotence: nothing twice
    assert remote.proxy is not None and remote.proxy.faults.rules == []  # the rule fired


def test_drop_before_and_delay_with_a_consumer(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic, group = unique("drop-before"), unique("g")
    remote.create_topic(topic, 3)
    produce(remote.bootstrap_servers, topic, 6)
    remote.inject(ApiKey.FETCH, drop="before", topic=topic, count=2)
    remote.inject(ApiKey.OFFSET_COMMIT, delay=0.3)
    assert sorted(consume(remote.bootstrap_servers, topic, 6, group)) == sorted(b"v%d" % i for i in range(6))
    assert remote.committed(group) == {(topic, p): 2 for p in range(3)}
    assert remote.proxy is not None and remote.proxy.faults.rules == []  # both rules fired (and were used up)


def test_delay_holds_the_answer_back(remote: RemoteBroker) -> None:
    [(host, port)] = parse_servers(remote.bootstrap_servers)[:1]
    conn = Connection(host, port)
    try:
        remote.inject(ApiKey.METADATA, delay=0.5)
        started = time.monotonic()
        brokers = conn.request(ApiKey.METADATA, {"topics": None, "allow_auto_topic_creation": False}, newest=12).brokers
        assert time.monotonic() - started >= 0.5  # held back at least that long (a lower bound only)
        assert len(brokers) == 3
    finally:
        conn.close()


def aiokafka_round_trip(topic: str, **client: object) -> list[bytes]:
    """Five records produced by an idempotent aiokafka producer over 3 partitions, then read back by an aiokafka
    consumer from the earliest offset (client: the settings both take, bootstrap_servers and security)."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**client, enable_idempotence=True, request_timeout_ms=30000)
        await producer.start()
        try:
            for i in range(5):
                await asyncio.wait_for(producer.send_and_wait(topic, b"a%d" % i, partition=i % 3), 60)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, **client, auto_offset_reset="earliest")
        await consumer.start()
        got: list[bytes] = []
        try:
            deadline = time.monotonic() + 60
            while len(got) < 5 and time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=500)
                got += [m.value for msgs in batch.values() for m in msgs if m.value is not None]
        finally:
            await consumer.stop()
        return got

    return asyncio.run(asyncio.wait_for(run(), 120))


def test_aiokafka_through_the_proxy_with_an_injected_error(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic = unique("aio")
    remote.create_topic(topic, 3)
    remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)
    got = aiokafka_round_trip(topic, bootstrap_servers=remote.bootstrap_servers)
    assert sorted(got) == sorted(b"a%d" % i for i in range(5))
    assert sorted(r.value for r in remote.records(topic)) == sorted(got)
    assert len(remote.received(ApiKey.PRODUCE)) >= 6


def test_without_the_proxy_faults_are_refused(cluster: MockBroker) -> None:
    with RemoteBroker(cluster.bootstrap_servers) as plain:
        assert plain.proxy is None and plain.bootstrap_servers == cluster.bootstrap_servers
        for call in ("inject", "received", "clear_faults"):
            with pytest.raises(NotOnRemoteTarget, match="fault proxy"):
                getattr(plain, call)
