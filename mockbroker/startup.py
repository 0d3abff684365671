"""What a broker starts with: each node's copy of the listeners given, the test defaults under the settings
given, the topics asked for at start (the command's --topic, the images' topic variables), and the CA
certificate file clients trust.

TEST_DEFAULTS are Kafka defaults that only make tests wait; `MockBroker(defaults="test")` (the default, so the
pytest fixtures too) and the image (MOCKBROKER_DEFAULTS=test) start from them, the `mockbroker` command from
Kafka's own (defaults="kafka") unless told; an explicit setting wins either way.
- group.initial.rebalance.delay.ms 3000 -> 0: a new classic group's first JoinGroup is answered at once (what
  testcontainers' Kafka module and Kafka's own test harness set).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.errors import KafkaError
from mockbroker.state.cluster.cluster import Listener

if TYPE_CHECKING:
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.cluster.cluster import Cluster

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


TEST_DEFAULTS: dict[str, Any] = {"group.initial.rebalance.delay.ms": 0}
DEFAULTS_CHOICES = ("test", "kafka")


def starting_settings(defaults: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """The broker's settings: `config` over the test defaults ("test") or over Kafka's alone ("kafka")."""
    if defaults not in DEFAULTS_CHOICES:
        raise ValueError(f"defaults must be one of {', '.join(DEFAULTS_CHOICES)}, got {defaults!r}")
    return dict(TEST_DEFAULTS if defaults == "test" else {}) | dict(config or {})


def create_start_topics(cluster: Cluster, topics: Iterable[TopicSpec]) -> None:
    """Create the topics asked for at start, except those a data dir kept from an earlier run (Kafka's images
    skip existing topics too). KafkaError naming the topic and where it was asked for if one cannot be made."""
    for spec in topics:
        if cluster.topic(spec.name) is not None:
            continue
        try:
            cluster.create_topic(spec.name, spec.partitions, spec.replication_factor, dict(spec.config))
        except KafkaError as exc:
            origin = f" (from {spec.origin})" if spec.origin else ""
            raise KafkaError(exc.code, f"cannot create topic {spec.name}{origin}: {exc.message or exc}") from None


def write_ca(security: BrokerSecurity, path: str | None) -> None:
    """Make the TLS material when a listener uses TLS (bad key material fails now), and write the CA
    certificate clients should trust to `path` (ValueError saying why it cannot be written)."""
    material = security.tls
    if path is None or material is None:
        return
    try:
        with open(path, "wb") as f:
            f.write(material.ca_pem)
    except OSError as exc:
        raise ValueError(f"cannot write the CA certificate to {path!r}: {exc.strerror or exc}") from None


def listener_of_node(listener: Listener, node_id: int, offset: int) -> Listener:
    """The listener of another node: the same name and host, the port (and an advertised port) `offset`
    further on; port 0 stays 0 (a free port each)."""
    return Listener(listener.name, node_id, listener.host, listener.port + offset if listener.port else 0,
                    listener.advertised_host,
                    listener.advertised_port + offset if listener.advertised_port else listener.advertised_port,
                    listener.security_protocol)
