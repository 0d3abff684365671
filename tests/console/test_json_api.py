"""The JSON endpoints the console reads, over HTTP: newest-first records with filters and cursors, the
produce action, the overview, one group with lag, the OpenAPI description, live events, the console's
files and the content negotiation at /."""

from __future__ import annotations

import base64
import http.client
import json
import time
from typing import Any

from confluent_kafka import Consumer

from mockbroker.http.json_api import ROUTES
from tests.docker.test_control_http import Api, api, produce  # noqa: F401  (the api fixture)


def offsets(page: dict[str, Any]) -> list[tuple[int, int]]:
    return [(r["partition"], r["offset"]) for r in page["records"]]


def test_records_newest_first_paged_with_a_cursor(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("n", 2)
    produce(api.broker, "n", [(b"a%d" % i, b"x", [], 1000 + i) for i in range(5)], partition=0)
    produce(api.broker, "n", [(b"b%d" % i, b"y", [], 2000 + i) for i in range(3)], partition=1)
    page = api.get("/topics/n/records?order=newest&limit=4")
    assert offsets(page) == [(1, 2), (1, 1), (1, 0), (0, 4)]
    assert page["next_offsets"] == {"0": 3, "1": -1}
    cursor = ",".join(f"{p}:{o}" for p, o in page["next_offsets"].items())
    rest = api.get(f"/topics/n/records?order=newest&limit=4&cursor={cursor}")
    assert offsets(rest) == [(0, 3), (0, 2), (0, 1), (0, 0)]
    assert rest["next_offsets"] == {"0": -1}
    assert offsets(api.get("/topics/n/records?order=newest&partition=0&offset=2&limit=2")) == [(0, 2), (0, 1)]


def test_records_filtered_by_key_and_time(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("f")
    produce(api.broker, "f", [(b"order-1", b"x", [], 1000), (b"user-1", b"x", [], 2000), (b"order-2", b"x", [], 3000),
                              (None, b"x", [], 4000)])
    assert offsets(api.get("/topics/f/records?key=order")) == [(0, 0), (0, 2)]
    assert offsets(api.get("/topics/f/records?order=newest&key=order")) == [(0, 2), (0, 0)]
    assert offsets(api.get("/topics/f/records?from_ms=2000&to_ms=3000")) == [(0, 1), (0, 2)]
    assert offsets(api.get("/topics/f/records?key=" + b"user-1".hex())) == [(0, 1)]  # a key's hex matches too
    for bad in ("order=sideways", "cursor=x", "cursor=0:-5", "from_ms=soon"):
        status, body, _ = api.request("GET", f"/topics/f/records?{bad}")
        assert (status, body["error"]) == (400, "bad_query"), bad


def test_produce_appends_a_record_with_headers(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("p", 2)
    got = api.post("/topics/p/records", {"key": "k", "value": "{\"a\": 1}", "partition": 1,
                                         "headers": [{"key": "trace", "value": "t1"}, {"key": "n", "value": None}]}, 201)
    assert got == {"topic": "p", "partition": 1, "offset": 0}
    api.post("/topics/p/records", {"key": None, "value": base64.b64encode(b"\xff\x00").decode(), "encoding": "base64",
                                   "partition": 1, "headers": {"h": "aGk="}}, 201)
    first, second = api.broker.records("p", 1)
    assert (first.key, first.value, first.headers) == (b"k", b'{"a": 1}', [("trace", b"t1"), ("n", None)])
    assert (second.key, second.value, second.headers) == (None, b"\xff\x00", [("h", b"hi")])
    for body, status, error in [({"value": "v", "partition": 2}, 404, "unknown_partition"),
                                ({"value": 5}, 400, "bad_field"),
                                ({"value": "!!", "encoding": "base64"}, 400, "bad_field"),
                                ({"value": "v", "headers": [{"value": "x"}]}, 400, "bad_field"),
                                ({"value": "v", "acks": 1}, 400, "unknown_field")]:
        status_got, payload, _ = api.request("POST", "/topics/p/records", body)
        assert (status_got, payload["error"]) == (status, error), body
    status, payload, _ = api.request("POST", "/topics/missing/records", {"value": "v"})
    assert (status, payload["error"]) == (404, "unknown_topic")


def test_produce_is_refused_as_a_producer_would_be(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("small", config={"max.message.bytes": "100"})
    status, payload, _ = api.request("POST", "/topics/small/records", {"value": "x" * 500})
    assert (status, payload["error"]) == (400, "message_too_large")


def test_overview_has_nodes_listeners_topics_and_rates(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("o", 2)
    produce(api.broker, "o", [(b"k", b"v")] * 4, partition=1)
    o = api.get("/overview")
    assert o["bootstrap_servers"] == api.broker.bootstrap_servers
    assert [n["node_id"] for n in o["nodes"]] == [api.broker.node_id]
    assert o["listeners"][0]["advertised"] == api.broker.bootstrap_servers
    [t] = o["topics"]
    assert (t["name"], t["records"], len(t["partitions"])) == ("o", 4, 2)
    assert t["size_bytes"] == sum(p["size_bytes"] for p in t["partitions"]) > 0
    assert isinstance(t["records_per_second"], float)


def test_one_group_with_committed_offsets_and_lag(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("g")
    produce(api.broker, "g", [(b"k", b"v")] * 5)
    consumer = Consumer({"bootstrap.servers": api.broker.bootstrap_servers, "group.id": "readers",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["g"])
        got, deadline = 0, time.monotonic() + 60
        while got < 2 and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            got += msg is not None and msg.error() is None
        assert got == 2
        consumer.commit(asynchronous=False)
        g = api.get("/groups/readers")
        assert g["group"]["group_id"] == "readers" and g["group"]["state"] == "Stable"
        assert g["offsets"] == [{"topic": "g", "partition": 0, "committed": 2, "high_watermark": 5, "lag": 3}]
    finally:
        consumer.close()
    status, body, _ = api.request("GET", "/groups/nobody")
    assert (status, body["error"]) == (404, "unknown_group")


def test_openapi_describes_every_route(api: Api) -> None:  # noqa: F811
    doc = api.get("/openapi.json")
    assert doc["openapi"].startswith("3.")
    for method, path, fn, _ in ROUTES:
        op = doc["paths"][path][method.lower()]
        assert op["operationId"] == fn.__name__ and op["summary"]
    records = doc["paths"]["/topics/{name}/records"]["get"]
    assert {p["name"] for p in records["parameters"]} >= {"name", "partition", "offset", "order", "key", "cursor"}


def test_root_is_the_console_for_a_browser_and_json_for_curl(api: Api) -> None:  # noqa: F811
    conn = http.client.HTTPConnection("127.0.0.1", api.control.port, timeout=30)
    try:
        conn.request("GET", "/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        resp = conn.getresponse()
        html = resp.read().decode()
        assert resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/html")
        assert "default-src 'self'" in resp.getheader("Content-Security-Policy", "")
        assert '<script type="module" src="/console/app.js">' in html
        for name, kind in [("app.js", "text/javascript"), ("console.css", "text/css"), ("views.js", "text/javascript")]:
            conn.request("GET", f"/console/{name}")
            resp = conn.getresponse()
            assert resp.status == 200 and resp.getheader("Content-Type", "").startswith(kind) and resp.read()
        for bad in ("/console/../json_api.py", "/console/nope.js", "/console/%2e%2e%2fapp.py"):
            conn.request("GET", bad)
            resp = conn.getresponse()
            assert resp.status == 404 and json.loads(resp.read())["error"] == "not_found", bad
    finally:
        conn.close()
    assert "GET /overview" in api.get("/")["endpoints"]


def test_events_stream_records_and_requests(api: Api) -> None:  # noqa: F811
    api.broker.create_topic("e")
    conn = http.client.HTTPConnection("127.0.0.1", api.control.port, timeout=60)
    try:
        conn.request("GET", "/events")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type") == "text/event-stream"
        assert resp.readline() == b"retry: 1000\n"
        produce(api.broker, "e", [(b"k", b"v")])
        seen: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        event = None
        while not ("records" in seen and "requests" in seen) and time.monotonic() < deadline:
            line = resp.readline().decode().rstrip("\n")
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event:
                data = json.loads(line.removeprefix("data: "))
                if event == "records" and data["topic"] == "e" and data["high_watermark"] == 1:
                    seen["records"] = data
                if event == "requests" and any(r["api_name"] == "Produce" for r in data["requests"]):
                    seen["requests"] = data
        assert seen["records"] == {"topic": "e", "partition": 0, "high_watermark": 1, "log_start_offset": 0}
    finally:
        conn.close()


def test_records_of_a_batch_that_does_not_decode_answer_a_clear_error(api: Api) -> None:  # noqa: F811
    from tests.handlers.conftest import store_unvalidated
    from tests.protocol.test_records_batch import ONE_RECORD, raw_batch

    api.broker.create_topic("garbled")
    store_unvalidated(api.broker, "garbled", raw_batch(ONE_RECORD * 2, 1))  # one declared, two held
    status, body, _ = api.request("GET", "/topics/garbled/records?order=oldest")
    assert status == 422 and body["error"] == "corrupt_batch" and "does not decode" in body["message"]
    # Newest first decodes only the records it returns: the one declared record reads, the extra bytes
    # after it are not reached.
    assert offsets(api.get("/topics/garbled/records?order=newest")) == [(0, 0)]
    [batch] = api.get("/topics/garbled/batches?raw=true")["batches"]
    assert batch["record_count"] == 1  # the raw bytes stay available


def test_records_with_a_small_limit_decode_only_about_what_they_return(api: Api,  # noqa: F811
                                                                       monkeypatch: Any) -> None:
    # One batch of 20,000 records: limit=1, oldest or newest first or from an offset in its middle, decodes a
    # handful of records, not the batch (the records before them are hopped over by their lengths).
    from mockbroker.protocol.records import record

    api.broker.create_topic("big")
    produce(api.broker, "big", [(b"k%d" % i, b"v") for i in range(20_000)])
    built = []

    class CountedRecord(record.Record):
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(record, "Record", CountedRecord)
    for query, expected in [("limit=1", 0), ("order=newest&limit=1", 19_999), ("offset=12345&limit=1", 12345),
                            ("order=newest&offset=777&limit=2", 777)]:
        built.clear()
        page = api.get(f"/topics/big/records?{query}")
        assert page["records"][0]["offset"] == expected
        assert len(built) <= 16, (query, len(built))


def test_records_of_a_compacted_batch_with_offset_gaps_page_both_ways(api: Api) -> None:  # noqa: F811
    # The cleaner keeps a batch's offsets, so a cleaned batch has gaps: its records are not at base + index.
    api.broker.create_topic("gaps", config={"cleanup.policy": "compact"})
    produce(api.broker, "gaps", [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2")])
    api.broker.compact("gaps")
    assert [(r.offset, r.key) for r in api.broker.records("gaps")] == [(2, b"a"), (3, b"c"), (4, b"b")]
    assert offsets(api.get("/topics/gaps/records?order=newest&limit=2")) == [(0, 4), (0, 3)]
    assert offsets(api.get("/topics/gaps/records?order=newest&offset=2&limit=5")) == [(0, 2)]
    assert offsets(api.get("/topics/gaps/records?offset=3&limit=1")) == [(0, 3)]
