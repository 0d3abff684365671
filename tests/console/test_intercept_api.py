"""Canned answers over HTTP (issue #36 item 2): POST /faults {api_key, response} answers a request with the
API's response fields given as JSON, on one node of a 3-node cluster; a real client (confluent-kafka's
list_topics) sees it; GET /faults lists Python hooks too; bad responses are refused with 400."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient

from tests.console.conftest import served_console
from tests.docker.test_control_http import Api
from tests.handlers.test_cluster import connect_to

METADATA = 3
TOPIC_ID = "7b1e8a3c-0000-4000-8000-000000000001"


@pytest.fixture
def api() -> Iterator[Api]:
    with served_console(brokers=3) as c:
        yield Api(c.broker, c.control)


def canned_metadata(api: Api) -> dict[str, object]:
    first = api.broker.listeners[0]
    return {"brokers": [{"node_id": 1, "host": first.public_host, "port": first.public_port}],
            "cluster_id": "canned", "controller_id": 1,
            "topics": [{"name": "made-up", "topic_id": TOPIC_ID, "error_code": "NONE", "partitions": [
                {"partition_index": 0, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}]}]}


def test_a_canned_metadata_answer_on_one_node(api: Api) -> None:
    got, payload, _ = api.request("POST", "/faults", {"api_key": "Metadata", "response": canned_metadata(api),
                                                      "node": 2, "count": 5})
    assert got == 201 and payload["fault"]["action"] == "respond" and payload["fault"]["node"] == 2
    for node_id in (1, 2, 3):
        with connect_to(api.broker, node_id) as c:
            meta = c.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False})
            if node_id == 2:
                assert [(t.name, str(t.topic_id)) for t in meta.topics] == [("made-up", TOPIC_ID)]
                assert meta.cluster_id == "canned"
            else:
                assert "made-up" not in [t.name for t in meta.topics]
    assert api.get("/faults")["faults"][0]["count"] == 4
    assert api.request("DELETE", "/faults")[1] == {"cleared": 1}


def test_a_real_client_sees_a_canned_answer(api: Api) -> None:
    api.post("/faults", {"api_key": 3, "response": canned_metadata(api), "count": 1000}, expect=201)
    admin = AdminClient({"bootstrap.servers": api.broker.bootstrap_servers})
    meta = admin.list_topics(timeout=15)
    assert set(meta.topics) == {"made-up"} and meta.cluster_id == "canned"


def test_python_hooks_are_listed_but_only_clear_intercepts_removes_them(api: Api) -> None:
    def my_hook(request: object, context: object) -> None:
        return None

    api.broker.intercept(METADATA, my_hook)
    [rule] = api.get("/faults")["faults"]
    assert (rule["action"], rule["hook"], rule["count"], rule["api_name"]) == ("hook", "test_python_hooks_are_listed_"
                                                                               "but_only_clear_intercepts_removes_"
                                                                               "them.<locals>.my_hook", None, "Metadata")
    api.request("DELETE", "/faults")
    assert len(api.get("/faults")["faults"]) == 1
    api.broker.clear_intercepts()
    assert api.get("/faults")["faults"] == []


@pytest.mark.parametrize("response, message", [
    ({"no_such_field": 1}, "no_such_field"),
    ({"topics": [{"name": "x", "topic_id": "not-a-uuid"}]}, "not a UUID"),
    ({"topics": [{"name": "x", "error_code": "NO_SUCH_ERROR"}]}, "unknown error name"),
    ({"topics": "x"}, "expected a list"),
    ([1, 2], "object"),
])
def test_a_response_that_does_not_fit_the_schema_is_refused(api: Api, response: object, message: str) -> None:
    got, payload, _ = api.request("POST", "/faults", {"api_key": "Metadata", "response": response})
    assert got == 400 and payload["error"] == "bad_field" and message in payload["message"], payload
    got, payload, _ = api.request("POST", "/faults", {"api_key": "Metadata", "response": {}, "delay": 1})
    assert got == 400 and "exactly one of" in payload["message"]
    assert api.get("/faults")["faults"] == []
