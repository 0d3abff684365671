"""Request hooks on the wire (issue #36 item 2): broker.intercept answers, rewrites, fails, delays and drops
requests; sync and async; per node; a hook that raises answers UNKNOWN_SERVER_ERROR and the broker keeps
serving; hooks and fault rules are one list."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest

from mockbroker import MockBroker, intercept
from mockbroker.intercept import InterceptContext
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from tests.handlers.conftest import make_batch
from tests.handlers.test_cluster import connect_to
from tests.rawclient import RawClient

PRODUCE, METADATA, API_VERSIONS, SASL_HANDSHAKE = 0, 3, 18, 17


def metadata(client: RawClient, version: int = 12, topic: str | None = None) -> Msg:
    return client.request(METADATA, version, {"topics": None if topic is None else [{"name": topic}],
                                              "allow_auto_topic_creation": False})


def produce(client: RawClient, topic: str = "t") -> Msg:
    return client.request(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": bytes(make_batch(b"v"))}]}]})


def ghost_topic() -> dict[str, Any]:
    return {"name": "ghost", "topic_id": None, "partitions": [
        {"partition_index": 0, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}]}


def test_a_plain_dict_is_read_as_json_and_a_misfit_is_the_hooks_bug(mockbroker: MockBroker,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    answers = iter([{"topics": [{"name": "x", "topic_id": "00000000-0000-0000-0000-00000000002a",
                                 "error_code": "TOPIC_AUTHORIZATION_FAILED"}]},
                    {"topics": [{"name": "x", "topic_id": "not-a-uuid"}]}])
    mockbroker.intercept(METADATA, lambda request, context: next(answers), count=2)
    with caplog.at_level(logging.ERROR, logger="mockbroker.intercept"), \
            RawClient(mockbroker.host, mockbroker.port) as c:
        [t] = metadata(c, topic="x").topics
        assert (t.topic_id.int, t.error_code) == (42, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        assert metadata(c, topic="x").topics[0].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert metadata(c).topics == []  # still served
    assert "not a UUID" in caplog.text


def test_a_hook_answers_metadata_with_its_own_response(mockbroker: MockBroker) -> None:
    seen: list[tuple[int, int]] = []

    def fake(request: Msg, context: InterceptContext) -> dict[str, Any]:
        seen.append((context.api_version, context.node_id))
        return {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": mockbroker.port},
                            {"node_id": 7, "host": "fake.example", "port": 9092}],
                "cluster_id": "hooked", "controller_id": 1, "topics": [ghost_topic()]}

    mockbroker.intercept(METADATA, fake)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        for version in (1, 12):
            meta = metadata(c, version)
            assert sorted(b.node_id for b in meta.brokers) == [1, 7]
            assert [t.name for t in meta.topics] == ["ghost"]
    assert seen == [(1, 1), (12, 1)]
    assert "ghost" not in mockbroker.topics()


def test_a_hook_rewrites_the_brokers_own_answer(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t", partitions=2)

    def rewrite(request: Msg, context: InterceptContext) -> Msg:
        answer = context.call_broker()
        assert context.call_broker() is answer  # applied once
        answer.topics.append(ghost_topic())
        return answer

    mockbroker.intercept(METADATA, rewrite)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert sorted(t.name for t in metadata(c).topics) == ["ghost", "t"]


def test_an_async_hook_forwards_and_rewrites(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")

    async def slow_rewrite(request: Msg, context: InterceptContext) -> Msg:
        await asyncio.sleep(0.01)
        answer = await context.forward()
        answer.responses[0].partition_responses[0].error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return answer  # type: ignore[no-any-return]

    mockbroker.intercept(PRODUCE, slow_rewrite, count=1)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert produce(c).responses[0].partition_responses[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert produce(c).responses[0].partition_responses[0].error_code == 0  # count=1: gone after one request
    assert len(mockbroker.records("t")) == 2  # the hooked one was applied (forwarded) too


@pytest.mark.parametrize("answer", [ErrorCode.POLICY_VIOLATION, intercept.error(ErrorCode.POLICY_VIOLATION)])
def test_a_hook_answers_with_an_error_and_nothing_is_applied(mockbroker: MockBroker, answer: Any) -> None:
    mockbroker.create_topic("t")
    hook = mockbroker.intercept(PRODUCE, lambda request, context: answer)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert produce(c).responses[0].partition_responses[0].error_code == ErrorCode.POLICY_VIOLATION
        hook.remove()
        assert produce(c).responses[0].partition_responses[0].error_code == 0
    assert len(mockbroker.records("t")) == 1


def test_a_hook_delays_then_passes_or_answers(mockbroker: MockBroker) -> None:
    calls = 0

    def late(request: Msg, context: InterceptContext) -> Any:
        nonlocal calls
        calls += 1
        return intercept.delay(0.05) if calls == 1 else intercept.delay(0.01, then={"topics": [ghost_topic()]})

    mockbroker.intercept(METADATA, late)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert [t.name for t in metadata(c).topics] == []
        assert [t.name for t in metadata(c).topics] == ["ghost"]


@pytest.mark.parametrize("after", [False, True])
def test_a_hook_drops_the_connection_before_or_after_applying(mockbroker: MockBroker, after: bool) -> None:
    mockbroker.create_topic("t")
    mockbroker.intercept(PRODUCE, lambda request, context: intercept.drop(after=after), count=1)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        c.send(PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": bytes(make_batch(b"v"))}]}]})
        with pytest.raises((ConnectionError, socket.timeout, AssertionError, OSError)):
            c.recv_frame()
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert produce(c).responses[0].partition_responses[0].error_code == 0  # the broker keeps serving
    assert len(mockbroker.records("t")) == (2 if after else 1)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_hook_that_raises_answers_unknown_server_error_and_the_broker_keeps_serving(
        mockbroker: MockBroker, is_async: bool, caplog: pytest.LogCaptureFixture) -> None:
    mockbroker.create_topic("t")

    def broken(request: Msg, context: InterceptContext) -> Any:
        raise RuntimeError("a bug in the test's hook")

    async def broken_async(request: Msg, context: InterceptContext) -> Any:
        raise RuntimeError("a bug in the test's hook")

    mockbroker.intercept(PRODUCE, broken_async if is_async else broken, count=1)
    mockbroker.intercept(METADATA, lambda request, context: 42, count=1)  # not an answer: a bug too
    with caplog.at_level(logging.ERROR, logger="mockbroker.intercept"), \
            RawClient(mockbroker.host, mockbroker.port) as c:
        assert produce(c).responses[0].partition_responses[0].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert metadata(c, topic="t").topics[0].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
        assert produce(c).responses[0].partition_responses[0].error_code == 0  # same connection, still served
    assert "a bug in the test's hook" in caplog.text and "returned int" in caplog.text
    assert len(mockbroker.records("t")) == 1


def test_a_hook_that_raises_on_an_api_with_a_top_level_error_answers_it(mockbroker: MockBroker) -> None:
    def broken(request: Msg, context: InterceptContext) -> Any:
        raise RuntimeError("boom")

    mockbroker.intercept(SASL_HANDSHAKE, broken, count=1)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        answer = c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert answer.error_code == ErrorCode.UNKNOWN_SERVER_ERROR


def test_sync_call_broker_on_a_waiting_answer_says_to_forward(mockbroker: MockBroker,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    mockbroker.create_topic("t")
    mockbroker.intercept(1, lambda request, context: context.call_broker(), count=1)
    with caplog.at_level(logging.ERROR, logger="mockbroker.intercept"), \
            RawClient(mockbroker.host, mockbroker.port) as c:
        answer = c.request(1, 12, {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20,
                                   "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                       {"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                                      "partition_max_bytes": 1 << 20}]}]})
        assert answer.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert "await context.forward()" in caplog.text


def test_hooks_are_per_node_on_a_three_node_cluster() -> None:
    with MockBroker(brokers=3).run_in_thread() as broker:
        broker.intercept(METADATA, lambda request, context: {"cluster_id": f"node-{context.node_id}"}, node=2)
        for node_id in (1, 2, 3):
            with connect_to(broker, node_id) as c:
                cluster_id = metadata(c).cluster_id
                assert (cluster_id == "node-2") == (node_id == 2), (node_id, cluster_id)


def test_hooks_and_faults_share_one_list_and_clear_separately(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    hook = mockbroker.intercept(METADATA, lambda request, context: None)
    mockbroker.inject(PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert [r.action for r in mockbroker.faults.rules] == ["hook", "error"]
    mockbroker.clear_faults()
    assert [r.action for r in mockbroker.faults.rules] == ["hook"]
    mockbroker.clear_intercepts()
    assert mockbroker.faults.rules == []
    hook.remove()  # gone already: fine
    with pytest.raises(TypeError):
        mockbroker.intercept(METADATA, "not a function")  # type: ignore[arg-type]
