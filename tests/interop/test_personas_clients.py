"""Real clients against the oldest and newest Kafka version personas (mockbroker/personas.py): they adapt to
the release's ApiVersions (the requests they send show it) and see its behaviour (no KIP-848 before 4.0, no
share groups before 4.2)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer

from mockbroker import MockBroker
from mockbroker.personas import make_persona
from tests.handlers.conftest import FETCH, METADATA, PRODUCE

pytestmark = pytest.mark.interop

TIMEOUT = 20.0
FIND_COORDINATOR, CONSUMER_GROUP_HEARTBEAT = 10, 68


def versions_sent(broker: MockBroker, api_key: int) -> set[int]:
    return {r.api_version for r in broker.received(api_key)}


def produce_ten(broker: MockBroker) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "linger.ms": 5})
    errors: list[object] = []
    for i in range(10):
        p.produce("t", f"v{i}".encode(), partition=i % 2, on_delivery=lambda err, _m: err and errors.append(err))
    assert p.flush(TIMEOUT) == 0
    assert errors == []
    del p


def consume(broker: MockBroker, protocol: str, count: int) -> list[bytes]:
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"g-{protocol}",
                  "group.protocol": protocol, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe(["t"])
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            assert m.error() is None, m.error()
            got.append(m.value())
        if got:
            c.commit(asynchronous=False)
        return got
    finally:
        c.close()


@pytest.mark.parametrize("kafka_version", ["2.8", "4.3"])
def test_confluent_produces_and_consumes_at_the_releases_versions(mockbroker_factory: object,
                                                                  kafka_version: str) -> None:
    broker: MockBroker = mockbroker_factory(kafka_version=kafka_version)  # type: ignore[operator]
    broker.create_topic("t", partitions=2)
    produce_ten(broker)
    assert sorted(consume(broker, "classic", 10)) == sorted(f"v{i}".encode() for i in range(10))
    assert broker.committed("g-classic") == {("t", 0): 5, ("t", 1): 5}
    persona = make_persona(kafka_version, None)
    for api_key in (PRODUCE, FETCH, METADATA):
        release_max = persona.narrow(api_key, 0, 99)
        assert release_max is not None
        sent = versions_sent(broker, api_key)
        assert sent and max(sent) <= release_max[1], (api_key, sent)
    if kafka_version == "2.8":  # librdkafka speaks newer ones, so it came down to 2.8's
        assert max(versions_sent(broker, PRODUCE)) == 9 and max(versions_sent(broker, FETCH)) <= 12
    else:
        assert max(versions_sent(broker, PRODUCE)) >= 10 and max(versions_sent(broker, FETCH)) >= 13


def test_confluent_kip_848_consumer_works_on_4_3(mockbroker_factory: object) -> None:
    broker: MockBroker = mockbroker_factory(kafka_version="4.3")  # type: ignore[operator]
    broker.create_topic("t", partitions=2)
    produce_ten(broker)
    assert len(consume(broker, "consumer", 10)) == 10
    assert broker.received(CONSUMER_GROUP_HEARTBEAT)


def test_confluent_kip_848_consumer_finds_no_heartbeat_api_on_2_8(mockbroker_factory: object) -> None:
    """As against a real 2.8 broker: librdkafka sees ConsumerGroupHeartbeat is not advertised ("not supported by
    broker"), never sends it and keeps looking for a coordinator; the classic protocol is the way on 2.8."""
    broker: MockBroker = mockbroker_factory(kafka_version="2.8")  # type: ignore[operator]
    broker.create_topic("t")
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g", "group.protocol": "consumer",
                  "auto.offset.reset": "earliest"})
    try:
        c.subscribe(["t"])
        deadline = time.monotonic() + TIMEOUT
        while len(broker.received(FIND_COORDINATOR)) < 3 and time.monotonic() < deadline:
            assert c.poll(0.2) is None
        assert len(broker.received(FIND_COORDINATOR)) >= 3  # it asked again and again
        assert broker.received(CONSUMER_GROUP_HEARTBEAT) == []
        assert broker.groups() == []
    finally:
        c.close()



# -- the Java client (kafka-clients 4.3) ---------------------------------------------------------------


ADD_PARTITIONS_TO_TXN, END_TXN, API_VERSIONS = 24, 26, 18


