"""The registry's REST API (mockbroker/registry/http.py) over HTTP, beside a running broker: every route,
Confluent's bodies, error codes and content type, and bad input answered with an error body, never a 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

aiohttp = pytest.importorskip("aiohttp")

from mockbroker import MockBroker  # noqa: E402
from mockbroker.registry.http import CONTENT_TYPE, MAX_BODY  # noqa: E402

V1 = json.dumps({"type": "record", "name": "User", "fields": [{"name": "a", "type": "int"}]})
V2 = json.dumps({"type": "record", "name": "User", "fields": [
    {"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}]})
BAD = json.dumps({"type": "record", "name": "User", "fields": [{"name": "a", "type": "string"}]})


class Client:
    def __init__(self, session: Any, url: str) -> None:
        self.session, self.url = session, url

    async def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        async with self.session.request(method, self.url + path, data=data,
                                        headers={"Content-Type": CONTENT_TYPE}) as resp:
            assert resp.headers["Content-Type"] == CONTENT_TYPE
            return resp.status, json.loads(await resp.read())


@pytest.fixture
async def api() -> AsyncIterator[Client]:
    async with MockBroker(schema_registry=True) as broker, aiohttp.ClientSession() as session:
        assert broker.schema_registry_url.startswith("http://127.0.0.1:")
        yield Client(session, broker.schema_registry_url)


def error(status: int, body: Any) -> tuple[int, int]:
    assert set(body) == {"error_code", "message"} and isinstance(body["message"], str), body
    return status, body["error_code"]


async def test_register_look_up_and_read(api: Client) -> None:
    assert await api("POST", "/subjects/users-value/versions", {"schema": V1}) == (200, {"id": 1})
    assert await api("POST", "/subjects/users-value/versions", {"schema": V2, "schemaType": "AVRO"}) == (200, {"id": 2})
    assert await api("POST", "/subjects/other/versions?normalize=False", {"schema": V1}) == (200, {"id": 1})
    assert await api("GET", "/subjects") == (200, ["other", "users-value"])
    assert await api("GET", "/subjects/users-value/versions") == (200, [1, 2])
    status, body = await api("GET", "/subjects/users-value/versions/latest")
    assert status == 200 and body["version"] == 2 and body["id"] == 2 and json.loads(body["schema"]) == json.loads(V2)
    assert (await api("GET", "/subjects/users-value/versions/-1"))[1]["version"] == 2
    status, body = await api("GET", "/subjects/users-value/versions/1/schema")
    assert status == 200 and json.loads(body) == json.loads(V1)
    status, body = await api("POST", "/subjects/users-value", {"schema": V1})
    assert (status, body["version"], body["id"], body["subject"]) == (200, 1, 1, "users-value")
    status, body = await api("GET", "/schemas/ids/1")
    assert status == 200 and json.loads(body["schema"]) == json.loads(V1)
    assert await api("GET", "/schemas/ids/1/subjects") == (200, ["other", "users-value"])
    assert await api("GET", "/schemas/ids/1/versions") == (200, [{"subject": "other", "version": 1},
                                                                 {"subject": "users-value", "version": 1}])
    assert await api("GET", "/schemas/types") == (200, ["AVRO", "JSON", "PROTOBUF"])
    assert await api("GET", "/subjects/users-value/versions/1/referencedby") == (200, [])


async def test_a_subject_name_with_a_slash_is_one_subject(api: Client) -> None:
    assert await api("POST", "/subjects/a%2Fb/versions", {"schema": V1}) == (200, {"id": 1})
    assert await api("GET", "/subjects") == (200, ["a/b"])
    assert (await api("GET", "/subjects/a%2Fb/versions/1"))[1]["subject"] == "a/b"


async def test_deletes_soft_then_permanent(api: Client) -> None:
    await api("POST", "/subjects/s/versions", {"schema": V1})
    await api("POST", "/subjects/s/versions", {"schema": V2})
    assert error(*await api("DELETE", "/subjects/s/versions/2?permanent=true")) == (404, 40407)
    assert await api("DELETE", "/subjects/s/versions/2") == (200, 2)
    assert await api("GET", "/subjects/s/versions") == (200, [1])
    assert await api("GET", "/subjects/s/versions?deleted=true") == (200, [1, 2])
    assert error(*await api("GET", "/subjects/s/versions/2")) == (404, 40402)
    assert (await api("GET", "/subjects/s/versions/2?deleted=true"))[0] == 200
    assert error(*await api("DELETE", "/subjects/s?permanent=true")) == (404, 40405)
    assert await api("DELETE", "/subjects/s") == (200, [1])
    assert await api("GET", "/subjects") == (200, [])
    assert await api("GET", "/subjects?deleted=true") == (200, ["s"])
    assert await api("DELETE", "/subjects/s?permanent=true") == (200, [1, 2])
    assert error(*await api("GET", "/schemas/ids/1")) == (404, 40403)


async def test_config_compatibility_and_mode(api: Client) -> None:
    assert await api("GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    await api("POST", "/subjects/s/versions", {"schema": V1})
    status, body = await api("POST", "/subjects/s/versions", {"schema": BAD})
    assert (status, body["error_code"]) == (409, 409)
    assert body["message"].startswith('Schema being registered is incompatible with an earlier schema for subject "s"')
    assert "TYPE_MISMATCH" in body["message"]
    assert await api("POST", "/compatibility/subjects/s/versions/latest", {"schema": BAD}) == (
        200, {"is_compatible": False})
    status, body = await api("POST", "/compatibility/subjects/s/versions/1?verbose=true", {"schema": BAD})
    assert status == 200 and body["is_compatible"] is False and "{oldSchemaVersion: 1}" in body["messages"]
    assert await api("POST", "/compatibility/subjects/s/versions?verbose=true", {"schema": V2}) == (
        200, {"is_compatible": True, "messages": []})
    assert error(*await api("GET", "/config/s")) == (404, 40408)
    assert await api("GET", "/config/s?defaultToGlobal=true") == (200, {"compatibilityLevel": "BACKWARD"})
    assert await api("PUT", "/config/s", {"compatibility": "none"}) == (200, {"compatibility": "NONE"})
    assert await api("GET", "/config/s") == (200, {"compatibilityLevel": "NONE"})
    assert await api("POST", "/subjects/s/versions", {"schema": BAD}) == (200, {"id": 2})
    assert error(*await api("PUT", "/config", {"compatibility": "SIDEWAYS"})) == (422, 42203)
    assert await api("PUT", "/config", {"compatibility": "FULL_TRANSITIVE"}) == (200, {"compatibility": "FULL_TRANSITIVE"})
    assert await api("DELETE", "/config/s") == (200, {"compatibilityLevel": "NONE"})
    assert await api("GET", "/mode") == (200, {"mode": "READWRITE"})
    assert await api("PUT", "/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    assert error(*await api("POST", "/subjects/t/versions", {"schema": V1})) == (422, 42205)
    assert error(*await api("PUT", "/mode", {"mode": "IMPORT"})) == (422, 42205)  # subjects exist
    assert error(*await api("PUT", "/mode", {"mode": "SIDEWAYS"})) == (422, 42204)
    assert await api("PUT", "/mode/t", {"mode": "READWRITE"}) == (200, {"mode": "READWRITE"})
    assert await api("GET", "/mode/t") == (200, {"mode": "READWRITE"})
    assert error(*await api("GET", "/mode/u")) == (404, 40409)
    assert await api("POST", "/subjects/t/versions", {"schema": V1}) == (200, {"id": 1})


@pytest.mark.parametrize(("method", "path", "body", "expected"), [
    ("GET", "/subjects/nope/versions", None, (404, 40401)),
    ("GET", "/subjects/nope/versions/latest", None, (404, 40401)),
    ("POST", "/subjects/nope", {"schema": V1}, (404, 40401)),
    ("DELETE", "/subjects/nope", None, (404, 40401)),
    ("GET", "/subjects/s/versions/7", None, (404, 40402)),
    ("POST", "/subjects/s", {"schema": V2}, (404, 40403)),
    ("GET", "/schemas/ids/99", None, (404, 40403)),
    ("GET", "/schemas/ids/abc", None, (404, 40403)),
    ("GET", "/schemas/ids/99999999999999999999", None, (404, 40403)),
    ("POST", "/subjects/s/versions", {"schema": "{"}, (422, 42201)),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "record", "name": "R"}'}, (422, 42201)),
    ("POST", "/subjects/s/versions", {"schema": '"int"', "schemaType": "PROTOBUF"}, (422, 42201)),
    ("POST", "/subjects/s/versions", {"schema": 5}, (422, 42201)),
    ("POST", "/subjects/s/versions", {}, (422, 42201)),
    ("POST", "/subjects/s/versions", {"schema": V1, "references": [{"name": "x", "subject": "y", "version": 1}]},
     (422, 42201)),
    ("GET", "/subjects/s/versions/0", None, (422, 42202)),
    ("GET", "/subjects/s/versions/2147483648", None, (422, 42202)),
    ("DELETE", "/subjects/s/versions/-5", None, (422, 42202)),
    ("POST", "/subjects/a%01b/versions", {"schema": V1}, (422, 42208)),
    ("POST", "/subjects/s/versions", [1, 2], (422, 422)),
    ("PUT", "/config", {"compatibility": None}, (422, 42203)),
    ("GET", "/nowhere", None, (404, 404)),
    ("PATCH", "/subjects", None, (405, 405)),
    ("POST", "/schemas/types", None, (405, 405)),
    ("POST", "/compatibility/subjects/nope/versions/latest", {"schema": V1}, (404, 40401)),
])
async def test_errors_get_confluent_bodies(api: Client, method: str, path: str, body: Any,
                                           expected: tuple[int, int]) -> None:
    await api("POST", "/subjects/s/versions", {"schema": V1})
    assert error(*await api(method, path, body)) == expected


@pytest.mark.parametrize("raw", [b"{", b"[" * 10000, b'{"schema": NaN}', b"\xff\xfe\x00", b'{"schema": 1e999}'])
async def test_malformed_bodies_are_400_not_500(api: Client, raw: bytes) -> None:
    assert error(*await api("POST", "/subjects/s/versions", raw=raw)) == (400, 400)


async def test_an_oversize_body_is_413(api: Client) -> None:
    status, body = await api("POST", "/subjects/s/versions", raw=b" " * (MAX_BODY + 1))
    assert error(status, body) == (413, 413)


def nested_arrays(depth: int) -> str:
    return '{"type": "array", "items": ' * depth + '"int"' + "}" * depth


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/subjects/s/versions", {"schema": nested_arrays(500)}),  # deeper than a schema may nest
    ("POST", "/subjects/s/versions", {"schema": "\x00\xff" * 100}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "record", "name": "R", "fields": [{"name": 1}]}'}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "record", "name": "R", "fields": {"a": 1}}'}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "enum", "name": "E", "symbols": [[], {}]}'}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": {"type": {"type": 5}}}'}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "fixed", "name": "F", "size": -1}'}),
    ("POST", "/subjects/s/versions", {"schema": '{"type": "map"}'}),
    ("POST", "/subjects/s/versions", {"schema": V1, "schemaType": ["AVRO"]}),
    ("POST", "/subjects/s/versions", {"schema": V1, "references": "x"}),
    ("POST", "/subjects/s", {"schema": {"type": "int"}}),
    ("POST", "/compatibility/subjects/s/versions/latest", {"schema": "{"}),
    ("POST", "/compatibility/subjects/s/versions/99999999999999999999", {"schema": V1}),
    ("PUT", "/config/s", {"compatibility": ["BACKWARD"]}),
    ("PUT", "/mode", {"mode": {}}),
    ("PUT", "/config/" + "%00", {"compatibility": "NONE"}),
    ("GET", "/subjects/" + "x" * 10000 + "/versions", None),
    ("GET", "/schemas/ids/-1", None),
    ("GET", "/schemas/ids/1/nope", None),
    ("DELETE", "/subjects/s/versions/latest?permanent=true", None),
    ("GET", "/subjects/%ZZ/versions", None),
    ("GET", "/config/a/b", None),
])
async def test_a_sweep_of_bad_input_gets_a_4xx_error_body(api: Client, method: str, path: str, body: Any) -> None:
    await api("POST", "/subjects/s/versions", {"schema": V1})
    status, answer = await api(method, path, body)
    assert 400 <= status < 500, (status, answer)
    error(status, answer)


async def test_the_remaining_routes(api: Client) -> None:
    assert await api("GET", "/") == (200, {})
    await api("POST", "/subjects/s/versions", {"schema": V1})
    status, body = await api("GET", "/schemas/ids/1/schema")
    assert status == 200 and json.loads(body) == json.loads(V1)
    assert await api("PUT", "/config", {"compatibility": "NONE"}) == (200, {"compatibility": "NONE"})
    assert await api("DELETE", "/config") == (200, {"compatibilityLevel": "NONE"})
    assert await api("GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert await api("PUT", "/mode/s", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    assert error(*await api("DELETE", "/subjects/s/versions/1")) == (422, 42205)
    assert await api("DELETE", "/mode/s") == (200, {"mode": "READONLY"})
    assert await api("GET", "/mode/s?defaultToGlobal=true") == (200, {"mode": "READWRITE"})
    assert await api("PUT", "/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    assert await api("DELETE", "/mode") == (200, {"mode": "READONLY"})
    assert await api("GET", "/mode") == (200, {"mode": "READWRITE"})
    assert await api("DELETE", "/subjects/s/versions/latest") == (200, 1)


async def test_references_import_normalize_and_serialized_over_http(api: Client) -> None:
    address = json.dumps({"type": "record", "name": "Address", "fields": [{"name": "city", "type": "string"}]})
    user = json.dumps({"type": "record", "name": "U", "fields": [{"name": "home", "type": "Address"}]})
    ref = [{"name": "Address", "subject": "address", "version": 1}]
    assert await api("POST", "/subjects/address/versions", {"schema": address}) == (200, {"id": 1})
    assert await api("POST", "/subjects/user/versions", {"schema": user, "references": ref}) == (200, {"id": 2})
    status, body = await api("GET", "/subjects/user/versions/1")
    assert status == 200 and body["references"] == ref
    assert (await api("GET", "/schemas/ids/2"))[1]["references"] == ref
    assert (await api("POST", "/subjects/user", {"schema": user, "references": ref}))[1]["version"] == 1
    assert await api("GET", "/subjects/address/versions/1/referencedby") == (200, [2])
    assert error(*await api("DELETE", "/subjects/address/versions/1")) == (422, 42206)
    assert error(*await api("POST", "/subjects/x/versions", {"schema": address, "id": 50})) == (422, 42205)
    assert error(*await api("PUT", "/mode", {"mode": "IMPORT"})) == (422, 42205)
    assert await api("PUT", "/mode/x", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert error(*await api("POST", "/subjects/x/versions", {"schema": address, "id": "50"})) == (422, 42201)
    assert error(*await api("POST", "/subjects/x/versions", {"schema": address, "version": 0, "id": -1})) == (
        422, 42205)  # neither given: import mode refuses
    assert await api("POST", "/subjects/x/versions", {"schema": address, "id": 50, "version": 4}) == (200, {"id": 50})
    assert await api("GET", "/subjects/x/versions") == (200, [4])
    assert await api("PUT", "/mode?force=true", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert await api("PUT", "/mode", {"mode": "READWRITE"}) == (200, {"mode": "READWRITE"})
    spaced = '{"type": "record", "fields": [], "name": "N"}'
    assert await api("POST", "/subjects/n/versions?normalize=true", {"schema": spaced}) == (200, {"id": 51})
    assert (await api("GET", "/schemas/ids/51"))[1] == {"schema": '{"fields":[],"name":"N","type":"record"}'}
    proto = 'syntax = "proto3";\nmessage P { int32 a = 1; }\n'
    assert await api("POST", "/subjects/p/versions", {"schema": proto, "schemaType": "PROTOBUF"}) == (200, {"id": 52})
    status, body = await api("GET", "/schemas/ids/52?format=serialized")
    assert status == 200 and body["schemaType"] == "PROTOBUF" and "message" not in body["schema"]
    assert (await api("GET", "/subjects/p/versions/1?format=serialized"))[1]["schema"] == body["schema"]
