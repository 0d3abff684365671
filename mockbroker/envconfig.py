"""Broker settings from the environment variables the common Kafka images read, and from the command line.

`build_settings(env, flags)` is a pure function (no I/O, no logging): it reads a mapping of environment
variables, and optionally the `mockbroker` command's flags, and returns a `BrokerSettings`, or raises
`ConfigError` with one message naming the variables at fault. The CLI turns that error into exit code 2.

The whole mapping is one table, ENVIRONMENT below: each row is a variable in the spelling of the
apache/kafka and confluentinc/cp-kafka images, its bitnami/kafka spelling, the setting it gives, and
the parser that checks its value. Every variable of the Kafka images that the table does not name
follows Confluent's rule: `KAFKA_<NAME>` (and bitnami's `KAFKA_CFG_<NAME>`) is the broker setting
<name>, where after the prefix `___` is `-`, `__` is `_`, `_` is `.`, lower case
(KAFKA_LOG_RETENTION_MS -> log.retention.ms). Those are passed to MockBroker(config=...): the values of
the settings mockbroker models are checked with their own parsers (state/configs.py; a bad value is an
error); names it does not model are kept (DescribeConfigs shows them) and listed in `unknown` (the CLI
logs them in one WARNING line), except well-known settings that cannot matter to a single in-memory
node (replication factors, log.dirs, thread counts, ZooKeeper, JMX, TLS/SASL settings), listed in
`ignored`. Image plumbing (JVM options, log4j, the images' own scripts) is accepted silently.

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
- wurstmeister's pre-listener settings (port, host.name, advertised.host.name, advertised.port) and
  mockbroker's MOCKBROKER_HOST / MOCKBROKER_PORT make the one PLAINTEXT listener when no listeners are
  given.
- inter.broker.listener.name (must name a bound listener), security.inter.broker.protocol,
  controller.quorum.voters, controller.quorum.bootstrap.servers, process.roles (must include broker):
  accepted, no effect.

Conflicts are errors: two spellings of one setting with different values (KAFKA_X and KAFKA_CFG_X,
CLUSTER_ID and KAFKA_KRAFT_CLUSTER_ID), node.id and broker.id different, an advertised listener name with
no listener, the same topic asked for twice with different partition counts.

Command-line flags win over the environment, setting by setting (--node-id over KAFKA_NODE_ID and
KAFKA_BROKER_ID, --listener over KAFKA_LISTENERS, --host/--port over every listener setting).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.envparsers import (
    SECURITY_PROTOCOLS,
    ConfigError,
    Setting,
    TopicSpec,
    parse_topics,
)
from mockbroker.envregistry import RegistrySettings, registry_settings
from mockbroker.envtable import (
    BY_SETTING,
    BY_VARIABLE,
    ENVIRONMENT,
    LISTENER_KEYS,
    TIME_SYNONYMS,
    EnvVar,
    env_to_setting,
    is_ignored,
    is_plumbing,
)
from mockbroker.errors import KafkaError
from mockbroker.security.jaas import JaasError
from mockbroker.security.protocols import SERVED_MECHANISMS
from mockbroker.security.settings import JAAS_FILE, SCRAM_CREDENTIALS, is_security_setting, sasl_logins
from mockbroker.settings import Settings, make_settings
from mockbroker.state.cluster.cluster import Listener
from mockbroker.state.configs import BROKER_CONFIGS, parse_value

if TYPE_CHECKING:
    from mockbroker.security.tls import TlsConfig

__all__ = ["BrokerSettings", "ConfigError", "ENVIRONMENT", "EnvVar", "Flags", "ListenerSpec", "Setting", "TopicSpec",
           "build_settings", "describe", "env_to_setting"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9092


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
    http_auth: str | None = None  # basic (default) or none: mockbroker/http/auth.py
    schema_registry_port: int | None = None  # --schema-registry-port: mockbroker/registry
    log_level: str | None = None
    brokers: int | None = None
    data_dir: str | None = None
    defaults: str | None = None
    kafka_version: str | None = None
    seed: int | None = None
    users: list[str] = field(default_factory=list)  # NAME:PASSWORD
    # security: listener.security.protocol.map and sasl.enabled.mechanisms in Kafka's forms; TLS key material
    security_protocol_map: str | None = None
    sasl_mechanisms: str | None = None
    tls: TlsConfig | None = None  # the --ssl-* key material flags
    ssl_ca_out: str | None = None


@dataclass
class BrokerSettings:
    node_id: int = 1
    brokers: int = 1  # nodes in the process (ids node_id, node_id+1, ...; listeners on the next ports)
    cluster_id: str | None = None
    rack: str | None = None
    listeners: list[ListenerSpec] = field(default_factory=list)  # bound, in the order given
    unbound_listeners: list[ListenerSpec] = field(default_factory=list)  # controller listeners
    config: dict[str, str] = field(default_factory=dict)  # Kafka setting names -> values
    topics: list[TopicSpec] = field(default_factory=list)
    http_host: str = DEFAULT_HOST
    http_port: int | None = None
    http_auth: str = "basic"  # the HTTP endpoint's authentication: basic (over the SASL users, if any) or none
    schema_registry_port: int | None = None  # a Schema Registry beside the broker (0: a free port)
    registry: RegistrySettings = field(default_factory=RegistrySettings)  # its level and mode mutability
    log_level: str = "WARNING"
    unknown: dict[str, str] = field(default_factory=dict)  # setting -> origin: not modelled here
    ignored: dict[str, str] = field(default_factory=dict)  # setting -> origin: known, no effect here
    warnings: list[str] = field(default_factory=list)  # other things worth one WARNING line each
    origins: dict[str, str] = field(default_factory=dict)  # config key -> the variable or flag that gave it
    users: dict[str, str] = field(default_factory=dict)  # SASL users (KAFKA_CLIENT_USERS / _PASSWORDS)
    ssl_ca_out: str | None = None  # where to write the CA certificate clients should trust
    data_dir: str | None = None  # log.dirs / log.dir / --data-dir: persistence (mockbroker/storage); None: memory
    defaults: str = "kafka"  # MockBroker's defaults: kafka (the command's), test (MOCKBROKER_DEFAULTS=test, the image)
    tls: TlsConfig | None = None  # from the --ssl-* flags (None: Kafka's ssl.* settings, else a throwaway CA)
    kafka_version: str | None = None  # the Kafka release played (mockbroker/personas.py); None: every version
    seed: int | None = None  # the broker's seed (mockbroker/state/seeding.py); None: a fresh one

    def broker_settings(self) -> Settings:
        """The broker's one settings object (mockbroker/settings.py), what MockBroker.from_settings makes a broker
        of: everything it needs, security and the topics to create included."""
        return make_settings(**self.broker_kwargs())

    def broker_kwargs(self) -> dict[str, Any]:
        """The same as MockBroker's keyword arguments (MockBroker(**kwargs).settings == broker_settings()): brokers,
        users, data_dir, racks, topics, tls, ssl_ca_out, kafka_version and schema_registry only when given."""
        kwargs: dict[str, Any] = {
            "node_id": self.node_id,
            "cluster_id": self.cluster_id,
            "config": dict(self.config),
            "listeners": [spec.to_listener(self.node_id) for spec in self.listeners],
            "defaults": self.defaults,
        }
        if self.schema_registry_port is not None:  # 0 (a free port) counts, so not among `optional`
            kwargs["schema_registry"] = self.schema_registry_port
        if self.seed is not None:  # so does seed 0
            kwargs["seed"] = self.seed
        optional = {
            "brokers": self.brokers if self.brokers > 1 else None,
            "users": dict(self.users),
            "data_dir": self.data_dir,
            "racks": [self.rack] + [None] * (self.brokers - 1) if self.rack is not None else None,
            "topics": list(self.topics),
            "tls": self.tls,
            "ssl_ca_out": self.ssl_ca_out,
            "kafka_version": self.kafka_version,
        }
        return kwargs | {key: value for key, value in optional.items() if value}

    def unknown_line(self) -> str | None:
        """The one WARNING line listing the settings mockbroker does not know (None if there are none)."""
        if not self.unknown:
            return None
        items = ", ".join(f"{name} ({origin})" for name, origin in sorted(self.unknown.items()))
        return f"settings not known to mockbroker (kept, no effect): {items}"



def _put(props: dict[str, Setting], key: str, setting: Setting) -> None:
    old = props.get(key)
    if old is not None and old.value != setting.value:
        raise ConfigError(f"{old.origin}={old.value!r} and {setting.origin}={setting.value!r} both set "
                          f"{key} and disagree")
    props[key] = setting


def settings_from_env(env: Mapping[str, str]) -> dict[str, Setting]:
    """Every setting the environment gives (the table's variables, then KAFKA_* and KAFKA_CFG_* by the
    spelling rule), by setting name."""
    props: dict[str, Setting] = {}
    for var in sorted(env):
        # Values lose surrounding blanks, except a separator, which may be one.
        value = env[var] if var == "KAFKA_CREATE_TOPICS_SEPARATOR" else env[var].strip()
        row = BY_VARIABLE.get(var)
        if row is not None:
            if value or not row.blank_is_unset:
                _put(props, row.setting, Setting(value, var))
            continue
        if not var.startswith("KAFKA_") or is_plumbing(var):
            continue
        suffix = var[len("KAFKA_CFG_"):] if var.startswith("KAFKA_CFG_") else var[len("KAFKA_"):]
        if suffix:
            _put(props, env_to_setting(suffix), Setting(value, var))
    return props


class Props:
    """The settings given (the flags' won over the environment's); the table's are parsed when read."""

    def __init__(self, settings: dict[str, Setting]) -> None:
        self.settings = settings

    def __contains__(self, key: str) -> bool:
        return key in self.settings

    def setting(self, key: str) -> Setting | None:
        return self.settings.get(key)

    def value(self, key: str, default: Any = None) -> Any:
        """The value of one of the table's settings, parsed by its row (default when not given)."""
        setting = self.settings.get(key)
        return default if setting is None else BY_SETTING[key].parse(setting)

    def broker_settings(self) -> list[tuple[str, Setting]]:
        """Every setting outside the table (what goes to MockBroker(config=...)), by name."""
        return [(k, s) for k, s in sorted(self.settings.items()) if k not in BY_SETTING]


