"""Raw-protocol tests of DescribeConfigs (32), AlterConfigs (33) and IncrementalAlterConfigs (44)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
# ConfigSource
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 3, 4, 5


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def describe(client: RawClient, resource_type: int, name: str, keys: list[str] | None = None, version: int = 4,
             synonyms: bool = False, documentation: bool = False) -> Any:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": documentation}
    [result] = client.request(DESCRIBE_CONFIGS, version, body).results
    return result


def by_name(result: Any) -> dict[str, Any]:
    return {c.name: c for c in result.configs}


def alter(client: RawClient, resource_type: int, name: str, configs: Mapping[str, str | None], version: int = 2,
          validate_only: bool = False) -> Any:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
            "validate_only": validate_only}
    [r] = client.request(ALTER_CONFIGS, version, body).responses
    return r


def incremental(client: RawClient, resource_type: int, name: str, ops: list[tuple[str, int, str | None]],
                version: int = 1, validate_only: bool = False) -> Any:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": n, "config_operation": o, "value": v} for n, o, v in ops]}],
            "validate_only": validate_only}
    [r] = client.request(INCREMENTAL_ALTER_CONFIGS, version, body).responses
    return r


# -- DescribeConfigs: topics -----------------------------------------------------------------------


def test_describe_topic_configs_v4_lists_every_config_with_its_source(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t", config={"retention.ms": "1234"})
    r = describe(client, TOPIC, "t")
    assert (r.error_code, r.error_message, r.resource_type, r.resource_name) == (ErrorCode.NONE, None, TOPIC, "t")
    configs = by_name(r)
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("1234", TOPIC_CONFIG)
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].config_source) == ("delete", DEFAULT_CONFIG)
    assert configs["retention.ms"].config_type == 5  # LONG
    assert configs["cleanup.policy"].config_type == 7  # LIST
    assert configs["preallocate"].config_type == 1  # BOOLEAN
    assert all(not c.read_only and not c.is_sensitive and c.synonyms == [] for c in r.configs)
    assert all(c.documentation is None for c in r.configs)


def test_describe_topic_configs_v0_marks_defaults(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t0", config={"retention.ms": "1234"})
    configs = by_name(describe(client, TOPIC, "t0", version=0))
    assert configs["retention.ms"].is_default is False
    assert configs["segment.bytes"].is_default is True
    assert configs["segment.bytes"].value == "1073741824"


def test_describe_topic_configs_filters_configuration_keys(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("keys")
    r = describe(client, TOPIC, "keys", keys=["retention.ms", "cleanup.policy", "no.such.key"])
    assert sorted(c.name for c in r.configs) == ["cleanup.policy", "retention.ms"]


def test_describe_topic_configs_empty_key_list_means_all(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("all-keys")
    assert len(describe(client, TOPIC, "all-keys", keys=[]).configs) == len(describe(client, TOPIC, "all-keys").configs)


@pytest.mark.mockbroker(config={"log.cleanup.policy": "compact"})
def test_describe_topic_synonyms_list_topic_then_broker_then_default(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("syn", config={"cleanup.policy": "delete"})
    mockbroker.create_topic("syn-inherit")
    policy = by_name(describe(client, TOPIC, "syn", synonyms=True, version=1))["cleanup.policy"]
    assert [(s.name, s.value, s.source) for s in policy.synonyms] == [
        ("cleanup.policy", "delete", TOPIC_CONFIG),
        ("log.cleanup.policy", "compact", STATIC_BROKER_CONFIG),
        ("log.cleanup.policy", "delete", DEFAULT_CONFIG),
    ]
    inherited = by_name(describe(client, TOPIC, "syn-inherit", synonyms=True))["cleanup.policy"]
    assert (inherited.value, inherited.config_source) == ("compact", STATIC_BROKER_CONFIG)
    assert [s.source for s in inherited.synonyms] == [STATIC_BROKER_CONFIG, DEFAULT_CONFIG]


def test_describe_topic_retention_ms_default_has_no_synonyms(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("ret")
    retention = by_name(describe(client, TOPIC, "ret", synonyms=True))["retention.ms"]
    assert (retention.value, retention.config_source, retention.synonyms) == ("604800000", DEFAULT_CONFIG, [])


def test_describe_unknown_topic_is_unknown_topic_or_partition(client: RawClient) -> None:
    r = describe(client, TOPIC, "missing")
    assert (r.error_code, r.error_message, r.configs) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None, [])


def test_describe_topic_with_illegal_name_is_invalid_topic_exception(client: RawClient) -> None:
    r = describe(client, TOPIC, "bad name!")
    assert r.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert r.error_message


# -- DescribeConfigs: brokers ----------------------------------------------------------------------


@pytest.mark.mockbroker(config={"num.partitions": "3"})
def test_describe_broker_by_node_id_lists_broker_configs(client: RawClient) -> None:
    r = describe(client, BROKER, "1", synonyms=True)
    assert r.error_code == ErrorCode.NONE
    configs = by_name(r)
    partitions = configs["num.partitions"]
    assert (partitions.value, partitions.config_source, partitions.read_only) == ("3", STATIC_BROKER_CONFIG, True)
    assert [(s.value, s.source) for s in partitions.synonyms] == [("3", STATIC_BROKER_CONFIG), ("1", DEFAULT_CONFIG)]
    assert configs["log.retention.ms"].read_only is False
    assert configs["log.retention.ms"].value is None  # Kafka's default is null (log.retention.hours rules)


def test_describe_broker_default_resource_lists_dynamic_defaults_only(client: RawClient) -> None:
    assert describe(client, BROKER, "").configs == []
    assert alter(client, BROKER, "", {"log.retention.ms": "5000"}).error_code == ErrorCode.NONE
    r = describe(client, BROKER, "", synonyms=True)
    [(name, entry)] = by_name(r).items()
    assert (name, entry.value, entry.config_source) == ("log.retention.ms", "5000", DYNAMIC_DEFAULT_BROKER_CONFIG)


def test_describe_other_broker_id_is_invalid_request(client: RawClient) -> None:
    r = describe(client, BROKER, "2")
    assert r.error_code == ErrorCode.INVALID_REQUEST
    assert r.error_message == "Unexpected broker id, expected 1 or empty string, but received 2"


def test_describe_broker_with_non_numeric_name_is_invalid_request(client: RawClient) -> None:
    r = describe(client, BROKER, "abc")
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: abc")


def test_describe_broker_logger_is_an_empty_list(client: RawClient) -> None:
    r = describe(client, BROKER_LOGGER, "1")
    assert (r.error_code, r.configs) == (ErrorCode.NONE, [])
    assert describe(client, BROKER_LOGGER, "").error_code == ErrorCode.INVALID_REQUEST


def test_describe_unknown_resource_type_fails_every_resource(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("fine")
    body = {"resources": [{"resource_type": TOPIC, "resource_name": "fine", "configuration_keys": None},
                          {"resource_type": 99, "resource_name": "x", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}
    results = client.request(DESCRIBE_CONFIGS, 4, body).results
    assert [(r.resource_type, r.error_code) for r in results] == [(TOPIC, ErrorCode.INVALID_REQUEST),
                                                                  (99, ErrorCode.INVALID_REQUEST)]


# -- AlterConfigs (legacy) -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 2])
def test_alter_configs_replaces_the_topic_overrides(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("alt", config={"retention.ms": "1000", "cleanup.policy": "compact"})
    r = alter(client, TOPIC, "alt", {"retention.ms": "2000"}, version=version)
    assert (r.error_code, r.error_message, r.resource_type, r.resource_name) == (ErrorCode.NONE, None, TOPIC, "alt")
    configs = by_name(describe(client, TOPIC, "alt"))
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("2000", TOPIC_CONFIG)
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].config_source) == ("delete", DEFAULT_CONFIG)


def test_alter_configs_validate_only_changes_nothing(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("alt-dry")
    assert alter(client, TOPIC, "alt-dry", {"retention.ms": "2000"}, validate_only=True).error_code == ErrorCode.NONE
    assert by_name(describe(client, TOPIC, "alt-dry"))["retention.ms"].value == "604800000"


def test_alter_configs_of_unknown_topic_is_unknown_topic_or_partition(client: RawClient) -> None:
    r = alter(client, TOPIC, "ghost", {"retention.ms": "1"})
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'ghost' does not exist.")


@pytest.mark.parametrize(
    ("configs", "message"),
    [({"retention.msx": "1"}, "Unknown topic config name: retention.msx"),
     ({"min.insync.replicas": "x"}, "Invalid value x for configuration min.insync.replicas: Not a number of type INT")],
)
def test_alter_configs_with_bad_config_is_invalid_config(client: RawClient, mockbroker: MockBroker,
                                                         configs: dict[str, str], message: str) -> None:
    mockbroker.create_topic("alt-bad")
    r = alter(client, TOPIC, "alt-bad", configs)
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_CONFIG, message)


def test_alter_configs_null_value_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("alt-null")
    r = alter(client, TOPIC, "alt-null", {"retention.ms": None})
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms")


def test_alter_configs_same_resource_twice_is_invalid_request(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("alt-twice")
    resource = {"resource_type": TOPIC, "resource_name": "alt-twice", "configs": []}
    responses = client.request(ALTER_CONFIGS, 1, {"resources": [resource, resource], "validate_only": False}).responses
    assert [(r.error_code, r.error_message) for r in responses] == [
        (ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2


def test_alter_broker_dynamic_config_applies_to_topics_without_override(client: RawClient,
                                                                        mockbroker: MockBroker) -> None:
    mockbroker.create_topic("follows")
    assert alter(client, BROKER, "1", {"log.retention.ms": "777"}).error_code == ErrorCode.NONE
    retention = by_name(describe(client, TOPIC, "follows", synonyms=True))["retention.ms"]
    assert (retention.value, retention.config_source) == ("777", DYNAMIC_BROKER_CONFIG)
    assert [(s.name, s.source) for s in retention.synonyms] == [("log.retention.ms", DYNAMIC_BROKER_CONFIG)]
    broker_entry = by_name(describe(client, BROKER, "1"))["log.retention.ms"]
    assert (broker_entry.value, broker_entry.config_source) == ("777", DYNAMIC_BROKER_CONFIG)


def test_alter_read_only_broker_config_is_invalid_request(client: RawClient) -> None:
    r = alter(client, BROKER, "1", {"num.partitions": "4"})
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST,
                                               "Cannot update these configs dynamically: Set(num.partitions)")


def test_alter_other_broker_id_is_invalid_request(client: RawClient) -> None:
    r = alter(client, BROKER, "3", {"log.retention.ms": "1"})
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST,
                                               "Unexpected broker id, expected 1, but received 3")


def test_alter_broker_logger_with_legacy_api_is_invalid_request(client: RawClient) -> None:
    r = alter(client, BROKER_LOGGER, "1", {"root": "DEBUG"})
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")


# -- IncrementalAlterConfigs -----------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_set_and_delete_topic_configs(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    mockbroker.create_topic("inc", config={"retention.ms": "1000"})
    r = incremental(client, TOPIC, "inc", [("segment.ms", SET, "60000"), ("retention.ms", DELETE, None)],
                    version=version)
    assert (r.error_code, r.error_message) == (ErrorCode.NONE, None)
    configs = by_name(describe(client, TOPIC, "inc"))
    assert (configs["segment.ms"].value, configs["segment.ms"].config_source) == ("60000", TOPIC_CONFIG)
    assert configs["retention.ms"].config_source == DEFAULT_CONFIG


def test_incremental_append_to_unset_cleanup_policy_starts_from_default(client: RawClient,
                                                                        mockbroker: MockBroker) -> None:
    mockbroker.create_topic("app")
    assert incremental(client, TOPIC, "app", [("cleanup.policy", APPEND, "compact")]).error_code == ErrorCode.NONE
    assert by_name(describe(client, TOPIC, "app"))["cleanup.policy"].value == "delete,compact"
    topic = mockbroker.cluster.topic("app")
    assert topic is not None and topic.config.compacted


def test_incremental_subtract_from_cleanup_policy(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("sub", config={"cleanup.policy": "compact,delete"})
    assert incremental(client, TOPIC, "sub", [("cleanup.policy", SUBTRACT, "delete")]).error_code == ErrorCode.NONE
    assert by_name(describe(client, TOPIC, "sub"))["cleanup.policy"].value == "compact"


def test_incremental_append_to_non_list_config_is_invalid_config(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("app-bad")
    r = incremental(client, TOPIC, "app-bad", [("retention.ms", APPEND, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_CONFIG,
                                               "Can't APPEND to key retention.ms because its type is not LIST.")


def test_incremental_bad_value_is_invalid_config_and_changes_nothing(client: RawClient,
                                                                     mockbroker: MockBroker) -> None:
    mockbroker.create_topic("atomic")
    r = incremental(client, TOPIC, "atomic", [("segment.ms", SET, "1"), ("preallocate", SET, "maybe")])
    assert r.error_code == ErrorCode.INVALID_CONFIG
    assert r.error_message == ("Invalid value maybe for configuration preallocate: Expected value to be either true "
                               "or false")
    assert by_name(describe(client, TOPIC, "atomic"))["segment.ms"].config_source == DEFAULT_CONFIG


def test_incremental_unknown_config_name_is_invalid_config(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("inc-unknown")
    r = incremental(client, TOPIC, "inc-unknown", [("bogus", SET, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_CONFIG, "Unknown topic config name: bogus")


def test_incremental_unknown_topic_is_unknown_topic_or_partition(client: RawClient) -> None:
    r = incremental(client, TOPIC, "ghost", [("retention.ms", SET, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'ghost' does not exist.")


def test_incremental_validate_only_changes_nothing(client: RawClient, mockbroker: MockBroker) -> None:
    mockbroker.create_topic("inc-dry")
    assert incremental(client, TOPIC, "inc-dry", [("retention.ms", SET, "9")],
                       validate_only=True).error_code == ErrorCode.NONE
    assert by_name(describe(client, TOPIC, "inc-dry"))["retention.ms"].config_source == DEFAULT_CONFIG


@pytest.mark.parametrize(
    ("ops", "message"),
    [([("retention.ms", SET, "1"), ("retention.ms", SET, "2")], "Error due to duplicate config keys"),
     ([("retention.ms", SET, None)], "Null value not supported for : retention.ms"),
     ([("retention.ms", 7, "1")], "Unknown operations type 7")],
)
def test_incremental_malformed_operations_are_invalid_request(client: RawClient, mockbroker: MockBroker,
                                                              ops: list[tuple[str, int, str | None]],
                                                              message: str) -> None:
    mockbroker.create_topic("inc-bad")
    r = incremental(client, TOPIC, "inc-bad", ops)
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, message)


def test_incremental_default_topic_resource_is_invalid_request(client: RawClient) -> None:
    r = incremental(client, TOPIC, "", [("retention.ms", SET, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")


def test_incremental_broker_set_then_delete_restores_static_value(client: RawClient) -> None:
    assert incremental(client, BROKER, "1", [("message.max.bytes", SET, "2000000")]).error_code == ErrorCode.NONE
    entry = by_name(describe(client, BROKER, "1"))["message.max.bytes"]
    assert (entry.value, entry.config_source) == ("2000000", DYNAMIC_BROKER_CONFIG)
    assert incremental(client, BROKER, "1", [("message.max.bytes", DELETE, None)]).error_code == ErrorCode.NONE
    entry = by_name(describe(client, BROKER, "1"))["message.max.bytes"]
    assert (entry.value, entry.config_source) == ("1048588", DEFAULT_CONFIG)


def test_incremental_read_only_broker_config_is_invalid_request(client: RawClient) -> None:
    r = incremental(client, BROKER, "", [("auto.create.topics.enable", SET, "false")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST,
                                               "Cannot update these configs dynamically: Set(auto.create.topics.enable)")


def test_incremental_broker_logger_accepts_a_log_level(client: RawClient) -> None:
    assert incremental(client, BROKER_LOGGER, "1", [("kafka.server", SET, "DEBUG")]).error_code == ErrorCode.NONE
    r = incremental(client, BROKER_LOGGER, "1", [("kafka.server", SET, "LOUD")])
    assert r.error_code == ErrorCode.INVALID_CONFIG


def test_incremental_unknown_resource_type_is_invalid_request(client: RawClient) -> None:
    r = incremental(client, 99, "x", [("a", SET, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, "Unknown resource type 99")


def test_incremental_group_resource_takes_group_configs(client: RawClient) -> None:
    # the share group configs themselves: tests/handlers/test_share_group_configs.py
    assert incremental(client, GROUP, "g", [("consumer.session.timeout.ms", SET, "45000")]).error_code == ErrorCode.NONE
    r = incremental(client, GROUP, "g", [("no.such.config", SET, "1")])
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_CONFIG, "Unknown group config name: no.such.config")
