"""What clients pushed with KIP-714's PushTelemetry, decoded: `broker.client_metrics()`.

Each accepted push (state/client_metrics.py keeps it as sent) is decompressed with the codec the client
named and parsed as OpenTelemetry's MetricsData (OTLP protobuf, opentelemetry-proto's generated classes,
imported on the first call: the `telemetry` extra). A push whose payload cannot be read is returned with
`error` set and no metrics, so a test sees it instead of losing it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.extras import require
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.records.compression import decompress

if TYPE_CHECKING:
    from mockbroker.state.client_metrics import Push

MAX_DECOMPRESSED = 64 * 1024 * 1024
OTLP_METRICS = "opentelemetry.proto.metrics.v1.metrics_pb2"


@dataclass
class MetricPoint:
    value: float | int | None  # a gauge's or sum's value; a histogram's sum (count and buckets in `extra`)
    attributes: dict[str, Any]
    time_unix_nano: int
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ClientMetric:
    name: str
    kind: str  # "gauge", "sum", "histogram", "exponential_histogram", "summary"
    points: list[MetricPoint]
    unit: str = ""
    monotonic: bool | None = None  # sums only
    delta: bool | None = None  # sums and histograms: delta (True) or cumulative temporality


@dataclass
class ClientMetricsPush:
    """One PushTelemetry a client sent: who (instance id, client id, software), when (broker clock) and what."""

    client_instance_id: uuid.UUID
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    time_ms: int
    terminating: bool
    resource: dict[str, Any]
    metrics: list[ClientMetric]
    error: str | None = None

    def names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def metric(self, name: str) -> ClientMetric | None:
        return next((m for m in self.metrics if m.name == name), None)


def _any_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(v, kind)
    if kind == "array_value":
        return [_any_value(x) for x in value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.values}
    return value


def _attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in kvs}


def _number(p: Any) -> float | int | None:
    kind = p.WhichOneof("value")
    return getattr(p, kind) if kind else None


def _metric(m: Any) -> ClientMetric:
    kind = m.WhichOneof("data") or "gauge"
    data = getattr(m, kind)
    points: list[MetricPoint] = []
    for p in data.data_points:
        attrs = _attributes(p.attributes)
        if kind in ("gauge", "sum"):
            points.append(MetricPoint(_number(p), attrs, p.time_unix_nano))
        elif kind == "histogram":
            points.append(MetricPoint(p.sum, attrs, p.time_unix_nano,
                                      {"count": p.count, "bucket_counts": list(p.bucket_counts),
                                       "explicit_bounds": list(p.explicit_bounds)}))
        else:
            points.append(MetricPoint(getattr(p, "sum", None), attrs, p.time_unix_nano, {"count": p.count}))
    monotonic = data.is_monotonic if kind == "sum" else None
    delta = None
    if kind in ("sum", "histogram", "exponential_histogram"):
        delta = data.aggregation_temporality == 1  # AGGREGATION_TEMPORALITY_DELTA
    return ClientMetric(m.name, kind, points, m.unit, monotonic, delta)


def decode_push(push: Push) -> ClientMetricsPush:
    metrics_pb2 = require(OTLP_METRICS, "decoding client telemetry (broker.client_metrics())")
    a = push.attributes
    out = ClientMetricsPush(push.instance_id, a.get("client_id"), a.get("client_software_name"),
                            a.get("client_software_version"), push.time_ms, push.terminating, {}, [])
    try:
        raw = decompress(push.compression, push.payload, max_size=MAX_DECOMPRESSED)
        data = metrics_pb2.MetricsData.FromString(raw)
    except (DecodeError, Exception) as exc:  # protobuf raises its own DecodeError type
        out.error = f"{type(exc).__name__}: {exc}"
        return out
    for rm in data.resource_metrics:
        out.resource.update(_attributes(rm.resource.attributes))
        for sm in rm.scope_metrics:
            out.metrics.extend(_metric(m) for m in sm.metrics)
    return out


def client_metrics(pushes: list[Push], client_id: str | None = None) -> list[ClientMetricsPush]:
    """Every push kept (optionally of one client id), oldest first, decoded."""
    return [decode_push(p) for p in pushes if client_id is None or p.attributes.get("client_id") == client_id]
