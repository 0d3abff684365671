"""The test defaults (mockbroker/settings.py TEST_DEFAULTS): MockBroker(...), the pytest fixtures and the image
(MOCKBROKER_DEFAULTS=test) start with group.initial.rebalance.delay.ms=0; the `mockbroker` command keeps
Kafka's 3000 unless told; an explicit setting wins everywhere. A classic-protocol confluent-kafka member of
a broker with the fixture's defaults gets its first record with the broker clock frozen: the broker applied
no initial rebalance delay (with Kafka's 3000 the JoinGroup stays parked until the clock is advanced)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer

from mockbroker.clock import Clock
from mockbroker.envconfig import Flags, build_settings
from mockbroker.server import MockBroker
from mockbroker.settings import TEST_DEFAULTS

DELAY = "group.initial.rebalance.delay.ms"
JOIN_GROUP, SYNC_GROUP = 11, 14
TIMEOUT = 30.0


def delay_of(broker: MockBroker) -> int:
    return int(broker.cluster.config.get(DELAY))


def test_python_api_starts_from_the_test_defaults() -> None:
    assert TEST_DEFAULTS == {DELAY: 0}
    assert delay_of(MockBroker()) == 0
    assert delay_of(MockBroker(defaults="kafka")) == 3000
    assert delay_of(MockBroker(config={DELAY: 3000})) == 3000
    assert delay_of(MockBroker(config={DELAY: "250"})) == 250


def test_python_api_rejects_unknown_defaults() -> None:
    with pytest.raises(ValueError, match="defaults must be one of test, kafka, got 'fast'"):
        MockBroker(defaults="fast")


def test_fixture_broker_has_no_initial_rebalance_delay(mockbroker: MockBroker) -> None:
    assert delay_of(mockbroker) == 0


def test_command_keeps_kafkas_default_unless_told() -> None:
    def delay(env: dict[str, str], flags: Flags | None = None) -> int:
        return delay_of(MockBroker(**build_settings(env, flags).broker_kwargs()))

    assert delay({}) == 3000
    assert delay({"MOCKBROKER_DEFAULTS": "test"}) == 0  # the image's environment
    assert delay({}, Flags(defaults="test")) == 0
    assert delay({"MOCKBROKER_DEFAULTS": "test"}, Flags(defaults="kafka")) == 3000  # the flag wins
    assert delay({"MOCKBROKER_DEFAULTS": "test", "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "3000"}) == 3000
    assert delay({"KAFKA_CFG_GROUP_INITIAL_REBALANCE_DELAY_MS": "0"}) == 0


def produce_one(broker: MockBroker, topic: str) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    p.produce(topic, b"first", partition=0)
    assert p.flush(TIMEOUT) == 0


def member(broker: MockBroker, group: str, topic: str) -> Consumer:
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                  "group.protocol": "classic", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    return c


def first_record(c: Consumer, timeout: float) -> bytes | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None:
            assert m.error() is None, m.error()
            return m.value()  # type: ignore[no-any-return]
    return None


def test_classic_member_gets_its_first_record_with_no_initial_delay(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    # The broker clock is frozen: an initial rebalance delay of any length would park the JoinGroup for good.
    broker = mockbroker_factory(clock=Clock(frozen=True))
    produce_one(broker, "t")
    start_ms = broker.clock.now_ms()
    c = member(broker, "g", "t")
    try:
        assert first_record(c, TIMEOUT) == b"first"
    finally:
        c.close()
    assert broker.clock.now_ms() == start_ms
    assert broker.received(SYNC_GROUP)  # the join phase completed


def test_classic_member_waits_for_kafkas_delay_when_set(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # The control: with Kafka's 3000 ms set explicitly, the same member gets nothing until the broker
    # clock passes the delay.
    broker = mockbroker_factory(clock=Clock(frozen=True), config={DELAY: 3000})
    produce_one(broker, "t")
    c = member(broker, "g", "t")
    try:
        deadline = time.monotonic() + TIMEOUT
        while not any(g.state == "PreparingRebalance" for g in broker.groups()) and time.monotonic() < deadline:
            c.poll(0.1)
        assert [g.state for g in broker.groups()] == ["PreparingRebalance"]
        assert c.poll(1.0) is None
        assert broker.received(SYNC_GROUP) == []  # still parked: the clock has not moved
        broker.clock.advance(3)
        assert first_record(c, TIMEOUT) == b"first"
    finally:
        c.close()
