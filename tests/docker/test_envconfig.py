"""mockbroker.envconfig: the environment of the Kafka images (and the command line) -> broker settings."""

from __future__ import annotations

import pytest

from mockbroker.envconfig import (
    BrokerSettings,
    ConfigError,
    Flags,
    ListenerSpec,
    TopicSpec,
    build_settings,
    env_to_setting,
)
from mockbroker.server import MockBroker

# The apache/kafka image's documented single-node (combined KRaft) environment.
APACHE_KAFKA_ENV = {
    "KAFKA_NODE_ID": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_LISTENERS": "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:9092",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_NUM_PARTITIONS": "3",
}
# The bitnami/kafka documented KRaft environment with an external listener.
BITNAMI_ENV = {
    "KAFKA_CFG_NODE_ID": "0",
    "KAFKA_CFG_PROCESS_ROLES": "controller,broker",
    "KAFKA_CFG_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094",
    "KAFKA_CFG_ADVERTISED_LISTENERS": "PLAINTEXT://kafka:9092,EXTERNAL://localhost:9094",
    "KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,EXTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "KAFKA_CFG_CONTROLLER_QUORUM_VOTERS": "0@kafka:9093",
    "KAFKA_CFG_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_KRAFT_CLUSTER_ID": "abcdefghijklmnopqrstuv",
    "ALLOW_PLAINTEXT_LISTENER": "yes",
    "BITNAMI_DEBUG": "false",
}
# confluentinc/cp-kafka's classic quick start (ZooKeeper era): only advertised listeners.
CP_KAFKA_ENV = {
    "KAFKA_BROKER_ID": "1",
    "KAFKA_ZOOKEEPER_CONNECT": "zookeeper:2181",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://broker:29092,PLAINTEXT_HOST://localhost:9092",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_CONFLUENT_LICENSE_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_JMX_PORT": "9101",
    "KAFKA_JMX_HOSTNAME": "localhost",
}
# wurstmeister/kafka's README.
WURSTMEISTER_ENV = {
    "KAFKA_ADVERTISED_HOST_NAME": "192.168.99.100",
    "KAFKA_ZOOKEEPER_CONNECT": "zookeeper:2181",
    "KAFKA_CREATE_TOPICS": "Topic1:1:3,Topic2:1:1:compact",
}


def error_of(env: dict[str, str], flags: Flags | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        build_settings(env, flags)
    return str(info.value)


# -- spelling ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix,name", [
    ("LOG_RETENTION_MS", "log.retention.ms"),
    ("AUTO_CREATE_TOPICS_ENABLE", "auto.create.topics.enable"),
    ("CONFLUENT_SUPPORT__METRICS", "confluent.support_metrics"),
    ("LISTENER_NAME_INTERNAL_SSL___KEY", "listener.name.internal.ssl-key"),
])
def test_env_names_follow_the_confluent_spelling_rule(suffix: str, name: str) -> None:
    assert env_to_setting(suffix) == name


def test_empty_environment_is_one_plaintext_listener_on_loopback_9092() -> None:
    s = build_settings({})
    assert s.listeners == [ListenerSpec("PLAINTEXT", "127.0.0.1", 9092)]
    assert (s.node_id, s.cluster_id, s.config, s.topics, s.http_port) == (1, None, {}, [], None)
    assert s.unknown == {} and s.unknown_line() is None


def test_kafka_settings_become_broker_config_under_kafkas_names() -> None:
    s = build_settings({"KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false", "KAFKA_NUM_PARTITIONS": "4",
                        "KAFKA_LOG_RETENTION_MS": "60000", "KAFKA_CFG_MESSAGE_MAX_BYTES": "2000000"})
    assert s.config == {"auto.create.topics.enable": "false", "num.partitions": "4",
                        "log.retention.ms": "60000", "message.max.bytes": "2000000"}
    broker = MockBroker(**s.broker_kwargs())
    assert broker.cluster.config.get("auto.create.topics.enable") is False
    assert broker.cluster.config.get("num.partitions") == 4
    assert broker.cluster.config.get("log.retention.ms") == 60000


