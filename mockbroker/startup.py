"""What a broker starts with, besides its listeners: the test defaults under the settings given, the topics asked
for at start (the command's --topic, the images' topic variables), and the CA certificate file clients trust.

TEST_DEFAULTS are Kafka defaults that only make tests wait; `MockBroker(defaults="test")` (the default, so the
pytest fixtures too) and the image (MOCKBROKER_DEFAULTS=test) start from them, the `mockbroker` command from
Kafka's own (defaults="kafka") unless told; an explicit setting wins either way.
- group.initial.rebalance.delay.ms 3000 -> 0: a new classic group's first JoinGroup is answered at once (what
  testcontainers' Kafka module and Kafka's own test harness set).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mockbroker.errors import KafkaError

if TYPE_CHECKING:
    from mockbroker.envparsers import TopicSpec
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.cluster import Cluster

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
