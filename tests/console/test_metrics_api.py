"""GET /metrics (issue #36 item 5): Prometheus' text format with Kafka's metric names, scraped after a real
client produced and consumed, parsed with prometheus_client's own parser; each broker's endpoint serves only
its own counts."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from prometheus_client.parser import text_string_to_metric_families

from tests.console.conftest import Console, served_console

TIMEOUT = 30.0


@pytest.fixture
def console() -> Iterator[Console]:
    with served_console() as c:
        yield c


def scrape(console: Console) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """{sample name: {sorted labels: value}} of one scrape."""
    with urllib.request.urlopen(f"{console.url}/metrics", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        text = answer.read().decode()
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def produce_and_consume(bootstrap: str, topic: str, n: int, group: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(n):
        producer.produce(topic, value=b"x" * 100, key=str(i).encode(), partition=0)
    assert producer.flush(TIMEOUT) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        got = 0
        for _ in range(300):
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got += 1
                if got == n // 2:
                    consumer.commit(msg, asynchronous=False)  # half read: the other half is lag
                    break
        assert got == n // 2
    finally:
        consumer.close()


def test_metrics_after_a_real_client_produced_and_consumed(console: Console) -> None:
    console.broker.create_topic("orders", partitions=2)
    produce_and_consume(console.broker.bootstrap_servers, "orders", 20, "billing")
    m = scrape(console)
    topic = (("topic", "orders"),)
    assert m["kafka_server_brokertopicmetrics_messagesinpersec_total"][topic] == 20
    stored = sum(b.size for b in console.broker.batches("orders", 0))
    assert m["kafka_server_brokertopicmetrics_bytesinpersec_total"][topic] == stored
    assert m["kafka_server_brokertopicmetrics_bytesoutpersec_total"][topic] >= stored // 2
    produce = (("request", "Produce"),)
    sent = len(console.broker.received(0))
    assert m["kafka_network_requestmetrics_requests_total"][produce] == sent
    assert m["kafka_network_requestmetrics_requests_total"][(("request", "Fetch"),)] >= 1
    assert m["kafka_network_requestmetrics_totaltimems_count"][produce] == sent
    assert m["kafka_network_requestmetrics_totaltimems_bucket"][(("le", "+Inf"), ("request", "Produce"))] == sent
    assert m["kafka_network_requestmetrics_totaltimems_sum"][produce] >= 0
    assert m["kafka_server_replicamanager_underreplicatedpartitions"][()] == 0
    assert m["kafka_controller_kafkacontroller_offlinepartitionscount"][()] == 0
    lag = m["kafka_consumergroup_lag"]
    assert lag[(("consumergroup", "billing"), ("partition", "0"), ("topic", "orders"))] == 10
    # the counters go on: a second scrape after more traffic counts it
    produce_and_consume(console.broker.bootstrap_servers, "orders", 4, "billing-2")
    again = scrape(console)
    assert again["kafka_server_brokertopicmetrics_messagesinpersec_total"][topic] == 24
    assert again["kafka_network_requestmetrics_requests_total"][produce] > sent


def test_under_replicated_partitions_and_two_brokers_in_one_process() -> None:
    with served_console(brokers=3) as cluster, served_console() as single:
        cluster.broker.create_topic("r", assignments=[[1, 2, 3], [2, 3, 1]])
        cluster.broker.set_isr("r", 0, [1, 2])
        single.broker.create_topic("s")
        producer = Producer({"bootstrap.servers": single.broker.bootstrap_servers})
        producer.produce("s", b"v")
        assert producer.flush(TIMEOUT) == 0
        m = scrape(cluster)
        assert m["kafka_server_replicamanager_underreplicatedpartitions"][()] == 1
        assert m.get("kafka_server_brokertopicmetrics_messagesinpersec_total", {}) == {}  # the other's records
        assert scrape(single)["kafka_server_brokertopicmetrics_messagesinpersec_total"][(("topic", "s"),)] == 1