def test_kafka_and_kafka_cfg_spellings_agreeing_are_fine_and_disagreeing_is_an_error() -> None:
    s = build_settings({"KAFKA_NUM_PARTITIONS": "3", "KAFKA_CFG_NUM_PARTITIONS": "3"})
    assert s.config == {"num.partitions": "3"}
    msg = error_of({"KAFKA_NUM_PARTITIONS": "3", "KAFKA_CFG_NUM_PARTITIONS": "5"})
    assert "KAFKA_NUM_PARTITIONS" in msg and "KAFKA_CFG_NUM_PARTITIONS" in msg and "num.partitions" in msg


def test_a_bad_value_for_a_known_setting_names_the_variable() -> None:
    msg = error_of({"KAFKA_NUM_PARTITIONS": "many"})
    assert msg.startswith("KAFKA_NUM_PARTITIONS='many'") and "num.partitions" in msg


def test_unknown_settings_are_kept_and_listed_once_plumbing_is_silent() -> None:
    env = {"KAFKA_FOO_BAR": "1", "KAFKA_CFG_BAZ_QUX": "x", "KAFKA_HEAP_OPTS": "-Xmx1G", "KAFKA_OPTS": "-Dx",
           "KAFKA_JMX_PORT": "9101", "KAFKA_JMX_OPTS": "-Dy", "KAFKA_LOG4J_LOGGERS": "kafka=WARN",
           "KAFKA_LOG4J_ROOT_LOGLEVEL": "WARN", "KAFKA_ENABLE_KRAFT": "yes", "KAFKA_KRAFT_BOOTSTRAP_SCRAM_USERS": "x",
           "ALLOW_PLAINTEXT_LISTENER": "yes", "KAFKA_NUM_IO_THREADS": "8", "KAFKA_ZOOKEEPER_CONNECT": "zk:2181",
           "KAFKA_VERSION": "4.1.0", "HOME": "/root"}
    s = build_settings(env)
    assert s.unknown == {"foo.bar": "KAFKA_FOO_BAR", "baz.qux": "KAFKA_CFG_BAZ_QUX"}
    assert s.ignored == {"num.io.threads": "KAFKA_NUM_IO_THREADS", "zookeeper.connect": "KAFKA_ZOOKEEPER_CONNECT"}
    assert set(s.config) == {"foo.bar", "baz.qux", "num.io.threads", "zookeeper.connect"}
    line = s.unknown_line()
    assert line is not None and "\n" not in line
    assert "baz.qux (KAFKA_CFG_BAZ_QUX)" in line and "foo.bar (KAFKA_FOO_BAR)" in line
    broker = MockBroker(**s.broker_kwargs())
    assert broker.cluster.config.unknown["foo.bar"] == "1"


def test_log_dirs_name_the_data_dir_in_every_spelling() -> None:
    assert build_settings({}).data_dir is None
    assert "data_dir" not in build_settings({}).broker_kwargs()
    assert build_settings({"KAFKA_LOG_DIRS": "/var/lib/kafka/data"}).data_dir == "/var/lib/kafka/data"
    assert build_settings({"KAFKA_CFG_LOG_DIRS": "/bitnami/kafka/data,/other"}).data_dir == "/bitnami/kafka/data"
    assert build_settings({"KAFKA_LOG_DIR": "/d"}).data_dir == "/d"
    s = build_settings({"KAFKA_LOG_DIRS": "/env"}, Flags(data_dir="/flag"))
    assert s.data_dir == "/flag" and s.broker_kwargs()["data_dir"] == "/flag"
    assert "log.dirs" not in s.config  # read by mockbroker itself, not passed on as a broker setting


def test_coarse_retention_settings_become_ms_unless_ms_is_given() -> None:
    assert build_settings({"KAFKA_LOG_RETENTION_HOURS": "168"}).config == {"log.retention.ms": str(168 * 3600000)}
    assert build_settings({"KAFKA_LOG_RETENTION_MINUTES": "5", "KAFKA_LOG_RETENTION_HOURS": "1"}).config == {
        "log.retention.ms": "300000"}
    s = build_settings({"KAFKA_LOG_RETENTION_MS": "1000", "KAFKA_LOG_RETENTION_HOURS": "1"})
    assert s.config == {"log.retention.ms": "1000"} and s.unknown == {}


