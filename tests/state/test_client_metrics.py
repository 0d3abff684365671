"""Client telemetry's model (state/client_metrics.py) against Kafka's ClientMetricsManager rules: matching,
the subscription id and its changes, throttling of both requests, and the push checks in Kafka's order."""

from __future__ import annotations

import itertools
import uuid

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.client_metrics import (
    INTERVAL_MS_DEFAULT,
    MAX_PUSHES,
    ClientMetrics,
    subscription_id,
)

ATTRS = {"client_id": "app-1", "client_software_name": "confluent-kafka-python",
         "client_software_version": "2.16.1", "client_source_address": "127.0.0.1", "client_source_port": "5000"}
IDS = (uuid.UUID(int=n) for n in itertools.count(1000))
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def get(cm: ClientMetrics, now: int, instance: uuid.UUID | None = None, attrs: dict | None = None):  # type: ignore[no-untyped-def]
    return cm.get_subscriptions(instance, attrs or ATTRS, now, lambda: next(IDS))


def test_no_subscription_asks_for_nothing_every_five_minutes() -> None:
    code, inst = get(ClientMetrics(), 0)
    assert code == ErrorCode.NONE
    assert inst.metrics == [] and inst.push_interval_ms == INTERVAL_MS_DEFAULT
    assert inst.instance_id.int != 0


def test_matching_subscriptions_union_their_metrics_and_take_the_shortest_interval() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"})
    cm.subscribe("b", {"metrics": "org.apache.kafka.consumer.", "interval.ms": "500",
                       "match": "client_software_name=confluent-.*"})
    cm.subscribe("c", {"metrics": "org.apache.kafka.other.", "interval.ms": "100", "match": "client_id=other"})
    _, inst = get(cm, 0)
    assert inst.metrics == ["org.apache.kafka.consumer.", "org.apache.kafka.producer."]
    assert inst.push_interval_ms == 500


def test_a_match_must_cover_the_whole_attribute() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000", "match": "client_id=app"})
    assert get(cm, 0)[1].metrics == []  # "app" does not match "app-1" whole
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000", "match": "client_id=app-.*"})
    assert get(cm, 10**9)[1].metrics == ["*"]


