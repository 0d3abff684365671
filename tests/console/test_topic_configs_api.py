"""GET /topics/{name}/configs: a topic's effective configs over HTTP, the same values and sources a
Kafka client's DescribeConfigs gets (confluent-kafka's AdminClient is the judge)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from mockbroker.http import ControlServer
from mockbroker.server import MockBroker
from tests.docker.test_control_http import Api


@pytest.fixture
def api() -> Iterator[Api]:
    """A broker whose log.retention.ms is set in its static config (a broker-level non-default)."""
    with MockBroker(port=0, config={"log.retention.ms": "3600000"}).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0),
                                                   broker._loop).result(10)
        try:
            yield Api(broker, control)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(10)


def test_topic_configs_show_values_and_sources_as_describe_configs_does(api: Api) -> None:
    api.broker.create_topic("accounts", 1, {"cleanup.policy": "compact", "max.message.bytes": "2048"})
    got = api.get("/topics/accounts/configs")
    assert got["topic"] == "accounts"
    by_name = {c["name"]: c for c in got["configs"]}
    assert by_name["cleanup.policy"] == {"name": "cleanup.policy", "value": "compact", "source": "TOPIC_CONFIG",
                                         "is_default": False, "type": "LIST"}
    assert (by_name["max.message.bytes"]["value"], by_name["max.message.bytes"]["source"]) == ("2048", "TOPIC_CONFIG")
    assert (by_name["retention.ms"]["value"], by_name["retention.ms"]["source"],
            by_name["retention.ms"]["is_default"]) == ("3600000", "STATIC_BROKER_CONFIG", False)
    assert by_name["segment.bytes"]["is_default"] is True
    assert [c["name"] for c in got["configs"]] == sorted(by_name)

    admin = AdminClient({"bootstrap.servers": api.broker.bootstrap_servers})
    [future] = admin.describe_configs([ConfigResource(ResourceType.TOPIC, "accounts")]).values()
    described = future.result(30)
    assert sorted(described) == sorted(by_name)
    for name, entry in described.items():
        assert (entry.value, entry.source) == (by_name[name]["value"],
                                               _source_id(by_name[name]["source"])), name


def _source_id(name: str) -> int:
    return ["UNKNOWN", "TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
            "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG"].index(name)


def test_topic_configs_of_an_unknown_topic_is_404(api: Api) -> None:
    status, body, _ = api.request("GET", "/topics/missing/configs")
    assert (status, body["error"]) == (404, "unknown_topic")
    status, body, _ = api.request("POST", "/topics/missing/configs", {})
    assert (status, body["error"]) == (405, "method_not_allowed")


def test_topic_configs_endpoint_is_listed_and_described(api: Api) -> None:
    assert "GET /topics/{name}/configs" in api.get("/")["endpoints"]
    op = api.get("/openapi.json")["paths"]["/topics/{name}/configs"]["get"]
    assert op["operationId"] == "topic_configs"
    assert [p["name"] for p in op["parameters"]] == ["name"]
