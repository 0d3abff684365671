"""Group configs (GROUP config resources, IncrementalAlterConfigs / DescribeConfigs) as Kafka's GroupConfig
keeps them, and the share-group settings they give each share group.

- The names are Kafka's GroupConfig names; any other name is INVALID_CONFIG "Unknown group config name: k".
  A value that does not parse (an int that is no int, a string not among the allowed ones, a boolean that
  is neither true nor false) is INVALID_CONFIG "Invalid value v for configuration k: ...".
- The share configs are checked against the broker-wide bounds as GroupConfig.validateValues does (the
  group's configs merged over the broker's settings first): share.session.timeout.ms within
  group.share.min/max.session.timeout.ms (45000..60000), share.heartbeat.interval.ms within
  group.share.min/max.heartbeat.interval.ms (5000..15000), share.record.lock.duration.ms within
  group.share.min/max.record.lock.duration.ms (15000..60000), share.delivery.count.limit within
  group.share.min/max.delivery.count.limit (2..10), share.partition.max.record.locks within
  group.share.min/max.partition.max.record.locks (100..10000), and the session timeout above the heartbeat
  interval; INVALID_CONFIG with Kafka's messages ("k must be greater than or equal to b").
- `effective(group, name)`: the group's value where set, else None (the coordinator then reads the broker's
  setting; BY_BROKER_SETTING names the group config that overrides a broker setting). DescribeConfigs shows
  every group config: GROUP_CONFIG where the group sets it, else DEFAULT_CONFIG with the broker's value (its
  `group.share.*` setting) or Kafka's default.
Simpler than Kafka: the consumer.* and streams.* group configs are stored and shown but only parsed, not
checked against their broker bounds, and nothing here reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.configs import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    OP_SUBTRACT,
    BrokerConfig,
    ConfigEntry,
    ConfigSource,
    ConfigType,
)


@dataclass(frozen=True)
class GroupConfigDef:
    name: str
    type: ConfigType
    default: str
    at_least: int | None = None
    choices: tuple[str, ...] = ()
    broker: str | None = None  # the broker setting giving the default (and its bounds' prefix)
    bounds: tuple[str, str] | None = None  # the broker settings of its minimum and maximum


def _d(name: str, default: str, at_least: int, broker: str | None = None,
       bounds: tuple[str, str] | None = None) -> GroupConfigDef:
    return GroupConfigDef(name, ConfigType.INT, default, at_least, broker=broker, bounds=bounds)


DEFS: dict[str, GroupConfigDef] = {d.name: d for d in (
    _d("consumer.session.timeout.ms", "45000", 1),
    _d("consumer.heartbeat.interval.ms", "5000", 1),
    _d("share.session.timeout.ms", "45000", 1, "group.share.session.timeout.ms",
       ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")),
    _d("share.heartbeat.interval.ms", "5000", 1, "group.share.heartbeat.interval.ms",
       ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")),
    _d("share.record.lock.duration.ms", "30000", 1000, "group.share.record.lock.duration.ms",
       ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms")),
    _d("share.delivery.count.limit", "5", 2, "group.share.delivery.count.limit",
       ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit")),
    _d("share.partition.max.record.locks", "2000", 100, "group.share.partition.max.record.locks",
       ("group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks")),
    GroupConfigDef("share.auto.offset.reset", ConfigType.STRING, "latest", choices=("earliest", "latest"),
                   broker="share.auto.offset.reset"),
    GroupConfigDef("share.isolation.level", ConfigType.STRING, "read_uncommitted",
                   choices=("read_committed", "read_uncommitted")),
    GroupConfigDef("share.renew.acknowledge.enable", ConfigType.BOOLEAN, "true", choices=("true", "false")),
    _d("streams.session.timeout.ms", "45000", 1),
    _d("streams.heartbeat.interval.ms", "5000", 1),
    _d("streams.num.standby.replicas", "0", 0),
    _d("streams.initial.rebalance.delay.ms", "3000", 0),
)}

# The group config that overrides each broker setting, for a group that sets it (share.record.lock.duration.ms
# for group.share.record.lock.duration.ms, ...).
BY_BROKER_SETTING: dict[str, str] = {d.broker: d.name for d in DEFS.values() if d.broker is not None}

# Kafka's defaults of the broker-wide bounds (GroupCoordinatorConfig, ShareGroupConfig).
BOUND_DEFAULTS: dict[str, int] = {
    "group.share.min.session.timeout.ms": 45000, "group.share.max.session.timeout.ms": 60000,
    "group.share.min.heartbeat.interval.ms": 5000, "group.share.max.heartbeat.interval.ms": 15000,
    "group.share.min.record.lock.duration.ms": 15000, "group.share.max.record.lock.duration.ms": 60000,
    "group.share.min.delivery.count.limit": 2, "group.share.max.delivery.count.limit": 10,
    "group.share.min.partition.max.record.locks": 100, "group.share.max.partition.max.record.locks": 10000,
}

BrokerSetting = Callable[[str], str | None]  # a broker setting by name, None when not set


def _parse(d: GroupConfigDef, value: str) -> str:
    """The value normalised, or INVALID_CONFIG as Kafka's ConfigDef.parse answers."""
    text = value.strip()
    if d.type == ConfigType.INT:
        try:
            number = int(text)
        except ValueError:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {d.name}: "
                             "Not a number of type INT") from None
        if d.at_least is not None and number < d.at_least:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {d.name}: "
                             f"Value must be at least {d.at_least}")
        return str(number)
    if d.type == ConfigType.BOOLEAN:
        if text.lower() not in d.choices:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {d.name}: "
                             "Expected value to be either true or false")
        return text.lower()
    if text.lower() not in d.choices:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {d.name}: "
                         f"String must be one of: {', '.join(d.choices)}")
    return text.lower()


