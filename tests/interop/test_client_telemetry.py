"""Client telemetry (KIP-714) with real clients: librdkafka and the Java client get their subscription,
push their metrics, and `broker.client_metrics()` reads them back decoded; the Java admin sets and describes
a CLIENT_METRICS subscription; without telemetry on (Kafka's default: no reporter) neither API is offered
and the clients send neither."""

from __future__ import annotations

import functools
import time
from typing import Any

import pytest
from confluent_kafka import Producer

from mockbroker import MockBroker

pytestmark = pytest.mark.interop

TIMEOUT = 30.0
GET_SUBSCRIPTIONS, PUSH = 71, 72
ON = {"mockbroker.client.telemetry.enable": True}


def wait_for_pushes(broker: MockBroker, client_id: str, count: int, poll: Any = None,
                    until: Any = None) -> list[Any]:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        pushes = broker.client_metrics(client_id)
        if len(pushes) >= count and (until is None or until(pushes)):
            return pushes
        if poll is not None:
            poll()
        time.sleep(0.05)
    raise AssertionError(f"{len(broker.client_metrics(client_id))} pushes from {client_id} after {TIMEOUT} s; "
                         f"telemetry requests: {[r.api_key for r in broker.received() if r.api_key in (71, 72)]}")


def test_librdkafka_pushes_the_metrics_its_subscription_asks_for(mockbroker_factory: Any) -> None:
    broker: MockBroker = mockbroker_factory(config=ON)
    broker.subscribe_client_metrics("producers", metrics="org.apache.kafka.producer.", interval_ms=200)
    broker.create_topic("t")
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "client.id": "rdk-app", "linger.ms": 0})
    for i in range(5):
        p.produce("t", b"v%d" % i)
    assert p.flush(TIMEOUT) == 0
    pushes = wait_for_pushes(broker, "rdk-app", 2, functools.partial(p.poll, 0.1))
    first = pushes[0]
    assert first.error is None
    assert first.client_software_name == "confluent-kafka-python" and first.client_software_version
    assert first.metrics and all(n.startswith("org.apache.kafka.producer.") for n in first.names())
    assert any(m.points for m in first.metrics)
    assert len({p.client_instance_id for p in pushes}) == 1
    assert broker.received(GET_SUBSCRIPTIONS) and broker.received(PUSH)
    del p


def test_librdkafka_sends_no_telemetry_when_the_broker_serves_none(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("t")
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers})
    p.produce("t", b"v")
    assert p.flush(TIMEOUT) == 0
    assert mockbroker.received(0)  # the produce came through...
    assert not mockbroker.received(GET_SUBSCRIPTIONS) and not mockbroker.received(PUSH)  # ...no telemetry asked
    assert mockbroker.client_metrics() == []
    del p


def test_librdkafka_stops_on_a_persona_before_3_7(mockbroker_factory: Any) -> None:
    broker: MockBroker = mockbroker_factory(config=ON, kafka_version="3.6")
    broker.subscribe_client_metrics("all", metrics="*", interval_ms=100)
    broker.create_topic("t")
    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    p.produce("t", b"v")
    assert p.flush(TIMEOUT) == 0
    assert not broker.received(GET_SUBSCRIPTIONS)  # 3.6 had no KIP-714
    del p


@pytest.mark.java
def test_java_admin_sets_the_subscription_and_the_java_producer_pushes(mockbroker_factory: Any) -> None:
    from tests.interop.clients import of_type, run_java

    broker: MockBroker = mockbroker_factory(config=ON)
    broker.create_topic("t")
    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "ops": [
        {"op": "incrementalAlterConfigs", "client_metrics": "java-sub",
         "set": {"metrics": "org.apache.kafka.producer.", "interval.ms": "100"}},
        {"op": "describeConfigs", "client_metrics": "java-sub"},
    ]})
    results = of_type(lines, "result")
    assert results[0]["resources"][0]["ok"] is True, lines
    configs = results[1]["resources"][0]["configs"]
    assert configs["metrics"]["value"] == "org.apache.kafka.producer." and configs["metrics"]["source"] == "DYNAMIC_CLIENT_METRICS_CONFIG"
    assert configs["interval.ms"]["value"] == "100" and configs["match"]["source"] == "DEFAULT_CONFIG"
    # A producer that lives long enough for a push or two.
    sent = run_java("produce", {"bootstrap": broker.bootstrap_servers, "topic": "t", "sync": True,
                                "config": {"client.id": "java-app"},
                                "records": [{"value": f"v{i}"} for i in range(20)]})
    assert of_type(sent, "done")[0]["sent"] == 20
    pushes = wait_for_pushes(broker, "java-app", 1)
    assert all(p.error is None and p.client_software_name == "apache-kafka-java" for p in pushes)
    names = {n for p in pushes for n in p.names()}
    assert names and all(n.startswith("org.apache.kafka.producer.") for n in names)
    # The close may send a last push marked terminating (not always: only from some reporter states); none after it.
    flags = [p.terminating for p in broker.client_metrics("java-app")]
    assert flags.count(True) <= 1 and (True not in flags or flags[-1])
