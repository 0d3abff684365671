"""Client quotas seen by real clients: librdkafka (confluent-kafka) producing over its producer_byte_rate
gets throttle events (its throttle_cb), the Java producer's produce-throttle-time-max metric goes above 0,
and the Java AdminClient sets and describes quotas (AlterClientQuotas / DescribeClientQuotas)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Producer

from mockbroker.server import MockBroker
from tests.interop.clients import of_type, run_java

pytestmark = pytest.mark.interop

# 30 records of 2000 bytes against 2000 B/s (the Java producer: 10 against 1500 B/s): the rate over the 10 s
# window goes over the quota before the last records, so those answers carry throttle_time_ms, whatever the batching.
VALUES = [bytes([65 + i % 26]) * 2000 for i in range(30)]


def test_librdkafka_producer_over_its_byte_rate_sees_the_throttle(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("quota-rd")
    mockbroker.set_quota(client_id="rd-producer", producer_byte_rate=2000)
    events: list[Any] = []
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "client.id": "rd-producer",
                  "linger.ms": 5, "batch.size": 4096, "throttle_cb": events.append})
    for value in VALUES:
        p.produce("quota-rd", value)
    deadline = time.monotonic() + 60
    while not events and time.monotonic() < deadline:
        p.poll(0.2)
    p.purge()
    p.flush(5)
    assert events, "no throttle event within 60 s"
    assert events[0].throttle_time > 0 and events[0].broker_id == mockbroker.node_id


def test_librdkafka_producer_without_a_quota_is_not_throttled(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("quota-free")
    mockbroker.set_quota(client_id="someone-else", producer_byte_rate=1)
    events: list[Any] = []
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "client.id": "rd-free",
                  "throttle_cb": events.append})
    for value in VALUES:
        p.produce("quota-free", value)
    assert p.flush(30) == 0
    p.poll(0)
    assert events == []


@pytest.mark.java
def test_java_producer_metric_and_admin_client_see_the_quotas(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("quota-java")
    admin = run_java("admin", {"bootstrap": mockbroker.bootstrap_servers, "timeout_ms": 15000, "ops": [
        {"op": "alterClientQuotas", "entries": [
            {"entity": {"client-id": "java-producer"}, "ops": {"producer_byte_rate": 1500}},
            {"entity": {"user": None}, "ops": {"request_percentage": 200.5}},
            {"entity": {"ip": "127.0.0.1", "user": "x"}, "ops": {"connection_creation_rate": 5}}]},
        {"op": "describeClientQuotas"}]}, timeout=90)
    assert of_type(admin, "error") == [], admin
    [altered, described] = [line for line in admin if line.get("type") == "result"]
    results = {tuple(sorted(r["entity"].items())): r["result"] for r in altered["results"]}
    assert results[(("client-id", "java-producer"),)] == "ok"
    assert results[(("user", None),)] == "ok"
    refused = results[(("ip", "127.0.0.1"), ("user", "x"))]
    assert refused["error"] == "InvalidRequestException", refused
    quotas = {tuple(sorted(q["entity"].items())): q["values"] for q in described["quotas"]}
    assert quotas == {(("client-id", "java-producer"),): {"producer_byte_rate": 1500.0},
                      (("user", None),): {"request_percentage": 200.5}}
    assert mockbroker.quotas()[0] == {"entity": {"client-id": "java-producer"}, "values": {"producer_byte_rate": 1500.0}}

    lines = run_java("produce", {"bootstrap": mockbroker.bootstrap_servers, "topic": "quota-java",
                                 "timeout_ms": 60000, "sync": True,
                                 "config": {"client.id": "java-producer", "linger.ms": "5", "batch.size": "4096"},
                                 "records": [{"value": v.decode()} for v in VALUES[:10]],
                                 "metrics": ["produce-throttle-time-max", "produce-throttle-time-avg"]},
                     timeout=120)
    [metrics] = of_type(lines, "metrics")
    assert metrics["values"]["produce-throttle-time-max"] > 0, lines
    assert of_type(lines, "done")[0]["sent"] == 10
