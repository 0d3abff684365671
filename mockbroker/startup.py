"""What a broker does with its settings (mockbroker/settings.py) as it starts: each node's copy of the listeners
given, the topics asked for at start (the command's --topic, the images' topic variables), and the CA certificate
file clients trust. TopicSpec (a topic to create) and the test defaults live in mockbroker/settings.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mockbroker.errors import KafkaError
from mockbroker.settings import TopicSpec
from mockbroker.state.cluster.cluster import Listener

if TYPE_CHECKING:
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.cluster.cluster import Cluster

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
