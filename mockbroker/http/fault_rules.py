"""The control API's fault rules (POST /faults, listed in json_api.ROUTES): what a compose user sets without Python.

    POST /faults {api_key, error | drop | delay | response, count?, topic?, partition?, node?}

`error`, `drop` and `delay` are MockBroker.inject's (faults.make_rule); `response` is a canned answer: the
API's response fields as JSON (protocol/json_msgs.py: UUIDs as text, bytes as base64, error codes by name
or number; fields left out take the schema's defaults), sent instead of the broker's answer at the
request's version, as a request hook (MockBroker.intercept) returning it would. Every kind is a rule of
the broker's one list (faults.py), so GET /faults lists them and DELETE /faults removes them; the Python
hooks are listed too (`"action": "hook"`, with the function's name) but only clear_intercepts removes them.
"""

from __future__ import annotations

from typing import Any

from mockbroker.dispatch import lookup
from mockbroker.faults import FaultRule
from mockbroker.http.request import (
    HttpError,
    Request,
    field,
    int_field,
    number_field,
    reject_unknown_fields,
    with_api_name,
)
from mockbroker.protocol.errors import EncodeError, ErrorCode
from mockbroker.protocol.json_msgs import response_from_json
from mockbroker.protocol.messages import api_keys, api_name, encode_response

MAX_DELAY_S = 3_600  # a fault rule's delay: at most 1 hour, as a node's latency
INT32_MAX = 2**31 - 1
KINDS = ("error", "drop", "delay", "response")


def rule_json(rule: FaultRule) -> dict[str, Any]:
    """A rule as GET /faults shows it: the error by name, a hook by its function's name."""
    out = with_api_name(rule)
    if rule.action == "error":
        try:
            out["error"] = ErrorCode(rule.error_code).name
        except ValueError:
            out["error"] = None
    out["hook"] = getattr(rule.hook, "__qualname__", repr(rule.hook)) if rule.hook is not None else None
    return out


def _api_key(raw: int | str) -> int:
    keys = {api_name(k): k for k in api_keys()}
    if isinstance(raw, str):
        if raw not in keys:
            raise HttpError(400, "bad_field", f"unknown API name {raw!r}")
        return keys[raw]
    if raw not in keys.values():
        raise HttpError(400, "bad_field", f"unknown API key {raw}")
    return raw


def _canned(api_key: int, raw: Any) -> dict[str, Any]:
    """The response JSON, checked now: it must encode at the newest version the broker serves."""
    if not isinstance(raw, dict):
        raise HttpError(400, "bad_field", "response is an object of the API's response fields")
    spec = lookup(api_key)
    if spec is None:
        raise HttpError(400, "bad_field", f"{api_name(api_key)} is not served")
    try:
        encode_response(api_key, spec.max_version, response_from_json(api_key, raw))
    except EncodeError as exc:
        raise HttpError(400, "bad_field", f"response does not fit {api_name(api_key)}Response: {exc}") from None
    return raw


def add_fault(api: Any, req: Request) -> Any:
    body = req.json()
    reject_unknown_fields(body, {"api_key", *KINDS, "count", "topic", "partition", "node", "probability"})
    api_key = _api_key(field(body, "api_key", (int, str), "an API key number or name (e.g. 0 or \"Produce\")",
                             required=True))
    chosen = [k for k in KINDS if body.get(k) is not None]
    if len(chosen) != 1:
        raise HttpError(400, "bad_field", f"give exactly one of {', '.join(KINDS)}")
    kwargs: dict[str, Any] = {}
    if "error" in chosen:
        raw_err = field(body, "error", (int, str), "an error code number or name")
        try:
            kwargs["error"] = ErrorCode[raw_err] if isinstance(raw_err, str) else ErrorCode(raw_err)
        except (KeyError, ValueError):
            raise HttpError(400, "bad_field", f"unknown error code {raw_err!r}") from None
    elif "drop" in chosen:
        drop = field(body, "drop", (str,), '"before" or "after"')
        if drop not in ("before", "after"):
            raise HttpError(400, "bad_field", f'drop must be "before" or "after", got {drop!r}')
        kwargs["drop"] = drop
    elif "delay" in chosen:
        delay = number_field(body, "delay", "a number of seconds", lo=0, hi=MAX_DELAY_S)
        assert delay is not None  # chosen, so given
        kwargs["delay"] = float(delay)
    count = int_field(body, "count", lo=1, hi=INT32_MAX) or 1
    probability = float(number_field(body, "probability", "a chance", lo=1e-9, hi=1) or 1.0)
    topic = field(body, "topic", (str,), "a topic name")
    partition = int_field(body, "partition", lo=0)
    if partition is not None and topic is None:
        raise HttpError(400, "bad_field", "partition needs topic")
    node = int_field(body, "node")
    if node is not None and node not in api.broker.cluster.nodes:
        raise HttpError(400, "bad_field", f"no node {node}")
    if "response" in chosen:
        response = _canned(api_key, body["response"])
        rule = api.broker.faults.add(FaultRule(api_key, "respond", count, topic=topic, partition=partition,
                                               node=node, response=response, probability=probability))
        return 201, {"fault": rule_json(rule)}
    try:
        rule = api.broker.inject(api_key, count=count, topic=topic, partition=partition, node=node,
                                 probability=probability, **kwargs)
    except ValueError as exc:
        raise HttpError(400, "bad_field", str(exc)) from None
    return 201, {"fault": rule_json(rule)}