@pytest.mark.parametrize("kafka_version", ["2.8", "4.3"])
def test_java_transaction_uses_the_releases_transaction_version(mockbroker_factory: object,
                                                                 kafka_version: str) -> None:
    """The Java client commits a transaction on both; on 2.8 (no transaction version 2) it adds partitions with
    AddPartitionsToTxn and ends with EndTxn v3, on 4.3 (TV2, KIP-890) it sends no AddPartitionsToTxn and EndTxn
    v5; every request stays within the release's versions."""
    from tests.interop.clients import of_type, run_java

    broker: MockBroker = mockbroker_factory(kafka_version=kafka_version)  # type: ignore[operator]
    broker.create_topic("t")
    lines = run_java("txn", {"bootstrap": broker.bootstrap_servers, "transactional_id": "tx",
                             "transactions": [{"records": [{"topic": "t", "value": "a"}]}]}, timeout=90)
    assert of_type(lines, "txn_error") == [] and [line["txn"] for line in of_type(lines, "committed")] == [0]
    read = run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": "t", "until_end": True,
                                "config": {"isolation.level": "read_committed"}}, timeout=90)
    assert [r["value"] for r in of_type(read, "record")] == ["a"]
    persona = make_persona(kafka_version, None)
    for r in broker.received():
        served = persona.narrow(r.api_key, 0, 99)
        assert served is not None and r.api_version <= served[1], (r.api_key, r.api_version)
    if kafka_version == "2.8":
        assert versions_sent(broker, ADD_PARTITIONS_TO_TXN) == {3} and versions_sent(broker, END_TXN) == {3}
        assert versions_sent(broker, API_VERSIONS) == {3} and max(versions_sent(broker, PRODUCE)) == 9
    else:
        assert broker.received(ADD_PARTITIONS_TO_TXN) == [] and versions_sent(broker, END_TXN) == {5}
        assert max(versions_sent(broker, PRODUCE)) == 13


# -- 4.0 and 4.2: KIP-848 GA from 4.0, share groups from 4.2 --------------------------------------------


SHARE_GROUP_HEARTBEAT, SHARE_FETCH = 76, 78


@pytest.mark.parametrize("kafka_version", ["4.0", "4.2"])
def test_confluent_on_4_0_and_4_2_kip_848_on_both_share_groups_on_4_2(mockbroker_factory: object,
                                                                      kafka_version: str) -> None:
    """confluent-kafka's KIP-848 consumer works on both (4.0 is where it is on by default) and keeps to the
    release's versions; its ShareConsumer consumes on 4.2, while on 4.0 (share groups early access, off) it
    finds no ShareGroupHeartbeat advertised, never sends one and keeps looking for a coordinator."""
    from confluent_kafka import ShareConsumer

    broker: MockBroker = mockbroker_factory(kafka_version=kafka_version,  # type: ignore[operator]
                                            config={"share.auto.offset.reset": "earliest"})
    broker.create_topic("t", partitions=2)
    produce_ten(broker)
    assert sorted(consume(broker, "consumer", 10)) == sorted(f"v{i}".encode() for i in range(10))
    assert broker.received(CONSUMER_GROUP_HEARTBEAT)
    persona = make_persona(kafka_version, None)
    for r in broker.received():
        served = persona.narrow(r.api_key, 0, 99)
        assert served is not None and served[0] <= r.api_version <= served[1], (r.api_key, r.api_version)
    if kafka_version == "4.0":
        assert max(versions_sent(broker, PRODUCE)) <= 12  # 4.1's Produce v13 is not advertised
    sc = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "sg"})
    try:
        sc.subscribe(["t"])
        got: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        coordinator_asks = len(broker.received(FIND_COORDINATOR))
        while time.monotonic() < deadline:
            if kafka_version == "4.2" and len(got) >= 10:
                break
            if kafka_version == "4.0" and len(broker.received(FIND_COORDINATOR)) >= coordinator_asks + 3:
                break
            for m in sc.poll(0.2) or []:
                assert m.error() is None, m.error()
                got.append(m.value())
        if kafka_version == "4.2":
            assert sorted(got) == sorted(f"v{i}".encode() for i in range(10))
            assert broker.received(SHARE_GROUP_HEARTBEAT) and broker.received(SHARE_FETCH)
        else:
            assert got == [] and len(broker.received(FIND_COORDINATOR)) >= coordinator_asks + 3
            assert broker.received(SHARE_GROUP_HEARTBEAT) == [] and broker.received(SHARE_FETCH) == []
            assert "sg" not in broker.share_groups()
    finally:
        sc.close()
