"""The registry of a cluster (MockBroker(brokers=3, schema_registry=True)): one registry for the cluster,
its `_schemas` topic replicated as Confluent's KafkaStore creates it (kafkastore.topic.replication.factor
3, fewer when fewer brokers), so stopping the node that leads it leaves the registry writing and the topic
readable by Kafka clients."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("fastavro")
pytest.importorskip("httpx")
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402

from mockbroker import MockBroker  # noqa: E402

V1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
V2 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"},
                                                          {"name": "b", "type": "int", "default": 0}]})


@pytest.mark.parametrize(("brokers", "replicas"), [(1, 1), (2, 2), (3, 3), (4, 3)])
def test_schemas_is_replicated_on_up_to_three_nodes(brokers: int, replicas: int) -> None:
    with MockBroker(brokers=brokers, schema_registry=True).run_in_thread() as broker:
        assert len(broker.partition_state("_schemas", 0).replicas) == replicas


def read_schemas(bootstrap: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("_schemas", 0, 0)])
        keys: list[bytes] = []
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                keys.append(msg.key() or b"")
            if len(keys) == 3:
                break
        return keys
    finally:
        consumer.close()


def test_the_registry_outlives_the_node_leading_its_topic() -> None:
    with MockBroker(brokers=3, schema_registry=True).run_in_thread() as broker:
        client = SchemaRegistryClient({"url": broker.schema_registry_url})
        assert client.register_schema("s", Schema(V1, "AVRO")) == 1
        leader = broker.partition_state("_schemas", 0).leader
        broker.stop_node(leader)
        assert client.register_schema("s", Schema(V2, "AVRO")) == 2
        assert broker.partition_state("_schemas", 0).leader not in (leader, -1)
        bootstrap = ",".join(f"127.0.0.1:{n.listeners[0].rsplit(':', 1)[1]}" for n in broker.nodes() if n.alive)
        keys = [json.loads(k) for k in read_schemas(bootstrap)]
        assert [k["keytype"] for k in keys] == ["NOOP", "SCHEMA", "SCHEMA"]
        assert [k.get("version") for k in keys] == [None, 1, 2]


def test_the_registry_is_no_nodes_own() -> None:
    with MockBroker(brokers=3, schema_registry=True).run_in_thread() as broker:
        client = SchemaRegistryClient({"url": broker.schema_registry_url})
        for node in (1, 2):
            broker.stop_node(node)
        assert client.register_schema("s", Schema(V1, "AVRO")) == 1  # `_schemas` led by node 3 now
        assert broker.partition_state("_schemas", 0).leader == 3 and client.get_subjects() == ["s"]