class GroupConfigs:
    """The group configs set on GROUP resources, by group id (a group need not exist to have configs)."""

    def __init__(self, broker_setting: BrokerSetting, store: BrokerConfig | None = None) -> None:
        self.broker_setting = broker_setting
        # Where the values live: the broker config's group_configs (kept on a data dir with the dynamic broker
        # configs, as Kafka keeps both in its metadata log), or a config of this object's own.
        self._store = store if store is not None else BrokerConfig()

    @property
    def configs(self) -> dict[str, dict[str, str]]:
        """Each group's own configs (read through the store each time: a snapshot's restore replaces its dict)."""
        return self._store.group_configs

    def _broker_int(self, name: str) -> int:
        raw = self.broker_setting(name)
        return BOUND_DEFAULTS[name] if raw is None else int(raw)

    def _broker_value(self, d: GroupConfigDef) -> str:
        raw = self.broker_setting(d.broker) if d.broker is not None else None
        return d.default if raw is None else str(raw)

    def alter(self, group_id: str, ops: list[tuple[str, int, str | None]], *, validate_only: bool = False) -> None:
        """IncrementalAlterConfigs on GROUP group_id: every op applied and the result checked, or KafkaError
        and nothing changed."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        current = dict(self.configs.get(group_id, {}))
        for name, op, value in ops:
            if op == OP_SET:
                current[name] = value or ""
            elif op == OP_DELETE:
                current.pop(name, None)
            elif op in (OP_APPEND, OP_SUBTRACT):
                verb = "APPEND" if op == OP_APPEND else "SUBTRACT"
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Can't {verb} to key {name} because its type is not LIST.")
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op}")
        checked = self.validate(current)
        if not validate_only:
            if checked:
                self.configs[group_id] = checked
            else:
                self.configs.pop(group_id, None)
            if self._store.on_dynamic_change is not None:
                self._store.on_dynamic_change()

    def validate(self, props: dict[str, str]) -> dict[str, str]:
        """GroupConfig.validate: names, values, then the share bounds over the broker's settings."""
        for name in props:
            if name not in DEFS:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
        parsed = {name: _parse(DEFS[name], value) for name, value in props.items()}
        merged = {d.name: parsed.get(d.name, self._broker_value(d)) for d in DEFS.values()}
        for d in DEFS.values():
            if d.bounds is None:
                continue
            low, high = d.bounds
            value = int(merged[d.name])
            if value < self._broker_int(low):
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"{d.name} must be greater than or equal to {low}")
            if value > self._broker_int(high):
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"{d.name} must be less than or equal to {high}")
        if int(merged["share.session.timeout.ms"]) <= int(merged["share.heartbeat.interval.ms"]):
            raise KafkaError(ErrorCode.INVALID_CONFIG,
                             "share.session.timeout.ms must be greater than share.heartbeat.interval.ms")
        return parsed

    def effective(self, group_id: str, name: str) -> str | None:
        """The group's own value of a group config, None when it sets none."""
        return self.configs.get(group_id, {}).get(name)

    def describe(self, group_id: str) -> list[ConfigEntry]:
        """DescribeConfigs of GROUP group_id: every group config, sorted by name."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        own = self.configs.get(group_id, {})
        return [ConfigEntry(d.name, own[d.name], ConfigSource.GROUP_CONFIG, d.type) if d.name in own
                else ConfigEntry(d.name, self._broker_value(d), ConfigSource.DEFAULT_CONFIG, d.type)
                for d in sorted(DEFS.values(), key=lambda d: d.name)]
