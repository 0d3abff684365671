"""GetTelemetrySubscriptions (71) and PushTelemetry (72) on the wire: served only with telemetry on, the
answer's fields, a push kept and decoded, and the errors of both APIs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.compression import compress
from tests.rawclient import RawClient

GET, PUSH, API_VERSIONS = 71, 72, 18
ZERO = uuid.UUID(int=0)


@pytest.fixture
def broker() -> Iterator[MockBroker]:
    with MockBroker(config={"mockbroker.client.telemetry.enable": True, "telemetry.max.bytes": 2000}
                    ).run_in_thread() as b:
        yield b


def otlp_payload() -> bytes:
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    data = metrics_pb2.MetricsData()
    rm = data.resource_metrics.add()
    rm.resource.attributes.append(common_pb2.KeyValue(key="client_rack", value=common_pb2.AnyValue(string_value="r1")))
    m = rm.scope_metrics.add().metrics.add()
    m.name = "org.apache.kafka.producer.record.queue.time.max"
    point = m.gauge.data_points.add()
    point.as_double = 1.5
    point.attributes.append(common_pb2.KeyValue(key="topic", value=common_pb2.AnyValue(string_value="t")))
    return data.SerializeToString()


def test_the_subscription_and_a_push_read_back_decoded(broker: MockBroker) -> None:
    broker.subscribe_client_metrics("all", metrics="*", interval_ms=1000, match="client_software_name=raw-.*")
    with RawClient(broker.host, broker.port, client_id="raw-app") as c:
        c.request(API_VERSIONS, 3, {"client_software_name": "raw-client", "client_software_version": "1.0"})
        got = c.request(GET, 0, {"client_instance_id": ZERO})
        assert got.error_code == ErrorCode.NONE and got.client_instance_id != ZERO
        assert got.requested_metrics == ["*"] and got.push_interval_ms == 1000
        assert got.accepted_compression_types == [4, 3, 1, 2] and got.telemetry_max_bytes == 2000
        assert got.delta_temporality is True
        pushed = c.request(PUSH, 0, {"client_instance_id": got.client_instance_id, "subscription_id": got.subscription_id,
                                     "terminating": False, "compression_type": 4,
                                     "metrics": compress(4, otlp_payload())})
        assert pushed.error_code == ErrorCode.NONE
        again = c.request(GET, 0, {"client_instance_id": got.client_instance_id})
        assert again.error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    [push] = broker.client_metrics()
    assert push.client_id == "raw-app" and push.client_software_name == "raw-client"
    assert push.client_instance_id == got.client_instance_id and push.resource == {"client_rack": "r1"}
    [metric] = push.metrics
    assert metric.name == "org.apache.kafka.producer.record.queue.time.max" and metric.kind == "gauge"
    assert metric.points[0].value == 1.5 and metric.points[0].attributes == {"topic": "t"}


def test_push_errors_on_the_wire(broker: MockBroker) -> None:
    with RawClient(broker.host, broker.port) as c:
        got = c.request(GET, 0, {"client_instance_id": ZERO})
        base = {"client_instance_id": got.client_instance_id, "subscription_id": got.subscription_id,
                "terminating": False, "compression_type": 0, "metrics": b""}
        assert c.request(PUSH, 0, {**base, "client_instance_id": ZERO}).error_code == ErrorCode.INVALID_REQUEST
        assert c.request(PUSH, 0, {**base, "metrics": b"x" * 2001}).error_code == ErrorCode.TELEMETRY_TOO_LARGE
        assert c.request(PUSH, 0, {**base, "subscription_id": got.subscription_id + 1}).error_code == \
            ErrorCode.THROTTLING_QUOTA_EXCEEDED  # the get's one free push went to the too-large one
    broker_pushes = broker.client_metrics()
    assert broker_pushes == []


def test_a_payload_that_is_not_otlp_is_reported_not_lost(broker: MockBroker) -> None:
    with RawClient(broker.host, broker.port, client_id="bad") as c:
        got = c.request(GET, 0, {"client_instance_id": ZERO})
        assert c.request(PUSH, 0, {"client_instance_id": got.client_instance_id, "subscription_id": got.subscription_id,
                                   "terminating": True, "compression_type": 3,
                                   "metrics": b"not lz4"}).error_code == ErrorCode.NONE
    [push] = broker.client_metrics("bad")
    assert push.terminating and push.metrics == [] and push.error and "CompressionError" in push.error


def test_without_telemetry_neither_api_is_offered_or_served(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        keys = {k.api_key for k in c.request(API_VERSIONS, 3, {"client_software_name": "c",
                                                               "client_software_version": "1"}).api_keys}
        assert GET not in keys and PUSH not in keys
        c.send(GET, 0, {"client_instance_id": ZERO})
        assert c.is_closed_by_peer()  # as any API this broker does not serve
    assert mockbroker.topics() is not None  # still serving
