"""DescribeUserScramCredentials (key 50), v0: the SCRAM credentials of users (names and iterations only).

As Kafka answers it (ScramImage.describe): no users named (null or empty): every user with a SCRAM
credential; a user named twice: DUPLICATE_RESOURCE "Cannot describe SCRAM credentials for the same user
twice in a single request: <user>"; a user without credentials: RESOURCE_NOT_FOUND "Attempt to describe
a user credential that does not exist: <user>"; else its credentials (mechanism type 1 SCRAM-SHA-256,
2 SCRAM-SHA-512, and iterations). Passwords added for PLAIN only are not SCRAM credentials.
Authorization (with an authorizer, `authorize`): DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).
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

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED], results=[])


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_describe_user_scram_credentials(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    from mockbroker.security.credentials import SCRAM_MECHANISMS  # not at start-up

    credentials = ctx.node.security.credentials
    named = [u.name for u in (req.users or [])]
    users = dict.fromkeys(named or credentials.scram_users(), False)
    for name in named:
        users[name] = named.count(name) > 1
    results = []
    for name, duplicate in users.items():
        if duplicate:
            results.append(Msg(user=name, error_code=ErrorCode.DUPLICATE_RESOURCE, credential_infos=[],
                               error_message="Cannot describe SCRAM credentials for the same user twice in a "
                                             f"single request: {name}"))
            continue
        infos = [Msg(mechanism=SCRAM_MECHANISMS[mechanism][0], iterations=credential.iterations)
                 for mechanism, credential in sorted(credentials.scram.get(name, {}).items())]
        if not infos:
            results.append(Msg(user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND, credential_infos=[],
                               error_message=f"Attempt to describe a user credential that does not exist: {name}"))
            continue
        results.append(Msg(user=name, error_code=ErrorCode.NONE, error_message=None, credential_infos=infos))
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, results=results)