# ------------------------------------------------------------------------------------------------
# the whole


def _flag_props(flags: Flags) -> dict[str, Setting]:
    props: dict[str, Setting] = {}
    for item in flags.config:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--config wants KEY=VALUE, got {item!r}")
        props[key.strip()] = Setting(value.strip(), f"--config {key.strip()}")
    given: list[tuple[str, object, str]] = [
        ("node.id", flags.node_id, "--node-id"),
        ("cluster.id", flags.cluster_id, "--cluster-id"),
        ("num.partitions", flags.partitions, "--partitions"),
        ("mockbroker.host", flags.host, "--host"),
        ("mockbroker.port", flags.port, "--port"),
        ("mockbroker.http.host", flags.http_host or None, "--http-host"),
        ("mockbroker.http.port", flags.http_port, "--http-port"),
        ("mockbroker.http.auth", flags.http_auth, "--http-auth"),
        ("mockbroker.schema.registry.port", flags.schema_registry_port, "--schema-registry-port"),
        ("mockbroker.log.level", flags.log_level or None, "--log-level"),
        ("mockbroker.brokers", flags.brokers, "--brokers"),
        ("log.dirs", flags.data_dir, "--data-dir"),
        ("mockbroker.defaults", flags.defaults, "--defaults"),
        ("mockbroker.kafka.version", flags.kafka_version, "--kafka-version"),
        ("mockbroker.seed", flags.seed, "--seed"),
        ("listener.security.protocol.map", flags.security_protocol_map, "--security-protocol-map"),
        ("sasl.enabled.mechanisms", flags.sasl_mechanisms, "--sasl-mechanisms"),
        ("mockbroker.ssl.ca.out", flags.ssl_ca_out, "--ssl-ca-out"),
    ]
    for key, flag_value, flag in given:
        if flag_value is not None:
            props[key] = Setting(str(flag_value), flag)
    if flags.auto_create is not None:
        props["auto.create.topics.enable"] = Setting("true" if flags.auto_create else "false", "--no-auto-create")
    if flags.listeners:
        props["listeners"] = Setting(",".join(flags.listeners), "--listener")
    if flags.advertised_listeners:
        props["advertised.listeners"] = Setting(",".join(flags.advertised_listeners), "--advertised-listener")
    return props


