"""Broker settings from the environment variables the common Kafka images read, and from the command line.

`build_settings(env, flags)` is a pure function (no I/O, no logging): it reads a mapping of environment
variables, and optionally the `mockbroker` command's flags, and returns a `BrokerSettings`, or raises
`ConfigError` with one message naming the variables at fault. The CLI turns that error into exit code 2.

Spellings read (so that compose files written for Kafka images work unchanged):
- apache/kafka and confluentinc/cp-kafka: `KAFKA_<SETTING>`, with Confluent's rule: after the prefix,
  `___` is `-`, `__` is `_`, `_` is `.`, lower case (KAFKA_LOG_RETENTION_MS -> log.retention.ms).
  CLUSTER_ID is the KRaft cluster id.
- bitnami/kafka: `KAFKA_CFG_<SETTING>`, same rule; KAFKA_KRAFT_CLUSTER_ID.
- wurstmeister/kafka: KAFKA_CREATE_TOPICS="name:partitions:replicas[:cleanup.policy],..." (separator
  KAFKA_CREATE_TOPICS_SEPARATOR, default ","), KAFKA_ADVERTISED_HOST_NAME / KAFKA_ADVERTISED_PORT /
  KAFKA_PORT / KAFKA_HOST_NAME (pre-listener settings, used only when no listeners are given).
- mockbroker's own: MOCKBROKER_TOPICS="name[:partitions],...", MOCKBROKER_HOST / MOCKBROKER_PORT (the
  default listener when none is configured), MOCKBROKER_HTTP_PORT / MOCKBROKER_HTTP_HOST (the control
  endpoint), MOCKBROKER_LOG_LEVEL.

Listeners, as Kafka names them:
- listeners: NAME://HOST:PORT,...  Each one is bound (HOST empty: 0.0.0.0, every interface) except
  the controller listeners (controller.listener.names), which are accepted and NOT bound: mockbroker
  has no KRaft quorum and no client talks to a controller listener.
- advertised.listeners: NAME://HOST:PORT,...  what Metadata answers to a client that connected
  through listener NAME. Every name must be a listener's; a listener without an advertised entry
  advertises its own address (0.0.0.0 -> localhost). With advertised.listeners but no listeners, the
  listeners are the advertised ones bound on 0.0.0.0 (cp-kafka's rule).
- listener.security.protocol.map: NAME:PROTOCOL,...  Only PLAINTEXT is served: a bound listener mapped
  to SSL or SASL_* is an error. Unset, names map to themselves (PLAINTEXT, SSL, SASL_PLAINTEXT,
  SASL_SSL) and controller listeners to PLAINTEXT, as in Kafka; a name with no protocol is an error.
- inter.broker.listener.name (must name a bound listener), security.inter.broker.protocol,
  controller.quorum.voters, controller.quorum.bootstrap.servers, process.roles (must include broker):
  accepted, no effect.

Everything else is a broker setting, passed to MockBroker(config=...): values of the settings mockbroker
models are checked (a bad value is an error); names it does not model are kept (DescribeConfigs shows
them) and listed in `unknown` (the CLI logs them in one WARNING line), except well-known settings that
cannot matter to a single in-memory node (replication factors, log.dirs, thread counts, ZooKeeper,
JMX, TLS/SASL settings), listed in `ignored`. log.retention.hours / .minutes, log.roll.hours and
log.roll.jitter.hours are converted to their .ms settings when those are not set (Kafka's precedence).

Conflicts are errors: KAFKA_X and KAFKA_CFG_X with different values, node.id and broker.id different,
CLUSTER_ID / KAFKA_CLUSTER_ID / KAFKA_KRAFT_CLUSTER_ID different, an advertised listener name with no
listener, the same topic asked for twice with different partition counts.

Command-line flags win over the environment, setting by setting (--node-id over KAFKA_NODE_ID and
KAFKA_BROKER_ID, --listener over KAFKA_LISTENERS, --host/--port over every listener setting).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mockbroker.errors import KafkaError
from mockbroker.state.cluster import Listener, validate_topic_name
from mockbroker.state.configs import BROKER_CONFIGS, parse_value

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9092
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Image plumbing, not broker settings: accepted silently (JVM, logging, image scripts, image-level
# TLS/SASL users of bitnami, KRaft storage formatting).
PLUMBING_VARS = frozenset({
    "KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_DEBUG",
    "KAFKA_VERSION", "KAFKA_HOME", "KAFKA_ENABLE_KRAFT", "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    "KAFKA_CREATE_TOPICS_SEPARATOR", "KAFKA_MOUNTED_CONF_DIR", "KAFKA_CONF_FILE", "KAFKA_CONF_DIR",
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
    "log.dirs", "log.dir", "metadata.log.dir", "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
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
# Settings read here to build the listeners and the node, not passed on as broker settings.
LISTENER_KEYS = ("listeners", "advertised.listeners", "port", "host.name", "advertised.host.name",
                 "advertised.port")
CONSUMED = frozenset({
    *LISTENER_KEYS, "listener.security.protocol.map", "inter.broker.listener.name",
    "security.inter.broker.protocol", "controller.listener.names", "controller.quorum.voters",
    "controller.quorum.bootstrap.servers", "process.roles", "node.id", "broker.id", "cluster.id",
    "broker.rack",
})
# Kafka's coarser spellings of a .ms setting: used when the .ms setting is not given.
TIME_SYNONYMS = {
    "log.retention.ms": (("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
    "log.roll.ms": (("log.roll.hours", 3_600_000),),
    "log.roll.jitter.ms": (("log.roll.jitter.hours", 3_600_000),),
}
_TIME_COARSE = frozenset(name for pairs in TIME_SYNONYMS.values() for name, _ in pairs)

_LISTENER_RE = re.compile(r"(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:/\[\]]*):(?P<port>[0-9]+)")


class ConfigError(ValueError):
    """A configuration the broker cannot start with; the message says which variables and why."""


@dataclass(frozen=True)
class Setting:
    value: str
    origin: str  # the environment variable or flag it came from, for messages


@dataclass(frozen=True)
class ListenerSpec:
    name: str
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None
    security_protocol: str = "PLAINTEXT"

    def to_listener(self, node_id: int) -> Listener:
        return Listener(self.name, node_id, self.host, self.port, self.advertised_host, self.advertised_port,
                        self.security_protocol)

    @property
    def connect_host(self) -> str:
        """Where a client on this machine reaches the bound socket (wildcards -> loopback)."""
        if self.host in ("", "0.0.0.0"):
            return "127.0.0.1"
        if self.host == "::":
            return "::1"
        return self.host


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = -1  # -1: num.partitions
    replication_factor: int = -1
    config: tuple[tuple[str, str], ...] = ()
    origin: str = ""


@dataclass
class Flags:
    """The `mockbroker` command line (None / empty: not given)."""

    host: str | None = None
    port: int | None = None
    advertised_host: str | None = None
    advertised_port: int | None = None
    listeners: list[str] = field(default_factory=list)
    advertised_listeners: list[str] = field(default_factory=list)
    node_id: int | None = None
    cluster_id: str | None = None
    partitions: int | None = None
    auto_create: bool | None = None
    config: list[str] = field(default_factory=list)  # KEY=VALUE
    topics: list[str] = field(default_factory=list)  # NAME[:PARTITIONS]
    http_host: str | None = None
    http_port: int | None = None
    log_level: str | None = None


@dataclass
class BrokerSettings:
    node_id: int = 1
    cluster_id: str | None = None
    rack: str | None = None
    listeners: list[ListenerSpec] = field(default_factory=list)  # bound, in the order given
    unbound_listeners: list[ListenerSpec] = field(default_factory=list)  # controller listeners
    config: dict[str, str] = field(default_factory=dict)  # Kafka setting names -> values
    topics: list[TopicSpec] = field(default_factory=list)
    http_host: str = DEFAULT_HOST
    http_port: int | None = None
    log_level: str = "WARNING"
    unknown: dict[str, str] = field(default_factory=dict)  # setting -> origin: not modelled here
    ignored: dict[str, str] = field(default_factory=dict)  # setting -> origin: known, no effect here
    warnings: list[str] = field(default_factory=list)  # other things worth one WARNING line each

    def broker_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for MockBroker(...)."""
        return {
            "node_id": self.node_id,
            "cluster_id": self.cluster_id,
            "config": dict(self.config),
            "listeners": [spec.to_listener(self.node_id) for spec in self.listeners],
        }

    def unknown_line(self) -> str | None:
        """The one WARNING line listing the settings mockbroker does not know (None if there are none)."""
        if not self.unknown:
            return None
        items = ", ".join(f"{name} ({origin})" for name, origin in sorted(self.unknown.items()))
        return f"settings not known to mockbroker (kept, no effect): {items}"


