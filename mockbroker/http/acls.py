"""The control API's ACL endpoints (listed in json_api.ROUTES): the authorizer's bindings over HTTP.

    GET    /acls?principal=&resource_type=&name=&pattern=&operation=&permission=&host=   the matching bindings
    POST   /acls {principal, operation (a name or a list), resource_type, name, pattern?, permission?, host?}
    DELETE /acls?principal=&resource_type=&...     remove what the filter matches (Kafka's DeleteAcls filter)

Names are Kafka's (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID; LITERAL, PREFIXED, MATCH, ANY; READ, ...;
ALLOW, DENY). A broker without an authorizer answers 409 security_disabled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.acl_api import binding_from, filter_from
from mockbroker.http.request import HttpError, Request, field, reject_unknown_fields
from mockbroker.security.acls import AclFilter
from mockbroker.security.authorizer import Authorizer

FILTER_KEYS = ("principal", "resource_type", "name", "pattern", "operation", "permission", "host")


def _authorizer(api: Any) -> Authorizer:
    authorizer = api.broker.security.authorizer
    if authorizer is None:
        raise HttpError(409, "security_disabled", "no authorizer is configured on the broker (start it with "
                                                  "acls=True, super_users or authorizer.class.name)")
    return authorizer  # type: ignore[no-any-return]


def _filter(req: Request) -> AclFilter:
    args = {key: req.arg(key) for key in FILTER_KEYS}
    unknown = sorted(set(req.query) - set(FILTER_KEYS))
    if unknown:
        raise HttpError(400, "bad_query", f"unknown query parameter(s) {', '.join(unknown)}; "
                                          f"expected {', '.join(FILTER_KEYS)}")
    try:
        return filter_from(args["principal"], args["operation"] or "ANY", resource_type_name=args["resource_type"],
                           name=args["name"], pattern=args["pattern"] or "ANY", allow=args["permission"] or "ANY",
                           host=args["host"])
    except ValueError as exc:
        raise HttpError(400, "bad_query", str(exc)) from None


def list_acls(api: Any, req: Request) -> Any:
    return {"acls": [b.as_dict() for b in _authorizer(api).acls.find(_filter(req))]}


def add_acls(api: Any, req: Request) -> Any:
    authorizer = _authorizer(api)
    body = req.json()
    reject_unknown_fields(body, {"principal", "operation", "resource_type", "name", "pattern", "permission", "host"})
    principal = field(body, "principal", (str,), 'a principal such as "User:alice" or "User:*"', required=True)
    raw_ops = field(body, "operation", (str, list), 'an operation name or a list of them ("READ")', required=True)
    rtype = field(body, "resource_type", (str,), "TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, ...", required=True)
    name = field(body, "name", (str,), 'the resource name (CLUSTER: "kafka-cluster")')
    if name is None and rtype.upper() == "CLUSTER":
        name = "kafka-cluster"
    ops = [raw_ops] if isinstance(raw_ops, str) else raw_ops
    try:
        bindings = [binding_from(principal, str(op), resource_type_name=rtype, name=name,
                                 pattern=field(body, "pattern", (str,), "LITERAL or PREFIXED") or "LITERAL",
                                 allow=field(body, "permission", (str,), "ALLOW or DENY") or "ALLOW",
                                 host=field(body, "host", (str,), 'a client address or "*"') or "*") for op in ops]
    except ValueError as exc:
        raise HttpError(400, "bad_field", str(exc)) from None
    for binding in bindings:
        authorizer.acls.add(binding)
    return 201, {"acls": [b.as_dict() for b in bindings]}


def delete_acls(api: Any, req: Request) -> Any:
    return {"deleted": [b.as_dict() for b in _authorizer(api).acls.delete(_filter(req))]}


# The ACL routes (method, path, handler, summary), appended to json_api.ROUTES.
ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("GET", "/acls", list_acls, "ACL bindings (?principal=&resource_type=&name=&pattern=&operation=&permission=&host=)"),
    ("POST", "/acls", add_acls, "add ACLs {principal, operation, resource_type, name, pattern?, permission?, host?} (201)"),
    ("DELETE", "/acls", delete_acls, "remove the ACLs a filter matches (?principal=&resource_type=&name=&...)"),
]
