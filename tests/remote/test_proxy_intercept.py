"""Request hooks through the fault proxy (mockbroker/remote/proxy_intercept.py): KafkaProxy.intercept and
RemoteBroker.intercept with proxy=True, in front of a MockBroker(brokers=3) reached only over the wire; a
hook answers, changes the cluster's answer (`await context.forward()`), errors, delays or drops, and sees the
SASL user of a client that logged in through the proxy over TLS."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker, intercept
from mockbroker.errors import ErrorCode
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import Msg
from mockbroker.remote import KafkaProxy, NotOnRemoteTarget, RemoteBroker
from mockbroker.remote.client import Connection
from mockbroker.remote.proxy import parse_servers

QUIET = {"log_level": 3}
METADATA = {"topics": None, "allow_auto_topic_creation": False}


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        yield broker


@pytest.fixture
def proxy(cluster: MockBroker) -> Iterator[KafkaProxy]:
    with KafkaProxy(cluster.bootstrap_servers) as running:
        yield running


@pytest.fixture
def conn(proxy: KafkaProxy) -> Iterator[Connection]:
    connection = Connection(*parse_servers(proxy.bootstrap_servers)[0], client_id="hooked")
    try:
        yield connection
    finally:
        connection.close()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create(conn: Connection, name: str) -> Any:
    body = {"topics": [{"name": name, "num_partitions": 1, "replication_factor": -1, "assignments": [],
                        "configs": []}], "timeout_ms": 30000, "validate_only": False}
    return conn.request(ApiKey.CREATE_TOPICS, body, newest=7)


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def test_a_sync_hook_answers_once_then_the_cluster_does(proxy: KafkaProxy, conn: Connection) -> None:
    seen: list[tuple[int, int, str | None, int, str]] = []

    def canned(request: Msg, context: Any) -> dict[str, Any]:
        seen.append((context.api_key, context.api_version, context.client_id, context.node_id, context.principal))
        return {"brokers": [], "topics": [{"name": "ghost", "error_code": "UNKNOWN_TOPIC_OR_PARTITION"}]}

    proxy.intercept(ApiKey.METADATA, canned, count=1)
    answer = conn.request(ApiKey.METADATA, METADATA, newest=12)
    assert answer.brokers == [] and [(t.name, t.error_code) for t in answer.topics] == [("ghost", 3)]
    assert len(conn.request(ApiKey.METADATA, METADATA, newest=12).brokers) == 3  # the hook was used up
    assert seen == [(ApiKey.METADATA, 12, "hooked", seen[0][3], "User:ANONYMOUS")]
    assert seen[0][3] in {node for node in proxy.node_routes()}  # the node behind the listener


def test_an_async_hook_changes_the_clusters_answer(cluster: MockBroker, proxy: KafkaProxy, conn: Connection) -> None:
    async def add_ghost(request: Msg, context: Any) -> Msg:
        answer = await context.forward()
        assert context.called_broker
        answer.topics.append({"name": "ghost", "error_code": 0, "partitions": []})
        return answer

    hook = proxy.intercept(ApiKey.METADATA, add_ghost)
    for _ in range(2):
        answer = conn.request(ApiKey.METADATA, METADATA, newest=12)
        assert "ghost" in [t.name for t in answer.topics]
        proxied = {port for _, port in proxy.routes().values()}
        assert {b.port for b in answer.brokers} <= proxied  # the endpoints the hook saw name the proxy
    hook.remove()
    assert "ghost" not in [t.name for t in conn.request(ApiKey.METADATA, METADATA, newest=12).topics]
    assert proxy.faults.rules == []


def list_offsets(conn: Connection, topic: str) -> int:
    """The error code of partition 0 in a ListOffsets (latest) answer."""
    body = {"replica_id": -1, "isolation_level": 0,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]}
    return int(conn.request(ApiKey.LIST_OFFSETS, body, newest=7).topics[0].partitions[0].error_code)


def fresh(proxy: KafkaProxy) -> Connection:
    return Connection(*parse_servers(proxy.bootstrap_servers)[0])


def to_leader(conn: Connection, topic: str) -> Connection:
    """A connection, through the proxy, to the leader of the topic's partition 0 (as Metadata names it)."""
    answer = conn.request(ApiKey.METADATA, {"topics": [{"name": topic}], "allow_auto_topic_creation": False},
                          newest=12)
    leader = answer.topics[0].partitions[0].leader_id
    broker = next(b for b in answer.brokers if b.node_id == leader)
    return Connection(broker.host, broker.port, client_id="hooked")