def _merge(env_props: dict[str, Setting], flag_props: dict[str, Setting], flags: Flags) -> Props:
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
    return Props(props)


def _node(props: Props, out: BrokerSettings) -> None:
    ids = {key: props.value(key) for key in ("node.id", "broker.id") if key in props}
    if ids.get("broker.id") == -1:  # -1: "generate one" in Kafka's ZooKeeper mode
        del ids["broker.id"]
    if len(set(ids.values())) > 1:
        node_s, broker_s = props.setting("node.id"), props.setting("broker.id")
        raise ConfigError(f"{node_s.origin}={ids['node.id']} and {broker_s.origin}="  # type: ignore[union-attr]
                          f"{ids['broker.id']} disagree (node.id and broker.id name the same node)")
    if ids:
        out.node_id = next(iter(ids.values()))
        if out.node_id < 0:
            raise ConfigError(f"node id {out.node_id} must not be negative")
    out.cluster_id = props.value("cluster.id")
    out.rack = props.value("broker.rack")
    props.value("process.roles")


def _bind_listeners(props: Props) -> list[tuple[str, str, int, str]]:
    """(name, host, port, origin) of every listener, controller ones included."""
    listeners = props.setting("listeners")
    if listeners is not None:
        return [(n, h, p, listeners.origin) for n, h, p in props.value("listeners")]
    advertised = props.setting("advertised.listeners")
    if advertised is not None:
        # cp-kafka: listeners default to the advertised ones, bound on every interface.
        return [(n, "0.0.0.0", p, advertised.origin) for n, _, p in props.value("advertised.listeners")]
    host = props.setting("mockbroker.host") or props.setting("host.name") or Setting(DEFAULT_HOST, "default")
    port = props.value("mockbroker.port") if "mockbroker.port" in props else props.value("port", DEFAULT_PORT)
    return [("PLAINTEXT", host.value.strip(), port, host.origin)]


