"""A plain consumer with a share group's id, with confluent-kafka (librdkafka 2.16): Kafka keeps one group per
id, of one type, so a classic consumer's JoinGroup is answered INCONSISTENT_GROUP_PROTOCOL and a KIP-848
consumer's heartbeat GROUP_ID_NOT_FOUND (librdkafka makes that fatal), as with Kafka; the share group and
its member are untouched and no consumer group is made under the id."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, KafkaError

from mockbroker.server import MockBroker
from tests.interop.test_share_groups import EARLIEST, TOPIC, share_consumer, wait_for

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_consumer_with_a_share_groups_id_is_refused(mockbroker_factory: Callable[..., MockBroker],
                                                       protocol: str) -> None:
    broker = mockbroker_factory(config=dict(EARLIEST))
    broker.create_topic(TOPIC, 1)
    share = share_consumer(broker, "shared")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "shared",
                         "group.protocol": protocol, "auto.offset.reset": "earliest"})
    try:
        wait_for(lambda: "shared" in broker.share_groups(), lambda: share.poll(0.2))
        [member] = broker.share_groups()["shared"]["members"]
        consumer.subscribe([TOPIC])
        errors: list[KafkaError] = []
        deadline = time.monotonic() + 60
        while not errors and time.monotonic() < deadline:
            msg = consumer.poll(0.3)
            share.poll(0.1)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error())
        assert errors, "the consumer was not refused"
        if protocol == "classic":
            assert errors[0].code() == KafkaError.INCONSISTENT_GROUP_PROTOCOL
        else:
            assert errors[0].code() == KafkaError._FATAL and "group id does not exist" in errors[0].str()
        assert broker.groups() == []
        assert list(broker.share_groups()["shared"]["members"]) == [member]
    finally:
        consumer.close()
        share.close()