# -- node and cluster ---------------------------------------------------------------------------------


def test_node_id_and_broker_id_are_one_setting() -> None:
    assert build_settings({"KAFKA_NODE_ID": "3"}).node_id == 3
    assert build_settings({"KAFKA_BROKER_ID": "4"}).node_id == 4
    assert build_settings({"KAFKA_NODE_ID": "5", "KAFKA_BROKER_ID": "5"}).node_id == 5
    assert build_settings({"KAFKA_NODE_ID": "5", "KAFKA_BROKER_ID": "-1"}).node_id == 5
    msg = error_of({"KAFKA_NODE_ID": "1", "KAFKA_BROKER_ID": "2"})
    assert "KAFKA_NODE_ID=1" in msg and "KAFKA_BROKER_ID=2" in msg and "disagree" in msg
    assert "integer" in error_of({"KAFKA_NODE_ID": "one"})


def test_cluster_id_from_any_image_spelling_and_conflicts_are_errors() -> None:
    assert build_settings({"CLUSTER_ID": "MkU3OEVBNTcwNTJENDM2Qk"}).cluster_id == "MkU3OEVBNTcwNTJENDM2Qk"
    assert build_settings({"KAFKA_KRAFT_CLUSTER_ID": "abc"}).cluster_id == "abc"
    assert build_settings({"KAFKA_CLUSTER_ID": "abc", "CLUSTER_ID": "abc"}).cluster_id == "abc"
    msg = error_of({"CLUSTER_ID": "abc", "KAFKA_KRAFT_CLUSTER_ID": "xyz"})
    assert "CLUSTER_ID='abc'" in msg and "KAFKA_KRAFT_CLUSTER_ID='xyz'" in msg
    broker = MockBroker(**build_settings({"CLUSTER_ID": "abc", "KAFKA_NODE_ID": "7"}).broker_kwargs())
    assert broker.cluster.cluster_id == "abc" and list(broker.cluster.nodes) == [7]
    assert [lst.node_id for lst in broker.cluster.listeners] == [7]


def test_broker_rack_is_the_nodes_rack_not_a_setting() -> None:
    s = build_settings({"KAFKA_BROKER_RACK": "eu-1a"})
    assert s.rack == "eu-1a" and s.config == {} and s.unknown == {}


def test_process_roles_must_include_broker() -> None:
    assert build_settings({"KAFKA_PROCESS_ROLES": "broker"}).listeners
    assert "serve no clients" in error_of({"KAFKA_PROCESS_ROLES": "controller"})
    assert "unknown role" in error_of({"KAFKA_PROCESS_ROLES": "broker,zookeeper"})


# -- listeners -----------------------------------------------------------------------------------------


def test_internal_and_external_listeners_bind_and_advertise_their_own_addresses() -> None:
    s = build_settings({
        "KAFKA_LISTENERS": "INTERNAL://0.0.0.0:29092,EXTERNAL://0.0.0.0:9092",
        "KAFKA_ADVERTISED_LISTENERS": "INTERNAL://kafka:29092,EXTERNAL://localhost:9092",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
    })
    assert s.listeners == [ListenerSpec("INTERNAL", "0.0.0.0", 29092, "kafka", 29092),
                           ListenerSpec("EXTERNAL", "0.0.0.0", 9092, "localhost", 9092)]
    listeners = MockBroker(**s.broker_kwargs()).cluster.listeners
    assert [(lst.name, lst.public_host, lst.public_port) for lst in listeners] == [
        ("INTERNAL", "kafka", 29092), ("EXTERNAL", "localhost", 9092)]