def _advertised(props: Props, flags: Flags, names: list[str]) -> dict[str, tuple[str | None, int | None]]:
    """Listener name -> the advertised (host, port) given for it."""
    advertised: dict[str, tuple[str | None, int | None]] = {}
    if flags.advertised_host is not None or flags.advertised_port is not None:
        if (flags.advertised_host or "").strip() in ("0.0.0.0", "::"):
            raise ConfigError(f"--advertised-host={flags.advertised_host!r}: cannot advertise the non-routable "
                              "address (give the host clients connect to)")
        advertised["PLAINTEXT"] = (flags.advertised_host or None, flags.advertised_port)
    elif "advertised.listeners" in props:
        origin = props.setting("advertised.listeners").origin  # type: ignore[union-attr]
        for name, host, port in props.value("advertised.listeners"):
            if name not in names:
                listed = props.setting("listeners")
                where = listed.origin if listed is not None else "the listeners"
                raise ConfigError(f"{origin} names {name}, which is not a listener in {where} "
                                  f"({', '.join(names)})")
            advertised[name] = (host or None, port)
    elif "advertised.host.name" in props or "advertised.port" in props:
        advertised["PLAINTEXT"] = (props.value("advertised.host.name"), props.value("advertised.port"))
    return advertised


def _listeners(props: Props, flags: Flags, out: BrokerSettings) -> None:
    controller_names = set(props.value("controller.listener.names", []))
    bound = _bind_listeners(props)
    names = [name for name, _, _, _ in bound]
    advertised = _advertised(props, flags, names)
    map_setting = props.setting("listener.security.protocol.map")
    protocols = props.value("listener.security.protocol.map")
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
            raise ConfigError(f"listener {name}://{host}:{port} (from {origin}) has no security protocol: set "
                              f"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP, e.g. {name}:PLAINTEXT")
        adv_host, adv_port = advertised.get(name, (None, None))
        spec = ListenerSpec(name, host, port, adv_host, adv_port, proto)
        if name in controller_names:
            out.unbound_listeners.append(spec)
            continue
        out.listeners.append(spec)
    if not out.listeners:
        raise ConfigError("no listener to serve: every listener is a controller listener "
                          f"({', '.join(names)}); add a broker listener, e.g. PLAINTEXT://0.0.0.0:9092")
    served = [spec.name for spec in out.listeners]
    ibl = props.setting("inter.broker.listener.name")
    if ibl is not None:
        sibp = props.setting("security.inter.broker.protocol")
        if sibp is not None:
            raise ConfigError(f"{ibl.origin} and {sibp.origin}: set only one of inter.broker.listener.name and "
                              "security.inter.broker.protocol")
        if ibl.value.strip().upper() not in served:
            raise ConfigError(f"{ibl.origin}={ibl.value!r} is not a listener ({', '.join(served)})")


