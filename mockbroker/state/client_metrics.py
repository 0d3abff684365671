"""Client telemetry (KIP-714): subscriptions, client instances and what they pushed, as Kafka's
ClientMetricsManager keeps them. No I/O; the broker clock gives the times.

- Subscriptions are CLIENT_METRICS config resources (IncrementalAlterConfigs): `metrics` (a list of metric
  name prefixes; "*" or "" means all), `interval.ms` (100..3600000, default 300000) and `match` (a list of
  `selector=regex` on client_instance_id, client_id, client_software_name, client_software_version,
  client_source_address, client_source_port; every selector must match the whole attribute; none: every
  client). Setting an empty set of configs removes the subscription. Each change bumps a version, so a
  client instance made earlier is evaluated again at its next request.
- A client instance (GetTelemetrySubscriptions with the zero id gets a new one) holds the metrics it is
  asked for (the union of the matching subscriptions; "*" alone when one asks for all), the push interval
  (the smallest of theirs, 300000 with none) and the subscription id: CRC32C of the metric set's text and
  the interval, xor the instance id's hash, as Kafka computes it (the id is opaque to clients; only equality
  matters).
- Throttling as Kafka's: a second GetTelemetrySubscriptions within the push interval of the last request is
  THROTTLING_QUOTA_EXCEEDED (unless the last error was UNKNOWN_SUBSCRIPTION_ID or
  UNSUPPORTED_COMPRESSION_TYPE); a push is accepted right after a GetTelemetrySubscriptions, otherwise only
  a push interval after the last push (a terminating push always).
- PushTelemetry errors, in Kafka's order: INVALID_REQUEST (zero/reserved instance id, or a push after the
  client said it was terminating), THROTTLING_QUOTA_EXCEEDED, UNKNOWN_SUBSCRIPTION_ID (the subscription
  changed), UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE (telemetry.max.bytes).
- Every accepted push is kept (its compressed payload, the codec, the client's attributes, the time): the
  newest MAX_PUSHES of them; mockbroker/client_telemetry.py decodes them for `broker.client_metrics()`.
Kafka's cache of instances (16384, least recently used out) and its expiry of idle ones (max(60 s, 3
push intervals)) are kept here, checked at each request.
"""

from __future__ import annotations

import re
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError

# Not Kafka's setting: Kafka serves telemetry when a metric reporter implementing ClientTelemetry is
# configured (metric.reporters); without one it advertises neither API, and neither does mockbroker.
TELEMETRY_ENABLE = "mockbroker.client.telemetry.enable"
TELEMETRY_APIS = frozenset({71, 72})  # GetTelemetrySubscriptions, PushTelemetry

METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
CONFIG_NAMES = (INTERVAL_MS, MATCH, METRICS)
INTERVAL_MS_DEFAULT = 300_000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
ALL_METRICS = "*"
MATCH_SELECTORS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                             "client_source_address", "client_source_port"})
# Kafka's ClientMetricsManager: ZSTD, LZ4, GZIP, SNAPPY (the client takes the first it supports).
ACCEPTED_COMPRESSION = [4, 3, 1, 2]
KNOWN_COMPRESSION = frozenset({0, 1, 2, 3, 4})
CACHE_MAX_SIZE = 16_384
CACHE_EXPIRY_MS = 60_000
MAX_PUSHES = 10_000
RESERVED_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})  # Kafka's Uuid.ZERO_UUID and METADATA_TOPIC_ID


@dataclass(frozen=True)
class Subscription:
    name: str
    metrics: frozenset[str]
    interval_ms: int
    match: dict[str, re.Pattern[str]]
    configs: dict[str, str]  # as set, for DescribeConfigs


@dataclass
class ClientInstance:
    instance_id: uuid.UUID
    attributes: dict[str, str | None]
    subscription_id: int
    version: int
    metrics: list[str]
    push_interval_ms: int
    last_get_ms: int = -(1 << 62)
    last_push_ms: int = -(1 << 62)
    terminating: bool = False
    last_error: ErrorCode = ErrorCode.NONE
    expires_ms: int = 0


@dataclass(frozen=True)
class Push:
    """One accepted PushTelemetry: the payload as sent (compressed with `compression`, Kafka's codec id)."""

    instance_id: uuid.UUID
    attributes: dict[str, str | None]
    time_ms: int
    compression: int
    payload: bytes
    terminating: bool


def _parse_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",")] if value.strip() else []


