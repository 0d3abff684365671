"""A config change between two Produce requests counts from the next one: the append path reads a topic's
settings parsed once (TopicConfig.log_settings), and every way a config changes (IncrementalAlterConfigs
and AlterConfigs on the topic, a dynamic broker default it falls back to, TopicConfig.set and delete) must
reach it."""

from __future__ import annotations

from typing import Any

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.configs import BrokerConfig, TopicConfig
from tests.handlers.conftest import make_batch, produce
from tests.rawclient import RawClient

ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 33, 44
TOPIC, BROKER = 2, 4
BIG = b"x" * 2000  # a batch of one such record is over 2000 bytes


def incremental(client: RawClient, resource_type: int, name: str, key: str, value: str) -> None:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": key, "config_operation": 0, "value": value}]}],
            "validate_only": False}
    [r] = client.request(INCREMENTAL_ALTER_CONFIGS, 1, body).responses
    assert r.error_code == ErrorCode.NONE


def legacy_alter(client: RawClient, name: str, configs: dict[str, str]) -> None:
    body = {"resources": [{"resource_type": TOPIC, "resource_name": name,
                           "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
            "validate_only": False}
    [r] = client.request(ALTER_CONFIGS, 1, body).responses
    assert r.error_code == ErrorCode.NONE


def codes(client: RawClient, topic: str, *batches: Any) -> list[int]:
    return [produce(client, topic, b).error_code for b in batches]


def test_a_topic_config_changed_after_a_produce_counts_on_the_next_one(mockbroker: MockBroker,
                                                                        client: RawClient) -> None:
    mockbroker.create_topic("t")
    assert codes(client, "t", make_batch(BIG)) == [ErrorCode.NONE]
    incremental(client, TOPIC, "t", "max.message.bytes", "1000")
    assert codes(client, "t", make_batch(BIG), make_batch(b"small")) == [ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.NONE]
    legacy_alter(client, "t", {})  # the topic's overrides replaced: back to the default
    assert codes(client, "t", make_batch(BIG)) == [ErrorCode.NONE]
    incremental(client, TOPIC, "t", "cleanup.policy", "compact")
    assert codes(client, "t", make_batch(b"v", key=None)) == [ErrorCode.INVALID_RECORD]
    incremental(client, TOPIC, "t", "message.timestamp.type", "LogAppendTime")
    p = produce(client, "t", make_batch(b"v"))
    assert (p.error_code, p.log_append_time_ms >= 0) == (ErrorCode.NONE, True)


def test_a_broker_default_changed_after_a_produce_counts_on_the_next_one(mockbroker: MockBroker,
                                                                          client: RawClient) -> None:
    mockbroker.create_topic("t")
    assert codes(client, "t", make_batch(BIG)) == [ErrorCode.NONE]
    incremental(client, BROKER, "", "message.max.bytes", "1000")
    assert codes(client, "t", make_batch(BIG)) == [ErrorCode.MESSAGE_TOO_LARGE]
    incremental(client, TOPIC, "t", "max.message.bytes", "5000")  # the topic's own setting wins
    assert codes(client, "t", make_batch(BIG)) == [ErrorCode.NONE]


def test_log_settings_follow_set_and_delete_and_a_broker_change() -> None:
    broker = BrokerConfig()
    config = TopicConfig(broker)
    assert config.log_settings().segment_ms == 604800000
    config.set("segment.ms", "10")
    assert config.log_settings().segment_ms == 10
    config.delete("segment.ms")
    assert config.log_settings().segment_ms == 604800000
    broker.set("log.roll.ms", "20")
    assert config.log_settings().segment_ms == 20
    broker.set("mockbroker.max.records.per.batch", "7")
    assert config.log_settings().max_records_per_batch == 7
    config.values = {"segment.bytes": 100}  # as AlterConfigs replaces a topic's overrides
    assert config.log_settings().segment_bytes == 100