def _broker_config(props: Props, out: BrokerSettings) -> None:
    for key, setting in props.broker_settings():
        d = BROKER_CONFIGS.get(key)
        if is_security_setting(key):
            pass  # read by mockbroker/security/settings.py (the JAAS ones checked in _sasl below)
        elif d is not None:
            try:
                parse_value(d, setting.value)
            except KafkaError as exc:
                raise ConfigError(f"{setting.origin}={setting.value!r}: {exc.message}") from None
        elif is_ignored(key):
            out.ignored[key] = setting.origin
        else:
            out.unknown[key] = setting.origin
        out.config[key] = setting.value
        out.origins[key] = setting.origin
    for ms_key, coarse in TIME_SYNONYMS.items():
        if ms_key in out.config:
            continue
        for name, factor in coarse:
            if name in props:
                out.config[ms_key] = str(props.value(name) * factor)
                break


def _sasl(props: Props, out: BrokerSettings) -> None:
    """The JAAS file of KAFKA_OPTS and the SCRAM credentials go to the broker's settings; every JAAS setting is
    read now, so a mistake is one message naming its variable; options no login module takes are listed with
    the unknown settings; a SASL listener with no user to log in is one warning."""
    mechanisms = out.config.get("sasl.enabled.mechanisms", "")
    unknown = [m.strip() for m in mechanisms.split(",") if m.strip() and m.strip().upper() not in SERVED_MECHANISMS]
    if unknown or ("sasl.enabled.mechanisms" in out.config and not mechanisms.strip()
                   and out.origins["sasl.enabled.mechanisms"] == "--sasl-mechanisms"):
        raise ConfigError(f"{out.origins['sasl.enabled.mechanisms']}={mechanisms!r}: SASL mechanisms not served: "
                          f"{', '.join(unknown) or '(none given)'} (served: {', '.join(SERVED_MECHANISMS)})")
    if mechanisms:
        out.config["sasl.enabled.mechanisms"] = ",".join(m.strip().upper() for m in mechanisms.split(",") if m.strip())
    opts = props.setting("mockbroker.kafka.opts")
    jaas_file = props.value("mockbroker.kafka.opts", {}).get(JAAS_FILE)
    if jaas_file:
        out.config[JAAS_FILE] = jaas_file
        out.origins[JAAS_FILE] = f"{opts.origin} -D{JAAS_FILE}"  # type: ignore[union-attr]
    scram = props.setting("mockbroker.scram.credentials")
    if scram is not None:
        out.config[SCRAM_CREDENTIALS] = props.value("mockbroker.scram.credentials")
        out.origins[SCRAM_CREDENTIALS] = scram.origin
    try:
        logins = sasl_logins(out.config)
    except JaasError as exc:
        key = exc.key or ""
        origin = out.origins.get(key, key)
        shown = origin if key in origin or key == SCRAM_CREDENTIALS else f"{origin} ({key})"
        raise ConfigError(f"{shown}: {exc}") from None
    for option, key in logins.unknown.items():
        out.unknown[option] = out.origins.get(key, key)
    sasl = [spec for spec in out.listeners if spec.security_protocol.startswith("SASL_")]
    oauth = "OAUTHBEARER" in out.config.get("sasl.enabled.mechanisms", "").upper() or logins.oauth is not None
    if sasl and not (logins.has_users or out.users or oauth):
        names_ = ", ".join(f"{spec.name} ({spec.security_protocol})" for spec in sasl)
        out.warnings.append(f"SASL listener {names_} has no user: no client can log in (give KAFKA_CLIENT_USERS and "
                            "KAFKA_CLIENT_PASSWORDS, a JAAS config with user_<name>=\"<password>\", or "
                            "MOCKBROKER_SCRAM_CREDENTIALS)")


def _topics(props: Props, flags: Flags, out: BrokerSettings) -> None:
    topics: list[TopicSpec] = list(props.value("mockbroker.topics", []))
    wurstmeister = props.setting("create.topics")
    if wurstmeister is not None:
        topics += parse_topics(wurstmeister.value, wurstmeister.origin, wurstmeister=True,
                               separator=props.value("create.topics.separator", ","))
    for value in flags.topics:
        topics += parse_topics(value, "--topic")
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


