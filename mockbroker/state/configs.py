"""Topic and broker configuration: the settings this broker honours, their types and Kafka's defaults.

A topic config's value comes from, in order: the topic's own setting (source TOPIC_CONFIG), the broker
setting it falls back to (e.g. retention.ms <- log.retention.ms; STATIC_BROKER_CONFIG when set), or
Kafka's default (DEFAULT_CONFIG). DescribeConfigs shows exactly this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.copying import copy_attrs

LONG_MAX = 9223372036854775807
INT_MAX = 2147483647


class ConfigType(IntEnum):
    """DescribeConfigs v3+ config_type."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


@dataclass(frozen=True)
class ConfigDef:
    name: str
    type: ConfigType
    default: Any
    broker_name: str | None = None  # the broker setting a topic config falls back to
    choices: tuple[str, ...] | None = None
    minimum: int | None = None  # Kafka's ConfigDef.Range.atLeast, where it has one


# Topic-level configs (Kafka 4.x names and defaults).
TOPIC_CONFIGS: dict[str, ConfigDef] = {
    c.name: c
    for c in [
        ConfigDef("cleanup.policy", ConfigType.LIST, "delete", "log.cleanup.policy", ("delete", "compact")),
        ConfigDef("compression.type", ConfigType.STRING, "producer", "compression.type",
                  ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
        ConfigDef("delete.retention.ms", ConfigType.LONG, 86400000, "log.cleaner.delete.retention.ms"),
        ConfigDef("file.delete.delay.ms", ConfigType.LONG, 60000, "log.segment.delete.delay.ms"),
        ConfigDef("flush.messages", ConfigType.LONG, LONG_MAX, "log.flush.interval.messages"),
        ConfigDef("flush.ms", ConfigType.LONG, LONG_MAX, "log.flush.interval.ms"),
        ConfigDef("index.interval.bytes", ConfigType.INT, 4096, "log.index.interval.bytes"),
        ConfigDef("max.compaction.lag.ms", ConfigType.LONG, LONG_MAX, "log.cleaner.max.compaction.lag.ms"),
        ConfigDef("max.message.bytes", ConfigType.INT, 1048588, "message.max.bytes"),
        ConfigDef("message.timestamp.after.max.ms", ConfigType.LONG, 3600000,
                  "log.message.timestamp.after.max.ms"),
        ConfigDef("message.timestamp.before.max.ms", ConfigType.LONG, LONG_MAX,
                  "log.message.timestamp.before.max.ms"),
        ConfigDef("message.timestamp.type", ConfigType.STRING, "CreateTime", "log.message.timestamp.type",
                  ("CreateTime", "LogAppendTime")),
        ConfigDef("min.cleanable.dirty.ratio", ConfigType.DOUBLE, 0.5, "log.cleaner.min.cleanable.ratio"),
        ConfigDef("min.compaction.lag.ms", ConfigType.LONG, 0, "log.cleaner.min.compaction.lag.ms"),
        ConfigDef("min.insync.replicas", ConfigType.INT, 1, "min.insync.replicas"),
        ConfigDef("preallocate", ConfigType.BOOLEAN, False, "log.preallocate"),
        ConfigDef("retention.bytes", ConfigType.LONG, -1, "log.retention.bytes"),
        ConfigDef("retention.ms", ConfigType.LONG, 604800000, "log.retention.ms"),
        ConfigDef("segment.bytes", ConfigType.INT, 1073741824, "log.segment.bytes"),
        ConfigDef("segment.index.bytes", ConfigType.INT, 10485760, "log.index.size.max.bytes"),
        ConfigDef("segment.jitter.ms", ConfigType.LONG, 0, "log.roll.jitter.ms"),
        ConfigDef("segment.ms", ConfigType.LONG, 604800000, "log.roll.ms"),
        ConfigDef("unclean.leader.election.enable", ConfigType.BOOLEAN, False, "unclean.leader.election.enable"),
        ConfigDef("remote.storage.enable", ConfigType.BOOLEAN, False, None),
        ConfigDef("local.retention.ms", ConfigType.LONG, -2, "log.local.retention.ms"),
        ConfigDef("local.retention.bytes", ConfigType.LONG, -2, "log.local.retention.bytes"),
    ]
}

# Broker-level configs this broker reads (beyond the topic fallbacks above).
BROKER_CONFIGS: dict[str, ConfigDef] = {
    c.name: c
    for c in [
        ConfigDef("auto.create.topics.enable", ConfigType.BOOLEAN, True),
        ConfigDef("num.partitions", ConfigType.INT, 1, minimum=1),
        ConfigDef("default.replication.factor", ConfigType.SHORT, 1),
        ConfigDef("offsets.topic.num.partitions", ConfigType.INT, 50, minimum=1),
        ConfigDef("transaction.state.log.num.partitions", ConfigType.INT, 50, minimum=1),
        # The internal topics (state/cluster/internal_topics.py): replication factor (at most the running nodes
        # here), the transaction log's min.insync.replicas, segment sizes.
        ConfigDef("offsets.topic.replication.factor", ConfigType.SHORT, 3),
        ConfigDef("offsets.topic.segment.bytes", ConfigType.INT, 104857600),
        ConfigDef("transaction.state.log.replication.factor", ConfigType.SHORT, 3),
        ConfigDef("transaction.state.log.min.isr", ConfigType.INT, 2),
        ConfigDef("transaction.state.log.segment.bytes", ConfigType.INT, 104857600),
        # The share coordinator's __share_group_state (KIP-932; ShareCoordinatorConfig's defaults).
        ConfigDef("share.coordinator.state.topic.num.partitions", ConfigType.INT, 50, minimum=1),
        ConfigDef("share.coordinator.state.topic.replication.factor", ConfigType.SHORT, 3),
        ConfigDef("share.coordinator.state.topic.min.isr", ConfigType.SHORT, 2),
        ConfigDef("share.coordinator.state.topic.segment.bytes", ConfigType.INT, 104857600),
        ConfigDef("share.coordinator.snapshot.update.records.per.snapshot", ConfigType.INT, 500),
        ConfigDef("share.coordinator.state.topic.prune.interval.ms", ConfigType.INT, 300000, minimum=1),
        ConfigDef("share.coordinator.cold.partition.snapshot.interval.ms", ConfigType.INT, 300000, minimum=1),
        ConfigDef("socket.request.max.bytes", ConfigType.INT, 104857600),
        ConfigDef("socket.listen.backlog.size", ConfigType.INT, 1024),  # Kafka's 50: see mockbroker/failures.py
        ConfigDef("producer.id.expiration.ms", ConfigType.INT, 86400000),
        ConfigDef("transaction.max.timeout.ms", ConfigType.INT, 900000),
        ConfigDef("transactional.id.expiration.ms", ConfigType.INT, 604800000),
        ConfigDef("group.initial.rebalance.delay.ms", ConfigType.INT, 3000),
        ConfigDef("group.min.session.timeout.ms", ConfigType.INT, 6000),
        ConfigDef("group.max.session.timeout.ms", ConfigType.INT, 1800000),
        ConfigDef("offsets.retention.minutes", ConfigType.INT, 10080),
        ConfigDef("delete.topic.enable", ConfigType.BOOLEAN, True),
        ConfigDef("log.cleaner.enable", ConfigType.BOOLEAN, True),
        ConfigDef("log.cleaner.backoff.ms", ConfigType.LONG, 15000),
        ConfigDef("log.retention.check.interval.ms", ConfigType.LONG, 300000),
        ConfigDef("max.incremental.fetch.session.cache.slots", ConfigType.INT, 1000),
        ConfigDef("connections.max.idle.ms", ConfigType.LONG, 600000),
        # Security (mockbroker/security: read when the broker starts): KIP-368 re-authentication, the
        # authorizer and its settings.
        ConfigDef("connections.max.reauth.ms", ConfigType.LONG, 0),
        ConfigDef("authorizer.class.name", ConfigType.STRING, ""),
        ConfigDef("super.users", ConfigType.STRING, ""),
        ConfigDef("allow.everyone.if.no.acl.found", ConfigType.BOOLEAN, False),
        # Not Kafka's: the most record bytes the broker holds (state/cluster/cluster.py make_room); -1: no bound.
        ConfigDef("mockbroker.max.log.bytes", ConfigType.LONG, -1),
        # Replication (state/cluster/replicas.py, state/cluster/leadership.py, state/cluster/reassignments.py).
        ConfigDef("replica.lag.time.max.ms", ConfigType.LONG, 30000),
        ConfigDef("replica.selector.class", ConfigType.CLASS, ""),
        ConfigDef("unclean.leader.election.interval.ms", ConfigType.LONG, 300000),
        # Not Kafka's: how long (broker clock) the new replicas of a reassignment take to catch up; 0: at once.
        ConfigDef("mockbroker.reassignment.ms", ConfigType.LONG, 0),
        # Not Kafka's: the most records one produced batch may hold (state/log/validation.py); more is answered
        # MESSAGE_TOO_LARGE before any record is read, so no batch keeps the event loop busy for long.
        ConfigDef("mockbroker.max.records.per.batch", ConfigType.INT, 200000),
        # Not Kafka's: how long one step of a request may hold the event loop (handlers/request_steps.py);
        # a request with more parts than fit (Produce partitions, Fetch v0-v3 down-conversions) does the
        # rest in further steps, letting other connections be served in between.
        ConfigDef("mockbroker.max.request.step.ms", ConfigType.INT, 20),
        # Client telemetry (KIP-714, state/client_metrics.py): the largest PushTelemetry payload accepted, and
        # (not Kafka's) whether the telemetry APIs are served at all, as a ClientTelemetry reporter does in Kafka.
        ConfigDef("telemetry.max.bytes", ConfigType.INT, 1048576, minimum=1),
        ConfigDef("mockbroker.client.telemetry.enable", ConfigType.BOOLEAN, False),
        # Not Kafka's: start on a data dir whose log misses a segment in the middle (storage/recovery.py).
        ConfigDef("mockbroker.recovery.allow.missing.segments", ConfigType.BOOLEAN, False),
    ]
}
# Every topic config's broker fallback is a broker config too.
for _c in TOPIC_CONFIGS.values():
    if _c.broker_name and _c.broker_name not in BROKER_CONFIGS:
        BROKER_CONFIGS[_c.broker_name] = ConfigDef(_c.broker_name, _c.type, _c.default, None, _c.choices)


# Broker configs Kafka can change at runtime (DynamicBrokerConfig.AllDynamicConfigs), among the ones
# modelled here: every broker fallback of a topic config (DynamicLogConfig) and producer.id.expiration.ms.
DYNAMIC_BROKER_CONFIGS: frozenset[str] = frozenset(
    {c.broker_name for c in TOPIC_CONFIGS.values() if c.broker_name} | {"producer.id.expiration.ms"}
)
# Broker configs whose Kafka default is null: their value comes from another synonym (log.retention.hours,
# log.roll.hours, log.roll.jitter.hours, log.flush.scheduler.interval.ms), so DescribeConfigs lists no
# DEFAULT_CONFIG synonym for them and a broker describe shows them with a null value.
NULL_DEFAULT_BROKER_CONFIGS: frozenset[str] = frozenset(
    {"log.retention.ms", "log.roll.ms", "log.roll.jitter.ms", "log.flush.interval.ms"}
)

# IncrementalAlterConfigs operations.
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {OP_SET: "SET", OP_DELETE: "DELETE", OP_APPEND: "APPEND", OP_SUBTRACT: "SUBTRACT"}


def apply_incremental(
    current: dict[str, str], ops: list[tuple[str, int, str | None]], defs: dict[str, ConfigDef], *, broker: bool
) -> dict[str, str]:
    """The settings after IncrementalAlterConfigs operations (name, op, value) on `current` (not validated).

    APPEND/SUBTRACT work on list configs, starting from Kafka's default when the key is not set. Errors are
    Kafka's: INVALID_REQUEST for duplicate keys, null values (except DELETE) and unknown operations;
    INVALID_CONFIG for APPEND/SUBTRACT on a non-list config (`broker` picks the broker-side wording).
    """
    names = [name for name, _, _ in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [name for name, op, value in ops if op != OP_DELETE and value is None]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    new = dict(current)
    for name, op, value in ops:
        if op not in _OP_NAMES:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op}")
        if op == OP_SET:
            new[name] = str(value)
        elif op == OP_DELETE:
            new.pop(name, None)
        else:
            d = defs.get(name)
            if d is None or d.type != ConfigType.LIST:
                if broker:
                    if d is None:
                        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {name}")
                    verb = "append" if op == OP_APPEND else "subtract"
                    raise KafkaError(ErrorCode.INVALID_CONFIG,
                                     f"Config value {verb} is not allowed for config key: {name}")
                raise KafkaError(ErrorCode.INVALID_CONFIG,
                                 f"Can't {_OP_NAMES[op]} to key {name} because its type is not LIST.")
            old = new.get(name)
            if old is None:
                old = render(d.default)
            parts = [p for p in old.split(",") if p]
            for item in str(value).split(","):
                if op == OP_APPEND:
                    if item not in parts:
                        parts.append(item)
                elif item in parts:
                    parts.remove(item)
            new[name] = ",".join(parts)
    return new


@dataclass(frozen=True)
class ConfigEntry:
    """One config as DescribeConfigs (and CreateTopics v5+) show it."""

    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    read_only: bool = False
    is_sensitive: bool = False
    synonyms: tuple[tuple[str, str | None, ConfigSource], ...] = ()


def parse_value(d: ConfigDef, raw: Any) -> Any:
    """Parse a config value given as a string (or already typed); KafkaError INVALID_CONFIG if bad, with
    the message Kafka's ConfigDef gives ("Invalid value x for configuration y: why")."""
    reason = _TYPE_REASONS.get(d.type, "Invalid value")
    try:
        if d.type == ConfigType.BOOLEAN:
            if isinstance(raw, bool):
                return raw
            s = str(raw).strip().lower()
            if s not in ("true", "false"):
                raise ValueError(raw)
            return s == "true"
        if d.type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
            v = int(str(raw).strip())
            limit = {ConfigType.INT: INT_MAX, ConfigType.SHORT: 32767, ConfigType.LONG: LONG_MAX}[d.type]
            if not -limit - 1 <= v <= limit:
                raise ValueError(raw)
            if d.minimum is not None and v < d.minimum:
                reason = f"Value must be at least {d.minimum}"
                raise ValueError(raw)
            return v
        if d.type == ConfigType.DOUBLE:
            return float(str(raw).strip())
        s = str(raw).strip()
        if d.choices:
            reason = "String must be one of: " + ", ".join(d.choices)
        if d.type == ConfigType.LIST:
            items = [p.strip() for p in s.split(",") if p.strip()]
            if d.choices and any(i not in d.choices for i in items):
                raise ValueError(raw)
            return ",".join(items)
        if d.choices and s not in d.choices:
            raise ValueError(raw)
        return s
    except (ValueError, TypeError):
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {raw} for configuration {d.name}: {reason}") from None


_TYPE_REASONS = {
    ConfigType.BOOLEAN: "Expected value to be either true or false",
    ConfigType.INT: "Not a number of type INT",
    ConfigType.SHORT: "Not a number of type SHORT",
    ConfigType.LONG: "Not a number of type LONG",
    ConfigType.DOUBLE: "Not a number of type DOUBLE",
}


def render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class BrokerConfig:
    """The broker's settings: Kafka defaults overridden by what the broker was started with (static),
    then by dynamic updates (AlterConfigs / IncrementalAlterConfigs on a BROKER resource): the
    cluster-wide default (resource name "") and, above it, the per-broker ones.

    `values` always holds the effective value of every key set in any layer, so readers that look at
    `values` directly (TopicConfig falls back to it) see dynamic updates at once.
    """

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = {}
        self.unknown: dict[str, str] = {}
        self.static_values: dict[str, Any] = {}
        self.dynamic_default: dict[str, Any] = {}  # DYNAMIC_DEFAULT_BROKER_CONFIG (resource name "")
        self.dynamic_broker: dict[str, Any] = {}  # DYNAMIC_BROKER_CONFIG (resource name = node id)
        # GROUP resources' own configs by group id (checked and read by state/share/group_configs.py): kept here
        # beside the dynamic layers because Kafka keeps both as ConfigRecords of its metadata log.
        self.group_configs: dict[str, dict[str, str]] = {}
        # Called after a dynamic layer or a group's configs changed (a data dir stores them: mockbroker/storage).
        self.on_dynamic_change: Callable[[], None] | None = None
        for key, raw in (overrides or {}).items():
            self.set(key, raw)

    def set(self, key: str, raw: Any) -> None:
        d = BROKER_CONFIGS.get(key)
        if d is None:
            self.unknown[key] = str(raw)
            return
        self.static_values[key] = parse_value(d, raw)
        self._refresh(key)

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        return BROKER_CONFIGS[key].default

    def _refresh(self, key: str) -> None:
        _changed()
        for layer in (self.dynamic_broker, self.dynamic_default, self.static_values):
            if key in layer:
                self.values[key] = layer[key]
                return
        self.values.pop(key, None)

    def source_of(self, key: str) -> ConfigSource:
        """Where the effective value of a broker config comes from."""
        if key in self.dynamic_broker:
            return ConfigSource.DYNAMIC_BROKER_CONFIG
        if key in self.dynamic_default:
            return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        if key in self.static_values or key in self.unknown:
            return ConfigSource.STATIC_BROKER_CONFIG
        return ConfigSource.DEFAULT_CONFIG

    # -- dynamic updates ---------------------------------------------------------------------------
    def _layer(self, per_broker: bool) -> dict[str, Any]:
        return self.dynamic_broker if per_broker else self.dynamic_default

    def dynamic_layer(self, per_broker: bool) -> dict[str, str]:
        """The dynamic settings of one layer, rendered as strings (what AlterConfigs stored)."""
        return {k: render(v) for k, v in self._layer(per_broker).items()}

    @staticmethod
    def validate_dynamic(changes: dict[str, str]) -> dict[str, Any]:
        """Check a dynamic update as Kafka's DynamicBrokerConfig does: INVALID_REQUEST for configs that
        cannot change at runtime (and, here, for names this broker does not model) or bad values."""
        static_only = sorted(k for k in changes if k not in DYNAMIC_BROKER_CONFIGS)
        if static_only:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Cannot update these configs dynamically: Set({', '.join(static_only)})")
        out = {}
        for key, raw in changes.items():
            try:
                out[key] = parse_value(BROKER_CONFIGS[key], raw)
            except KafkaError as exc:  # Kafka answers bad broker values with INVALID_REQUEST (KAFKA-13609)
                raise KafkaError(ErrorCode.INVALID_REQUEST, exc.message) from None
        return out

    def replace_dynamic(self, changes: dict[str, str], *, per_broker: bool, validate_only: bool = False) -> None:
        """Make `changes` the whole dynamic layer (legacy AlterConfigs semantics)."""
        parsed = self.validate_dynamic(changes)
        if not validate_only:
            self._install_layer(per_broker, parsed)

    def _install_layer(self, per_broker: bool, parsed: dict[str, Any]) -> None:
        """Replace a dynamic layer with `parsed` and recompute the effective values it touches."""
        layer = self._layer(per_broker)
        touched = set(layer) | set(parsed)
        layer.clear()
        layer.update(parsed)
        for key in touched:
            self._refresh(key)
        if self.on_dynamic_change is not None:
            self.on_dynamic_change()

    def alter_dynamic(self, ops: list[tuple[str, int, str | None]], *, per_broker: bool,
                      validate_only: bool = False) -> None:
        """Apply IncrementalAlterConfigs operations (SET 0, DELETE 1, APPEND 2, SUBTRACT 3) to one layer."""
        current = self.dynamic_layer(per_broker)
        new = apply_incremental(current, ops, BROKER_CONFIGS, broker=True)
        parsed = self.validate_dynamic(new)
        if not validate_only:
            self._install_layer(per_broker, parsed)

    def describe(self) -> list[tuple[str, str, ConfigSource, ConfigType]]:
        out = []
        for name, d in sorted(BROKER_CONFIGS.items()):
            if name in self.values:
                out.append((name, render(self.values[name]), self.source_of(name), d.type))
            else:
                out.append((name, render(d.default), ConfigSource.DEFAULT_CONFIG, d.type))
        for name, raw in sorted(self.unknown.items()):
            out.append((name, raw, ConfigSource.STATIC_BROKER_CONFIG, ConfigType.STRING))
        return out


class TopicConfig:
    """One topic's settings; falls back to the broker's."""

    def __init__(self, broker: BrokerConfig, overrides: dict[str, Any] | None = None) -> None:
        self.broker = broker
        self.values: dict[str, Any] = {}
        self._log_settings: LogSettings | None = None
        for key, raw in (overrides or {}).items():
            self.set(key, raw)

    def __deepcopy__(self, memo: dict[int, Any]) -> TopicConfig:
        """A copy for a snapshot (mockbroker/snapshots.py; state/copying.py): the broker's config through memo."""
        self._log_settings = None  # rebuilt on the next append, for the original and the copy alike
        return copy_attrs(self, memo)

    @staticmethod
    def validate(overrides: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, raw in overrides.items():
            d = TOPIC_CONFIGS.get(key)
            if d is None:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {key}")
            out[key] = parse_value(d, raw)
        return out

    def set(self, key: str, raw: Any) -> None:
        self.values.update(self.validate({key: raw}))
        _changed()

    def delete(self, key: str) -> None:
        self.values.pop(key, None)
        _changed()

    def log_settings(self) -> LogSettings:
        """The settings every append reads, parsed once: kept until any config changes (a topic's set or delete,
        a broker layer's refresh: `_generation`) or the topic's overrides are replaced (a new `values`)."""
        cached = self._log_settings
        if cached is None or cached.generation != _generation or cached.values is not self.values:
            cached = self._log_settings = LogSettings(self)
        return cached

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        d = TOPIC_CONFIGS[key]
        if d.broker_name and d.broker_name in self.broker.values:
            return self.broker.values[d.broker_name]
        return d.default

    def source(self, key: str) -> ConfigSource:
        if key in self.values:
            return ConfigSource.TOPIC_CONFIG
        d = TOPIC_CONFIGS[key]
        if d.broker_name and d.broker_name in self.broker.values:
            return self.broker.source_of(d.broker_name)
        return ConfigSource.DEFAULT_CONFIG

    def describe(self) -> list[tuple[str, str, ConfigSource, ConfigType]]:
        return [(n, render(self.get(n)), self.source(n), d.type) for n, d in sorted(TOPIC_CONFIGS.items())]

    def overrides(self) -> dict[str, str]:
        """The topic's own settings, rendered as strings."""
        return {k: render(v) for k, v in self.values.items()}

    # Typed accessors for the hot path.
    @property
    def max_message_bytes(self) -> int:
        return int(self.get("max.message.bytes"))

    @property
    def log_append_time(self) -> bool:
        return bool(self.get("message.timestamp.type") == "LogAppendTime")

    @property
    def compacted(self) -> bool:
        return "compact" in str(self.get("cleanup.policy")).split(",")


_generation = 0  # bumped by every config change: TopicConfig.log_settings' caches are checked against it


def _changed() -> None:
    global _generation
    _generation += 1


class LogSettings:
    """A topic's settings the append path reads, parsed (TopicConfig.log_settings)."""

    __slots__ = ("generation", "values", "max_message_bytes", "log_append_time", "compacted", "timestamp_before_ms",
                 "timestamp_after_ms", "max_records_per_batch", "segment_bytes", "segment_ms")

    def __init__(self, config: TopicConfig) -> None:
        self.generation, self.values = _generation, config.values
        self.max_message_bytes = config.max_message_bytes
        self.log_append_time = config.log_append_time
        self.compacted = config.compacted
        self.timestamp_before_ms = int(config.get("message.timestamp.before.max.ms"))
        self.timestamp_after_ms = int(config.get("message.timestamp.after.max.ms"))
        self.max_records_per_batch = int(config.broker.get("mockbroker.max.records.per.batch"))
        self.segment_bytes = int(config.get("segment.bytes"))
        self.segment_ms = int(config.get("segment.ms"))


def _broker_synonyms(broker: BrokerConfig, key: str, *, per_broker: bool = True) -> list[tuple[str, str | None, ConfigSource]]:
    """A broker config's values, highest precedence first, as Kafka's ConfigHelper lists synonyms."""
    out: list[tuple[str, str | None, ConfigSource]] = []
    if per_broker and key in broker.dynamic_broker:
        out.append((key, render(broker.dynamic_broker[key]), ConfigSource.DYNAMIC_BROKER_CONFIG))
    if key in broker.dynamic_default:
        out.append((key, render(broker.dynamic_default[key]), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
    if per_broker:
        if key in broker.static_values:
            out.append((key, render(broker.static_values[key]), ConfigSource.STATIC_BROKER_CONFIG))
        elif key in broker.unknown:
            out.append((key, broker.unknown[key], ConfigSource.STATIC_BROKER_CONFIG))
        d = BROKER_CONFIGS.get(key)
        if d is not None and key not in NULL_DEFAULT_BROKER_CONFIGS:
            out.append((key, render(d.default), ConfigSource.DEFAULT_CONFIG))
    return out


def describe_topic_entries(config: TopicConfig) -> list[ConfigEntry]:
    """Every topic config with its value, source and synonyms (topic override, then the broker setting
    it falls back to: dynamic per-broker, dynamic default, static, Kafka's default), sorted by name."""
    out = []
    for name, d in sorted(TOPIC_CONFIGS.items()):
        synonyms: list[tuple[str, str | None, ConfigSource]] = []
        if name in config.values:
            synonyms.append((name, render(config.values[name]), ConfigSource.TOPIC_CONFIG))
        if d.broker_name:
            synonyms += _broker_synonyms(config.broker, d.broker_name)
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        out.append(ConfigEntry(name, render(config.get(name)), source, d.type, False, False, tuple(synonyms)))
    return out


def describe_broker_entries(broker: BrokerConfig, *, per_broker: bool) -> list[ConfigEntry]:
    """A broker's configs as DescribeConfigs shows them: for a node (per_broker) every config this broker
    models, read-only unless Kafka can change it dynamically; for the cluster default (resource name
    "") only the dynamic default settings."""
    out = []
    if not per_broker:
        for name, setting in sorted(broker.dynamic_default.items()):
            d = BROKER_CONFIGS[name]
            synonyms = tuple(_broker_synonyms(broker, name, per_broker=False))
            out.append(ConfigEntry(name, render(setting), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, d.type,
                                   name not in DYNAMIC_BROKER_CONFIGS, False, synonyms))
        return out
    for name, d in sorted(BROKER_CONFIGS.items()):
        synonyms = tuple(_broker_synonyms(broker, name))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        value: str | None = render(broker.get(name))
        if source == ConfigSource.DEFAULT_CONFIG and name in NULL_DEFAULT_BROKER_CONFIGS:
            value = None
        out.append(ConfigEntry(name, value, source, d.type, name not in DYNAMIC_BROKER_CONFIGS, False, synonyms))
    for name, raw in sorted(broker.unknown.items()):
        if is_sensitive(name):  # Kafka's PASSWORD settings: no value shown, is_sensitive set
            out.append(ConfigEntry(name, None, ConfigSource.STATIC_BROKER_CONFIG, ConfigType.PASSWORD, True, True,
                                   ((name, None, ConfigSource.STATIC_BROKER_CONFIG),)))
            continue
        synonyms = tuple(_broker_synonyms(broker, name))
        out.append(ConfigEntry(name, raw, ConfigSource.STATIC_BROKER_CONFIG, ConfigType.UNKNOWN, True, False,
                               synonyms))
    return out


def is_sensitive(name: str) -> bool:
    """A setting whose value DescribeConfigs hides, as Kafka hides its PASSWORD-type settings (JAAS configs,
    passwords, private keys; mockbroker's SCRAM credentials)."""
    return (name.endswith(("sasl.jaas.config", "password", ".secret", "ssl.keystore.key"))
            or name == "mockbroker.scram.credentials")
