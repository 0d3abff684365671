"""GET /metrics: the broker's metrics in Prometheus' text format, on the prometheus_client library.

Names are those Prometheus' JMX exporter gives Kafka's own MBeans, so dashboards made for Kafka read them:

    kafka_server_brokertopicmetrics_bytesinpersec_total{topic}       record bytes appended (BytesInPerSec)
    kafka_server_brokertopicmetrics_messagesinpersec_total{topic}    records appended (MessagesInPerSec)
    kafka_server_brokertopicmetrics_bytesoutpersec_total{topic}      record bytes sent in Fetch answers
    kafka_network_requestmetrics_requests_total{request}             requests received, by API (RequestsPerSec)
    kafka_network_requestmetrics_totaltimems{request}                a histogram of the time from a request's
                                                                     frame read to its answer, ms (TotalTimeMs)
    kafka_server_replicamanager_underreplicatedpartitions            partitions whose ISR is short of replicas
    kafka_controller_kafkacontroller_offlinepartitionscount          partitions without a leader
    kafka_consumergroup_lag{consumergroup, topic, partition}         high watermark minus committed offset
                                                                     (kafka_exporter's name; no Kafka MBean)

Kafka's "PerSec" meters are counters here (Prometheus computes rates: rate(..._total[1m])). The counts come
from the broker's counters (mockbroker/metrics.py, the appenders' bytes_in / records_in); the gauges and the
lag are read from the model when scraped. Every scrape builds the families anew through one Collector on a
CollectorRegistry of the scrape's own (never the process-wide default registry), so several brokers in
one process each serve only their own. prometheus_client is imported on the first scrape only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mockbroker.http.request import HttpError, Request
from mockbroker.metrics import LATENCY_BUCKETS_MS
from mockbroker.protocol.messages import api_name

if TYPE_CHECKING:
    from aiohttp import web

    from mockbroker.server import MockBroker

PREFIX = "kafka_"


def metric_totals(broker: MockBroker) -> dict[str, int]:
    """The cluster's totals so far: record bytes in and out, requests received (the console's charts)."""
    counters = broker.requests.metrics
    return {"bytes_in": sum(sum(node.appender.bytes_in.values()) for node in broker.nodes.values()),
            "bytes_out": sum(counters.bytes_out.values()), "requests": sum(counters.received.values())}


class BrokerCollector:
    """A prometheus_client collector of one broker's metrics, built at each scrape."""

    def __init__(self, broker: MockBroker) -> None:
        self.broker = broker

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        broker = self.broker
        counters = broker.requests.metrics
        bytes_in: dict[str, int] = {}
        records_in: dict[str, int] = {}
        for node in broker.nodes.values():
            for topic, n in node.appender.bytes_in.items():
                bytes_in[topic] = bytes_in.get(topic, 0) + n
            for topic, n in node.appender.records_in.items():
                records_in[topic] = records_in.get(topic, 0) + n
        for name, doc, values in (
            ("server_brokertopicmetrics_bytesinpersec", "Record bytes appended, by topic (Kafka's BytesInPerSec).",
             bytes_in),
            ("server_brokertopicmetrics_messagesinpersec", "Records appended, by topic (Kafka's MessagesInPerSec).",
             records_in),
            ("server_brokertopicmetrics_bytesoutpersec", "Record bytes sent in Fetch answers, by topic "
             "(Kafka's BytesOutPerSec).", counters.bytes_out),
        ):
            family = CounterMetricFamily(PREFIX + name, doc, labels=["topic"])
            for topic, n in sorted(values.items()):
                family.add_metric([topic], n)
            yield family
        requests = CounterMetricFamily(PREFIX + "network_requestmetrics_requests",
                                       "Requests received, by API (Kafka's RequestsPerSec).", labels=["request"])
        for key, n in sorted(counters.received.items()):
            requests.add_metric([api_name(key)], n)
        yield requests
        latency = HistogramMetricFamily(PREFIX + "network_requestmetrics_totaltimems",
                                        "Milliseconds from a request read to its answer sent, by API "
                                        "(Kafka's TotalTimeMs).", labels=["request"])
        bounds = [*(str(b) for b in LATENCY_BUCKETS_MS), "+Inf"]
        for key, counts in sorted(counters.latency_buckets.items()):
            cumulative, running = [], 0
            for bound, n in zip(bounds, counts, strict=True):
                running += n
                cumulative.append((bound, running))
            latency.add_metric([api_name(key)], cumulative, counters.latency_sum_ms.get(key, 0.0))
        yield latency
        partitions = [p for t in broker.cluster.topics.values() for p in t.partitions]
        yield GaugeMetricFamily(PREFIX + "server_replicamanager_underreplicatedpartitions",
                                "Partitions whose in-sync replicas are fewer than their replicas.",
                                value=sum(1 for p in partitions if len(p.isr) < len(p.replicas)))
        yield GaugeMetricFamily(PREFIX + "controller_kafkacontroller_offlinepartitionscount",
                                "Partitions without a leader.", value=sum(1 for p in partitions if p.leader_id < 0))
        yield self._lag()

    def _lag(self) -> Any:
        from prometheus_client.core import GaugeMetricFamily

        lag = GaugeMetricFamily(PREFIX + "consumergroup_lag", "High watermark minus the committed offset, per "
                                "group and partition (computed when scraped).",
                                labels=["consumergroup", "topic", "partition"])
        node = self.broker.node
        if not node.group_coordinator_started:
            return lag  # no group was ever asked for: do not make the coordinator just to look
        coordinator = node.group_coordinator
        for group in sorted(coordinator.offsets.groups()):
            for (topic, index), offset in sorted(coordinator.committed(group).items()):
                partition = self.broker.cluster.partition(topic, index)
                if partition is None or offset < 0:
                    continue
                lag.add_metric([group, topic, str(index)], max(0, partition.log.high_watermark - offset))
        return lag


def scrape(api: Any, req: Request) -> web.Response:
    """GET /metrics: a registry of this scrape's own with the broker's collector, in Prometheus' text format."""
    from aiohttp import web

    from mockbroker.extras import MissingExtraError, require

    try:
        require("prometheus_client", "GET /metrics")
    except MissingExtraError as exc:
        raise HttpError(501, "missing_extra", str(exc)) from None
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(api.broker))  # type: ignore[arg-type]
    return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST,
                                                                 "Cache-Control": "no-store"})


# The route (method, path, handler, summary), appended to json_api.ROUTES; app.py sends its answer as it is.
ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("GET", "/metrics", scrape, "the broker's metrics in Prometheus' text format (Kafka's metric names)"),
]
