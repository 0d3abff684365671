"""The JSON API under bad input (issue #33 item 7): deep nesting, numbers out of range and records that do not
decode are answered 4xx naming the field (or the partition and offset), never 500 with a traceback, and a
derandomized sweep sends random JSON bodies to every endpoint of the OpenAPI description: no 5xx."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.http.openapi import openapi_document
from tests.docker.test_control_http import Api, api, produce  # noqa: F401  (the api fixture)

pytestmark = pytest.mark.adversarial


def refused(api: Api, method: str, path: str, raw: bytes, field: str | None = None,  # noqa: F811
            status: int = 400) -> dict[str, Any]:
    got, body, _ = api.request(method, path, raw=raw)
    assert got == status, body
    if field is not None:
        assert field in body["message"], body
    return body  # type: ignore[no-any-return]


def test_deeply_nested_bodies_are_refused_400(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("t")
    for path in ("/topics", "/clock/advance", "/faults", "/nodes/1/latency", "/topics/t/records"):
        body = refused(api, "POST", path, b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
        assert body["error"] == "bad_json" and "nested deeper" in body["message"]


def test_clock_advance_out_of_range_is_refused_naming_seconds(api: Api) -> None:  # noqa: F811
    before = api.get("/clock")["now_ms"]
    for raw in (b'{"seconds": 1e308}', b'{"seconds": 1' + b"0" * 400 + b"}", b'{"seconds": -1}'):
        refused(api, "POST", "/clock/advance", raw, "seconds")
    assert refused(api, "POST", "/clock/advance", b'{"seconds": 1e999}')["error"] == "bad_json"  # not a double
    assert api.get("/clock")["now_ms"] - before < 60_000  # the clock did not move
    api.post("/clock/advance", {"seconds": 86_400 * 365})  # a year is fine


def test_latency_out_of_range_is_refused_naming_ms(api: Api) -> None:  # noqa: F811
    for raw in (b'{"ms": 1e300}', b'{"ms": 1' + b"0" * 400 + b"}", b'{"ms": 3600001}'):
        refused(api, "POST", "/nodes/1/latency", raw, "ms")
    assert api.broker.node_latency_ms.get(1, 0) == 0
    assert api.post("/nodes/1/latency", {"ms": 3_600_000})["latency_ms"] == 3_600_000
    api.post("/nodes/1/latency", {"ms": 0})


def test_fault_delay_out_of_range_is_refused_naming_delay(api: Api) -> None:  # noqa: F811
    for raw in (b'{"api_key": 0, "delay": 1' + b"0" * 400 + b"}", b'{"api_key": 0, "delay": 1e300}',
                b'{"api_key": 0, "delay": 3601}'):
        refused(api, "POST", "/faults", raw, "delay")
    assert api.get("/faults")["faults"] == []


def test_produce_timestamp_out_of_range_is_refused_naming_timestamp(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("ts")
    for raw in (b'{"value": "v", "timestamp": 100000000000000000000000}', b'{"value": "v", "timestamp": -5}'):
        refused(api, "POST", "/topics/ts/records", raw, "timestamp")
    status, body, _ = api.request("POST", "/topics/ts/records", {"value": "v", "timestamp": 2**63 - 1})
    assert (status, body["error"]) == (400, "invalid_timestamp")  # in range, refused by the log as Kafka would
    got = api.post("/topics/ts/records", {"value": "v", "timestamp": api.get("/clock")["now_ms"]}, expect=201)
    assert got["offset"] == 0


def test_compact_over_a_batch_that_does_not_decode_names_partition_and_offset(api: Api) -> None:  # noqa: F811
    from tests.handlers.conftest import store_unvalidated
    from tests.protocol.test_records_batch import ONE_RECORD, raw_batch

    api.broker.create_topic("cgarbled", 1, {"cleanup.policy": "compact"})
    produce(api.broker, "cgarbled", [(b"k", b"v", [], 1000)])
    store_unvalidated(api.broker, "cgarbled", raw_batch(ONE_RECORD * 2, 1))  # one declared, two held
    body = refused(api, "POST", "/compact", json.dumps({"topic": "cgarbled"}).encode(), status=409)
    assert body["error"] == "corrupt_batch"
    assert "cgarbled-0" in body["message"] and "offset 1" in body["message"], body


# -- the sweep: random JSON bodies to every endpoint with a body ---------------------------------------------


def _endpoints() -> list[tuple[str, str, tuple[str, ...]]]:
    """(method, path, the body fields its summary names, e.g. {seconds}) of every endpoint taking a body."""
    out = []
    for path, methods in openapi_document()["paths"].items():
        for method, op in methods.items():
            if method.upper() in ("POST", "PUT", "DELETE", "PATCH"):
                braces = re.findall(r"\{([^}]*)\}", op["summary"])
                fields = tuple(sorted({f for text in braces for f in re.findall(r"[a-z_]+", text)}))
                out.append((method.upper(), re.sub(r"\{[a-z_]+\}", "1", path), fields))
    return out


ENDPOINTS = _endpoints()
EDGES = st.sampled_from([0, 1, -1, 2**31, 2**63, 10**23, 10**400, 1e308, -1e308, 0.5, "", "Produce", 1e300])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), EDGES,
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                    st.sampled_from(["Produce", "UNKNOWN_SERVER_ERROR", "before", "User:*", "TOPIC", "1", "t",
                                     "compact", "ALL", "base64", "utf-8"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=8)
FIELDS = st.sampled_from(["name", "partitions", "config", "key", "value", "headers", "partition", "encoding",
                          "timestamp", "topic", "seconds", "ms", "api_key", "error", "drop", "delay", "count",
                          "node", "group", "transactional_id", "isr", "principal", "operation", "resource_type",
                          "pattern", "permission", "host"])
BODIES = st.dictionaries(FIELDS, VALUES, max_size=5) | VALUES


@pytest.mark.parametrize(("method", "path", "fields"), ENDPOINTS)
def test_random_json_bodies_never_get_a_5xx(api: Api, method: str, path: str,  # noqa: F811
                                            fields: tuple[str, ...]) -> None:
    """Bodies of the endpoint's own fields (so they pass the unknown-field check) with random values, and
    random JSON of any shape."""
    api.broker.create_topic("1", 2, {"cleanup.policy": "compact"})
    api.broker.create_topic("t", 1)
    value = st.one_of(EDGES, SCALARS, VALUES)
    own = st.dictionaries(st.sampled_from(fields), value, max_size=len(fields)) if fields else st.just({})

    @settings(derandomize=True, max_examples=80, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(own | BODIES)
    def check(body: Any) -> None:
        status, got, _ = api.request(method, path, raw=json.dumps(body).encode())
        assert status < 500, (method, path, body, got)

    check()


# A body each endpoint accepts, so an edge value in one field reaches that field's check.
VALID = {"/topics": {"name": "x"}, "/topics/1/records": {"value": "v"}, "/compact": {"topic": "1"},
         "/faults": {"api_key": 0}, "/leaders": {"topic": "1", "partition": 0, "node": 1},
         "/coordinators": {"group": "g", "node": 1}, "/isr": {"topic": "1", "partition": 0, "isr": [1]},
         "/acls": {"principal": "User:a", "operation": "READ", "resource_type": "TOPIC", "name": "t"}}
EDGE_VALUES = [0, -1, 2**31, 2**63, 10**23, 10**400, 1e308, -1e308, 1e300, 0.5, "", [], {}, True]


@pytest.mark.parametrize(("method", "path", "fields"), [e for e in ENDPOINTS if e[2]])
def test_edge_values_in_each_field_never_get_a_5xx(api: Api, method: str, path: str,  # noqa: F811
                                                   fields: tuple[str, ...]) -> None:
    """Every field the endpoint names, with each edge value (huge, negative, fractional, empty, wrong type),
    in an otherwise valid body: no 5xx."""
    api.broker.create_topic("1", 2, {"cleanup.policy": "compact"})
    for name in fields:
        for edge in EDGE_VALUES:
            body = {**VALID.get(path, {}), name: edge}
            if path == "/faults" and name in ("error", "drop", "delay"):
                body = {"api_key": 0, name: edge}
            status, got, _ = api.request(method, path, raw=json.dumps(body).encode())
            assert status < 500, (method, path, body, got)
            api.broker.clear_faults()
            api.broker.set_latency(1, 0)