# ------------------------------------------------------------------------------------------------
# spelling


def env_to_setting(suffix: str) -> str:
    """The Kafka setting name of an environment variable's suffix, by Confluent's rule:
    `___` -> `-`, `__` -> `_`, `_` -> `.`, lower case (LOG_RETENTION_MS -> log.retention.ms)."""
    return suffix.lower().replace("_", ".").replace("...", "-").replace("..", "_")


def _is_plumbing(var: str) -> bool:
    return var in PLUMBING_VARS or var.startswith(PLUMBING_PREFIXES)


def _is_ignored(key: str) -> bool:
    return key in IGNORED_SETTINGS or key.startswith(IGNORED_PREFIXES)


def _put(props: dict[str, Setting], key: str, setting: Setting) -> None:
    old = props.get(key)
    if old is not None and old.value != setting.value:
        raise ConfigError(f"{old.origin}={old.value!r} and {setting.origin}={setting.value!r} both set "
                          f"{key} and disagree")
    props[key] = setting


def settings_from_env(env: Mapping[str, str]) -> dict[str, Setting]:
    """Every Kafka setting the environment gives (KAFKA_* and KAFKA_CFG_* spellings), by setting name."""
    props: dict[str, Setting] = {}
    for var in sorted(env):
        if not var.startswith("KAFKA_") or _is_plumbing(var):
            continue
        if var == "KAFKA_CREATE_TOPICS":  # wurstmeister's topics, read by build_settings
            continue
        suffix = var[len("KAFKA_CFG_"):] if var.startswith("KAFKA_CFG_") else var[len("KAFKA_"):]
        if not suffix:
            continue
        _put(props, env_to_setting(suffix), Setting(env[var].strip(), var))
    return props


