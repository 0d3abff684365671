"""Raw-protocol tests of Kafka's authorization of DescribeTopicPartitions (an ACL-limited User:ANONYMOUS
on a PLAINTEXT listener), as DescribeTopicPartitionsRequestHandler answers: a named topic the principal
may not DESCRIBE gets TOPIC_AUTHORIZATION_FAILED (zero topic id, no partitions) and nothing else of it;
listing every topic (an empty list) leaves those topics out. A request whose every named topic is refused
must not be read as "every topic" (issue #33)."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.server import MockBroker
from tests.handlers.conftest import connect

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
ME = "User:ANONYMOUS"
DESCRIBE_TOPIC_PARTITIONS = 75
pytestmark = [pytest.mark.adversarial, pytest.mark.mockbroker(acls=True)]


@pytest.fixture(autouse=True)
def topics(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("orders", partitions=2)
    mockbroker.create_topic("secret", partitions=3)
    mockbroker.create_topic("hidden")


def describe(mockbroker: MockBroker, names: list[str], cursor: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    with connect(mockbroker) as c:
        return c.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": n} for n in names],
                                                        "response_partition_limit": 100, "cursor": cursor})


def test_a_principal_without_acls_naming_topics_gets_only_refusals(mockbroker: MockBroker) -> None:
    resp = describe(mockbroker, ["secret"])
    assert [(t.name, t.error_code, t.topic_id, t.partitions) for t in resp.topics] == [("secret", DENIED, ZERO_UUID, [])]
    assert resp.next_cursor is None


def test_every_named_topic_refused_discloses_no_other_topic(mockbroker: MockBroker) -> None:
    resp = describe(mockbroker, ["secret", "hidden", "secret", "absent"])
    assert sorted((t.name, t.error_code, t.partitions) for t in resp.topics) == [
        ("absent", DENIED, []), ("hidden", DENIED, []), ("secret", DENIED, [])]


def test_listing_every_topic_leaves_out_the_ones_not_described(mockbroker: MockBroker) -> None:
    assert describe(mockbroker, []).topics == []
    mockbroker.add_acl(ME, "DESCRIBE", topic="orders")
    resp = describe(mockbroker, [])
    assert [(t.name, len(t.partitions)) for t in resp.topics] == [("orders", 2)]


def test_named_topics_answer_the_described_ones_and_refuse_the_others(mockbroker: MockBroker) -> None:
    mockbroker.add_acl(ME, "DESCRIBE", topic="orders")
    resp = describe(mockbroker, ["orders", "secret"])
    assert [(t.name, t.error_code, len(t.partitions)) for t in resp.topics] == [
        ("orders", ErrorCode.NONE, 2), ("secret", DENIED, 0)]


def test_a_cursor_on_a_refused_topic_answers_only_its_refusal(mockbroker: MockBroker) -> None:
    mockbroker.add_acl(ME, "DESCRIBE", topic="orders")
    resp = describe(mockbroker, ["orders", "secret"], cursor={"topic_name": "secret", "partition_index": 1})
    assert [(t.name, t.error_code, t.partitions) for t in resp.topics] == [("secret", DENIED, [])]
    assert resp.next_cursor is None


def test_pages_of_every_topic_count_only_the_described_ones(mockbroker: MockBroker) -> None:
    mockbroker.add_acl(ME, "DESCRIBE", topic="orders")
    with connect(mockbroker) as c:
        resp = c.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [], "response_partition_limit": 2, "cursor": None})
    assert [(t.name, len(t.partitions)) for t in resp.topics] == [("orders", 2)]
    assert resp.next_cursor is None  # no cursor naming a topic the principal may not describe
