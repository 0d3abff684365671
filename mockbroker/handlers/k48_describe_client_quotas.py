"""DescribeClientQuotas (key 48), v0-1: the client quota configs a filter matches.

As Kafka's broker answers it from its metadata image (ClientQuotasImage.describe): each filter component
names an entity type (user, client-id, ip) and a match type: EXACT (0) with a name, DEFAULT (1) for the
type's default entity (name null), ANY (2) for any entity having that type. An entity matches when every
EXACT/DEFAULT component equals its name for that type and every ANY type is present; `strict` also asks
that the entity has no other type. No component: every entity (strict: none). A bad filter (an empty or
repeated type, EXACT with a null match, DEFAULT or ANY with one, ip together with user or client-id) is
INVALID_REQUEST with Kafka's message; an unknown entity type UNSUPPORTED_VERSION. Entries is null on error.
Authorization (with an authorizer, `authorize`): DESCRIBE_CONFIGS on the cluster, else
CLUSTER_AUTHORIZATION_FAILED. The model: mockbroker/state/quotas.py.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.DESCRIBE_CLIENT_QUOTAS


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, error_message=None, entries=None)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE_CONFIGS):
        return call(req)
    code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return Msg(throttle_time_ms=0, error_code=code, error_message=AUTHORIZATION_MESSAGES[code], entries=None)


@handler(API_KEY, 0, 1, authorize=authorize, error_response=error_response)
def handle_describe_client_quotas(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    components = [(c.entity_type, c.match_type, c.match) for c in req.components or []]
    try:
        found = ctx.cluster.quotas.describe(components, bool(req.strict))
    except KafkaError as exc:
        return Msg(throttle_time_ms=0, error_code=exc.code, error_message=exc.message, entries=None)
    entries = [Msg(entity=[Msg(entity_type=t, entity_name=n) for t, n in entity],
                   values=[Msg(key=k, value=v) for k, v in sorted(values.items())])
               for entity, values in found.items()]
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, entries=entries)