def test_apache_kafka_documented_environment_binds_plaintext_and_not_the_controller() -> None:
    s = build_settings(APACHE_KAFKA_ENV)
    assert s.listeners == [ListenerSpec("PLAINTEXT", "localhost", 9092, "localhost", 9092)]
    assert s.unbound_listeners == [ListenerSpec("CONTROLLER", "localhost", 9093)]
    assert s.config["num.partitions"] == "3" and s.config["group.initial.rebalance.delay.ms"] == "0"
    assert s.unknown == {}
    # The internal topics' settings are read now (state/cluster/internal_topics.py), no longer ignored.
    assert set(s.ignored) == set()
    assert s.config["offsets.topic.replication.factor"] == "1"
    assert s.config["transaction.state.log.min.isr"] == "1"


def test_bitnami_documented_environment_uses_kafka_cfg_settings() -> None:
    s = build_settings(BITNAMI_ENV)
    assert s.node_id == 0 and s.cluster_id == "abcdefghijklmnopqrstuv"
    assert s.listeners == [ListenerSpec("PLAINTEXT", "0.0.0.0", 9092, "kafka", 9092),
                           ListenerSpec("EXTERNAL", "0.0.0.0", 9094, "localhost", 9094)]
    assert [spec.name for spec in s.unbound_listeners] == ["CONTROLLER"]
    assert s.unknown == {} and s.config == {}
    assert s.listeners[0].connect_host == "127.0.0.1"


def test_cp_kafka_advertised_listeners_alone_bind_every_interface_on_their_ports() -> None:
    s = build_settings(CP_KAFKA_ENV)
    assert s.node_id == 1
    assert s.listeners == [ListenerSpec("PLAINTEXT", "0.0.0.0", 29092, "broker", 29092),
                           ListenerSpec("PLAINTEXT_HOST", "0.0.0.0", 9092, "localhost", 9092)]
    assert s.unknown == {}


def test_wurstmeister_advertised_host_name_and_create_topics() -> None:
    s = build_settings(WURSTMEISTER_ENV)
    assert s.listeners == [ListenerSpec("PLAINTEXT", "127.0.0.1", 9092, "192.168.99.100", None)]
    assert s.topics == [TopicSpec("Topic1", 1, -1, (), "KAFKA_CREATE_TOPICS"),
                        TopicSpec("Topic2", 1, 1, (("cleanup.policy", "compact"),), "KAFKA_CREATE_TOPICS")]
    assert len(s.warnings) == 1 and "Topic1 asks for 3 replicas" in s.warnings[0]
    assert s.unknown == {}


