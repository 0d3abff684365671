"""Kafka's authorization of every API, in front of the handlers (Kafka's KafkaApis authorize calls).

When the cluster has an authorizer (mockbroker/security/authorizer.py: `authorizer.class.name`, or
MockBroker(acls=True / super_users=[...])), the connection calls a request's handler through `guard`:
the API's check (topic_apis, group_apis, txn_apis, cluster_apis; registered by API key in access.py)
answers what the principal may not do with Kafka's codes, hands the handler the rest of the request and
fills in the authorized-operations fields. Without an authorizer the handler is called as it is.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from mockbroker.authorization import cluster_apis, group_apis, topic_apis, txn_apis
from mockbroker.authorization.access import CHECKS, Access
from mockbroker.security import principal_of

if TYPE_CHECKING:
    from mockbroker.context import RequestContext
    from mockbroker.dispatch import HandlerFn, HandlerResult
    from mockbroker.protocol.headers import RequestHeader
    from mockbroker.protocol.messages import Msg

__all__ = ["cluster_apis", "group_apis", "guard", "topic_apis", "txn_apis"]


def guard(ctx: RequestContext, api_key: int, fn: HandlerFn) -> HandlerFn:
    """The function to call for a request of `api_key`: the handler, behind its API's check when the
    cluster has an authorizer."""
    authorizer = ctx.node.security.authorizer
    check = CHECKS.get(api_key)
    if authorizer is None or check is None:
        return fn
    return functools.partial(_checked, check, authorizer, fn)


def _checked(check, authorizer, fn, ctx: RequestContext, header: RequestHeader, req: Msg) -> HandlerResult:  # type: ignore[no-untyped-def]
    access = Access(authorizer, principal_of(ctx), ctx.client_host, ctx.cluster)
    return check(access, header, req, lambda request: fn(ctx, header, request))