# ------------------------------------------------------------------------------------------------
# small parsers


def _int(setting: Setting, what: str, lo: int | None = None, hi: int | None = None) -> int:
    try:
        value = int(setting.value.strip())
    except ValueError:
        raise ConfigError(f"{setting.origin}={setting.value!r}: {what} must be an integer") from None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{setting.origin}={setting.value!r}: {what} must be {bounds}")
    return value


def _names(setting: Setting | None) -> list[str]:
    if setting is None:
        return []
    return [n.strip().upper() for n in setting.value.split(",") if n.strip()]


def parse_listeners(setting: Setting, *, advertised: bool = False) -> list[tuple[str, str, int]]:
    """NAME://HOST:PORT,... -> [(NAME, host, port)] (names upper-cased, IPv6 brackets removed)."""
    out: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for item in setting.value.split(","):
        item = item.strip()
        if not item:
            continue
        m = _LISTENER_RE.fullmatch(item)
        if m is None:
            raise ConfigError(f"{setting.origin}: {item!r} is not NAME://HOST:PORT")
        name = m["name"].upper()
        host = m["host"]
        if host.startswith("["):
            host = host[1:-1]
        if not host and not advertised:
            host = "0.0.0.0"  # NAME://:PORT binds every interface
        port = int(m["port"])
        if port > 65535:
            raise ConfigError(f"{setting.origin}: {item!r}: port {port} is out of range")
        if name in seen:
            raise ConfigError(f"{setting.origin}: listener name {name} appears twice")
        if advertised and host in ("0.0.0.0", "::"):
            raise ConfigError(f"{setting.origin}: {item!r}: cannot advertise the non-routable address {host}")
        if advertised and port == 0:
            raise ConfigError(f"{setting.origin}: {item!r}: cannot advertise port 0")
        seen.add(name)
        out.append((name, host, port))
    if not out:
        raise ConfigError(f"{setting.origin} is empty")
    return out


