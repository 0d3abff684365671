"""Kafka's authorization of every API, in front of the handlers (Kafka's KafkaApis authorize calls).

The mechanism lives here; each API's check lives beside its handler (mockbroker/handlers/kNN_*.py, the
`authorize=` of its @handler registration). When the cluster has an authorizer
(mockbroker/security/authorizer.py: `authorizer.class.name`, or MockBroker(acls=True / super_users=[...])),
the connection calls a request's handler through `guard`: it asks the registry (mockbroker/dispatch.py)
for the API's check, which answers what the principal may not do with Kafka's codes, hands the handler
the rest of the request and fills in the authorized-operations fields (access.py: `Access` and the
helpers that split a request and extend its answer). Without an authorizer, or for an API without a
check, the handler is called as it is.

Why not under handlers/: the connection calls the guard, and handler modules import access.py; kept
apart, "the connection imports no handler module and no handler imports another" stays checkable.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from mockbroker.authorization.access import Access
from mockbroker.dispatch import lookup
from mockbroker.security import principal_of

if TYPE_CHECKING:
    from mockbroker.context import RequestContext
    from mockbroker.dispatch import Check, HandlerFn, HandlerResult
    from mockbroker.protocol.headers import RequestHeader
    from mockbroker.protocol.messages import Msg

__all__ = ["Access", "guard"]


def guard(ctx: RequestContext, api_key: int, fn: HandlerFn) -> HandlerFn:
    """The function to call for a request of `api_key`: the handler, behind its API's check when the
    cluster has an authorizer."""
    authorizer = ctx.node.security.authorizer
    spec = lookup(api_key)
    check = spec.authorize if spec is not None else None
    if authorizer is None or check is None:
        return fn
    return functools.partial(_checked, check, authorizer, fn)


def _checked(check: Check, authorizer, fn: HandlerFn, ctx: RequestContext, header: RequestHeader,  # type: ignore[no-untyped-def]
             req: Msg) -> HandlerResult:
    access = Access(authorizer, principal_of(ctx), ctx.client_host, ctx.cluster)
    return check(access, header, req, lambda request: fn(ctx, header, request))