def parse_match(patterns: list[str]) -> dict[str, re.Pattern[str]]:
    """ClientMetricsConfigs.parseMatchingPatterns: `selector=regex` each, selectors Kafka allows."""
    out: dict[str, re.Pattern[str]] = {}
    for pattern in patterns:
        pair = pattern.split("=")
        if len(pair) != 2 or pair[0].strip() not in MATCH_SELECTORS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        try:
            out[pair[0].strip()] = re.compile(pair[1].strip())
        except re.error:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}") from None
    return out


def validate(name: str, configs: dict[str, str]) -> Subscription | None:
    """The subscription of these configs (None when there are none: the subscription goes), or KafkaError as
    ClientMetricsConfigs.validate answers."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in CONFIG_NAMES:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    if not configs:
        return None
    interval = INTERVAL_MS_DEFAULT
    if INTERVAL_MS in configs:
        try:
            interval = int(configs[INTERVAL_MS].strip())
        except ValueError:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {configs[INTERVAL_MS]} for configuration "
                                                       f"{INTERVAL_MS}: Not a number of type INT") from None
        if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Invalid value {interval} for {INTERVAL_MS}, interval must be "
                                                        "between 100 and 3600000 (1 hour)")
    match = parse_match(_parse_list(configs.get(MATCH, "")))
    return Subscription(name, frozenset(_parse_list(configs.get(METRICS, ""))), interval, match, dict(configs))


def _java_string_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def _uuid_hash(u: uuid.UUID) -> int:
    """Kafka's Uuid.hashCode: the xor of the two halves, folded to 32 bits."""
    value = u.int
    h = ((value >> 64) ^ value) & 0xFFFFFFFFFFFFFFFF
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def subscription_id(metrics: list[str], interval_ms: int, instance_id: uuid.UUID) -> int:
    """CRC32C of the metric set's text and the interval, xor the instance id's hash, as a signed int32."""
    import crc32c  # here: a broker that serves no telemetry loads no CRC library before it listens

    text = "[" + ", ".join(metrics) + "]" + str(interval_ms)
    value = (crc32c.crc32c(text.encode()) ^ _uuid_hash(instance_id)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass
class ClientMetrics:
    """The broker's client telemetry: subscriptions, client instances, accepted pushes."""

    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    version: int = 0
    instances: OrderedDict[uuid.UUID, ClientInstance] = field(default_factory=OrderedDict)
    pushes: deque[Push] = field(default_factory=lambda: deque(maxlen=MAX_PUSHES))

    # -- subscriptions (CLIENT_METRICS config resources) ----------------------------------------------
    def alter(self, name: str, ops: list[tuple[str, int, str | None]], *, validate_only: bool = False) -> None:
        """IncrementalAlterConfigs on one subscription: SET (0), DELETE (1), APPEND (2), SUBTRACT (3) on its
        configs, the result validated as a whole."""
        configs = dict(self.subscriptions[name].configs) if name in self.subscriptions else {}
        for key, op, value in ops:
            if op == 0:
                configs[key] = value or ""
            elif op == 1:
                configs.pop(key, None)
            elif op in (2, 3):
                if key not in (METRICS, MATCH):
                    raise KafkaError(ErrorCode.INVALID_CONFIG,
                                     f"Can't {'APPEND' if op == 2 else 'SUBTRACT'} to key {key} because its type is not LIST.")
                items = _parse_list(configs.get(key, ""))
                given = _parse_list(value or "")
                items = items + [v for v in given if v not in items] if op == 2 else [v for v in items if v not in given]
                configs[key] = ",".join(items)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op}")
        subscription = validate(name, configs)
        if validate_only:
            return
        if subscription is None:
            if self.subscriptions.pop(name, None) is not None:
                self.version += 1
            return
        self.subscriptions[name] = subscription
        self.version += 1

    def subscribe(self, name: str, configs: dict[str, str]) -> None:
        """Set a subscription's configs whole (none: remove it), as kafka-client-metrics.sh --alter does."""
        self.alter(name, [(k, 0, v) for k, v in configs.items()] +
                   [(k, 1, None) for k in CONFIG_NAMES if k not in configs])

    def configs_of(self, name: str) -> list[tuple[str, str, bool]]:
        """DescribeConfigs of a subscription: (name, value, set) for each of its configs, Kafka's defaults
        where not set (a subscription that does not exist shows the defaults, as in Kafka)."""
        sub = self.subscriptions.get(name)
        configs = sub.configs if sub is not None else {}
        defaults = {INTERVAL_MS: str(INTERVAL_MS_DEFAULT), MATCH: "", METRICS: ""}
        return [(key, configs.get(key, defaults[key]), key in configs) for key in CONFIG_NAMES]

    # -- client instances ------------------------------------------------------------------------------
    def _evaluate(self, instance_id: uuid.UUID, attributes: dict[str, str | None]) -> ClientInstance:
        interval = INTERVAL_MS_DEFAULT
        metrics: set[str] = set()
        everything = False
        for sub in self.subscriptions.values():
            if all(attributes.get(k) is not None and p.fullmatch(str(attributes[k])) for k, p in sub.match.items()):
                everything = everything or ALL_METRICS in sub.metrics
                metrics |= sub.metrics
                interval = min(interval, sub.interval_ms)
        chosen = [ALL_METRICS] if everything else sorted(metrics)
        return ClientInstance(instance_id, attributes, subscription_id(chosen, interval, instance_id), self.version,
                              chosen, interval)

    def _instance(self, instance_id: uuid.UUID, attributes: dict[str, str | None], now_ms: int) -> ClientInstance:
        # Expired instances leave from the least recently used end (a used one moves to the other end), so
        # each request looks at only those it drops and one more.
        while self.instances and next(iter(self.instances.values())).expires_ms <= now_ms:
            self.instances.popitem(last=False)
        inst = self.instances.get(instance_id)
        if inst is None:
            inst = self._evaluate(instance_id, {**attributes, "client_instance_id": str(instance_id)})
        elif inst.version < self.version:
            fresh = self._evaluate(instance_id, inst.attributes)
            fresh.last_get_ms, fresh.last_push_ms = inst.last_get_ms, inst.last_push_ms
            fresh.terminating, fresh.last_error = inst.terminating, inst.last_error
            inst = fresh
        self.instances[instance_id] = inst
        self.instances.move_to_end(instance_id)
        while len(self.instances) > CACHE_MAX_SIZE:
            self.instances.popitem(last=False)
        inst.expires_ms = now_ms + max(CACHE_EXPIRY_MS, 3 * inst.push_interval_ms)
        return inst

    def get_subscriptions(self, instance_id: uuid.UUID | None, attributes: dict[str, str | None], now_ms: int,
                          new_id: Any) -> tuple[ErrorCode, ClientInstance]:
        """GetTelemetrySubscriptions: the error code and the instance (its fields make the answer). new_id()
        gives a fresh instance id when the client sends the zero one."""
        if instance_id is None or instance_id.int == 0:
            instance_id = new_id()
            while instance_id in self.instances:
                instance_id = new_id()
        inst = self._instance(instance_id, attributes, now_ms)
        if now_ms - max(inst.last_get_ms, inst.last_push_ms) >= inst.push_interval_ms:
            inst.last_get_ms = now_ms
        elif inst.last_error not in (ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED, inst
        inst.last_error = ErrorCode.NONE
        return ErrorCode.NONE, inst

    def push(self, instance_id: uuid.UUID, attributes: dict[str, str | None], subscription: int, terminating: bool,
             compression: int, payload: bytes, max_bytes: int, now_ms: int) -> ErrorCode:
        """PushTelemetry: the error code; an accepted push with metrics is kept."""
        if instance_id in RESERVED_IDS:
            return ErrorCode.INVALID_REQUEST
        inst = self._instance(instance_id, attributes, now_ms)
        code = self._check_push(inst, subscription, terminating, compression, payload, max_bytes, now_ms)
        inst.terminating = terminating
        inst.last_error = code
        if code == ErrorCode.NONE and payload:
            self.pushes.append(Push(instance_id, dict(inst.attributes), now_ms, compression, bytes(payload), terminating))
        return code

    @staticmethod
    def _check_push(inst: ClientInstance, subscription: int, terminating: bool, compression: int, payload: bytes,
                    max_bytes: int, now_ms: int) -> ErrorCode:
        if inst.terminating:
            return ErrorCode.INVALID_REQUEST
        accept = inst.last_get_ms > inst.last_push_ms or now_ms - inst.last_push_ms >= inst.push_interval_ms
        if accept:
            inst.last_push_ms = now_ms
        elif not terminating:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        if subscription != inst.subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if compression not in KNOWN_COMPRESSION:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if len(payload) > max_bytes:
            return ErrorCode.TELEMETRY_TOO_LARGE
        return ErrorCode.NONE
