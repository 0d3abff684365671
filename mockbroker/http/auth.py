"""Who may use the HTTP endpoint (JSON API, console, live events) and for what: HTTP Basic over the broker's
SASL users, and the broker's ACLs for the principal `User:<name>`.

Authentication. When the broker has SASL users (PLAIN passwords or SCRAM credentials, security/credentials.py)
and the endpoint's mode is "basic" (the default; `--http-auth none` / MOCKBROKER_HTTP_AUTH=none opts out),
every request needs `Authorization: Basic base64(name:password)` with a password the broker would accept
over SASL: the PLAIN password, or one whose SCRAM salted password (PBKDF2 with the credential's salt and
iterations) gives the stored key. Anything else is answered 401 with `WWW-Authenticate: Basic
realm="mockbroker"` (a browser opening the console shows its login prompt). HTTP Basic is the convention of
Kafka's ecosystem for its HTTP admin surfaces: Confluent's REST Proxy and Schema Registry authenticate with
HTTP Basic against JAAS users. A broker without users stays open, as before.

Authorization. When the broker also has an authorizer (ACLs on), the authenticated principal must be allowed
what the Kafka APIs would require (`requirement`): reading a topic's records or batches is TOPIC READ, its
description TOPIC DESCRIBE, its configs TOPIC DESCRIBE_CONFIGS, producing TOPIC WRITE, creating a topic
TOPIC CREATE (or CLUSTER CREATE), deleting one TOPIC DELETE, one group (or share group) GROUP DESCRIBE; cluster-wide reads
(overview, topic list, nodes, groups, share groups, transactions, producers, faults, ACLs, the request log, live events,
metrics) CLUSTER DESCRIBE; every control action (clock, faults, latency, nodes, leaders, ISR, compaction, retention,
reset, ACL changes) CLUSTER ALTER. Refused: 403. Super users may do everything (the authorizer's rule).
The index, /health, /names, /openapi.json and the console's static files need authentication only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.http.request import HttpError, Request
from mockbroker.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from mockbroker.security.basic_auth import BasicCheck, decode_basic, has_users

if TYPE_CHECKING:
    from mockbroker.security.credentials import Credentials

MODES = ("basic", "none")
REALM = 'Basic realm="mockbroker", charset="UTF-8"'

_O, _R = AclOperation, ResourceType
# (method, route path) -> (operation, resource type, where the resource name comes from: "name" the path's
# {name}, "body:<field>" a body field, None the cluster). Routes not listed need authentication only.
_RULES: dict[tuple[str, str], tuple[AclOperation, ResourceType, str | None]] = {
    ("GET", "/topics/{name}"): (_O.DESCRIBE, _R.TOPIC, "name"),
    ("GET", "/topics/{name}/configs"): (_O.DESCRIBE_CONFIGS, _R.TOPIC, "name"),
    ("GET", "/topics/{name}/records"): (_O.READ, _R.TOPIC, "name"),
    ("GET", "/topics/{name}/batches"): (_O.READ, _R.TOPIC, "name"),
    ("POST", "/topics/{name}/records"): (_O.WRITE, _R.TOPIC, "name"),
    ("DELETE", "/topics/{name}"): (_O.DELETE, _R.TOPIC, "name"),
    ("POST", "/topics"): (_O.CREATE, _R.TOPIC, "body:name"),
    ("GET", "/groups/{name}"): (_O.DESCRIBE, _R.GROUP, "name"),
    ("GET", "/share-groups/{name}"): (_O.DESCRIBE, _R.GROUP, "name"),
}
_CLUSTER_READS = ("/overview", "/topics", "/nodes", "/groups", "/transactions", "/producers", "/faults", "/acls",
                  "/requests", "/clock", "/events", "/metrics", "/share-groups")
_OPEN = ("/", "/health", "/names", "/openapi.json")


def requirement(method: str, route: str, req: Request | None) -> tuple[AclOperation, ResourceType, str] | None:
    """(operation, resource type, resource name) the principal needs for `method route` (a route pattern of
    json_api.ROUTES, or /events); None: authentication alone is enough."""
    method = "GET" if method == "HEAD" else method
    rule = _RULES.get((method, route))
    if rule is not None:
        op, rtype, source = rule
        name = ""
        if source == "name" and req is not None:
            name = req.params.get("name", "")
        elif source is not None and source.startswith("body:") and req is not None:
            value = req.json().get(source.removeprefix("body:"))
            name = value if isinstance(value, str) else ""
        return op, rtype, name
    if route in _OPEN:
        return None
    if method == "GET" and route in _CLUSTER_READS:
        return _O.DESCRIBE, _R.CLUSTER, CLUSTER_NAME
    return _O.ALTER, _R.CLUSTER, CLUSTER_NAME  # every other route changes the broker


class HttpAuth:
    """The endpoint's authentication mode and the broker's users and authorizer, checked per request."""

    def __init__(self, broker: Any, mode: str = "basic") -> None:
        if mode not in MODES:
            raise ValueError(f"HTTP auth must be one of {', '.join(MODES)}, got {mode!r}")
        self.broker = broker
        self.mode = mode
        self._check = BasicCheck()  # the password check (security/basic_auth.py), with its memory

    def _credentials(self) -> Credentials | None:
        security = getattr(self.broker, "security", None)
        if self.mode == "none" or security is None:
            return None
        credentials: Credentials = security.credentials
        return credentials if has_users(credentials) else None

    @property
    def required(self) -> bool:
        """Does a request need a user and password now (users may come and go while the broker runs)?"""
        return self._credentials() is not None

    def principal(self, headers: Any) -> str | None:
        """`User:<name>` of a request's valid Basic credentials; None when none are needed. HttpError 401
        when they are needed and missing or wrong."""
        credentials = self._credentials()
        if credentials is None:
            return None
        header = headers.get("Authorization", "")
        if header.partition(" ")[0].lower() != "basic" or not header.partition(" ")[2].strip():
            raise self._unauthorized("this broker has SASL users: send HTTP Basic credentials of one of them")
        decoded = decode_basic(header)
        if decoded is None:
            raise self._unauthorized("malformed Basic credentials")
        name, password = decoded
        if not self._check.check(credentials, name, password):
            raise self._unauthorized("wrong user name or password")
        return f"User:{name}"

    @staticmethod
    def _unauthorized(message: str) -> HttpError:
        return HttpError(401, "unauthorized", message, {"WWW-Authenticate": REALM})

    def authorize(self, principal: str | None, host: str, method: str, route: str, req: Request | None) -> None:
        """HttpError 403 unless the broker's authorizer lets `principal` do what the route does (no-op when
        the request was not authenticated, or the broker has no authorizer)."""
        authorizer = self.broker.security.authorizer if principal is not None else None
        if authorizer is None:
            return
        needed = requirement(method, route, req)
        if needed is None:
            return
        op, rtype, name = needed
        if authorizer.authorize(principal, host, op, rtype, name):
            return
        if op is _O.CREATE and authorizer.authorize(principal, host, op, _R.CLUSTER, CLUSTER_NAME):
            return  # CreateTopics: CREATE on the cluster covers every topic
        what = "the cluster" if rtype is _R.CLUSTER else f"{rtype.name} {name!r}"
        raise HttpError(403, "forbidden", f"{principal} may not {op.name} {what} (the broker's ACLs)")
