"""The snapshot and reset endpoints (mockbroker/http/snapshots.py): take, list, restore, delete, reset; the errors;
under ACLs each needs CLUSTER ALTER."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mockbroker.http import ControlServer
from mockbroker.server import MockBroker
from mockbroker.settings import TopicSpec


@contextlib.contextmanager
def served(**broker_kwargs: Any) -> Iterator[tuple[MockBroker, ControlServer]]:
    with MockBroker(port=0, **broker_kwargs).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(30)
        try:
            yield broker, control
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(30)


def call(control: ControlServer, method: str, path: str, body: Any = None,
         user: tuple[str, str] | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", control.port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode()
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        assert b"Traceback" not in payload
        return resp.status, json.loads(payload)
    finally:
        conn.close()


def test_a_snapshot_taken_over_http_is_restored_listed_and_deleted() -> None:
    with served(topics=[TopicSpec("orders")]) as (broker, control):
        broker.create_topic("prepared", 2)
        status, taken = call(control, "POST", "/snapshots")
        assert status == 201 and taken["id"] == "1" and taken["topics"] == ["orders", "prepared"]
        broker.create_topic("scratch")
        broker.delete_topic("prepared")
        broker.clock.advance(10)
        assert call(control, "GET", "/snapshots") == (200, {"snapshots": [taken]})
        assert call(control, "POST", "/snapshots/1/restore") == (200, {"restored": "1",
                                                                        "topics": ["orders", "prepared"]})
        assert broker.clock.now_ms() < taken["taken_ms"] + 10_000  # the clock went back too
        broker.create_topic("scratch-again")
        assert call(control, "POST", "/snapshots/1/restore")[1]["topics"] == ["orders", "prepared"]  # again
        assert call(control, "DELETE", "/snapshots/1") == (200, {"deleted": "1"})
        assert call(control, "GET", "/snapshots") == (200, {"snapshots": []})
        assert call(control, "POST", "/snapshots")[1]["id"] == "2"  # ids are not given twice


def test_reset_over_http_goes_back_to_the_topics_made_at_start() -> None:
    with served(topics=[TopicSpec("orders")]) as (broker, control):
        broker.create_topic("scratch")
        broker.inject(0, error=6)
        broker.clock.advance(60)
        status, got = call(control, "POST", "/reset")
        assert (status, got) == (200, {"deleted_topics": ["scratch"], "cleared_faults": 1, "topics": ["orders"]})
        at_start = broker.snapshots.at_start
        assert at_start is not None and broker.faults.rules == [] and broker.clock.now_ms() < at_start.taken_ms + 60_000


def test_unknown_snapshots_and_bodies_are_refused() -> None:
    with served() as (_broker, control):
        assert call(control, "POST", "/snapshots/7/restore")[0:2] == (404, {
            "error": "unknown_snapshot", "message": "no snapshot '7' (GET /snapshots lists them)"})
        assert call(control, "DELETE", "/snapshots/7")[0] == 404
        assert call(control, "POST", "/snapshots", {"name": "x"})[1]["error"] == "unknown_field"
        assert call(control, "POST", "/reset", {"everything": True})[1]["error"] == "unknown_field"


def test_a_broker_with_a_data_dir_answers_409_and_its_reset_deletes_topics(tmp_path: Path) -> None:
    with served(data_dir=str(tmp_path)) as (broker, control):
        status, got = call(control, "POST", "/snapshots")
        assert (status, got["error"]) == (409, "snapshots_unavailable") and "memory mode" in got["message"]
        broker.create_topic("kept-on-disk")
        assert call(control, "POST", "/reset")[1]["deleted_topics"] == ["kept-on-disk"]


def test_under_acls_snapshots_and_reset_need_cluster_alter() -> None:
    users = {"bob": "bob-secret", "admin": "admin-secret"}
    with served(security="SASL_PLAINTEXT", users=users, acls=True, super_users=["User:admin"]) as (broker, control):
        bob, admin = ("bob", "bob-secret"), ("admin", "admin-secret")
        for method, path in (("POST", "/snapshots"), ("GET", "/snapshots"), ("POST", "/reset"),
                             ("POST", "/snapshots/1/restore"), ("DELETE", "/snapshots/1")):
            status, got = call(control, method, path, None, bob)
            assert (status, got["error"]) == (403, "forbidden"), (method, path, got)
        assert call(control, "POST", "/snapshots", None, admin)[0] == 201
        broker.add_acl("User:bob", "ALTER", cluster=True)
        assert call(control, "POST", "/snapshots/1/restore", None, bob)[0] == 200
        assert broker.acls() == []  # the snapshot had no ACL: bob's is gone with the restore
