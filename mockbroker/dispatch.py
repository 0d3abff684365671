"""The registry of the served APIs: per API key, its handler, version range, authorization check and error
answer. ApiVersions, the connection, the authorization guard and fault injection all read it.

Each module in mockbroker/handlers/ registers its API with
`@handler(ApiKey.PRODUCE, 3, 13, authorize=authorize, error_response=error_response)`:
- the handler is a plain function `(ctx, header, request) -> response` run on the event loop; it returns
  the response Msg/dict, None for no response (Produce with acks=0), or an awaitable of either when it
  must wait (a long-poll Fetch parks on a future that an append resolves), or CloseConnection to close
  the connection without answering;
- authorize (optional) is the API's authorization check, called instead of the handler when the cluster
  has an authorizer (mockbroker/authorization: `check(access, header, request, call)`, which answers the
  refused parts and calls the handler with the rest);
- error_response (optional) builds the API's answer carrying one error code for a request, as Kafka's
  getErrorResponse does: fault injection and the authorization checks use it. Without one, the answer is
  the top-level error_code (which `carries_error` tells apart from APIs that have none).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.personas import FULL, Persona
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import RESPONSE, Msg, api_name, struct_codec

if TYPE_CHECKING:
    from mockbroker.context import RequestContext

class CloseConnection:
    """Returned by a handler that wants no answer sent and the connection closed (as Kafka closes an
    acks=0 Produce connection when a partition failed, so the client notices)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


HandlerResult = Msg | dict[str, Any] | CloseConnection | None | Awaitable[Msg | dict[str, Any] | CloseConnection | None]
HandlerFn = Callable[["RequestContext", RequestHeader, Msg], HandlerResult]
# The handler as an authorization check calls it: with the part of the request it may serve.
Call = Callable[[Msg], HandlerResult]
# check(access, header, request, call); access is a mockbroker.authorization.access.Access (not named
# here: the authorization helpers import this module).
Check = Callable[[Any, RequestHeader, Msg, Call], HandlerResult]
# error_response(request, code, version) -> the API's answer carrying `code`.
ErrorResponse = Callable[[Msg, ErrorCode, int], Msg]


@dataclass(frozen=True)
class HandlerSpec:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn
    authorize: Check | None = None
    error_response: ErrorResponse | None = None

    @property
    def name(self) -> str:
        return api_name(self.api_key)


REGISTRY: dict[int, HandlerSpec] = {}


def handler(api_key: int, min_version: int, max_version: int, *, authorize: Check | None = None,
            error_response: ErrorResponse | None = None) -> Callable[[HandlerFn], HandlerFn]:
    """Register the decorated function as the handler of api_key for versions min..max, with the API's
    authorization check and error answer."""

    def register(fn: HandlerFn) -> HandlerFn:
        if api_key in REGISTRY:
            raise RuntimeError(f"two handlers for API key {api_key}")
        REGISTRY[api_key] = HandlerSpec(api_key, min_version, max_version, fn, authorize, error_response)
        return fn

    return register


def lookup(api_key: int) -> HandlerSpec | None:
    return REGISTRY.get(api_key)


def served_range(api_key: int, persona: Persona = FULL) -> tuple[int, int] | None:
    """The versions of api_key served by a node playing `persona` (personas.py): the registry's range
    narrowed to the release's and capped; None: the API is not served."""
    spec = REGISTRY.get(api_key)
    if spec is None:
        return None
    return persona.narrow(api_key, spec.min_version, spec.max_version)


def supported_versions(persona: Persona = FULL) -> list[tuple[int, int, int]]:
    """(api_key, min, max) for every API served under `persona`, sorted by key: what ApiVersions advertises."""
    load_handlers()
    out = []
    for key in sorted(REGISTRY):
        served = served_range(key, persona)
        if served is not None:
            out.append((key, *served))
    return out


def error_response(api_key: int, version: int, req: Msg, code: ErrorCode) -> Msg:
    """The answer of api_key at `version` to `req` carrying `code` (the API's own builder, else the
    top-level error_code)."""
    spec = REGISTRY.get(api_key)
    if spec is not None and spec.error_response is not None:
        return spec.error_response(req, code, version)
    return Msg(error_code=code)  # throttle_time_ms left to its default: SaslHandshake/SaslAuthenticate have none


def carries_error(api_key: int, version: int) -> bool:
    """Whether error_response can answer api_key at `version` with a code (a builder, or a top-level
    error_code in the response schema)."""
    spec = REGISTRY.get(api_key)
    if spec is not None and spec.error_response is not None:
        return True
    codec = struct_codec(api_key, version, RESPONSE)
    return any(f.name == "error_code" for f in codec.regular)


_loaded = False


def load_handlers() -> None:
    """Import every module of mockbroker/handlers (each handler module registers itself)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    import mockbroker.handlers as pkg

    for info in sorted(pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."), key=lambda i: i.name):
        importlib.import_module(info.name)
    _loaded = True
