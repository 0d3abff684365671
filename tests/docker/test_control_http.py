"""The HTTP control endpoint (mockbroker.http, formerly mockbroker.control_http), driven over HTTP for every operation; malformed
requests answered with a 4xx and a JSON body."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mockbroker.control_http import ControlServer
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

PRODUCE, INIT_PRODUCER_ID = 0, 22


@dataclass
class Api:
    broker: MockBroker
    control: ControlServer

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any, http.client.HTTPResponse]:
        conn = http.client.HTTPConnection("127.0.0.1", self.control.port, timeout=10)
        try:
            data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            hdrs = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
            assert resp.getheader("Content-Type", "").startswith("application/json")
            assert b"Traceback" not in payload
            return resp.status, (json.loads(payload) if payload else None), resp
        finally:
            conn.close()

    def get(self, path: str) -> Any:
        status, body, _ = self.request("GET", path)
        assert status == 200, body
        return body

    def post(self, path: str, body: Any = None, expect: int = 200) -> Any:
        status, got, _ = self.request("POST", path, body if body is not None else {})
        assert status == expect, got
        return got


@pytest.fixture
def api() -> Iterator[Api]:
    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0),
                                                   broker._loop).result(10)
        try:
            yield Api(broker, control)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(10)


def produce(broker: MockBroker, topic: str, records: list[tuple[Any, ...]], partition: int = 0,
            idempotent: bool = False) -> int:
    pid, epoch, seq = -1, -1, -1
    with RawClient(broker.host, broker.port) as c:
        if idempotent:
            r = c.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                "producer_id": -1, "producer_epoch": -1})
            pid, epoch, seq = r.producer_id, r.producer_epoch, 0
        batch = build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": bytes(batch)}]}]}
        [p] = c.request(PRODUCE, 9, body).responses[0].partition_responses
        assert p.error_code == ErrorCode.NONE, p
        return int(p.base_offset)


# -- reading ---------------------------------------------------------------------------------------------


def test_index_and_health(api: Api) -> None:
    assert "GET /topics/{name}/records" in api.get("/")["endpoints"]
    assert api.get("/health") == {"status": "ok", "bootstrap_servers": api.broker.bootstrap_servers}


def test_topics_are_listed_and_described_with_offsets(api: Api) -> None:
    api.broker.create_topic("orders", 2, {"retention.ms": "1000"})
    produce(api.broker, "orders", [(b"k", b"v")] * 3, partition=1)
    [summary] = api.get("/topics")["topics"]
    assert summary["name"] == "orders" and summary["partitions"] == 2
    assert summary["config"] == {"retention.ms": "1000"}
    t = api.get("/topics/orders")
    assert [(p["partition"], p["log_start_offset"], p["high_watermark"], p["last_stable_offset"], p["batches"])
            for p in t["partitions"]] == [(0, 0, 0, 0, 0), (1, 0, 3, 3, 1)]
    assert t["partitions"][1]["leader"] == api.broker.node_id


def test_records_are_utf8_when_they_decode_else_base64(api: Api) -> None:
    api.broker.create_topic("mixed")
    produce(api.broker, "mixed", [(b"key", "h\u00e9llo".encode()), (None, b"\xff\x00\xfe", [("h", b"\x80")]),
                                  (b"\xc3", None, [("trace", b"abc"), ("empty", None)])])
    got = api.get("/topics/mixed/records")
    r0, r1, r2 = got["records"]
    assert (r0["key"], r0["key_encoding"], r0["value"], r0["value_encoding"]) == ("key", "utf-8", "h\u00e9llo", "utf-8")
    assert (r1["key"], r1["key_encoding"]) == (None, None)
    assert (r1["value"], r1["value_encoding"]) == (base64.b64encode(b"\xff\x00\xfe").decode(), "base64")
    assert r1["headers"] == [{"key": "h", "value": base64.b64encode(b"\x80").decode(), "value_encoding": "base64"}]
    assert (r2["key"], r2["key_encoding"], r2["value"]) == (base64.b64encode(b"\xc3").decode(), "base64", None)
    assert r2["headers"] == [{"key": "trace", "value": "abc", "value_encoding": "utf-8"},
                             {"key": "empty", "value": None, "value_encoding": None}]
    assert [r["offset"] for r in got["records"]] == [0, 1, 2]
    assert got["next_offsets"] == {"0": 3}
    assert r0["timestamp_type"] == "CreateTime" and r0["producer_id"] == -1


def test_records_by_partition_offset_and_limit(api: Api) -> None:
    api.broker.create_topic("paged", 2)
    produce(api.broker, "paged", [(b"a%d" % i, b"x") for i in range(5)], partition=0)
    produce(api.broker, "paged", [(b"b%d" % i, b"y") for i in range(5)], partition=0)
    produce(api.broker, "paged", [(b"c", b"z")], partition=1)
    page = api.get("/topics/paged/records?partition=0&offset=3&limit=4")
    assert [(r["offset"], r["key"]) for r in page["records"]] == [(3, "a3"), (4, "a4"), (5, "b0"), (6, "b1")]
    assert page["next_offsets"] == {"0": 7}
    rest = api.get("/topics/paged/records?partition=0&offset=7")
    assert [r["offset"] for r in rest["records"]] == [7, 8, 9] and rest["next_offsets"] == {"0": 10}
    every = api.get("/topics/paged/records")
    assert [(r["partition"], r["offset"]) for r in every["records"]][-1] == (1, 0)
    assert len(every["records"]) == 11
    assert api.get("/topics/paged/records?limit=0")["records"] == []


def test_batches_describe_what_is_stored(api: Api) -> None:
    api.broker.create_topic("b")
    produce(api.broker, "b", [(b"k1", b"v1"), (b"k2", b"v2")], idempotent=True)
    [batch] = api.get("/topics/b/batches?partition=0")["batches"]
    assert (batch["base_offset"], batch["last_offset"], batch["record_count"], batch["codec"]) == (0, 1, 2, "none")
    assert batch["producer_id"] >= 0 and batch["base_sequence"] == 0 and batch["is_control"] is False
    assert "raw_base64" not in batch
    [raw] = api.get("/topics/b/batches?raw=true")["batches"]
    assert base64.b64decode(raw["raw_base64"]) == api.broker.batches("b")[0].raw


def test_producers_show_the_idempotent_producer_state(api: Api) -> None:
    api.broker.create_topic("p", 2)
    produce(api.broker, "p", [(b"k", b"v")] * 3, partition=1, idempotent=True)
    [entry] = api.get("/producers")["producers"]
    assert (entry["topic"], entry["partition"], entry["last_sequence"]) == ("p", 1, 2)
    assert entry["batches"] == [{"first_sequence": 0, "last_sequence": 2, "first_offset": 0, "last_offset": 2,
                                 "timestamp": entry["batches"][0]["timestamp"]}]
    assert api.get("/producers?topic=p&partition=0")["producers"] == []
    assert len(api.get("/producers?topic=p&partition=1")["producers"]) == 1


def test_transactions_and_groups_are_lists_whatever_the_broker_has(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(api.get("/transactions")["transactions"], list)
    assert isinstance(api.get("/groups")["groups"], list)

    @dataclass
    class Group:
        group_id: str
        state: ErrorCode
        members: set[str]

    monkeypatch.setattr(api.broker, "groups", lambda: [Group("g1", ErrorCode.NONE, {"m1"})], raising=False)
    assert api.get("/groups") == {"groups": [{"group_id": "g1", "state": "NONE", "members": ["m1"]}]}


def test_requests_received_are_listed(api: Api) -> None:
    api.broker.create_topic("r")
    produce(api.broker, "r", [(b"k", b"v")])
    got = api.get(f"/requests?api_key={PRODUCE}")["requests"]
    assert [(r["api_key"], r["api_version"]) for r in got] == [(PRODUCE, 9)]


# -- changing --------------------------------------------------------------------------------------------


def test_create_and_delete_a_topic(api: Api) -> None:
    created = api.post("/topics", {"name": "new", "partitions": 3, "config": {"cleanup.policy": "compact",
                                                                               "retention.ms": 5000}}, 201)
    assert created["name"] == "new" and len(created["partitions"]) == 3
    topic = api.broker.cluster.topic("new")
    assert topic is not None and topic.config.compacted
    assert api.post("/topics", {"name": "defaults"}, 201)["partitions"][0]["partition"] == 0
    status, body, _ = api.request("POST", "/topics", {"name": "new"})
    assert (status, body["error"]) == (409, "topic_already_exists")
    status, body, _ = api.request("POST", "/topics", {"name": "x", "config": {"no.such": "1"}})
    assert (status, body["error"]) == (400, "invalid_config") and "no.such" in body["message"]
    status, body, _ = api.request("DELETE", "/topics/new")
    assert (status, body) == (200, {"deleted": "new"})
    assert api.broker.topics() == ["defaults"]


def test_compact_calls_the_brokers_cleaner_or_answers_501(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    api.broker.create_topic("c")
    monkeypatch.setattr(api.broker, "compact", None, raising=False)
    status, body, _ = api.request("POST", "/compact", {"topic": "c"})
    assert (status, body["error"]) == (501, "not_implemented")
    calls: list[tuple[Any, ...]] = []

    def compact(*args: Any) -> dict[str, int]:
        calls.append(args)
        return {"removed": 0}

    monkeypatch.setattr(api.broker, "compact", compact, raising=False)
    assert api.post("/compact", {"topic": "c"}) == {"compacted": "c", "partition": None, "result": {"removed": 0}}
    api.post("/compact", {"topic": "c", "partition": 0})
    assert calls == [("c",), ("c", 0)]
    status, body, _ = api.request("POST", "/compact", {"topic": "nope"})
    assert (status, body["error"]) == (404, "unknown_topic")


def test_compact_runs_the_real_cleaner_on_compacted_topics_only(api: Api) -> None:
    if getattr(api.broker, "compact", None) is None:
        pytest.skip("this build has no MockBroker.compact")
    api.post("/topics", {"name": "kv", "config": {"cleanup.policy": "compact"}}, 201)
    produce(api.broker, "kv", [(b"k", b"1"), (b"k", b"2")])
    got = api.post("/compact", {"topic": "kv"})
    assert got["compacted"] == "kv" and isinstance(got["result"], list)
    api.broker.create_topic("plain")
    status, body, _ = api.request("POST", "/compact", {"topic": "plain"})
    assert (status, body["error"]) == (400, "bad_request") and "cleanup.policy" in body["message"]


def test_retention_runs_now_or_answers_501(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    api.broker.create_topic("r")
    if getattr(api.broker, "enforce_retention", None) is not None:
        got = api.post("/retention", {"topic": "r"})
        assert got["topic"] == "r" and isinstance(got["deleted_segments"], int)
        assert isinstance(api.post("/retention")["deleted_segments"], int)
    status, body, _ = api.request("POST", "/retention", {"topic": "missing"})
    assert (status, body["error"]) == (404, "unknown_topic")
    monkeypatch.setattr(api.broker, "enforce_retention", None, raising=False)
    status, body, _ = api.request("POST", "/retention", {})
    assert (status, body["error"]) == (501, "not_implemented")


def test_clock_advances(api: Api) -> None:
    before = api.get("/clock")["now_ms"]
    got = api.post("/clock/advance", {"seconds": 3600})
    assert got["now_ms"] - before >= 3_600_000
    assert api.post("/clock/advance", {"seconds": 0.5})["advanced_seconds"] == 0.5


def test_faults_are_injected_listed_and_cleared(api: Api) -> None:
    api.broker.create_topic("f")
    rule = api.post("/faults", {"api_key": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "topic": "f"}, 201)["fault"]
    assert (rule["api_key"], rule["api_name"], rule["action"], rule["error"]) == (0, "Produce", "error",
                                                                                  "NOT_LEADER_OR_FOLLOWER")
    assert len(api.get("/faults")["faults"]) == 1
    with RawClient(api.broker.host, api.broker.port) as c:
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                "topic_data": [{"name": "f", "partition_data": [{"index": 0, "records": bytes(build_batch([(b"k", b"v")]))}]}]}
        [p] = c.request(PRODUCE, 9, body).responses[0].partition_responses
        assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert api.get("/faults")["faults"] == []  # used up
    api.post("/faults", {"api_key": 1, "delay": 0.2, "count": 2}, 201)
    api.post("/faults", {"api_key": 3, "drop": "before"}, 201)
    api.post("/faults", {"api_key": 0, "error": 6, "topic": "f", "partition": 0}, 201)
    assert [f["action"] for f in api.get("/faults")["faults"]] == ["delay", "drop_before", "error"]
    status, body, _ = api.request("DELETE", "/faults")
    assert (status, body) == (200, {"cleared": 3})
    assert api.broker.faults.rules == []


def test_reset_deletes_every_topic_and_clears_faults_and_requests(api: Api) -> None:
    for name in ("a", "b"):
        api.broker.create_topic(name)
    produce(api.broker, "a", [(b"k", b"v")])
    api.post("/faults", {"api_key": 0, "error": 6}, 201)
    assert api.post("/reset") == {"deleted_topics": ["a", "b"], "cleared_faults": 1, "topics": []}
    assert api.broker.topics() == [] and api.broker.faults.rules == [] and api.broker.received() == []


def test_keep_alive_and_head(api: Api) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", api.control.port, timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/health")
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
        conn.request("HEAD", "/topics")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == b"" and int(resp.getheader("Content-Length", "0")) > 0
    finally:
        conn.close()


# -- malformed requests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method,path,body,status,error", [
    ("GET", "/nope", None, 404, "not_found"),
    ("GET", "/topics/missing", None, 404, "unknown_topic"),
    ("GET", "/topics/missing/records", None, 404, "unknown_topic"),
    ("GET", "/topics/t/batches?partition=7", None, 404, "unknown_partition"),
    ("GET", "/topics/t/records?partition=x", None, 400, "bad_query"),
    ("GET", "/topics/t/records?offset=-1", None, 400, "bad_query"),
    ("GET", "/topics/t/records?limit=100000000", None, 400, "bad_query"),
    ("GET", "/topics/t/batches?raw=maybe", None, 400, "bad_query"),
    ("GET", "/producers?partition=0", None, 400, "bad_query"),
    ("GET", "/producers?topic=missing", None, 404, "unknown_topic"),
    ("PUT", "/topics", {}, 405, "method_not_allowed"),
    ("DELETE", "/clock", None, 405, "method_not_allowed"),
    ("POST", "/topics", b"{not json", 400, "bad_json"),
    ("POST", "/topics", b"[1, 2]", 400, "bad_json"),
    ("POST", "/topics", b"\xff\xfe", 400, "bad_json"),
    ("POST", "/topics", {}, 400, "missing_field"),
    ("POST", "/topics", {"name": 5}, 400, "bad_field"),
    ("POST", "/topics", {"name": "x", "partitions": 0}, 400, "bad_field"),
    ("POST", "/topics", {"name": "x", "partitions": True}, 400, "bad_field"),
    ("POST", "/topics", {"name": "x", "config": {"retention.ms": [1]}}, 400, "bad_field"),
    ("POST", "/topics", {"name": "x", "replicas": 3}, 400, "unknown_field"),
    ("POST", "/topics", {"name": "bad name"}, 400, "invalid_topic_exception"),
    ("DELETE", "/topics/missing", None, 404, "unknown_topic"),
    ("POST", "/compact", {}, 400, "missing_field"),
    ("POST", "/clock/advance", {}, 400, "missing_field"),
    ("POST", "/clock/advance", {"seconds": -1}, 400, "bad_field"),
    ("POST", "/clock/advance", {"seconds": "10"}, 400, "bad_field"),
    ("POST", "/faults", {"error": 6}, 400, "missing_field"),
    ("POST", "/faults", {"api_key": 0}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "error": 6, "drop": "before"}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 999, "error": 6}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": "Nope", "error": 6}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "error": "NO_SUCH_ERROR"}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "drop": "sideways"}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "delay": -2}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "error": 6, "count": 0}, 400, "bad_field"),
    ("POST", "/faults", {"api_key": 0, "error": 6, "partition": 1}, 400, "bad_field"),
    ("POST", "/reset", {"everything": True}, 400, "unknown_field"),
])
def test_malformed_requests_get_a_4xx_with_a_json_error(api: Api, method: str, path: str, body: Any, status: int,
                                                         error: str) -> None:
    api.broker.create_topic("t")
    raw = body if isinstance(body, bytes) else None
    got_status, got, resp = api.request(method, path, None if raw is not None else body, raw=raw)
    assert (got_status, got["error"]) == (status, error), got
    assert isinstance(got["message"], str) and got["message"]
    if status == 405:
        assert resp.getheader("Allow")


def raw_exchange(port: int, data: bytes) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


@pytest.mark.parametrize("data,status", [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /topics HTTP/2.0\r\n\r\n", 505),
    (b"GET /topics HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n", 400),
    (b"POST /topics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
    (b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", 413),
    (b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
    (b"GET /topics HTTP/1.1\r\n\r\n", 400),  # HTTP/1.1 needs a Host header (RFC 9112 3.2)
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 431),
])
def test_broken_http_is_answered_with_json_and_closed(api: Api, data: bytes, status: int) -> None:
    got_status, body = raw_exchange(api.control.port, data)
    assert got_status == status and body["error"] and body["message"]


def test_a_bug_answers_500_json_without_a_traceback(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> int:
        raise RuntimeError("clock broke")

    monkeypatch.setattr(api.broker.clock, "now_ms", boom)
    status, body, _ = api.request("GET", "/clock")
    assert (status, body) == (500, {"error": "internal", "message": "RuntimeError: clock broke"})
    monkeypatch.undo()
    assert api.get("/health")["status"] == "ok"


def test_post_topics_with_too_many_partitions_is_refused_at_once(api: Api) -> None:
    status, body, _ = api.request("POST", "/topics", {"name": "huge", "partitions": 2**31 - 1})
    assert (status, body["error"]) == (400, "policy_violation")
    assert body["message"] == "Excessively large number of partitions per request."
    assert api.get("/topics")["topics"] == []
