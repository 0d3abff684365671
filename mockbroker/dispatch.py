"""The registry of request handlers by API key and version range; ApiVersions is built from it.

Each module in mockbroker/handlers/ registers its function with `@handler(api_key, min, max)`. A
handler is a plain function `(ctx, header, request) -> response` run on the event loop; it returns the
response Msg/dict, None for no response (Produce with acks=0), or an awaitable of either when it must
wait (a long-poll Fetch parks on a future that an append resolves), or CloseConnection to close the
connection without answering.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg, api_name

if TYPE_CHECKING:
    from mockbroker.context import RequestContext

class CloseConnection:
    """Returned by a handler that wants no answer sent and the connection closed (as Kafka closes an
    acks=0 Produce connection when a partition failed, so the client notices)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


HandlerResult = Msg | dict[str, Any] | CloseConnection | None | Awaitable[Msg | dict[str, Any] | CloseConnection | None]
HandlerFn = Callable[["RequestContext", RequestHeader, Msg], HandlerResult]


@dataclass(frozen=True)
class HandlerSpec:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn

    @property
    def name(self) -> str:
        return api_name(self.api_key)


REGISTRY: dict[int, HandlerSpec] = {}


def handler(api_key: int, min_version: int, max_version: int) -> Callable[[HandlerFn], HandlerFn]:
    """Register the decorated function as the handler of api_key for versions min..max."""

    def register(fn: HandlerFn) -> HandlerFn:
        if api_key in REGISTRY:
            raise RuntimeError(f"two handlers for API key {api_key}")
        REGISTRY[api_key] = HandlerSpec(api_key, min_version, max_version, fn)
        return fn

    return register


def lookup(api_key: int) -> HandlerSpec | None:
    return REGISTRY.get(api_key)


def supported_versions() -> list[tuple[int, int, int]]:
    """(api_key, min, max) for every served API, sorted by key: what ApiVersions advertises."""
    load_handlers()
    return [(k, s.min_version, s.max_version) for k, s in sorted(REGISTRY.items())]


_loaded = False


def load_handlers() -> None:
    """Import every handler module (each registers itself)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    import mockbroker.handlers as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
    _loaded = True
