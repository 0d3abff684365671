"""The registry's HTTP Basic authentication over the broker's SASL users (registry/http.py, on
security/basic_auth.py): on when the broker has users, PLAIN or SCRAM passwords accepted, anything else 401
with Confluent's body; open without users, or with its auth set to "none" (the command's --http-auth none)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")
pytest.importorskip("fastavro")
pytest.importorskip("httpx")
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402

from mockbroker import MockBroker  # noqa: E402
from mockbroker.security.basic_auth import decode_basic, password_matches  # noqa: E402
from mockbroker.security.credentials import Credentials  # noqa: E402

SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


@pytest.fixture(scope="module")
def broker() -> Iterator[MockBroker]:
    with MockBroker(users={"alice": "wonder"}, schema_registry=True).run_in_thread() as b:
        b.add_user("scrammy", "s3cret", mechanism="SCRAM-SHA-512")
        yield b


def get(url: str, authorization: str | None = None) -> tuple[int, dict[str, str], object]:
    request = urllib.request.Request(url, headers={"Authorization": authorization} if authorization else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_the_confluent_client_with_basic_auth_user_info_passes(broker: MockBroker) -> None:
    client = SchemaRegistryClient({"url": broker.schema_registry_url, "basic.auth.user.info": "alice:wonder"})
    schema_id = client.register_schema("auth-value", Schema(SCHEMA, "AVRO"))
    assert client.get_latest_version("auth-value").schema_id == schema_id
    scram = SchemaRegistryClient({"url": broker.schema_registry_url, "basic.auth.user.info": "scrammy:s3cret"})
    assert json.loads(scram.get_schema(schema_id).schema_str or "") == json.loads(SCHEMA)  # a SCRAM-only user's password opens it too


@pytest.mark.parametrize("user_info", ["alice:wrong", "nobody:wonder", "scrammy:wonder"])
def test_a_wrong_password_is_a_401_through_the_client(broker: MockBroker, user_info: str) -> None:
    client = SchemaRegistryClient({"url": broker.schema_registry_url, "basic.auth.user.info": user_info})
    with pytest.raises(SchemaRegistryError) as caught:
        client.get_subjects()
    assert caught.value.http_status_code == 401 and caught.value.error_code == 401


@pytest.mark.parametrize("authorization", [None, "Bearer abc", "Basic !!!", basic("alice", "nope"),
                                           "Basic " + base64.b64encode(b"alice").decode()])
def test_refusals_are_confluents_401_body(broker: MockBroker, authorization: str | None) -> None:
    status, headers, body = get(f"{broker.schema_registry_url}/subjects", authorization)
    assert status == 401 and body == {"error_code": 401, "message": "Unauthorized"}
    assert headers["Content-Type"] == "application/vnd.schemaregistry.v1+json"
    assert headers["WWW-Authenticate"].startswith("Basic realm=")


def test_users_come_and_go_and_auth_none_opens_it(broker: MockBroker) -> None:
    url = f"{broker.schema_registry_url}/schemas/types"
    broker.add_user("temp", "pw")
    assert get(url, basic("temp", "pw"))[0] == 200
    broker.remove_user("temp")
    assert get(url, basic("temp", "pw"))[0] == 401  # a verified password is not remembered past its user
    assert broker.schema_registry is not None
    broker.schema_registry.api.auth = "none"
    try:
        assert get(url) == (200, get(url)[1], ["AVRO", "JSON", "PROTOBUF"])
    finally:
        broker.schema_registry.api.auth = "basic"
    assert get(url)[0] == 401


def test_without_users_it_is_open() -> None:
    with MockBroker(schema_registry=True).run_in_thread() as b:
        assert get(f"{b.schema_registry_url}/subjects")[:3:2] == (200, [])


def test_the_credential_check_is_a_pure_function() -> None:
    credentials = Credentials()
    credentials.add_user("u", "p", mechanisms=("SCRAM-SHA-256",))
    assert password_matches(credentials, "u", "p") is credentials.scram["u"]["SCRAM-SHA-256"]
    assert password_matches(credentials, "u", "q") is None and password_matches(credentials, "v", "p") is None
    assert decode_basic(basic("a:b", "c:d")) == ("a", "b:c:d")  # the password is after the first colon
    assert decode_basic("basic " + base64.b64encode(b"x:").decode()) == ("x", "")
    assert decode_basic("Basic") is None and decode_basic("Digest abc") is None


@pytest.mark.parametrize("http_auth", ["basic", "none"])
def test_the_commands_http_auth_reaches_the_registry(http_auth: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--schema-registry-port", "0",
                             "--user", "alice:wonder", "--http-auth", http_auth, "--no-env"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        [url] = [line.removeprefix("mockbroker schema registry on ") for line in lines if "schema registry" in line]
        assert get(f"{url}/subjects")[0] == (401 if http_auth == "basic" else 200)
        assert get(f"{url}/subjects", basic("alice", "wonder"))[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
