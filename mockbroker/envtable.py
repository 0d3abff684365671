"""The environment table of mockbroker/envconfig.py: every variable mockbroker reads itself (ENVIRONMENT: the
apache/kafka and cp-kafka spelling, bitnami's, the setting it gives, its parser), Confluent's spelling rule
for all the others (env_to_setting), and the lists of what is image plumbing (accepted silently) and which
Kafka settings have no effect on one in-memory node (accepted, not warned about)."""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.envparsers import (
    Parser,
    accepted,
    advertised_listeners,
    bound_listeners,
    choice,
    integer,
    items,
    jvm_options,
    log_level,
    mockbroker_topics,
    names,
    parse_protocol_map,
    roles,
    scram_credentials,
    separator,
    text,
)
from mockbroker.envregistry import boolean, compatibility_level, kafkastore_topic, registry_listener
from mockbroker.personas import KAFKA_VERSIONS

# Image plumbing, not broker settings: accepted silently (JVM, logging, image scripts, image-level
# TLS/SASL users of bitnami, KRaft storage formatting).
PLUMBING_VARS = frozenset({
    "KAFKA_HEAP_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_DEBUG",
    "KAFKA_VERSION", "KAFKA_HOME", "KAFKA_ENABLE_KRAFT", "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    "KAFKA_MOUNTED_CONF_DIR", "KAFKA_CONF_FILE", "KAFKA_CONF_DIR",
    "KAFKA_BASE_DIR", "KAFKA_VOLUME_DIR", "KAFKA_DATA_DIR", "KAFKA_DAEMON_USER", "KAFKA_DAEMON_GROUP",
    "KAFKA_INITSCRIPTS_DIR", "KAFKA_PID_FILE", "KAFKA_SKIP_KRAFT_STORAGE_INIT", "KAFKA_INITIAL_CONTROLLERS",
    "KAFKA_INTER_BROKER_USER", "KAFKA_INTER_BROKER_PASSWORD", "KAFKA_CONTROLLER_USER",
    "KAFKA_CONTROLLER_PASSWORD", "KAFKA_CERTIFICATE_PASSWORD", "KAFKA_ZOOKEEPER_PROTOCOL",
    "KAFKA_ZOOKEEPER_USER", "KAFKA_ZOOKEEPER_PASSWORD", "KAFKA_ADVERTISED_PROTOCOL_NAME",
    "KAFKA_PROTOCOL_NAME", "KAFKA_RESTART_ATTEMPTS", "KAFKA_RESTART_DELAY",
})
PLUMBING_PREFIXES = ("KAFKA_JMX_", "KAFKA_LOG4J_", "KAFKA_KRAFT_", "KAFKA_CLIENT_", "KAFKA_TLS_",
                     "KAFKA_ZOOKEEPER_TLS_")

# Kafka settings that have no effect on a single in-memory node: accepted without a warning.
IGNORED_SETTINGS = frozenset({
    "metadata.log.dir",
    "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr",
    "num.network.threads", "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
    "background.threads", "socket.send.buffer.bytes", "socket.receive.buffer.bytes", "queued.max.requests",
    "auto.leader.rebalance.enable", "controlled.shutdown.enable", "broker.id.generation.enable",
    "inter.broker.protocol.version", "log.message.format.version", "metric.reporters", "jmx.port",
    "log.flush.scheduler.interval.ms", "log.flush.offset.checkpoint.interval.ms",
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "replica.lag.time.max.ms",
    "replica.fetch.max.bytes", "zookeeper.connect", "zookeeper.connection.timeout.ms",
    "zookeeper.session.timeout.ms", "allow.plaintext.listener",
})
IGNORED_PREFIXES = ("confluent.", "zookeeper.", "ssl.", "sasl.", "metadata.log.", "replica.", "leader.imbalance.",
                    "metrics.", "kafka.metrics.")