def test_answer_error_and_delay_from_a_hook(cluster: MockBroker, proxy: KafkaProxy, conn: Connection) -> None:
    name = unique("hooked")
    proxy.intercept(ApiKey.CREATE_TOPICS, lambda request, context: {
        "topics": [{"name": t.name, "error_code": "POLICY_VIOLATION"} for t in request.topics]}, count=1)
    assert create(conn, name).topics[0].error_code == ErrorCode.POLICY_VIOLATION
    assert name not in cluster.topics()  # answered by the hook, never sent on
    cluster.create_topic(name)
    conn = to_leader(conn, name)
    before = len(cluster.received(ApiKey.LIST_OFFSETS))
    proxy.intercept(ApiKey.LIST_OFFSETS, lambda request, context: ErrorCode.NOT_LEADER_OR_FOLLOWER, count=1)
    assert list_offsets(conn, name) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    proxy.intercept(ApiKey.LIST_OFFSETS, lambda request, context: intercept.delay(
        0.05, then=intercept.error(ErrorCode.OFFSET_NOT_AVAILABLE)), count=1)
    assert list_offsets(conn, name) == ErrorCode.OFFSET_NOT_AVAILABLE
    assert len(cluster.received(ApiKey.LIST_OFFSETS)) == before  # neither was sent on
    proxy.intercept(ApiKey.LIST_OFFSETS, lambda request, context: intercept.delay(0.05), count=1)
    assert list_offsets(conn, name) == ErrorCode.NONE  # then the cluster's answer
    assert len(cluster.received(ApiKey.LIST_OFFSETS)) == before + 1
    conn.close()


def test_drops_from_a_hook_and_errors_an_api_cannot_carry(cluster: MockBroker, proxy: KafkaProxy) -> None:
    name = unique("dropped")
    for answer in (lambda request, context: intercept.drop(),
                   lambda request, context: ErrorCode.POLICY_VIOLATION):  # CreateTopics has no top-level error
        proxy.intercept(ApiKey.CREATE_TOPICS, answer, count=1)
        conn = fresh(proxy)
        try:
            with pytest.raises(ConnectionError, match="closed the connection"):
                create(conn, name)
        finally:
            conn.close()
        assert name not in cluster.topics()
    proxy.intercept(ApiKey.CREATE_TOPICS, lambda request, context: intercept.drop(after=True), count=1)
    conn = fresh(proxy)
    try:
        with pytest.raises(ConnectionError, match="closed the connection"):
            create(conn, name)
    finally:
        conn.close()
    wait_for(lambda: name in cluster.topics())  # sent on and applied, then closed unanswered


def test_a_failing_hook_answers_unknown_server_error(cluster: MockBroker, proxy: KafkaProxy,
                                                     conn: Connection) -> None:
    name = unique("failing")
    cluster.create_topic(name)
    conn = to_leader(conn, name)
    proxy.intercept(ApiKey.LIST_OFFSETS, lambda request, context: context.call_broker(), count=1)  # sync: refused
    assert list_offsets(conn, name) == ErrorCode.UNKNOWN_SERVER_ERROR
    proxy.intercept(ApiKey.LIST_OFFSETS, lambda request, context: 42, count=1)  # not an answer
    assert list_offsets(conn, name) == ErrorCode.UNKNOWN_SERVER_ERROR
    assert list_offsets(conn, name) == ErrorCode.NONE  # the connection serves on
    conn.close()


