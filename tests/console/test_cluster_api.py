"""The HTTP endpoint's node and leadership calls on a 3-node cluster (MockBroker's failure API over HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker.state.cluster.internal_topics import partition_for
from tests.console.conftest import served_console
from tests.docker.test_control_http import Api


@pytest.fixture
def api() -> Iterator[Api]:
    with served_console(brokers=3) as c:
        yield Api(c.broker, c.control)


def test_nodes_stop_start_leader_moves_and_isr_over_http(api: Api) -> None:
    api.broker.create_topic("t", config={"min.insync.replicas": "2"}, assignments=[[1, 2, 3]])
    assert [(n["node_id"], n["alive"]) for n in api.get("/nodes")["nodes"]] == [(1, True), (2, True), (3, True)]
    moved = api.post("/leaders", {"topic": "t", "partition": 0, "node": 2})
    assert (moved["leader"], moved["leader_epoch"]) == (2, 1)
    stopped = api.post("/nodes/2/stop")
    assert [n["alive"] for n in stopped["nodes"]] == [True, False, True]
    [p] = api.get("/topics/t")["partitions"]
    assert (p["leader"], p["isr"], p["offline_replicas"]) == (1, [1, 3], [2])
    api.post("/nodes/2/start")
    assert api.post("/leaders/preferred") == {"moved": []}  # node 1, the preferred replica, leads already
    isr = api.post("/isr", {"topic": "t", "partition": 0, "isr": [2, 3]})
    assert (isr["leader"], isr["isr"]) == (2, [2, 3])
    assert api.post("/leaders/preferred") == {"moved": []}  # node 1 is outside the ISR now


@pytest.mark.parametrize(("method", "path", "body", "status", "error"), [
    ("POST", "/leaders", {"topic": "t", "partition": 0, "node": 9}, 404, "unknown_node_or_partition"),
    ("POST", "/nodes/9/stop", {}, 404, "unknown_node_or_partition"),
    ("POST", "/nodes/x/stop", {}, 404, "unknown_node_or_partition"),
    ("POST", "/isr", {"topic": "t", "partition": 0, "isr": ["x"]}, 400, "bad_field"),
    ("POST", "/leaders", {"topic": "t", "partition": 0}, 400, None),
    ("POST", "/leaders", {"topic": "nope", "partition": 0, "node": 1}, 404, "unknown_node_or_partition"),
    ("GET", "/nodes/1/stop", None, 405, "method_not_allowed"),
])
def test_bad_failure_calls_get_clear_errors(api: Api, method: str, path: str, body: object, status: int,
                                            error: str | None) -> None:
    api.broker.create_topic("t", assignments=[[1, 2, 3]])
    got, payload, _ = api.request(method, path, body)
    assert got == status, payload
    if error is not None:
        assert payload["error"] == error
    assert [n["alive"] for n in api.get("/nodes")["nodes"]] == [True, True, True]


def test_the_openapi_description_lists_the_failure_api(api: Api) -> None:
    paths = api.get("/openapi.json")["paths"]
    assert {"/nodes", "/nodes/{id}/stop", "/nodes/{id}/start", "/leaders", "/leaders/preferred", "/isr"} <= set(paths)
    assert paths["/nodes/{id}/stop"]["post"]["parameters"][0]["name"] == "id"


def test_stall_resume_latency_and_per_node_faults_over_http(api: Api) -> None:
    api.broker.create_topic("t", assignments=[[1, 2, 3]])
    assert [n["stalled"] for n in api.post("/nodes/3/stall")["nodes"]] == [False, False, True]
    assert [n["stalled"] for n in api.post("/nodes/3/resume")["nodes"]] == [False, False, False]
    assert api.post("/nodes/2/latency", {"ms": 250}) == {"node": 2, "latency_ms": 250}
    assert [n["latency_ms"] for n in api.get("/nodes")["nodes"]] == [0, 250, 0]
    assert api.post("/nodes/2/latency", {"ms": 0}) == {"node": 2, "latency_ms": 0}
    got, payload, _ = api.request("POST", "/nodes/2/latency", {"ms": -5})
    assert (got, payload["error"]) == (400, "bad_field")
    got, payload, _ = api.request("POST", "/faults", {"api_key": "Metadata", "error": "NOT_CONTROLLER", "node": 2})
    assert (got, payload["fault"]["node"]) == (201, 2)
    got, payload, _ = api.request("POST", "/faults", {"api_key": "Metadata", "error": "NOT_CONTROLLER", "node": 7})
    assert (got, payload["error"]) == (400, "bad_field")
    assert {"/nodes/{id}/stall", "/nodes/{id}/resume", "/nodes/{id}/latency"} <= set(api.get("/openapi.json")["paths"])


def test_move_a_coordinator_over_http(api: Api) -> None:
    moved = api.post("/coordinators", {"group": "g", "node": 3})
    assert moved == {"group": "g", "transactional_id": None, "node": 3}
    assert api.broker.partition_state("__consumer_offsets", partition_for("g", 50)).leader == 3
    api.post("/coordinators", {"transactional_id": "tx", "node": 2})
    assert api.broker.partition_state("__transaction_state", partition_for("tx", 50)).leader == 2
    got, payload, _ = api.request("POST", "/coordinators", {"node": 2})
    assert (got, payload["error"]) == (400, "bad_field")
    got, payload, _ = api.request("POST", "/coordinators", {"group": "g", "node": 9})
    assert got == 404