# Settings that simple flags (--host/--port/--advertised-host/--advertised-port) replace.
LISTENER_KEYS = ("listeners", "advertised.listeners", "port", "host.name", "advertised.host.name",
                 "advertised.port")
# Kafka's coarser spellings of a .ms setting: used when the .ms setting is not given (first found wins).
TIME_SYNONYMS = {
    "log.retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "log.roll.ms": (("log.roll.hours", 3_600_000),),
    "log.roll.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
}


# ------------------------------------------------------------------------------------------------
# the table


@dataclass(frozen=True)
class EnvVar:
    kafka: str  # apache/kafka and cp-kafka spelling (or the variable's only name)
    bitnami: str | None  # bitnami/kafka spelling
    setting: str  # the Kafka setting it gives (or mockbroker's own, mockbroker.*)
    parse: Parser
    blank_is_unset: bool = False  # an empty value counts as not given (else it is a value, checked)

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.kafka,) if self.bitnami is None else (self.kafka, self.bitnami)


# Every variable mockbroker reads itself. Each of them is also what the rest of the code reads: the
# settings below are never passed on as broker config.
ENVIRONMENT: tuple[EnvVar, ...] = (
    # Kafka images                           bitnami/kafka                              setting                   parser
    # -- the node and its cluster
    EnvVar("KAFKA_NODE_ID",                  "KAFKA_CFG_NODE_ID",                       "node.id",                integer("node.id", 0, 2**31 - 1)),
    EnvVar("KAFKA_BROKER_ID",                "KAFKA_CFG_BROKER_ID",                     "broker.id",              integer("broker.id", -1, 2**31 - 1)),
    EnvVar("CLUSTER_ID",                     "KAFKA_KRAFT_CLUSTER_ID",                  "cluster.id",             text, True),
    EnvVar("KAFKA_CLUSTER_ID",               "KAFKA_CFG_CLUSTER_ID",                    "cluster.id",             text, True),
    EnvVar("KAFKA_BROKER_RACK",              "KAFKA_CFG_BROKER_RACK",                   "broker.rack",            text, True),
    EnvVar("KAFKA_PROCESS_ROLES",            "KAFKA_CFG_PROCESS_ROLES",                 "process.roles",          roles),
    # -- listeners
    EnvVar("KAFKA_LISTENERS",                "KAFKA_CFG_LISTENERS",                     "listeners",              bound_listeners),
    EnvVar("KAFKA_ADVERTISED_LISTENERS",     "KAFKA_CFG_ADVERTISED_LISTENERS",          "advertised.listeners",   advertised_listeners),
    EnvVar("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP",
           "listener.security.protocol.map", parse_protocol_map),
    EnvVar("KAFKA_CONTROLLER_LISTENER_NAMES", "KAFKA_CFG_CONTROLLER_LISTENER_NAMES",    "controller.listener.names", names),
    EnvVar("KAFKA_INTER_BROKER_LISTENER_NAME", "KAFKA_CFG_INTER_BROKER_LISTENER_NAME",  "inter.broker.listener.name", text),
    EnvVar("KAFKA_SECURITY_INTER_BROKER_PROTOCOL", "KAFKA_CFG_SECURITY_INTER_BROKER_PROTOCOL",
           "security.inter.broker.protocol", accepted),
    EnvVar("KAFKA_CONTROLLER_QUORUM_VOTERS", "KAFKA_CFG_CONTROLLER_QUORUM_VOTERS",      "controller.quorum.voters", accepted),
    EnvVar("KAFKA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS", "KAFKA_CFG_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS",
           "controller.quorum.bootstrap.servers", accepted),
    # -- wurstmeister's pre-listener settings: the one listener when no listeners are given
    EnvVar("KAFKA_PORT",                     "KAFKA_CFG_PORT",                          "port",                   integer("the port", 0, 65535)),
    EnvVar("KAFKA_HOST_NAME",                "KAFKA_CFG_HOST_NAME",                     "host.name",              text),
    EnvVar("KAFKA_ADVERTISED_HOST_NAME",     "KAFKA_CFG_ADVERTISED_HOST_NAME",          "advertised.host.name",   text),
    EnvVar("KAFKA_ADVERTISED_PORT",          "KAFKA_CFG_ADVERTISED_PORT",               "advertised.port",        integer("the advertised port", 1, 65535)),
    # -- Kafka's coarser spellings of .ms settings (TIME_SYNONYMS: used when the .ms setting is not given)
    EnvVar("KAFKA_LOG_DIRS",                 "KAFKA_CFG_LOG_DIRS",                      "log.dirs",               text, True),
    EnvVar("KAFKA_LOG_DIR",                  "KAFKA_CFG_LOG_DIR",                       "log.dir",                text, True),
    EnvVar("KAFKA_LOG_RETENTION_MINUTES",    "KAFKA_CFG_LOG_RETENTION_MINUTES",         "log.retention.minutes",  integer("log.retention.minutes")),
    EnvVar("KAFKA_LOG_RETENTION_HOURS",      "KAFKA_CFG_LOG_RETENTION_HOURS",           "log.retention.hours",    integer("log.retention.hours")),
    EnvVar("KAFKA_LOG_ROLL_HOURS",           "KAFKA_CFG_LOG_ROLL_HOURS",                "log.roll.hours",         integer("log.roll.hours")),
    EnvVar("KAFKA_LOG_ROLL_JITTER_HOURS",    "KAFKA_CFG_LOG_ROLL_JITTER_HOURS",         "log.roll.jitter.hours",  integer("log.roll.jitter.hours")),
    # -- topics made at start (wurstmeister: name:partitions:replicas[:cleanup.policy]; mockbroker: name[:partitions])
    EnvVar("KAFKA_CREATE_TOPICS",            None,                                      "create.topics",          text, True),
    EnvVar("KAFKA_CREATE_TOPICS_SEPARATOR",  None,                                      "create.topics.separator", separator, True),
    EnvVar("MOCKBROKER_TOPICS",              None,                                      "mockbroker.topics",      mockbroker_topics, True),
    # -- mockbroker's own: the default listener, the HTTP control endpoint, logging
    EnvVar("MOCKBROKER_HOST",                None,                                      "mockbroker.host",        text, True),
    EnvVar("MOCKBROKER_PORT",                None,                                      "mockbroker.port",        integer("the port", 0, 65535), True),
    EnvVar("MOCKBROKER_HTTP_HOST",           None,                                      "mockbroker.http.host",   text, True),
    EnvVar("MOCKBROKER_HTTP_PORT",           None,                                      "mockbroker.http.port",   integer("the HTTP port", 0, 65535), True),
    # basic (default): a broker with SASL users wants HTTP Basic credentials of one of them; none: open
    EnvVar("MOCKBROKER_HTTP_AUTH",           None,                                      "mockbroker.http.auth",   choice("the HTTP auth", ("basic", "none")), True),
    # a Schema Registry beside the broker (mockbroker/registry); 0: a free port
    EnvVar("MOCKBROKER_SCHEMA_REGISTRY_PORT", None,                                     "mockbroker.schema.registry.port", integer("the Schema Registry port", 0, 65535), True),
    # cp-schema-registry's names where they apply (mockbroker/envregistry.py): its listener wins over the port above
    EnvVar("SCHEMA_REGISTRY_LISTENERS",      None,                                      "schema.registry.listeners", registry_listener, True),
    EnvVar("SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL", None,                          "schema.registry.schema.compatibility.level", compatibility_level, True),
    EnvVar("SCHEMA_REGISTRY_AVRO_COMPATIBILITY_LEVEL", None,                            "schema.registry.avro.compatibility.level", compatibility_level, True),
    EnvVar("SCHEMA_REGISTRY_MODE_MUTABILITY", None,                                     "schema.registry.mode.mutability", boolean, True),
    EnvVar("SCHEMA_REGISTRY_KAFKASTORE_TOPIC", None,                                    "schema.registry.kafkastore.topic", kafkastore_topic, True),
    EnvVar("SCHEMA_REGISTRY_HOST_NAME",      None,                                      "schema.registry.host.name", accepted),
    EnvVar("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS", None,                        "schema.registry.kafkastore.bootstrap.servers", accepted),
    EnvVar("MOCKBROKER_LOG_LEVEL",           None,                                      "mockbroker.log.level",   log_level, True),
    EnvVar("MOCKBROKER_BROKERS",             None,                                      "mockbroker.brokers",     integer("the broker count", 1, 64), True),
    # test: start from the test defaults (mockbroker/settings.py TEST_DEFAULTS: group.initial.rebalance.delay.ms=0), as the
    # image does; kafka (the command's default): Kafka's own. Explicit settings win either way.
    EnvVar("MOCKBROKER_DEFAULTS",            None,                                      "mockbroker.defaults",    choice("the defaults", ("kafka", "test")), True),
    # the Kafka release to play (mockbroker/personas.py): its API versions and behaviours; unset: every version served
    EnvVar("MOCKBROKER_KAFKA_VERSION",       None,                                      "mockbroker.kafka.version", choice("the Kafka version", KAFKA_VERSIONS), True),
    # every random choice of the broker comes from it (mockbroker/state/seeding.py); unset: a fresh one, logged
    EnvVar("MOCKBROKER_SEED",                None,                                      "mockbroker.seed",        integer("the seed", 0, 2**64 - 1), True),
    # -- security: users (bitnami's lists), where the throwaway CA goes (sasl.enabled.mechanisms, ssl.client.auth,
    #    ssl.keystore.* / ssl.truststore.* / ssl.key.password come through the spelling rule below)
    EnvVar("KAFKA_CLIENT_USERS",             None,                                      "mockbroker.client.users", items, True),
    EnvVar("KAFKA_CLIENT_PASSWORDS",         None,                                      "mockbroker.client.passwords", text, True),
    # -- SASL logins: a JAAS file (KAFKA_OPTS=-Djava.security.auth.login.config=/path, as apache/kafka and cp-kafka
    #    take it; the other JVM options are ignored), SCRAM credentials in kafka-storage format's --add-scram form
    #    (those images make them with the storage tool, not from the environment). sasl.jaas.config and
    #    listener.name.<listener>.<mechanism>.sasl.jaas.config come through the spelling rule.
    EnvVar("KAFKA_OPTS",                     None,                                      "mockbroker.kafka.opts",  jvm_options, True),
    EnvVar("MOCKBROKER_SCRAM_CREDENTIALS",   None,                                      "mockbroker.scram.credentials", scram_credentials, True),
    EnvVar("MOCKBROKER_SSL_CA_OUT",          None,                                      "mockbroker.ssl.ca.out",  text, True),
    # Every other KAFKA_<NAME> / KAFKA_CFG_<NAME>: the broker setting <name> (env_to_setting), checked by
    # its own parser in state/configs.py when mockbroker models it.
)
BY_VARIABLE = {name: var for var in ENVIRONMENT for name in var.spellings}
BY_SETTING = {var.setting: var for var in ENVIRONMENT}


# ------------------------------------------------------------------------------------------------
# reading


def env_to_setting(suffix: str) -> str:
    """The Kafka setting name of an environment variable's suffix, by Confluent's rule:
    `___` -> `-`, `__` -> `_`, `_` -> `.`, lower case (LOG_RETENTION_MS -> log.retention.ms)."""
    return suffix.lower().replace("_", ".").replace("...", "-").replace("..", "_")


def is_plumbing(var: str) -> bool:
    return var in PLUMBING_VARS or var.startswith(PLUMBING_PREFIXES)


def is_ignored(key: str) -> bool:
    return key in IGNORED_SETTINGS or key.startswith(IGNORED_PREFIXES)