def test_remote_broker_intercept_with_a_real_client(cluster: MockBroker) -> None:
    with RemoteBroker(cluster.bootstrap_servers) as plain:
        with pytest.raises(NotOnRemoteTarget, match="fault proxy"):
            plain.intercept(ApiKey.PRODUCE, lambda request, context: None)  # type: ignore[attr-defined]
    with RemoteBroker(cluster.bootstrap_servers, proxy=True) as remote:
        topic = unique("hooked")
        remote.create_topic(topic, 3)
        calls: list[int] = []

        def not_leader_twice(request: Msg, context: Any) -> Any:
            calls.append(context.node_id)
            return intercept.error(ErrorCode.NOT_LEADER_OR_FOLLOWER) if len(calls) <= 2 else None

        remote.intercept(ApiKey.PRODUCE, not_leader_twice)  # type: ignore[attr-defined]
        producer = ck.Producer({**remote.client_config, "enable.idempotence": True, **QUIET})
        for i in range(3):
            producer.produce(topic, value=b"v%d" % i, partition=0)
        assert producer.flush(60) == 0
        assert [r.value for r in remote.records(topic)] == [b"v0", b"v1", b"v2"]
        assert len(calls) >= 3 and set(calls) <= set(remote.proxy.node_routes())  # type: ignore[union-attr]
        remote.clear_faults()  # type: ignore[attr-defined]  # leaves the hooks, as MockBroker's does
        assert [r.action for r in remote.proxy.faults.rules] == ["hook"]  # type: ignore[union-attr]
        remote.clear_intercepts()  # type: ignore[attr-defined]
        assert remote.proxy.faults.rules == []  # type: ignore[union-attr]


def test_a_hook_sees_the_sasl_user_after_a_tls_login(mockbroker_factory: Callable[..., MockBroker]) -> None:
    secured = mockbroker_factory(brokers=3, security="SASL_SSL", users={"alice": "secret"})
    settings = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(secured.tls.ca_file),
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "secret"}
    with KafkaProxy(secured.bootstrap_servers, config=settings) as proxy:
        secured.create_topic("guarded", 3)
        who: list[str] = []

        async def first_fails(request: Msg, context: Any) -> Any:
            who.append(context.principal)
            if len(who) == 1:
                return intercept.error(ErrorCode.NOT_LEADER_OR_FOLLOWER)
            return await context.forward()

        proxy.intercept(ApiKey.PRODUCE, first_fails)
        producer = ck.Producer({**proxy.client_settings(), "enable.idempotence": True, **QUIET})
        producer.produce("guarded", value=b"through", partition=1)
        assert producer.flush(60) == 0
        assert [r.value for r in secured.records("guarded")] == [b"through"]
        assert set(who) == {"User:alice"} and len(who) >= 2


def test_a_hook_on_requests_with_no_answer(cluster: MockBroker, proxy: KafkaProxy) -> None:
    topic = unique("acks0")
    cluster.create_topic(topic, 1)
    answers: list[Any] = []

    async def forward(request: Msg, context: Any) -> Any:
        answers.append(await context.forward())  # acks=0: sent on, no answer due
        return None

    proxy.intercept(ApiKey.PRODUCE, forward)
    producer = ck.Producer({"bootstrap.servers": proxy.bootstrap_servers, "acks": 0, "linger.ms": 5, **QUIET})
    for i in range(3):
        producer.produce(topic, value=b"z%d" % i, partition=0)
    assert producer.flush(60) == 0
    wait_for(lambda: len(cluster.records(topic)) == 3)
    wait_for(lambda: len(answers) > 0)  # the hook's forward() returns once the request is sent on
    assert set(answers) == {None}