def parse_protocol_map(setting: Setting) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in setting.value.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, proto = item.partition(":")
        name, proto = name.strip().upper(), proto.strip().upper()
        if not sep or not name or not proto:
            raise ConfigError(f"{setting.origin}: {item!r} is not NAME:PROTOCOL")
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(f"{setting.origin}: {item!r}: unknown security protocol {proto} "
                              f"(one of {', '.join(SECURITY_PROTOCOLS)})")
        if name in out and out[name] != proto:
            raise ConfigError(f"{setting.origin}: listener {name} is mapped twice")
        out[name] = proto
    return out


def parse_topics(value: str, origin: str, *, separator: str = ",", wurstmeister: bool = False) -> list[TopicSpec]:
    """MOCKBROKER_TOPICS / --topic: name[:partitions]; KAFKA_CREATE_TOPICS (wurstmeister):
    name:partitions:replicas[:cleanup.policy]."""
    out: list[TopicSpec] = []
    for item in value.split(separator):
        item = item.strip()
        if not item:
            continue
        parts = [p.strip() for p in item.split(":")]
        limit = 4 if wurstmeister else 2
        if len(parts) > limit:
            form = "name:partitions:replicas[:cleanup.policy]" if wurstmeister else "name[:partitions]"
            raise ConfigError(f"{origin}: {item!r} is not {form}")
        name = parts[0]
        try:
            validate_topic_name(name)
        except KafkaError as exc:
            raise ConfigError(f"{origin}: {item!r}: {exc.message}") from None
        partitions = _int(Setting(parts[1], origin), f"the partition count of {name}", 1) if len(parts) > 1 and parts[1] else -1
        replicas = _int(Setting(parts[2], origin), f"the replication factor of {name}", 1) if len(parts) > 2 and parts[2] else -1
        config: tuple[tuple[str, str], ...] = ()
        if len(parts) > 3 and parts[3]:
            config = (("cleanup.policy", parts[3]),)
        out.append(TopicSpec(name, partitions, replicas, config, origin))
    return out


def _bind_listeners(env: Mapping[str, str], props: dict[str, Setting], flags: Flags) -> list[tuple[str, str, int, str]]:
    """(name, host, port, origin) of every listener, controller ones included."""
    if props.get("listeners") is not None:
        s = props["listeners"]
        return [(n, h, p, s.origin) for n, h, p in parse_listeners(s)]
    if props.get("advertised.listeners") is not None:
        s = props["advertised.listeners"]
        # cp-kafka: listeners default to the advertised ones, bound on every interface.
        return [(n, "0.0.0.0", p, s.origin) for n, _, p in parse_listeners(s, advertised=True)]
    host_setting = (Setting(flags.host, "--host") if flags.host is not None
                    else Setting(env["MOCKBROKER_HOST"], "MOCKBROKER_HOST") if env.get("MOCKBROKER_HOST")
                    else props.get("host.name") or Setting(DEFAULT_HOST, "default"))
    if flags.port is not None:
        port = _int(Setting(str(flags.port), "--port"), "the port", 0, 65535)
    elif env.get("MOCKBROKER_PORT"):
        port = _int(Setting(env["MOCKBROKER_PORT"], "MOCKBROKER_PORT"), "the port", 0, 65535)
    elif props.get("port") is not None:
        port = _int(props["port"], "the port", 0, 65535)
    else:
        port = DEFAULT_PORT
    return [("PLAINTEXT", host_setting.value.strip(), port, host_setting.origin)]


