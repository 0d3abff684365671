"""Request hooks seen by a real client (issue #36 item 2): confluent-kafka's list_topics() sees the topic
and the extra broker a Metadata hook made up, and a rewrite of the broker's own answer."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from mockbroker import MockBroker
from mockbroker.intercept import InterceptContext
from mockbroker.protocol.messages import Msg

pytestmark = pytest.mark.interop

METADATA = 3


def test_list_topics_sees_what_a_metadata_hook_answers(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("real", partitions=2)

    def with_ghost(request: Msg, context: InterceptContext) -> Msg:
        answer = context.call_broker()
        answer.brokers.append({"node_id": 42, "host": "ghost.example", "port": 9092, "rack": None})
        answer.topics.append({"name": "ghost", "partitions": [
            {"partition_index": i, "leader_id": 42, "replica_nodes": [42], "isr_nodes": [42]} for i in range(3)]})
        return answer

    mockbroker.intercept(METADATA, with_ghost)
    admin = AdminClient({"bootstrap.servers": mockbroker.bootstrap_servers})
    meta = admin.list_topics(timeout=15)
    assert set(meta.brokers) == {1, 42}
    assert meta.brokers[42].host == "ghost.example"
    assert {"real", "ghost"} <= set(meta.topics)
    assert len(meta.topics["ghost"].partitions) == 3 and meta.topics["ghost"].partitions[0].leader == 42
    assert len(meta.topics["real"].partitions) == 2


def test_list_topics_sees_a_canned_answer_of_its_own(mockbroker: MockBroker) -> None:
    def canned(request: Msg, context: InterceptContext) -> dict[str, Any]:
        return {"brokers": [{"node_id": 1, "host": mockbroker.host, "port": mockbroker.port}],
                "cluster_id": "canned", "controller_id": 1,
                "topics": [{"name": "only-this", "partitions": [
                    {"partition_index": 0, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}]}]}

    hook = mockbroker.intercept(METADATA, canned)
    admin = AdminClient({"bootstrap.servers": mockbroker.bootstrap_servers})
    meta = admin.list_topics(timeout=15)
    assert set(meta.topics) == {"only-this"} and meta.cluster_id == "canned"
    hook.remove()
    assert "only-this" not in admin.list_topics(timeout=15).topics


@pytest.mark.java
def test_the_java_admin_lists_a_topic_a_hook_made_up(mockbroker: MockBroker) -> None:
    from tests.interop.test_java_admin import admin

    mockbroker.create_topic("real")

    async def with_ghost(request: Msg, context: InterceptContext) -> Msg:
        answer = await context.forward()
        answer.topics.append({"name": "ghost", "topic_id": uuid.UUID(int=42), "partitions": [
            {"partition_index": 0, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}]})
        return answer  # type: ignore[no-any-return]

    mockbroker.intercept(METADATA, with_ghost)
    [listed] = admin(mockbroker, {"op": "listTopics"})
    assert listed["names"] == ["ghost", "real"]
