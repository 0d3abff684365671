"""Starting and stopping a broker's Schema Registry with the broker, on its loop: MockBroker.start calls
`start_registry` (nothing unless its settings ask for a registry: `MockBroker(schema_registry=True)`, a
port, `--schema-registry-port`), MockBroker.stop calls `stop_registry`. aiohttp and fastavro are imported
only here, when a registry is asked for, so a broker without one never loads them.

At start the `_schemas` topic (compacted, one partition, on up to 3 nodes) is created when missing and
the registry is rebuilt from what it holds (registry/rebuild.py: on a data dir, what an earlier run
registered), then a NOOP record is appended (as Confluent's registry writes one at start); after each
request the changes it made are appended to it as Confluent's records (registry/store.py)."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from mockbroker.registry import store

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.registry.http import RegistryServer
    from mockbroker.registry.model import SchemaRegistry
    from mockbroker.security.credentials import Credentials
    from mockbroker.security.tls import BrokerTls
    from mockbroker.state.cluster.appender import Appender
    from mockbroker.state.cluster.cluster import Cluster

PRODUCE_VERSION = 11  # what the records are appended as (magic 2 batches)
# kafkastore.topic.replication.factor's default; as Confluent's KafkaStore, fewer when fewer brokers are live,
# so in a cluster `_schemas` stays online when the node leading it is stopped
REPLICATION_FACTOR = 3


async def start_registry(cluster: Cluster, appender: Appender, clock: Clock, port: int | None,
                         host: str = "127.0.0.1", tls: BrokerTls | None = None,
                         credentials: Credentials | None = None) -> RegistryServer | None:
    """The registry's server started on `port` (0: a free one), or None when no registry was asked for; its
    records go to the cluster's `_schemas` topic through the first node's appender. HTTPS with the broker's
    certificate when it has TLS material (a TLS listener), as the control endpoint does; HTTP Basic over the
    broker's SASL users (`credentials`) when it has some (registry/http.py)."""
    if port is None:
        return None
    from mockbroker.inspection import records_of
    from mockbroker.registry.http import RegistryServer
    from mockbroker.registry.model import SchemaRegistry
    from mockbroker.registry.rebuild import replay

    if cluster.topic(store.TOPIC) is None:
        replication = max(1, min(REPLICATION_FACTOR, len(cluster.live_node_ids())))
        cluster.create_topic(store.TOPIC, 1, replication, dict(store.TOPIC_CONFIG))
    registry = SchemaRegistry()
    replay(registry, ((r.key, r.value) for r in records_of(cluster, store.TOPIC, 0)))
    _append(cluster, appender, clock, [(store.noop_key(), None)])  # as Confluent's KafkaStore at start
    server = RegistryServer(registry, lambda records: _append(cluster, appender, clock, records), credentials)
    return await server.start(host, port, _ssl_context(tls))


def _ssl_context(tls: BrokerTls | None) -> ssl.SSLContext | None:
    """The broker's certificate and key, no client certificate asked (as the control endpoint's HTTPS)."""
    if tls is None:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(tls.certfile, tls.keyfile, tls.key_password)
    return context


def _append(cluster: Cluster, appender: Appender, clock: Clock, records: list[store.Record]) -> None:
    """Append the registry's changes to `_schemas`, as one batch, as a producer with acks=all would."""
    from mockbroker.protocol.records.builder import build_batch

    topic = cluster.topic(store.TOPIC)
    if topic is None:
        raise RuntimeError(f"the {store.TOPIC} topic is gone")
    now = clock.now_ms()
    batch = build_batch([(*store.encode(record), [], now) for record in records])
    appender.append_records(topic.partitions[0], memoryview(batch), PRODUCE_VERSION, now, None)


def configure(server: RegistryServer | None, default_compatibility: str | None, mode_mutability: bool,
              auth: str) -> None:
    """The command's settings for a started registry (mockbroker/envregistry.py): the level it falls back to
    where no global level was set (what the `_schemas` topic holds wins), whether its mode may change, and its
    authentication ("none": open even when the broker has SASL users)."""
    if server is None:
        return
    if default_compatibility is not None:
        server.registry.default_compatibility = default_compatibility
    server.registry.mode_mutability = mode_mutability
    server.api.auth = auth


def registry_of(server: RegistryServer | None) -> SchemaRegistry:
    """The running registry's state; RuntimeError when the broker has none."""
    if server is None:
        raise RuntimeError("no Schema Registry: MockBroker(schema_registry=True), started")
    return server.registry


async def stop_registry(server: RegistryServer | None) -> None:
    if server is not None:
        await server.stop()
