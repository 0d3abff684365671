"""The OpenAPI 3.1 description of the JSON API (GET /openapi.json), built from json_api.ROUTES: one
operation per route with its summary, path parameter, query parameters (named in the summary as
`?a=&b=`), JSON body for POST, and the shared error shape. No I/O."""

from __future__ import annotations

import re
from typing import Any

from mockbroker.http.json_api import ROUTES

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {"error": {"type": "string", "description": "the kind of error, e.g. unknown_topic"},
                   "message": {"type": "string"}},
}


def _operation(method: str, path: str, summary: str, name: str) -> dict[str, Any]:
    params: list[dict[str, Any]] = []
    if "{name}" in path:
        what = "group id" if path.startswith(("/groups", "/share-groups")) else "topic name"
        params.append({"name": "name", "in": "path", "required": True, "description": what,
                       "schema": {"type": "string"}})
    if "{id}" in path:
        params.append({"name": "id", "in": "path", "required": True, "description": "node id",
                       "schema": {"type": "integer"}})
    query = re.search(r"\?([a-z_=&|]+)", summary)
    if query:
        for item in query.group(1).split("&"):
            key = item.split("=")[0]
            if key:
                params.append({"name": key, "in": "query", "required": False, "schema": {"type": "string"}})
    ok = "201" if "(201)" in summary else "200"
    op: dict[str, Any] = {
        "operationId": name,
        "summary": summary,
        "parameters": params,
        "responses": {
            ok: {"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}},
            "4XX": {"description": "what the caller got wrong",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    }
    if method == "POST":
        op["requestBody"] = {"required": False,
                             "content": {"application/json": {"schema": {"type": "object"}}}}
    return op


def openapi_document() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path, fn, summary in ROUTES:
        paths.setdefault(path, {})[method.lower()] = _operation(method, path, summary, fn.__name__)
    paths["/events"] = {"get": {
        "operationId": "events", "summary": "server-sent events: records, topics, groups, requests, clock, metrics",
        "responses": {"200": {"description": "an event stream", "content": {"text/event-stream": {}}}}}}
    paths["/metrics"]["get"]["responses"]["200"] = {"description": "Prometheus' text format",
                                                    "content": {"text/plain": {"schema": {"type": "string"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "mockbroker control API", "version": "1",
                 "description": "Inspect and steer a running mockbroker: topics, records, batches, "
                                "producers, transactions, groups, faults, the broker clock."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR_SCHEMA}},
    }
