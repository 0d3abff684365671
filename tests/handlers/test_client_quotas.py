"""Raw-protocol tests of DescribeClientQuotas (48), AlterClientQuotas (49) and throttling: Kafka's answers
and messages, throttle_time_ms in Produce and Fetch answers, the muted connection, refused connections."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import fetch_body, fetch_partition, fetch_topic, make_batch, produce_body
from tests.rawclient import RawClient

DESCRIBE, ALTER, PRODUCE, FETCH, METADATA = 48, 49, 0, 1, 3


def connect(broker: MockBroker, client_id: str = "app") -> RawClient:
    c = RawClient(broker.host, broker.port)
    c.client_id = client_id
    return c


def entry(components: dict[str, str | None], **ops: float | None) -> dict[str, Any]:
    return {"entity": [{"entity_type": t, "entity_name": n} for t, n in components.items()],
            "ops": [{"key": k, "value": 0.0 if v is None else v, "remove": v is None} for k, v in ops.items()]}


@pytest.mark.parametrize("version", [0, 1])
def test_alter_then_describe_round_trip(mockbroker: MockBroker, version: int) -> None:
    with connect(mockbroker) as c:
        resp = c.request(ALTER, version, {"entries": [
            entry({"user": "alice"}, producer_byte_rate=1024.0),
            entry({"user": None, "client-id": "app"}, request_percentage=50.0),
            entry({"ip": "10.0.0.1"}, producer_byte_rate=1.0),
        ], "validate_only": False})
        got = [(e.error_code, e.error_message, [(x.entity_type, x.entity_name) for x in e.entity]) for e in resp.entries]
        assert got == [(0, None, [("user", "alice")]),
                       (0, None, [("client-id", "app"), ("user", None)]),
                       (ErrorCode.INVALID_REQUEST, "Invalid configuration key producer_byte_rate", [("ip", "10.0.0.1")])]
        d = c.request(DESCRIBE, version, {"components": [{"entity_type": "user", "match_type": 2, "match": None}],
                                          "strict": False})
        assert d.error_code == 0
        found = {tuple((x.entity_type, x.entity_name) for x in e.entity): {v.key: v.value for v in e["values"]}
                 for e in d.entries}
        assert found == {(("user", "alice"),): {"producer_byte_rate": 1024.0},
                         (("client-id", "app"), ("user", None)): {"request_percentage": 50.0}}
        d = c.request(DESCRIBE, version, {"components": [{"entity_type": "user", "match_type": 1, "match": None}],
                                          "strict": True})
        assert d.entries == []
    assert mockbroker.quotas() == [{"entity": {"user": "alice"}, "values": {"producer_byte_rate": 1024.0}},
                                   {"entity": {"client-id": "app", "user": "<default>"},
                                    "values": {"request_percentage": 50.0}}]


def test_validate_only_and_bad_filters(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(ALTER, 1, {"entries": [entry({"user": "a"}, consumer_byte_rate=5.0)], "validate_only": True})
        assert resp.entries[0].error_code == 0
        assert mockbroker.quotas() == []
        d = c.request(DESCRIBE, 1, {"components": [{"entity_type": "ip", "match_type": 2, "match": None},
                                                   {"entity_type": "user", "match_type": 2, "match": None}],
                                    "strict": False})
        assert (d.error_code, d.entries) == (ErrorCode.INVALID_REQUEST, None)
        assert d.error_message.startswith("Invalid entity filter component combination.")
        d = c.request(DESCRIBE, 1, {"components": [{"entity_type": "tenant", "match_type": 2, "match": None}],
                                    "strict": False})
        assert (d.error_code, d.error_message) == (ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type tenant")


def test_set_quota_refuses_what_kafka_refuses(mockbroker: MockBroker) -> None:
    with pytest.raises(ValueError, match="IP entity should"):
        mockbroker.set_quota(user="a", ip="1.2.3.4", connection_creation_rate=1)
    with pytest.raises(ValueError, match="must be greater than 0"):
        mockbroker.set_quota(client_id="x", producer_byte_rate=0)
    mockbroker.set_quota(client_id="<default>", producer_byte_rate=10)
    assert mockbroker.quotas() == [{"entity": {"client-id": "<default>"}, "values": {"producer_byte_rate": 10.0}}]


def answered_within(c: RawClient, seconds: float) -> bool:
    c.sock.settimeout(seconds)
    try:
        c.sock.recv(1, socket.MSG_PEEK)
        return True
    except TimeoutError:
        return False
    finally:
        c.sock.settimeout(None)


def test_produce_over_its_byte_rate_is_throttled_and_the_connection_muted_on_the_broker_clock(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    clock = Clock(frozen=True)
    broker = mockbroker_factory(clock=clock)
    broker.create_topic("t")
    broker.set_quota(client_id="app", producer_byte_rate=100)
    with connect(broker) as c, connect(broker, "other") as other:
        body = produce_body("t", make_batch(b"x" * 2000))
        first = c.request(PRODUCE, 9, body)
        assert first.throttle_time_ms > 0
        size = len(c.encode(PRODUCE, 9, body)) - 4
        assert first.throttle_time_ms == round((size / 10 - 100) / 100 * 10_000)  # Kafka's formula, 10 s window
        c.send(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": False})
        assert not answered_within(c, 0.5)  # muted: the request waits, whatever the wall clock does
        assert other.request(PRODUCE, 9, body).throttle_time_ms == 0  # another client id has no quota
        clock.advance(first.throttle_time_ms / 1000)
        assert answered_within(c, 10.0)
        c.recv(METADATA, 12)


def test_fetch_over_its_byte_rate_answers_empty_with_the_throttle(mockbroker_factory: Callable[..., MockBroker]) -> None:
    clock = Clock(frozen=True)
    broker = mockbroker_factory(clock=clock)
    broker.create_topic("t")
    with connect(broker) as c:
        c.request(PRODUCE, 9, produce_body("t", make_batch(b"y" * 5000)))
        broker.set_quota(user="<default>", consumer_byte_rate=10)
        resp = c.request(FETCH, 12, fetch_body([fetch_topic("t", fetch_partition(0, 0))]))
        assert resp.throttle_time_ms > 0 and resp.responses == []
        c.send(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": False})
        assert not answered_within(c, 0.5)  # muted after a parked (awaited) answer too
        broker.set_quota(user="<default>", consumer_byte_rate=None)
        clock.advance(resp.throttle_time_ms / 1000)
        c.recv(METADATA, 12)
        resp = c.request(FETCH, 12, fetch_body([fetch_topic("t", fetch_partition(0, 0))]))
        assert resp.throttle_time_ms == 0 and resp.responses[0].partitions[0].records


def test_connections_over_the_ip_rate_are_closed(mockbroker: MockBroker) -> None:
    mockbroker.set_quota(ip="<default>", connection_creation_rate=1)
    clients = [connect(mockbroker) for _ in range(12)]  # accepted in order: 10 in the 10 s window is the rate
    try:
        assert clients[-1].is_closed_by_peer(timeout=10.0)
        assert clients[-2].is_closed_by_peer(timeout=10.0)
        assert [c.request(3, 12, {"topics": [], "allow_auto_topic_creation": False,
                                  "include_topic_authorized_operations": False}).cluster_id for c in clients[:10]] \
            == [mockbroker.cluster.cluster_id] * 10  # the first ten are served
    finally:
        for c in clients:
            c.close()


def test_create_topics_over_the_mutation_rate_is_refused_at_strict_versions(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    clock = Clock(frozen=True)
    broker = mockbroker_factory(clock=clock)
    broker.set_quota(client_id="app", controller_mutation_rate=1)
    topic = {"num_partitions": 20, "replication_factor": 1, "assignments": [], "configs": []}
    with connect(broker) as c:
        first = c.request(19, 7, {"topics": [{"name": "a", **topic}], "timeout_ms": 5000, "validate_only": False})
        assert first.topics[0].error_code == 0 and first.throttle_time_ms == 10_000  # 20 partitions / 10 s vs 1/s
        clock.advance(first.throttle_time_ms / 1000)  # unmuted; the rate is still over (its window is 11 s)
        second = c.request(19, 7, {"topics": [{"name": "b", **topic}], "timeout_ms": 5000, "validate_only": False})
        assert second.topics[0].error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        assert second.throttle_time_ms > 0
    assert broker.topics() == ["a"]


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", acls=True, super_users=["User:admin"],
                        users={"admin": "admin-pw", "carol": "carol-pw"})
def test_the_mutation_quota_is_checked_after_authorization(mockbroker: MockBroker) -> None:
    from tests.handlers.authorization_sweep_cases import login

    mockbroker.add_acl("User:carol", ["CREATE", "DESCRIBE"], topic="mine-", pattern="PREFIXED")
    mockbroker.set_quota(user="carol", controller_mutation_rate=1)
    topic = {"num_partitions": 20, "replication_factor": 1, "assignments": [], "configs": []}
    with login(mockbroker, "carol", "carol-pw") as c:
        first = c.request(19, 7, {"topics": [{"name": "mine-a", **topic}], "timeout_ms": 5000, "validate_only": False})
        assert first.topics[0].error_code == 0 and first.throttle_time_ms > 0
    with login(mockbroker, "carol", "carol-pw") as c:  # a new connection is not muted; the rate is the user's
        second = c.request(19, 7, {"topics": [{"name": "mine-b", **topic}, {"name": "theirs", **topic}],
                                   "timeout_ms": 5000, "validate_only": False})
    codes = {t.name: t.error_code for t in second.topics}
    assert codes == {"mine-b": ErrorCode.THROTTLING_QUOTA_EXCEEDED, "theirs": ErrorCode.TOPIC_AUTHORIZATION_FAILED}


def test_deleted_and_added_partitions_count_against_the_mutation_rate(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    clock = Clock(frozen=True)
    broker = mockbroker_factory(clock=clock)
    broker.create_topic("wide", partitions=20)
    broker.create_topic("grow", partitions=1)
    broker.set_quota(user="<default>", controller_mutation_rate=1)
    with connect(broker) as c:  # permissive versions: served, then throttled
        deleted = c.request(20, 4, {"topic_names": ["wide"], "timeout_ms": 5000})
        assert deleted.responses[0].error_code == 0
        assert deleted.throttle_time_ms == 10_000  # 20 partitions over 10 s against 1 per second
    with connect(broker) as c:
        grown = c.request(37, 2, {"topics": [{"name": "grow", "count": 21, "assignments": None}],
                                  "timeout_ms": 5000, "validate_only": False})
        assert grown.results[0].error_code == 0
        assert grown.throttle_time_ms == 30_000  # 40 partitions over 10 s against 1 per second
