"""The one settings object a broker is made from: `Settings`, built by `make_settings` from MockBroker's keyword
arguments (the Python API) or from the command line and the environment (envconfig.BrokerSettings.broker_settings),
and read by MockBroker's construction and by nothing else (security/settings.py makes the broker's security from it).

It holds the broker settings in Kafka's names (the test or Kafka defaults under them, the `partitions=` and other
short keywords folded in, each value mockbroker models already parsed by state/configs.py, so `--partitions 3` and
`partitions=3` give the same object), the listeners given (copies, their security protocols resolved; the broker
binds copies of these, so nothing changes them), the node ids and racks, the security the Python API
names outside Kafka's settings (users, mechanisms, TLS and OAuth objects, the ACL switches), the data dir, the
topics to create, where to write the CA certificate, and the Kafka release the nodes play (the persona: its API
versions and behaviours, mockbroker/personas.py; before 4.0 it defaults `transaction.version` to 0). Frozen: a broker keeps it as `broker.settings`.

TEST_DEFAULTS are Kafka defaults that only make tests wait; `MockBroker(defaults="test")` (the default, so the
pytest fixtures too) and the image (MOCKBROKER_DEFAULTS=test) start from them, the `mockbroker` command from
Kafka's own (defaults="kafka") unless told; an explicit setting wins either way.
- group.initial.rebalance.delay.ms 3000 -> 0: a new classic group's first JoinGroup is answered at once (what
  testcontainers' Kafka module and Kafka's own test harness set).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from mockbroker.personas import FULL, Persona, make_persona
from mockbroker.security import resolve_protocols
from mockbroker.security.protocols import parse_protocol_map
from mockbroker.state.cluster.cluster import Listener
from mockbroker.state.configs import BROKER_CONFIGS, parse_value

if TYPE_CHECKING:
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.tls import TlsConfig

TEST_DEFAULTS: dict[str, Any] = {"group.initial.rebalance.delay.ms": 0}
DEFAULTS_CHOICES = ("test", "kafka")


@dataclass(frozen=True)
class TopicSpec:
    """A topic to create at start (the command's --topic, the images' topic variables; envparsers parses
    them): its partitions and replication factor (-1: the broker's defaults), configs, and where it was
    asked for (named in an error)."""
    name: str
    partitions: int = -1  # -1: num.partitions
    replication_factor: int = -1
    config: tuple[tuple[str, str], ...] = ()
    origin: str = ""


@dataclass(frozen=True)
class Settings:
    """Everything a broker is made from (see the module's docstring); build it with make_settings."""

    config: dict[str, Any]  # Kafka's names -> values, the defaults under them; modelled ones parsed
    listeners: tuple[Listener, ...]  # as given; all of node_id's: the other nodes get copies on the next ports
    node_id: int = 1
    brokers: int = 1  # nodes in the process: ids node_id, node_id+1, ...
    racks: tuple[str | None, ...] | None = None  # one per node
    cluster_id: str | None = None
    defaults: str = "test"  # what `config` was laid over: "test" (TEST_DEFAULTS) or "kafka"
    # security the Python API names outside Kafka's settings (security/settings.py reads both)
    users: dict[str, str] = field(default_factory=dict)  # may log in with every enabled SASL mechanism
    sasl_mechanisms: tuple[str, ...] | None = None  # None: config's sasl.enabled.mechanisms, else the defaults
    tls: TlsConfig | None = None  # None: config's ssl.* settings, else a throwaway CA when a listener uses TLS
    oauth: OAuthConfig | None = None  # None: config's sasl.oauthbearer.* / the JAAS validator options
    acls: bool | None = None  # True / False: the authorizer on / off whatever config says
    super_users: tuple[str, ...] | None = None  # added to config's super.users
    data_dir: str | None = None  # None: config's log.dirs / log.dir, else in memory
    topics: tuple[TopicSpec, ...] = ()
    ssl_ca_out: str | None = None  # where to write the CA certificate clients trust
    persona: Persona = FULL  # the Kafka release played and single API caps (personas.py)
    schema_registry_port: int | None = None  # the Schema Registry's port (0: a free one); None: no registry
    seed: int | None = None  # every random choice of the broker comes from it (state/seeding.py); None: a fresh one


def starting_settings(defaults: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """The broker's settings: `config` over the test defaults ("test") or over Kafka's alone ("kafka"), each
    value of a setting mockbroker models parsed (KafkaError INVALID_CONFIG naming a bad one)."""
    if defaults not in DEFAULTS_CHOICES:
        raise ValueError(f"defaults must be one of {', '.join(DEFAULTS_CHOICES)}, got {defaults!r}")
    given = dict(TEST_DEFAULTS if defaults == "test" else {}) | dict(config or {})
    return {key: parse_value(BROKER_CONFIGS[key], raw) if key in BROKER_CONFIGS else raw
            for key, raw in given.items()}


class BrokerOptions(TypedDict, total=False):
    """MockBroker's keyword arguments but host, port and clock: the one list of them (their meaning:
    MockBroker.__init__'s docstring; a missing one takes the default make_settings names)."""

    advertised_host: str | None
    advertised_port: int | None
    node_id: int  # 1
    cluster_id: str | None
    partitions: int | None
    auto_create_topics: bool | None
    config: dict[str, Any] | None
    listeners: list[Listener] | None
    max_request_size: int | None
    security: str | None
    users: dict[str, str] | None
    sasl_mechanisms: list[str] | None
    tls: TlsConfig | None
    oauth: OAuthConfig | None
    brokers: int  # 1
    racks: list[str | None] | None
    data_dir: str | os.PathLike[str] | None
    acls: bool | None
    super_users: list[str] | None
    defaults: str  # "test"
    topics: list[TopicSpec] | None
    ssl_ca_out: str | None
    kafka_version: str | None  # None: every version mockbroker serves; "2.8" ... "4.3": that release's
    max_versions: dict[int, int] | None  # api_key -> the newest version served
    schema_registry: bool | int | None  # None / False: no Schema Registry; True: on a free port; or a port
    seed: int | None  # None: a fresh seed, recorded as broker.seed


def registry_port(option: bool | int | None) -> int | None:
    """The Settings' port of MockBroker's `schema_registry` option: True a free one (0), a number that port,
    None / False none."""
    if option is None or option is False:
        return None
    if option is True:
        return 0
    if not isinstance(option, int) or not 0 <= option <= 65535:
        raise ValueError(f"schema_registry must be True, False, None or a port (0-65535), got {option!r}")
    return option


def make_settings(host: str = "127.0.0.1", port: int = 0, **options: Unpack[BrokerOptions]) -> Settings:
    """The Settings of MockBroker's keyword arguments (their meaning: MockBroker.__init__); ValueError or
    KafkaError (a bad setting's value) when they cannot work together."""
    unknown = sorted(set(options) - BrokerOptions.__optional_keys__)
    if unknown:  # as a signature that names them would
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    node_id, brokers = options.get("node_id", 1), options.get("brokers", 1)
    defaults, config = options.get("defaults", "test"), options.get("config")
    partitions, auto_create_topics = options.get("partitions"), options.get("auto_create_topics")
    max_request_size, racks = options.get("max_request_size"), options.get("racks")
    listeners, security = options.get("listeners"), options.get("security")
    advertised_host, advertised_port = options.get("advertised_host"), options.get("advertised_port")
    users, sasl_mechanisms = options.get("users"), options.get("sasl_mechanisms")
    super_users, data_dir, topics = options.get("super_users"), options.get("data_dir"), options.get("topics")
    persona = make_persona(options.get("kafka_version"), options.get("max_versions"))
    if persona.transaction_version is not None:  # the release's default; an explicit setting wins
        config = {"transaction.version": persona.transaction_version} | dict(config or {})
    short = {"num.partitions": partitions, "auto.create.topics.enable": auto_create_topics,
             "socket.request.max.bytes": max_request_size}
    settings = starting_settings(defaults, dict(config or {}) | {k: v for k, v in short.items() if v is not None})
    if brokers < 1:
        raise ValueError(f"brokers must be at least 1, got {brokers}")
    if racks is not None and len(racks) != brokers:
        raise ValueError(f"racks names {len(racks)} rack(s) for {brokers} broker(s)")
    if listeners is not None and security is not None:
        raise ValueError("give security= for the one default listener, or listeners= each with its "
                         "security_protocol, not both")
    if listeners is None:
        protocol = (security or "PLAINTEXT").upper()
        listeners = [Listener(protocol, node_id, host, port, advertised_host, advertised_port, protocol)]
    protocol_map = settings.get("listener.security.protocol.map")
    # The caller's listeners learn their protocol (as they always have); the settings keep copies of them.
    resolve_protocols(listeners, parse_protocol_map(str(protocol_map)) if protocol_map else None)
    copies = [dataclasses.replace(lst) for lst in listeners]
    node_ids = range(node_id, node_id + brokers)
    for lst in copies:
        if lst.node_id not in node_ids:
            raise ValueError(f"listener {lst.name} belongs to node {lst.node_id}, but this broker runs node(s) "
                             f"{list(node_ids)}")
    return Settings(
        config=settings, listeners=tuple(copies), node_id=node_id, brokers=brokers,
        racks=tuple(racks) if racks is not None else None, cluster_id=options.get("cluster_id"), defaults=defaults,
        users=dict(users or {}), sasl_mechanisms=tuple(sasl_mechanisms) if sasl_mechanisms is not None else None,
        schema_registry_port=registry_port(options.get("schema_registry")),
        tls=options.get("tls"), oauth=options.get("oauth"), acls=options.get("acls"),
        super_users=tuple(super_users) if super_users is not None else None,
        data_dir=os.fspath(data_dir) if data_dir is not None else None, topics=tuple(topics or ()),
        ssl_ca_out=options.get("ssl_ca_out"), persona=persona, seed=seed_option(options.get("seed")))


def seed_option(seed: int | None) -> int | None:
    """MockBroker's `seed`, checked: a whole number (or None: a fresh one is drawn and recorded)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be a whole number, got {seed!r}")
    return seed
