"""The HTTP endpoint as an admin surface (issue #33 item 8): on a broker with SASL users it wants HTTP Basic
credentials of one of them (PLAIN or SCRAM, checked against the broker's store), under ACLs the principal
may do only what the Kafka APIs would let it, `auth="none"` opts out, and a broker without users stays open."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.http import ControlServer
from mockbroker.security.credentials import credential_from_password
from mockbroker.server import MockBroker

pytestmark = pytest.mark.adversarial


@contextlib.contextmanager
def served(auth: str = "basic", **broker_kwargs: Any) -> Iterator[tuple[MockBroker, ControlServer]]:
    with MockBroker(port=0, **broker_kwargs).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker, auth=auth).start("127.0.0.1", 0),
                                                   broker._loop).result(30)
        try:
            yield broker, control
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(30)


def call(control: ControlServer, method: str, path: str, body: Any = None,
         user: tuple[str, str] | None = None) -> tuple[int, Any, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection("127.0.0.1", control.port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode()
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        ctype = resp.getheader("Content-Type", "")
        return resp.status, (json.loads(payload) if ctype.startswith("application/json") else payload), resp
    finally:
        conn.close()


SASL = {"security": "SASL_PLAINTEXT", "users": {"alice": "alice-secret", "bob": "bob-secret"}}


def test_anonymous_requests_are_refused_401_with_a_basic_challenge() -> None:
    with served(**SASL) as (broker, control):
        for method, path, body in (("POST", "/topics", {"name": "t"}), ("GET", "/topics", None),
                                   ("POST", "/clock/advance", {"seconds": 1}), ("GET", "/console/index.html", None),
                                   ("GET", "/events", None), ("GET", "/openapi.json", None)):
            status, got, resp = call(control, method, path, body)
            assert status == 401, (path, got)
            assert resp.getheader("WWW-Authenticate", "").startswith('Basic realm="mockbroker"')
        assert broker.topics() == []


def test_a_user_with_the_right_password_is_served_a_wrong_one_refused() -> None:
    with served(**SASL) as (broker, control):
        status, got, _ = call(control, "POST", "/topics", {"name": "t"}, ("alice", "alice-secret"))
        assert status == 201, got
        for user in (("alice", "bob-secret"), ("alice", ""), ("carol", "alice-secret"), ("alice", "alice-secret ")):
            status, got, _ = call(control, "POST", "/topics/t/records", {"value": "v"}, user)
            assert (status, got["error"]) == (401, "unauthorized"), user
        status, got, _ = call(control, "POST", "/topics/t/records", {"value": "v"}, ("bob", "bob-secret"))
        assert status == 201, got
        assert [r.value for r in broker.records("t")] == [b"v"]


def test_malformed_authorization_headers_are_refused_401() -> None:
    with served(**SASL) as (_, control):
        for header in ("Basic", "Basic !!!", "Bearer abc", "Basic " + base64.b64encode(b"no-colon").decode(),
                       "Basic " + base64.b64encode(b"\xff\xfe:x").decode()):
            conn = http.client.HTTPConnection("127.0.0.1", control.port, timeout=10)
            try:
                conn.request("GET", "/topics", headers={"Authorization": header})
                resp = conn.getresponse()
                assert resp.status == 401 and json.loads(resp.read())["error"] == "unauthorized", header
            finally:
                conn.close()


def test_scram_only_users_log_in_with_their_password() -> None:
    with served(security="SASL_PLAINTEXT") as (broker, control):
        assert call(control, "GET", "/topics")[0] == 200  # no users yet: open, as before
        credential = credential_from_password("SCRAM-SHA-512", "scram-pw", 4096)
        broker._call(broker.security.credentials.set_scram, "sam", "SCRAM-SHA-512", credential)
        assert call(control, "GET", "/topics")[0] == 401  # a user now exists
        assert call(control, "GET", "/topics", user=("sam", "wrong"))[0] == 401
        for _ in range(2):  # the second check comes from the cache of verified passwords
            assert call(control, "GET", "/topics", user=("sam", "scram-pw"))[0] == 200
        broker._call(broker.security.credentials.delete_scram, "sam", "SCRAM-SHA-512")
        assert call(control, "GET", "/topics", user=("sam", "scram-pw"))[0] == 200  # no users: open again
        broker._call(broker.security.credentials.set_scram, "sam", "SCRAM-SHA-512",
                     credential_from_password("SCRAM-SHA-512", "new-pw", 4096))
        assert call(control, "GET", "/topics", user=("sam", "scram-pw"))[0] == 401  # the cache follows the store
        assert call(control, "GET", "/topics", user=("sam", "new-pw"))[0] == 200


def test_http_auth_none_opts_out() -> None:
    with served(auth="none", **SASL) as (broker, control):
        status, got, _ = call(control, "POST", "/topics", {"name": "open"})
        assert status == 201, got
        assert broker.topics() == ["open"]


def test_a_broker_without_users_stays_open() -> None:
    with served() as (broker, control):
        assert call(control, "POST", "/topics", {"name": "t"})[0] == 201
        assert call(control, "GET", "/console/index.html")[0] == 200


ACLS = {**SASL, "acls": True, "super_users": ["User:admin"],
        "users": {"alice": "alice-secret", "bob": "bob-secret", "admin": "admin-secret"}}
ALICE, BOB, ADMIN = ("alice", "alice-secret"), ("bob", "bob-secret"), ("admin", "admin-secret")


def test_under_acls_a_user_without_acls_is_refused_403() -> None:
    with served(**ACLS) as (broker, control):
        assert call(control, "POST", "/topics", {"name": "t"}, ADMIN)[0] == 201
        for method, path, body in (("POST", "/topics", {"name": "u"}), ("GET", "/topics/t/records", None),
                                   ("POST", "/topics/t/records", {"value": "v"}), ("DELETE", "/topics/t", None),
                                   ("POST", "/acls", {"principal": "User:*", "operation": "ALL",
                                                      "resource_type": "TOPIC", "name": "*"}),
                                   ("GET", "/requests", None), ("POST", "/clock/advance", {"seconds": 1}),
                                   ("POST", "/nodes/1/latency", {"ms": 5}), ("GET", "/events", None)):
            status, got, _ = call(control, method, path, body, BOB)
            assert (status, got["error"]) == (403, "forbidden"), (method, path, got)
            assert "User:bob" in got["message"]
        assert broker.topics() == ["t"] and broker.acls() == []
        assert call(control, "GET", "/health", user=BOB)[0] == 200  # authentication alone


def test_under_acls_each_operation_needs_its_kafka_acl() -> None:
    with served(**ACLS) as (broker, control):
        assert call(control, "POST", "/topics", {"name": "t"}, ADMIN)[0] == 201

        def grant(op: str, rtype: str = "TOPIC", name: str = "t") -> None:
            status, got, _ = call(control, "POST", "/acls", {"principal": "User:alice", "operation": op,
                                                             "resource_type": rtype, "name": name}, ADMIN)
            assert status == 201, got

        assert call(control, "POST", "/topics/t/records", {"value": "v"}, ALICE)[0] == 403
        grant("WRITE")
        assert call(control, "POST", "/topics/t/records", {"value": "v"}, ALICE)[0] == 201
        assert call(control, "GET", "/topics/t", user=ALICE)[0] == 200  # WRITE implies DESCRIBE
        assert call(control, "GET", "/topics/t/records", user=ALICE)[0] == 403
        grant("READ")
        status, got, _ = call(control, "GET", "/topics/t/records", user=ALICE)
        assert status == 200 and [r["value"] for r in got["records"]] == ["v"]
        assert call(control, "POST", "/topics", {"name": "mine"}, ALICE)[0] == 403
        grant("CREATE", name="mine")
        assert call(control, "POST", "/topics", {"name": "mine"}, ALICE)[0] == 201
        assert call(control, "DELETE", "/topics/mine", user=ALICE)[0] == 403
        assert call(control, "POST", "/clock/advance", {"seconds": 1}, ALICE)[0] == 403
        assert call(control, "GET", "/requests", user=ALICE)[0] == 403
        grant("DESCRIBE", "CLUSTER", "kafka-cluster")
        assert call(control, "GET", "/requests", user=ALICE)[0] == 200
        assert call(control, "POST", "/clock/advance", {"seconds": 1}, ALICE)[0] == 403
        grant("ALTER", "CLUSTER", "kafka-cluster")
        assert call(control, "POST", "/clock/advance", {"seconds": 1}, ALICE)[0] == 200


@pytest.mark.parametrize("mode", ["basic", "none"])
def test_the_console_gets_the_browser_prompt_only_with_users(mode: str) -> None:
    with served(auth=mode, **SASL) as (_, control):
        status, _, resp = call(control, "GET", "/console/index.html")
        if mode == "basic":
            assert status == 401 and resp.getheader("WWW-Authenticate", "").startswith("Basic ")
            assert call(control, "GET", "/console/index.html", user=ALICE)[0] == 200
        else:
            assert status == 200


def _command_status(extra: list[str], env: dict[str, str] | None = None) -> int:
    """The status of an anonymous GET /topics on `mockbroker --user alice:pw --http-port 0 <extra>`."""
    import os
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    argv = [sys.executable, "-m", "mockbroker", "--http-port", "0", "--listener",
            "SASL_PLAINTEXT://127.0.0.1:0", "--user", "alice:pw", *extra]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**clean, **(env or {})})
    try:
        assert proc.stdout is not None
        url = None
        for _ in range(10):
            line = proc.stdout.readline()
            if line.startswith("mockbroker control endpoint on "):
                url = line.split(" on ", 1)[1].strip()
                break
        assert url is not None
        try:
            with urllib.request.urlopen(url + "/topics", timeout=60) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return exc.code
    finally:
        proc.terminate()
        proc.wait(60)
        if proc.stdout is not None:
            proc.stdout.close()


def test_the_command_wants_credentials_unless_http_auth_none() -> None:
    assert _command_status([]) == 401
    assert _command_status(["--http-auth", "none"]) == 200
    assert _command_status([], {"MOCKBROKER_HTTP_AUTH": "none"}) == 200
    assert _command_status(["--http-auth", "basic"], {"MOCKBROKER_HTTP_AUTH": "none"}) == 401  # the flag wins


def test_http_auth_settings() -> None:
    from mockbroker.envconfig import ConfigError, Flags, build_settings

    assert build_settings({}).http_auth == "basic"
    assert build_settings({"MOCKBROKER_HTTP_AUTH": "none"}).http_auth == "none"
    assert build_settings({"MOCKBROKER_HTTP_AUTH": "none"}, Flags(http_auth="basic")).http_auth == "basic"
    with pytest.raises(ConfigError, match="MOCKBROKER_HTTP_AUTH"):
        build_settings({"MOCKBROKER_HTTP_AUTH": "open"})


def test_https_when_the_broker_has_tls_material() -> None:
    import ssl

    with served(security="SASL_SSL", users={"alice": "alice-secret"}) as (broker, control):
        assert control.url.startswith("https://")
        ctx = ssl.create_default_context(cafile=broker.tls.ca_file)
        conn = http.client.HTTPSConnection("localhost", control.port, timeout=10, context=ctx)
        try:
            auth = "Basic " + base64.b64encode(b"alice:alice-secret").decode()
            conn.request("GET", "/topics", headers={"Authorization": auth})
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read()) == {"topics": []}
        finally:
            conn.close()
        plain = http.client.HTTPConnection("127.0.0.1", control.port, timeout=10)  # plain HTTP gets no answer
        try:
            with pytest.raises((http.client.HTTPException, ConnectionError)):
                plain.request("GET", "/health")
                plain.getresponse()
        finally:
            plain.close()
    with served(security="SASL_PLAINTEXT", users={"alice": "alice-secret"}) as (_, control):
        assert control.url.startswith("http://")