# ------------------------------------------------------------------------------------------------
# the whole


def _flag_props(flags: Flags) -> dict[str, Setting]:
    props: dict[str, Setting] = {}
    for item in flags.config:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--config wants KEY=VALUE, got {item!r}")
        props[key.strip()] = Setting(value.strip(), f"--config {key.strip()}")
    if flags.node_id is not None:
        props["node.id"] = Setting(str(flags.node_id), "--node-id")
    if flags.cluster_id is not None:
        props["cluster.id"] = Setting(flags.cluster_id, "--cluster-id")
    if flags.partitions is not None:
        props["num.partitions"] = Setting(str(flags.partitions), "--partitions")
    if flags.auto_create is not None:
        props["auto.create.topics.enable"] = Setting("true" if flags.auto_create else "false", "--no-auto-create")
    if flags.listeners:
        props["listeners"] = Setting(",".join(flags.listeners), "--listener")
    if flags.advertised_listeners:
        props["advertised.listeners"] = Setting(",".join(flags.advertised_listeners), "--advertised-listener")
    return props


def _merge(env_props: dict[str, Setting], flag_props: dict[str, Setting], flags: Flags) -> dict[str, Setting]:
    """Flags win over the environment, setting by setting (synonyms included)."""
    props = dict(env_props)
    simple = any(v is not None for v in (flags.host, flags.port, flags.advertised_host, flags.advertised_port))
    if simple and (flags.listeners or flags.advertised_listeners):
        raise ConfigError("give either --host/--port/--advertised-host/--advertised-port or "
                          "--listener/--advertised-listener, not both")
    if simple:
        for key in LISTENER_KEYS:
            props.pop(key, None)
    if flags.listeners:
        for key in ("listeners", "port", "host.name", "advertised.host.name", "advertised.port"):
            props.pop(key, None)
    if flags.advertised_listeners:
        for key in ("advertised.host.name", "advertised.port"):
            props.pop(key, None)
    for key, setting in flag_props.items():
        if key in ("node.id", "broker.id"):
            props.pop("node.id", None)
            props.pop("broker.id", None)
        props[key] = setting
    return props