def test_listener_without_a_security_protocol_is_an_error() -> None:
    msg = error_of({"KAFKA_LISTENERS": "INTERNAL://:9092"})
    assert "INTERNAL" in msg and "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP" in msg
    msg = error_of({"KAFKA_LISTENERS": "INTERNAL://:9092,EXTERNAL://:9093",
                    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT"})
    assert "EXTERNAL" in msg and "no security protocol" in msg


def test_secured_listeners_keep_their_protocol_and_a_controller_listener_may_use_anything() -> None:
    s = build_settings({"KAFKA_LISTENERS": "PLAINTEXT://:9092,SECURE://:9093,SSL://:9094",
                        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL,SSL:SSL"})
    assert [(spec.name, spec.security_protocol) for spec in s.listeners] == [
        ("PLAINTEXT", "PLAINTEXT"), ("SECURE", "SASL_SSL"), ("SSL", "SSL")]
    assert [lst.security_protocol for lst in s.broker_kwargs()["listeners"]] == ["PLAINTEXT", "SASL_SSL", "SSL"]
    assert build_settings({"KAFKA_LISTENERS": "SASL_PLAINTEXT://:9093"}).listeners[0].security_protocol == \
        "SASL_PLAINTEXT"  # a listener named after a protocol uses it
    s = build_settings({"KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
                        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
                        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL"})
    assert [spec.name for spec in s.listeners] == ["PLAINTEXT"]
    assert s.unbound_listeners[0].security_protocol == "SASL_SSL"


def test_bitnami_users_sasl_mechanisms_and_tls_settings_reach_the_broker() -> None:
    s = build_settings({"KAFKA_CFG_LISTENERS": "SASL_SSL://:9093", "KAFKA_CLIENT_USERS": "alice,bob",
                        "KAFKA_CLIENT_PASSWORDS": "a-secret,b-secret", "KAFKA_CFG_SASL_ENABLED_MECHANISMS": "SCRAM-SHA-512",
                        "KAFKA_SSL_CLIENT_AUTH": "requested", "KAFKA_SSL_KEYSTORE_TYPE": "PEM",
                        "MOCKBROKER_SSL_CA_OUT": "/certs/ca.pem"})
    kwargs = s.broker_kwargs()
    assert kwargs["users"] == {"alice": "a-secret", "bob": "b-secret"}
    assert kwargs["config"]["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert kwargs["config"]["ssl.client.auth"] == "requested" and kwargs["config"]["ssl.keystore.type"] == "PEM"
    assert s.ssl_ca_out == "/certs/ca.pem"
    msg = error_of({"KAFKA_CLIENT_USERS": "alice,bob", "KAFKA_CLIENT_PASSWORDS": "only-one"})
    assert "one password per user" in msg


def test_controller_listener_without_a_map_entry_is_plaintext_as_in_kafka() -> None:
    s = build_settings({"KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
                        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER"})
    assert [spec.name for spec in s.unbound_listeners] == ["CONTROLLER"]


def test_advertised_listener_with_no_listener_is_an_error() -> None:
    msg = error_of({"KAFKA_LISTENERS": "PLAINTEXT://:9092",
                    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://kafka:9092,EXTERNAL://localhost:9094"})
    assert "EXTERNAL" in msg and "KAFKA_ADVERTISED_LISTENERS" in msg and "KAFKA_LISTENERS" in msg


@pytest.mark.parametrize("env,fragment", [
    ({"KAFKA_LISTENERS": "PLAINTEXT://localhost"}, "NAME://HOST:PORT"),
    ({"KAFKA_LISTENERS": "localhost:9092"}, "NAME://HOST:PORT"),
    ({"KAFKA_LISTENERS": "PLAINTEXT://:9092,plaintext://:9093"}, "appears twice"),
    ({"KAFKA_LISTENERS": "PLAINTEXT://:99999"}, "out of range"),
    ({"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://0.0.0.0:9092"}, "non-routable"),
    ({"KAFKA_LISTENERS": "PLAINTEXT://:9092", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT"}, "NAME:PROTOCOL"),
    ({"KAFKA_LISTENERS": "PLAINTEXT://:9092", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:TLS"},
     "unknown security protocol"),
    ({"KAFKA_LISTENERS": "CONTROLLER://:9093", "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER"}, "no listener to serve"),
    ({"KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL"}, "not a listener"),
    ({"KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT", "KAFKA_SECURITY_INTER_BROKER_PROTOCOL": "PLAINTEXT"},
     "only one of"),
    ({"MOCKBROKER_LOG_LEVEL": "LOUD"}, "MOCKBROKER_LOG_LEVEL"),
    ({"MOCKBROKER_HTTP_PORT": "http"}, "MOCKBROKER_HTTP_PORT"),
])
def test_listener_and_misc_mistakes_are_one_clear_error(env: dict[str, str], fragment: str) -> None:
    assert fragment in error_of(env)


def test_listener_names_are_case_insensitive_and_ipv6_hosts_lose_their_brackets() -> None:
    s = build_settings({"KAFKA_LISTENERS": "plaintext://[::1]:9092"})
    assert s.listeners == [ListenerSpec("PLAINTEXT", "::1", 9092)]


# -- topics ----------------------------------------------------------------------------------------------


def test_topics_from_mockbroker_topics_and_kafka_create_topics() -> None:
    s = build_settings({"MOCKBROKER_TOPICS": "orders:3, audit ,", "KAFKA_CREATE_TOPICS": "events:2:1"})
    assert [(t.name, t.partitions, t.replication_factor) for t in s.topics] == [
        ("orders", 3, -1), ("audit", -1, -1), ("events", 2, 1)]
    assert s.warnings == []


def test_kafka_create_topics_separator() -> None:
    s = build_settings({"KAFKA_CREATE_TOPICS": "a:1:1\nb:2:1", "KAFKA_CREATE_TOPICS_SEPARATOR": "$$'\\n'"})
    assert [t.name for t in s.topics] == ["a", "b"]


def test_the_same_topic_twice_is_fine_unless_the_specs_differ() -> None:
    assert len(build_settings({"MOCKBROKER_TOPICS": "a:2", "KAFKA_CREATE_TOPICS": "a:2:1"}).topics) == 1
    msg = error_of({"MOCKBROKER_TOPICS": "a:2", "KAFKA_CREATE_TOPICS": "a:3:1"})
    assert "topic a" in msg and "MOCKBROKER_TOPICS" in msg and "KAFKA_CREATE_TOPICS" in msg


@pytest.mark.parametrize("value,fragment", [("a:0", ">= 1"), ("a:x", "integer"), ("bad name:1", "illegal"),
                                            ("a:1:1", "name[:partitions]")])
def test_bad_topic_specs_are_errors(value: str, fragment: str) -> None:
    msg = error_of({"MOCKBROKER_TOPICS": value})
    assert "MOCKBROKER_TOPICS" in msg and fragment in msg


# -- flags ------------------------------------------------------------------------------------------------


def test_flags_win_over_the_environment_setting_by_setting() -> None:
    env = {"KAFKA_NODE_ID": "1", "KAFKA_BROKER_ID": "2", "KAFKA_NUM_PARTITIONS": "3",
           "KAFKA_LISTENERS": "PLAINTEXT://0.0.0.0:9092", "MOCKBROKER_HTTP_PORT": "8080"}
    s = build_settings(env, Flags(node_id=9, partitions=5, port=0, http_port=0))
    assert s.node_id == 9 and s.config["num.partitions"] == "5" and s.http_port == 0
    assert s.listeners == [ListenerSpec("PLAINTEXT", "127.0.0.1", 0)]


def test_listener_flags_are_the_env_vars_equivalent() -> None:
    flags = Flags(listeners=["INTERNAL://127.0.0.2:0", "EXTERNAL://127.0.0.1:0"],
                  advertised_listeners=["INTERNAL://kafka:29092"],
                  config=["listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT"])
    s = build_settings({}, flags)
    assert s.listeners == [ListenerSpec("INTERNAL", "127.0.0.2", 0, "kafka", 29092),
                           ListenerSpec("EXTERNAL", "127.0.0.1", 0)]
    env = {"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
           "KAFKA_LISTENERS": "INTERNAL://127.0.0.2:0,EXTERNAL://127.0.0.1:0",
           "KAFKA_ADVERTISED_LISTENERS": "INTERNAL://kafka:29092"}
    assert build_settings(env).listeners == s.listeners


def test_host_port_flags_and_listener_flags_do_not_mix() -> None:
    assert "not both" in error_of({}, Flags(port=1, listeners=["PLAINTEXT://:2"]))
    assert "KEY=VALUE" in error_of({}, Flags(config=["novalue"]))


def test_mockbroker_host_sets_the_default_listener_and_the_control_endpoint() -> None:
    s = build_settings({"MOCKBROKER_HOST": "0.0.0.0", "MOCKBROKER_PORT": "19092", "MOCKBROKER_HTTP_PORT": "8080"})
    assert s.listeners == [ListenerSpec("PLAINTEXT", "0.0.0.0", 19092)]
    assert (s.http_host, s.http_port) == ("0.0.0.0", 8080)
    assert build_settings({"MOCKBROKER_HTTP_PORT": "8080"}).http_host == "127.0.0.1"
    assert build_settings({"MOCKBROKER_HTTP_HOST": "127.0.0.2", "MOCKBROKER_HTTP_PORT": "1"}).http_host == "127.0.0.2"


def test_settings_object_defaults() -> None:
    assert BrokerSettings().broker_kwargs() == {"node_id": 1, "cluster_id": None, "config": {}, "listeners": [],
                                                "defaults": "kafka"}
