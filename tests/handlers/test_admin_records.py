"""Raw-protocol tests of DeleteRecords (21) and OffsetForLeaderEpoch (23)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import Node
from tests.rawclient import RawClient

PRODUCE, FETCH, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH = 0, 1, 21, 23


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def produce(client: RawClient, topic: str, count: int, partition: int = 0) -> int:
    """Append one batch of `count` records; its base offset."""
    batch = build_batch([(b"k%d" % i, b"v%d" % i) for i in range(count)])
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": bytes(batch)}]}]}
    [p] = client.request(PRODUCE, 9, body).responses[0].partition_responses
    assert p.error_code == ErrorCode.NONE
    return int(p.base_offset)


def set_leader_epoch(broker: MockBroker, topic: str, epoch: int, partition: int = 0) -> None:
    def bump() -> None:
        p = broker.cluster.partition(topic, partition)
        assert p is not None
        p.log.leader_epoch = epoch

    broker._call(bump)


# -- DeleteRecords ---------------------------------------------------------------------------------


def delete_records(client: RawClient, topic: str, offsets: dict[int, int], version: int = 2) -> list[Any]:
    body = {"topics": [{"name": topic, "partitions": [{"partition_index": p, "offset": o} for p, o in offsets.items()]}],
            "timeout_ms": 1000}
    [t] = client.request(DELETE_RECORDS, version, body).topics
    assert t.name == topic
    return list(t.partitions)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_records_moves_the_log_start_offset(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("dr")
    produce(client, "dr", 3)
    produce(client, "dr", 3)
    [p] = delete_records(client, "dr", {0: 4}, version)
    assert (p.partition_index, p.error_code, p.low_watermark) == (0, ErrorCode.NONE, 4)
    assert mockbroker.offsets("dr")["log_start_offset"] == 4
    assert [r.offset for r in mockbroker.records("dr")] == [4, 5]
    assert len(mockbroker.batches("dr")) == 1  # the first batch lies wholly below 4


def test_delete_records_minus_one_means_high_watermark(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-hw")
    produce(client, "dr-hw", 5)
    [p] = delete_records(client, "dr-hw", {0: -1})
    assert (p.error_code, p.low_watermark) == (ErrorCode.NONE, 5)
    assert mockbroker.records("dr-hw") == []


def test_delete_records_below_log_start_keeps_it(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-back")
    produce(client, "dr-back", 5)
    delete_records(client, "dr-back", {0: 3})
    [p] = delete_records(client, "dr-back", {0: 1})
    assert (p.error_code, p.low_watermark) == (ErrorCode.NONE, 3)


def test_delete_records_above_high_watermark_is_offset_out_of_range(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-far")
    produce(client, "dr-far", 2)
    [p] = delete_records(client, "dr-far", {0: 3})
    assert (p.error_code, p.low_watermark) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)
    assert mockbroker.offsets("dr-far")["log_start_offset"] == 0


def test_delete_records_negative_offset_is_offset_out_of_range(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-neg")
    [p] = delete_records(client, "dr-neg", {0: -5})
    assert p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_delete_records_of_unknown_partition_is_unknown_topic_or_partition(client: RawClient,
                                                                           mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-one")
    [p] = delete_records(client, "dr-one", {5: 0})
    assert (p.partition_index, p.error_code, p.low_watermark) == (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    [p] = delete_records(client, "dr-nowhere", {0: 0})
    assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_delete_records_on_compacted_topic_is_policy_violation(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-compact", config={"cleanup.policy": "compact"})
    [p] = delete_records(client, "dr-compact", {0: 0})
    assert p.error_code == ErrorCode.POLICY_VIOLATION


def test_delete_records_on_partition_led_elsewhere_is_not_leader(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker._call(lambda: mockbroker.cluster.nodes.setdefault(2, Node(2)))
    mockbroker._call(lambda: mockbroker.cluster.create_topic("dr-away", assignments=[(0, [2])]))
    [p] = delete_records(client, "dr-away", {0: 0})
    assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_fetch_below_deleted_records_is_offset_out_of_range(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("dr-fetch")
    produce(client, "dr-fetch", 4)
    delete_records(client, "dr-fetch", {0: 2})
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "",
            "topics": [{"topic": "dr-fetch", "partitions": [{"partition": 0, "fetch_offset": 0, "log_start_offset": -1,
                                                             "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": []}
    [part] = client.request(FETCH, 11, body).responses[0].partitions
    assert part.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    # Kafka answers an out-of-range partition without offsets (ReplicaManager.handleOffsetOutOfRangeError).
    assert (part.high_watermark, part.last_stable_offset, part.log_start_offset) == (-1, -1, -1)


# -- OffsetForLeaderEpoch --------------------------------------------------------------------------


def epochs(client: RawClient, topic: str, asks: list[tuple[int, int, int]], version: int = 4) -> list[Any]:
    """asks: (partition, leader_epoch, current_leader_epoch)."""
    body = {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": p, "leader_epoch": e, "current_leader_epoch": c} for p, e, c in asks]}]}
    [t] = client.request(OFFSET_FOR_LEADER_EPOCH, version, body).topics
    assert t.topic == topic
    return list(t.partitions)


def test_offset_for_current_epoch_is_the_log_end_offset(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep")
    produce(client, "ep", 3)
    [p] = epochs(client, "ep", [(0, 0, 0)])
    assert (p.error_code, p.partition, p.leader_epoch, p.end_offset) == (ErrorCode.NONE, 0, 0, 3)


def test_offset_for_older_epoch_is_where_the_next_epoch_starts(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep-old")
    produce(client, "ep-old", 2)
    set_leader_epoch(mockbroker, "ep-old", 3)
    produce(client, "ep-old", 4)
    assert [(p.leader_epoch, p.end_offset) for p in epochs(client, "ep-old", [(0, 0, -1), (0, 2, -1), (0, 3, 3)])] == [
        (0, 2), (0, 2), (3, 6)]


@pytest.mark.parametrize("version", [0, 1])
def test_offset_for_leader_epoch_old_versions(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("ep-v0")
    produce(client, "ep-v0", 2)
    [p] = epochs(client, "ep-v0", [(0, 0, -1)], version=version)
    assert (p.error_code, p.end_offset) == (ErrorCode.NONE, 2)
    assert p.leader_epoch == (0 if version == 1 else -1)  # v0 has no leader_epoch field


def test_offset_for_leader_epoch_with_stale_current_epoch_is_fenced(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep-fenced")
    set_leader_epoch(mockbroker, "ep-fenced", 2)
    [p] = epochs(client, "ep-fenced", [(0, 0, 1)])
    assert (p.error_code, p.leader_epoch, p.end_offset) == (ErrorCode.FENCED_LEADER_EPOCH, -1, -1)


def test_offset_for_leader_epoch_with_future_current_epoch_is_unknown_leader_epoch(client: RawClient,
                                                                                  mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep-future")
    [p] = epochs(client, "ep-future", [(0, 0, 5)], version=2)
    assert p.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


def test_offset_for_leader_epoch_of_unknown_partition(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep-one")
    assert [p.error_code for p in epochs(client, "ep-one", [(3, 0, -1)])] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert [p.error_code for p in epochs(client, "ep-none", [(0, 0, -1)])] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


def test_offset_for_leader_epoch_on_partition_led_elsewhere_is_not_leader(client: RawClient,
                                                                         mockbroker: MockBroker) -> None:
    mockbroker._call(lambda: mockbroker.cluster.nodes.setdefault(2, Node(2)))
    mockbroker._call(lambda: mockbroker.cluster.create_topic("ep-away", assignments=[(0, [2, 1])]))
    [p] = epochs(client, "ep-away", [(0, 0, 0)])
    assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_offset_for_unknown_epoch_is_minus_one_without_error(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ep-unknown")
    produce(client, "ep-unknown", 1)
    set_leader_epoch(mockbroker, "ep-unknown", 2)
    [p] = epochs(client, "ep-unknown", [(0, 7, -1)])
    assert (p.error_code, p.leader_epoch, p.end_offset) == (ErrorCode.NONE, -1, -1)