def build_settings(env: Mapping[str, str], flags: Flags | None = None) -> BrokerSettings:
    """The broker's settings from environment variables (Kafka images' spellings) and command-line
    flags (which win). Raises ConfigError (one message) for settings that cannot work together."""
    flags = flags or Flags()
    out = BrokerSettings()
    props = _merge(settings_from_env(env), _flag_props(flags), flags)

    # -- node and cluster ------------------------------------------------------------------------
    ids = {key: _int(props[key], key) for key in ("node.id", "broker.id") if key in props}
    if ids.get("broker.id") == -1:  # -1: "generate one" in Kafka's ZooKeeper mode
        del ids["broker.id"]
    if len(set(ids.values())) > 1:
        raise ConfigError(f"{props['node.id'].origin}={ids['node.id']} and {props['broker.id'].origin}="
                          f"{ids['broker.id']} disagree (node.id and broker.id name the same node)")
    if ids:
        out.node_id = next(iter(ids.values()))
        if out.node_id < 0:
            raise ConfigError(f"node id {out.node_id} must not be negative")
    cluster_ids = [Setting(env[v].strip(), v) for v in ("CLUSTER_ID", "KAFKA_KRAFT_CLUSTER_ID") if env.get(v, "").strip()]
    if "cluster.id" in props and props["cluster.id"].value:
        cluster_ids.insert(0, props["cluster.id"])
        if props["cluster.id"].origin == "--cluster-id":
            cluster_ids = cluster_ids[:1]
    if len({s.value for s in cluster_ids}) > 1:
        raise ConfigError(" and ".join(f"{s.origin}={s.value!r}" for s in cluster_ids) + " disagree")
    if cluster_ids:
        out.cluster_id = cluster_ids[0].value
    if props.get("broker.rack") is not None and props["broker.rack"].value:
        out.rack = props["broker.rack"].value

    roles = props.get("process.roles")
    if roles is not None:
        names = [r.strip().lower() for r in roles.value.split(",") if r.strip()]
        bad = [r for r in names if r not in ("broker", "controller")]
        if bad:
            raise ConfigError(f"{roles.origin}={roles.value!r}: unknown role(s) {', '.join(bad)} (broker, controller)")
        if "broker" not in names:
            raise ConfigError(f"{roles.origin}={roles.value!r}: this node would serve no clients; "
                              "mockbroker is a broker (use broker or broker,controller)")

    # -- listeners -------------------------------------------------------------------------------
    controller_names = set(_names(props.get("controller.listener.names")))
    bound = _bind_listeners(env, props, flags)
    names = [name for name, _, _, _ in bound]
    advertised: dict[str, tuple[str | None, int | None]] = {}
    if flags.advertised_host is not None or flags.advertised_port is not None:
        advertised["PLAINTEXT"] = (flags.advertised_host or None, flags.advertised_port)
    elif props.get("advertised.listeners") is not None:
        s = props["advertised.listeners"]
        for name, host, port in parse_listeners(s, advertised=True):
            if name not in names:
                listed = props.get("listeners")
                where = listed.origin if listed is not None else "the listeners"
                raise ConfigError(f"{s.origin} names {name}, which is not a listener in {where} "
                                  f"({', '.join(names)})")
            advertised[name] = (host or None, port)
    elif props.get("advertised.host.name") is not None or props.get("advertised.port") is not None:
        host_s, port_s = props.get("advertised.host.name"), props.get("advertised.port")
        advertised["PLAINTEXT"] = (host_s.value if host_s else None,
                                   _int(port_s, "the advertised port", 1, 65535) if port_s else None)

    map_setting = props.get("listener.security.protocol.map")
    protocols = parse_protocol_map(map_setting) if map_setting is not None else None
    for name, host, port, origin in bound:
        if protocols is not None:
            proto = protocols.get(name)
            if proto is None:
                raise ConfigError(f"{map_setting.origin} gives no security protocol for listener {name} "  # type: ignore[union-attr]
                                  f"(from {origin})")
        elif name in SECURITY_PROTOCOLS:
            proto = name
        elif name in controller_names:
            proto = "PLAINTEXT"
        else:
            raise ConfigError(f"listener {name} (from {origin}) has no security protocol: set "
                              f"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP, e.g. {name}:PLAINTEXT")
        adv_host, adv_port = advertised.get(name, (None, None))
        spec = ListenerSpec(name, host, port, adv_host, adv_port, proto)
        if name in controller_names:
            out.unbound_listeners.append(spec)
            continue
        if proto != "PLAINTEXT":
            raise ConfigError(f"listener {name} uses {proto}: mockbroker serves PLAINTEXT only "
                              "(TLS and SASL are not supported)")
        out.listeners.append(spec)
    if not out.listeners:
        raise ConfigError("no listener to serve: every listener is a controller listener "
                          f"({', '.join(names)}); add a broker listener, e.g. PLAINTEXT://0.0.0.0:9092")
    served = [spec.name for spec in out.listeners]
    ibl = props.get("inter.broker.listener.name")
    if ibl is not None:
        if props.get("security.inter.broker.protocol") is not None:
            sibp = props["security.inter.broker.protocol"]
            raise ConfigError(f"{ibl.origin} and {sibp.origin}: set only one of inter.broker.listener.name and "
                              "security.inter.broker.protocol")
        if ibl.value.strip().upper() not in served:
            raise ConfigError(f"{ibl.origin}={ibl.value!r} is not a listener ({', '.join(served)})")

    # -- broker settings -------------------------------------------------------------------------
    for key, setting in sorted(props.items()):
        if key in CONSUMED:
            continue
        if key in _TIME_COARSE:
            continue
        d = BROKER_CONFIGS.get(key)
        if d is not None:
            try:
                parse_value(d, setting.value)
            except KafkaError as exc:
                raise ConfigError(f"{setting.origin}={setting.value!r}: {exc.message}") from None
        elif _is_ignored(key):
            out.ignored[key] = setting.origin
        else:
            out.unknown[key] = setting.origin
        out.config[key] = setting.value
    for ms_key, coarse in TIME_SYNONYMS.items():
        if ms_key in out.config:
            continue
        for name, factor in coarse:
            if name in props:
                out.config[ms_key] = str(_int(props[name], name) * factor)
                break

    # -- topics ----------------------------------------------------------------------------------
    topics: list[TopicSpec] = []
    if env.get("MOCKBROKER_TOPICS", "").strip():
        topics += parse_topics(env["MOCKBROKER_TOPICS"], "MOCKBROKER_TOPICS")
    if env.get("KAFKA_CREATE_TOPICS", "").strip():
        sep = env.get("KAFKA_CREATE_TOPICS_SEPARATOR") or ","
        if sep in ("$$'\\n'", "$'\\n'", "\\n"):
            sep = "\n"
        topics += parse_topics(env["KAFKA_CREATE_TOPICS"], "KAFKA_CREATE_TOPICS", separator=sep, wurstmeister=True)
    for text in flags.topics:
        topics += parse_topics(text, "--topic")
    by_name: dict[str, TopicSpec] = {}
    for topic in topics:
        if topic.replication_factor > 1:
            out.warnings.append(f"{topic.origin}: topic {topic.name} asks for {topic.replication_factor} replicas; "
                                "this broker is one node, so it has 1")
            topic = TopicSpec(topic.name, topic.partitions, -1, topic.config, topic.origin)
        old = by_name.get(topic.name)
        if old is None:
            by_name[topic.name] = topic
            out.topics.append(topic)
        elif (old.partitions, old.config) != (topic.partitions, topic.config):
            raise ConfigError(f"topic {topic.name} is asked for twice, differently ({old.origin} and {topic.origin})")

    # -- control endpoint and logging ------------------------------------------------------------
    if flags.http_port is not None:
        out.http_port = _int(Setting(str(flags.http_port), "--http-port"), "the HTTP port", 0, 65535)
    elif env.get("MOCKBROKER_HTTP_PORT", "").strip():
        out.http_port = _int(Setting(env["MOCKBROKER_HTTP_PORT"], "MOCKBROKER_HTTP_PORT"), "the HTTP port", 0, 65535)
    out.http_host = (flags.http_host or env.get("MOCKBROKER_HTTP_HOST", "").strip()
                     or (flags.host if flags.host is not None else None)
                     or env.get("MOCKBROKER_HOST", "").strip() or DEFAULT_HOST)
    level = flags.log_level or env.get("MOCKBROKER_LOG_LEVEL", "").strip() or "WARNING"
    if level.upper() not in LOG_LEVELS:
        origin = "--log-level" if flags.log_level else "MOCKBROKER_LOG_LEVEL"
        raise ConfigError(f"{origin}={level!r}: one of {', '.join(LOG_LEVELS)}")
    out.log_level = level.upper()
    return out


def describe(settings: BrokerSettings) -> Iterable[str]:
    """Human-readable lines of what the settings resolve to (for INFO logging)."""
    for spec in settings.listeners:
        adv = f"{spec.advertised_host or '(bind host)'}:{spec.advertised_port or spec.port}"
        yield f"listener {spec.name}: bind {spec.host}:{spec.port}, advertise {adv}"
    for spec in settings.unbound_listeners:
        yield f"listener {spec.name}: controller listener, not bound"
    if settings.ignored:
        yield "Kafka settings with no effect here: " + ", ".join(sorted(settings.ignored))
