"""Share-group configs on GROUP config resources (IncrementalAlterConfigs, DescribeConfigs) over the raw
protocol: Kafka's checks against the broker's group.share.* bounds, and the share model using them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.test_admin_configs import by_name, describe, incremental
from tests.handlers.test_share_groups import acquired, heartbeat, produce_values, share_fetch, topic_id  # noqa: F401
from tests.rawclient import RawClient

GROUP, SET, DELETE, APPEND = 32, 0, 1, 2
GROUP_CONFIG, DEFAULT_CONFIG = 8, 5


def test_share_group_configs_are_set_described_and_deleted(client: RawClient) -> None:
    assert incremental(client, GROUP, "sg", [("share.auto.offset.reset", SET, "earliest"),
                                              ("share.record.lock.duration.ms", SET, "20000")]).error_code == 0
    entries = by_name(describe(client, GROUP, "sg"))
    assert (entries["share.auto.offset.reset"].value, entries["share.auto.offset.reset"].config_source) == \
        ("earliest", GROUP_CONFIG)
    assert (entries["share.record.lock.duration.ms"].value, entries["share.record.lock.duration.ms"].config_source) == \
        ("20000", GROUP_CONFIG)
    assert (entries["share.delivery.count.limit"].value, entries["share.delivery.count.limit"].config_source) == \
        ("5", DEFAULT_CONFIG)
    assert entries["share.isolation.level"].value == "read_uncommitted"
    assert incremental(client, GROUP, "sg", [("share.auto.offset.reset", DELETE, None)]).error_code == 0
    entries = by_name(describe(client, GROUP, "sg"))
    assert (entries["share.auto.offset.reset"].value, entries["share.auto.offset.reset"].config_source) == \
        ("latest", DEFAULT_CONFIG)


@pytest.mark.mockbroker(config={"group.share.delivery.count.limit": "3"})
def test_describe_shows_the_broker_value_as_the_group_default(client: RawClient) -> None:
    assert by_name(describe(client, GROUP, "sg"))["share.delivery.count.limit"].value == "3"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("share.record.lock.duration.ms", "5000",
     "share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"),
    ("share.record.lock.duration.ms", "61000",
     "share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms"),
    ("share.delivery.count.limit", "11",
     "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"),
    ("share.session.timeout.ms", "30000",
     "share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms"),
    ("share.heartbeat.interval.ms", "20000",
     "share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"),
    ("share.record.lock.duration.ms", "999",
     "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000"),
    ("share.auto.offset.reset", "middle",
     "Invalid value middle for configuration share.auto.offset.reset: String must be one of: earliest, latest"),
    ("share.isolation.level", "dirty", "Invalid value dirty for configuration share.isolation.level: "
     "String must be one of: read_committed, read_uncommitted"),
    ("share.delivery.count.limit", "x", "Invalid value x for configuration share.delivery.count.limit: "
     "Not a number of type INT"),
])
def test_share_group_configs_outside_the_broker_bounds_are_invalid_config(
        client: RawClient, name: str, value: str, message: str) -> None:
    r = incremental(client, GROUP, "sg", [(name, SET, value)])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_CONFIG, message)
    assert by_name(describe(client, GROUP, "sg"))[name].config_source == DEFAULT_CONFIG  # nothing stored


@pytest.mark.mockbroker(config={"group.share.max.delivery.count.limit": "20"})
def test_the_bounds_are_the_broker_settings(client: RawClient) -> None:
    assert incremental(client, GROUP, "sg", [("share.delivery.count.limit", SET, "15")]).error_code == 0


def test_session_timeout_must_exceed_the_heartbeat_interval_and_validate_only_stores_nothing(client: RawClient) -> None:
    r = incremental(client, GROUP, "sg", [("share.session.timeout.ms", SET, "50000"),
                                          ("share.heartbeat.interval.ms", SET, "15000")])
    assert r.error_code == 0
    r = incremental(client, GROUP, "sg", [("share.session.timeout.ms", SET, "45000"),
                                          ("share.heartbeat.interval.ms", SET, "15000"),
                                          ("share.auto.offset.reset", SET, "earliest")], validate_only=True)
    assert r.error_code == 0
    r = incremental(client, GROUP, "sg", [("share.heartbeat.interval.ms", SET, "60000")])
    assert r.error_code == ErrorCode.INVALID_CONFIG
    assert by_name(describe(client, GROUP, "sg"))["share.auto.offset.reset"].value == "latest"
    r = incremental(client, GROUP, "sg", [("share.auto.offset.reset", APPEND, "earliest")])
    assert r.error_code == ErrorCode.INVALID_CONFIG


def test_the_share_model_uses_the_group_configs(client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:  # noqa: F811
    # No broker-wide setting: the group's own configs start it at the log start, lock for 20 s and archive
    # at the second delivery.
    produce_values(client, 2)
    assert incremental(client, GROUP, "sg", [("share.auto.offset.reset", SET, "earliest"),
                                              ("share.record.lock.duration.ms", SET, "20000"),
                                              ("share.delivery.count.limit", SET, "2"),
                                              ("share.heartbeat.interval.ms", SET, "6000")]).error_code == 0
    assert heartbeat(client, "a", 0, ["q"]).heartbeat_interval_ms == 6000
    r = share_fetch(client, topic_id, "a", 0)
    assert r.acquisition_lock_timeout_ms == 20000 and acquired(r) == [(0, 0, 1, 1)]
    mockbroker.clock.advance(20)
    assert acquired(share_fetch(client, topic_id, "a", 1)) == [(0, 0, 1, 2)]
    mockbroker.clock.advance(20)
    part = mockbroker.share_groups()["sg"]["partitions"]["q-0"]
    assert part["start_offset"] == 2 and part["records"] == []  # archived at the limit of 2


@pytest.mark.mockbroker(config={"group.share.heartbeat.interval.ms": "7000",
                                "group.share.record.lock.duration.ms": "40000"})
def test_a_group_config_overrides_the_broker_setting_for_its_group_only(
        client: RawClient, topic_id: uuid.UUID) -> None:  # noqa: F811
    assert incremental(client, GROUP, "sg", [("share.heartbeat.interval.ms", SET, "6000"),
                                              ("share.record.lock.duration.ms", SET, "20000")]).error_code == 0
    assert heartbeat(client, "a", 0, ["q"]).heartbeat_interval_ms == 6000
    assert share_fetch(client, topic_id, "a", 0).acquisition_lock_timeout_ms == 20000
    assert heartbeat(client, "b", 0, ["q"], group="other").heartbeat_interval_ms == 7000  # no group config: broker's
    assert incremental(client, GROUP, "sg", [("share.heartbeat.interval.ms", DELETE, None)]).error_code == 0
    assert heartbeat(client, "a", 1, ["q"]).heartbeat_interval_ms == 7000  # deleted: the broker's again


# -- AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92) ---------------------------------------

ALTER_OFFSETS, DELETE_OFFSETS, DESCRIBE_OFFSETS = 91, 92, 90


def alter_offsets(client: RawClient, group: str, offsets: dict[tuple[str, int], int]) -> Any:
    topics: dict[str, list[dict[str, int]]] = {}
    for (topic, partition), start in offsets.items():
        topics.setdefault(topic, []).append({"partition_index": partition, "start_offset": start})
    return client.request(ALTER_OFFSETS, 0, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": ps} for t, ps in topics.items()]})


def delete_offsets(client: RawClient, group: str, topics: list[str]) -> Any:
    return client.request(DELETE_OFFSETS, 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]})


def start_offsets(client: RawClient, group: str) -> dict[tuple[str, int], int]:
    r = client.request(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": group, "topics": None}]})
    return {(t.topic_name, p.partition_index): p.start_offset for g in r.groups for t in g.topics for p in t.partitions}


def test_alter_share_group_offsets_moves_the_start_and_delete_forgets_it(
        client: RawClient, mockbroker: MockBroker, topic_id: uuid.UUID) -> None:  # noqa: F811
    produce_values(client, 5)
    # A group id nobody uses: Kafka makes the (empty) share group.
    r = alter_offsets(client, "sg", {("q", 0): 3, ("q", 7): 1, ("nope", 0): 0})
    assert r.error_code == 0
    assert [(t.topic_name, p.partition_index, p.error_code) for t in r.responses for p in t.partitions] == [
        ("q", 0, 0), ("q", 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert r.responses[0].topic_id == topic_id
    assert start_offsets(client, "sg") == {("q", 0): 3}
    # A member now gets the records from offset 3 on.
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, topic_id, "a", 0)) == [(0, 3, 4, 1)]
    # While it is a member: NON_EMPTY_GROUP for both.
    assert alter_offsets(client, "sg", {("q", 0): 0}).error_code == ErrorCode.NON_EMPTY_GROUP
    assert delete_offsets(client, "sg", ["q"]).error_code == ErrorCode.NON_EMPTY_GROUP
    assert mockbroker.share_groups()["sg"]["partitions"]["q-0"]["start_offset"] == 3
    heartbeat(client, "a", -1)
    # Empty again: alter back to 1 (nothing in flight any more), then delete.
    assert alter_offsets(client, "sg", {("q", 0): 1}).error_code == 0
    part = mockbroker.share_groups()["sg"]["partitions"]["q-0"]
    assert (part["start_offset"], part["records"]) == (1, [])
    r = delete_offsets(client, "sg", ["q", "nope"])
    assert r.error_code == 0
    assert [(t.topic_name, t.error_code) for t in r.responses] == [("q", 0), ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert start_offsets(client, "sg") == {}
    assert mockbroker.share_groups()["sg"]["partitions"] == {}
    again = delete_offsets(client, "sg", ["q"]).responses[0]  # nothing left to delete
    assert (again.error_code, again.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                       "There is no offset information to delete.")


def test_share_group_offsets_errors_at_the_top(client: RawClient) -> None:
    assert delete_offsets(client, "missing", ["q"]).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert alter_offsets(client, "", {("q", 0): 0}).error_code == ErrorCode.INVALID_GROUP_ID
    assert delete_offsets(client, "", ["q"]).error_code == ErrorCode.INVALID_GROUP_ID
