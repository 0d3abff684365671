"""The HTTP endpoint's ACL calls: GET/POST/DELETE /acls against the broker's authorizer, the errors
of bad input, 409 without an authorizer, and the routes in /openapi.json."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.console.conftest import served_console
from tests.docker.test_control_http import Api


@pytest.fixture
def api() -> Iterator[Api]:
    with served_console(acls=True) as c:
        yield Api(c.broker, c.control)


def test_acls_added_listed_and_deleted_over_http(api: Api) -> None:
    status, added, _ = api.request("POST", "/acls", {"principal": "User:alice", "operation": ["READ", "DESCRIBE"],
                                                     "resource_type": "topic", "name": "orders-",
                                                     "pattern": "PREFIXED"})
    assert status == 201
    assert [a["operation"] for a in added["acls"]] == ["READ", "DESCRIBE"]
    assert api.request("POST", "/acls", {"principal": "User:bob", "operation": "ALTER",
                                         "resource_type": "CLUSTER"})[0] == 201
    assert len(api.get("/acls")["acls"]) == 3
    matched = api.get("/acls?resource_type=TOPIC&name=orders-eu&pattern=MATCH")["acls"]
    assert {(a["principal"], a["resource_name"], a["pattern_type"]) for a in matched} == {
        ("User:alice", "orders-", "PREFIXED")}
    assert [b.principal for b in api.broker.acls()] == ["User:alice", "User:alice", "User:bob"]
    status, deleted, _ = api.request("DELETE", "/acls?principal=User:alice")
    assert status == 200 and len(deleted["deleted"]) == 2
    assert [a["resource_type"] for a in api.get("/acls")["acls"]] == ["CLUSTER"]


@pytest.mark.parametrize(("method", "path", "body", "status", "error"), [
    ("POST", "/acls", {"principal": "User:a", "operation": "READ"}, 400, "missing_field"),
    ("POST", "/acls", {"principal": "User:a", "operation": "FLY", "resource_type": "TOPIC", "name": "t"}, 400,
     "bad_field"),
    ("POST", "/acls", {"principal": "alice", "operation": "READ", "resource_type": "TOPIC", "name": "t"}, 400,
     "bad_field"),
    ("POST", "/acls", {"principal": "User:a", "operation": "READ", "resource_type": "TOPIC", "name": "t",
                       "color": "red"}, 400, "unknown_field"),
    ("GET", "/acls?operation=FLY", None, 400, "bad_query"),
    ("DELETE", "/acls?colour=red", None, 400, "bad_query"),
])
def test_bad_acl_calls_get_clear_errors(api: Api, method: str, path: str, body: object, status: int,
                                        error: str) -> None:
    got, payload, _ = api.request(method, path, body)
    assert (got, payload["error"]) == (status, error), payload
    assert api.broker.acls() == []


def test_without_authorizer_acl_calls_answer_409() -> None:
    with served_console() as c:
        got, payload, _ = Api(c.broker, c.control).request("GET", "/acls")
    assert (got, payload["error"]) == (409, "security_disabled")


def test_the_openapi_description_lists_the_acl_api(api: Api) -> None:
    path = api.get("/openapi.json")["paths"]["/acls"]
    assert set(path) == {"get", "post", "delete"}
    assert "principal" in [p["name"] for p in path["get"]["parameters"]]