def build_settings(env: Mapping[str, str], flags: Flags | None = None) -> BrokerSettings:
    """The broker's settings from environment variables (Kafka images' spellings) and command-line
    flags (which win). Raises ConfigError (one message) for settings that cannot work together."""
    flags = flags or Flags()
    out = BrokerSettings()
    props = _merge(settings_from_env(env), _flag_props(flags), flags)
    _node(props, out)
    _listeners(props, flags, out)
    _broker_config(props, out)
    _topics(props, flags, out)
    out.http_port = props.value("mockbroker.http.port")
    out.http_host = props.value("mockbroker.http.host") or props.value("mockbroker.host") or DEFAULT_HOST
    out.http_auth = props.value("mockbroker.http.auth", "basic")
    out.schema_registry_port, out.registry = registry_settings(props)  # envregistry.py
    out.log_level = props.value("mockbroker.log.level", "WARNING")
    out.brokers = props.value("mockbroker.brokers", 1)
    out.defaults = props.value("mockbroker.defaults", "kafka")
    out.kafka_version = props.value("mockbroker.kafka.version")
    out.seed = props.value("mockbroker.seed")
    _node_ports(props, out)
    out.users = _users(props, flags)
    _sasl(props, out)
    out.ssl_ca_out = props.value("mockbroker.ssl.ca.out")
    out.tls = flags.tls
    out.data_dir = _data_dir(props, out)
    return out


def _node_ports(props: Props, out: BrokerSettings) -> None:
    """With N brokers, node i binds (and advertises) each listener's port + i: the last must be a port."""
    if out.brokers == 1:
        return
    origin = props.setting("mockbroker.brokers").origin  # type: ignore[union-attr]
    for spec in out.listeners:
        for what, port in (("port", spec.port), ("advertised port", spec.advertised_port)):
            if port and port + out.brokers - 1 > 65535:
                raise ConfigError(f"{origin}={out.brokers}: listener {spec.name}'s {what} {port} leaves no room for "
                                  f"{out.brokers} nodes (ports {port}..{port + out.brokers - 1}; the most is 65535)")


def _data_dir(props: Props, out: BrokerSettings) -> str | None:
    """The first directory of log.dirs (else log.dir): where the broker keeps its logs (mockbroker/storage).
    Kafka spreads partitions over several; mockbroker uses the first (the others are named in a warning)."""
    for key in ("log.dirs", "log.dir"):
        value = props.value(key)
        if value and value.strip():
            out.origins[key] = props.setting(key).origin  # type: ignore[union-attr]
            return str(value.split(",")[0].strip())
    return None


def _users(props: Props, flags: Flags) -> dict[str, str]:
    """KAFKA_CLIENT_USERS=alice,bob with KAFKA_CLIENT_PASSWORDS=secret1,secret2 (bitnami's spelling), then
    --user NAME:PASSWORD (which wins for its name)."""
    names_ = props.value("mockbroker.client.users") or []
    passwords_setting = props.setting("mockbroker.client.passwords")
    passwords = [p.strip() for p in props.value("mockbroker.client.passwords", "").split(",")] if passwords_setting else []
    if len(passwords) != len(names_):
        users_setting = props.setting("mockbroker.client.users")
        users_text = f"KAFKA_CLIENT_USERS={users_setting.value!r}" if users_setting else "KAFKA_CLIENT_USERS (not set)"
        passwords_text = (f"KAFKA_CLIENT_PASSWORDS={passwords_setting.value!r}" if passwords_setting
                          else "KAFKA_CLIENT_PASSWORDS (not set)")
        raise ConfigError(f"{users_text} names {len(names_)} user(s) but {passwords_text} gives "
                          f"{len(passwords)} password(s): give one password per user, in the same order")
    users = dict(zip(names_, passwords, strict=True))
    for item in flags.users:
        name, sep, password = item.partition(":")
        if not sep or not name:
            raise ConfigError(f"--user wants NAME:PASSWORD, got {item!r}")
        users[name] = password
    return users


def describe(settings: BrokerSettings) -> Iterable[str]:
    """Human-readable lines of what the settings resolve to (for INFO logging)."""
    for spec in settings.listeners:
        adv = f"{spec.advertised_host or '(bind host)'}:{spec.advertised_port or spec.port}"
        yield f"listener {spec.name}: bind {spec.host}:{spec.port}, advertise {adv}"
    for spec in settings.unbound_listeners:
        yield f"listener {spec.name}: controller listener, not bound"
    if settings.kafka_version is not None:
        yield f"playing Kafka {settings.kafka_version}: its API versions and behaviours (mockbroker/personas.py)"
    if settings.ignored:
        yield "Kafka settings with no effect here: " + ", ".join(sorted(settings.ignored))