def test_all_metrics_is_a_lone_star() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000"})
    cm.subscribe("b", {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"})
    assert get(cm, 0)[1].metrics == ["*"]


def test_subscription_id_follows_metrics_interval_and_instance() -> None:
    a, b = uuid.UUID(int=5), uuid.UUID(int=6)
    assert subscription_id(["x"], 100, a) == subscription_id(["x"], 100, a)
    assert len({subscription_id(["x"], 100, a), subscription_id(["y"], 100, a), subscription_id(["x"], 200, a),
                subscription_id(["x"], 100, b)}) == 4
    assert -(2**31) <= subscription_id(["x"], 100, a) < 2**31


def test_asking_again_within_the_interval_is_throttled() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000"})
    code, inst = get(cm, 0)
    assert code == ErrorCode.NONE
    assert get(cm, 999, inst.instance_id)[0] == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert get(cm, 1000, inst.instance_id)[0] == ErrorCode.NONE


def test_a_push_right_after_get_is_accepted_then_one_per_interval() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000"})
    _, inst = get(cm, 0)
    iid, sub = inst.instance_id, inst.subscription_id
    assert cm.push(iid, ATTRS, sub, False, 0, b"m1", 1 << 20, 10) == ErrorCode.NONE
    assert cm.push(iid, ATTRS, sub, False, 0, b"m2", 1 << 20, 500) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert cm.push(iid, ATTRS, sub, False, 0, b"m3", 1 << 20, 1010) == ErrorCode.NONE
    assert [p.payload for p in cm.pushes] == [b"m1", b"m3"]


def test_a_changed_subscription_makes_the_old_id_unknown_and_lets_the_client_ask_at_once() -> None:
    cm = ClientMetrics()
    cm.subscribe("a", {"metrics": "*", "interval.ms": "1000"})
    _, inst = get(cm, 0)
    cm.subscribe("a", {"metrics": "org.", "interval.ms": "1000"})
    assert cm.push(inst.instance_id, ATTRS, inst.subscription_id, False, 0, b"m", 1 << 20, 5) == \
        ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    code, fresh = get(cm, 6, inst.instance_id)  # not throttled after UNKNOWN_SUBSCRIPTION_ID
    assert code == ErrorCode.NONE and fresh.metrics == ["org."] and fresh.subscription_id != inst.subscription_id


@pytest.mark.parametrize(("instance", "compression", "size", "code"), [
    (uuid.UUID(int=0), 0, 1, ErrorCode.INVALID_REQUEST),
    (None, 9, 1, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    (None, 0, 101, ErrorCode.TELEMETRY_TOO_LARGE),
])
def test_push_errors(instance: uuid.UUID | None, compression: int, size: int, code: ErrorCode) -> None:
    cm = ClientMetrics()
    _, inst = get(cm, 0)
    iid = instance if instance is not None else inst.instance_id
    assert cm.push(iid, ATTRS, inst.subscription_id, False, compression, b"x" * size, 100, 1) == code
    assert not cm.pushes


def test_nothing_is_accepted_after_a_terminating_push() -> None:
    cm = ClientMetrics()
    _, inst = get(cm, 0)
    assert cm.push(inst.instance_id, ATTRS, inst.subscription_id, True, 0, b"last", 1 << 20, 1) == ErrorCode.NONE
    assert cm.push(inst.instance_id, ATTRS, inst.subscription_id, True, 0, b"more", 1 << 20, 100) == \
        ErrorCode.INVALID_REQUEST
    assert [p.terminating for p in cm.pushes] == [True]


@pytest.mark.parametrize(("ops", "code", "message"), [
    ([("interval.ms", SET, "99")], ErrorCode.INVALID_REQUEST, "interval must be between 100 and 3600000"),
    ([("interval.ms", SET, "x")], ErrorCode.INVALID_CONFIG, "Invalid value x"),
    ([("bogus", SET, "1")], ErrorCode.INVALID_REQUEST, "Unknown client metrics configuration: bogus"),
    ([("match", SET, "client_colour=red")], ErrorCode.INVALID_CONFIG, "Illegal client matching pattern"),
    ([("match", SET, "client_id=(")], ErrorCode.INVALID_CONFIG, "Illegal client matching pattern"),
    ([("interval.ms", APPEND, "5")], ErrorCode.INVALID_CONFIG, "because its type is not LIST"),
])
def test_invalid_subscriptions_are_refused_as_kafka_refuses_them(ops: list, code: ErrorCode, message: str) -> None:
    cm = ClientMetrics()
    with pytest.raises(KafkaError) as caught:
        cm.alter("s", ops)
    assert caught.value.code == code and message in (caught.value.message or "")
    assert cm.subscriptions == {} and cm.version == 0


def test_append_subtract_and_deleting_everything_removes_the_subscription() -> None:
    cm = ClientMetrics()
    cm.alter("s", [("metrics", SET, "a.,b.")])
    cm.alter("s", [("metrics", APPEND, "c.,a.")])
    cm.alter("s", [("metrics", SUBTRACT, "b.")])
    assert sorted(cm.subscriptions["s"].metrics) == ["a.", "c."]
    assert ("metrics", "a.,c.", True) in cm.configs_of("s") and ("interval.ms", "300000", False) in cm.configs_of("s")
    cm.alter("s", [("metrics", DELETE, None)], validate_only=True)
    assert "s" in cm.subscriptions
    cm.alter("s", [("metrics", DELETE, None)])
    assert "s" not in cm.subscriptions and cm.version == 4


def test_the_pushes_kept_are_bounded() -> None:
    cm = ClientMetrics()
    for n in range(MAX_PUSHES + 5):
        _, inst = get(cm, 0)  # a new instance each time: no throttling between them
        cm.push(inst.instance_id, ATTRS, inst.subscription_id, False, 0, b"%d" % n, 1 << 20, 0)
    assert len(cm.pushes) == MAX_PUSHES and cm.pushes[0].payload == b"5"
