"""AlterClientQuotas (key 49), v0-1: set and remove client quota configs (user, client-id, ip entities).

As Kafka's controller checks them (ClientQuotaControlManager), per entry (its entity, its ops):
- no component: INVALID_REQUEST "Invalid empty client quota entity"; an unknown type "Unhandled client quota
  entity type: <type>"; an empty name "Empty <type> not supported" (a null name is the default entity);
- ip with user or client-id: INVALID_REQUEST "Invalid quota entity combination, IP entity should" "not be
  combined with User or ClientId" (Kafka's message, its missing space included); an ip that is not an
  address: "<ip> is not a valid IP or resolvable host.";
- a key the entity cannot have (user/client-id: producer_byte_rate, consumer_byte_rate, request_percentage,
  controller_mutation_rate; ip: connection_creation_rate): "Invalid configuration key <key>"; a value <= 0:
  "Quota <key> must be greater than 0"; a fraction for a whole-number key: "<key> cannot be a fractional
  value."; removing a key (remove=true) is never an error;
- a key twice in one entry, or an entity twice in the request: "Ignoring duplicate entity <entity>".
A failed entry changes nothing; the others are applied unless validate_only.
Authorization (with an authorizer, `authorize`): ALTER_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED
for every entry). The model: mockbroker/state/quotas.py.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.ALTER_CLIENT_QUOTAS


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    return Msg(throttle_time_ms=0, entries=[
        Msg(error_code=code, error_message=message,
            entity=[Msg(entity_type=c.entity_type, entity_name=c.entity_name) for c in e.entity])
        for e in req.entries or []])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER_CONFIGS):
        return call(req)
    code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return error_response(req, code, header.api_version, AUTHORIZATION_MESSAGES[code])


@handler(API_KEY, 0, 1, authorize=authorize, error_response=error_response)
def handle_alter_client_quotas(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    entries = [([(c.entity_type, c.entity_name) for c in e.entity],
                [(op.key, None if op.remove else op.value) for op in e.ops])
               for e in req.entries or []]
    results = ctx.cluster.quotas.alter(entries, validate_only=bool(req.validate_only))
    return Msg(throttle_time_ms=0, entries=[
        Msg(error_code=r.error, error_message=r.message,
            entity=[Msg(entity_type=t, entity_name=n) for t, n in r.entity])
        for r in results])
