"""AlterUserScramCredentials (key 51), v0: create, replace and delete users' SCRAM credentials.

As Kafka's controller checks them (ScramControlManager), per user:
- a user named twice in the request (deletions and upsertions together, whatever the mechanisms):
  DUPLICATE_RESOURCE "A user credential cannot be altered twice in the same request";
- an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty"; a mechanism other than 1
  (SCRAM-SHA-256) or 2 (SCRAM-SHA-512): UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM mechanism";
- upsertion with fewer than 4096 iterations: UNACCEPTABLE_CREDENTIAL "Too few iterations"; more than
  16384: "Too many iterations";
- deleting a credential that does not exist: RESOURCE_NOT_FOUND "Attempt to delete a user credential
  that does not exist".
An upsertion carries the salted password (Hi(password, salt, i)); StoredKey and ServerKey are derived
from it, and the user can log in with that mechanism at once.
Authorization (with an authorizer, `authorize`): ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for
every user named).
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

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS
DUPLICATE = "A user credential cannot be altered twice in the same request"


def _check_name_and_mechanism(name: str, mechanism_type: int) -> tuple[ErrorCode, str] | None:
    from mockbroker.security.credentials import SCRAM_BY_TYPE

    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism_type not in SCRAM_BY_TYPE:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER):
        return call(req)
    users = dict.fromkeys([u.name for u in req.deletions] + [u.name for u in req.upsertions])
    return Msg(throttle_time_ms=0, results=[Msg(user=u, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]) for u in users])


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_alter_user_scram_credentials(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    from mockbroker.security.credentials import (  # not at start-up
        MAX_ITERATIONS,
        SCRAM_BY_TYPE,
        SCRAM_MECHANISMS,
        credential_from_salted_password,
    )

    credentials = ctx.node.security.credentials
    errors: dict[str, tuple[ErrorCode, str]] = {}
    deletions: dict[str, Msg] = {}
    upsertions: dict[str, Msg] = {}
    for deletion in req.deletions or []:
        name = deletion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, DUPLICATE)
            continue
        error = _check_name_and_mechanism(name, deletion.mechanism)
        if error is None and credentials.scram_credential(name, SCRAM_BY_TYPE[deletion.mechanism]) is None:
            error = (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
        if error is not None:
            errors[name] = error
        else:
            deletions[name] = deletion
    for upsertion in req.upsertions or []:
        name = upsertion.name
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, DUPLICATE)
            continue
        error = _check_name_and_mechanism(name, upsertion.mechanism)
        if error is None:
            minimum = SCRAM_MECHANISMS[SCRAM_BY_TYPE[upsertion.mechanism]][2]
            if upsertion.iterations < minimum:
                error = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif upsertion.iterations > MAX_ITERATIONS:
                error = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        if error is not None:
            errors[name] = error
        else:
            upsertions[name] = upsertion
    results = []
    for name, deletion in deletions.items():
        credentials.delete_scram(name, SCRAM_BY_TYPE[deletion.mechanism])
        results.append(Msg(user=name, error_code=ErrorCode.NONE, error_message=None))
    for name, upsertion in upsertions.items():
        mechanism = SCRAM_BY_TYPE[upsertion.mechanism]
        credentials.set_scram(name, mechanism, credential_from_salted_password(
            mechanism, bytes(upsertion.salt), bytes(upsertion.salted_password), upsertion.iterations))
        results.append(Msg(user=name, error_code=ErrorCode.NONE, error_message=None))
    for name, (code, message) in errors.items():
        results.append(Msg(user=name, error_code=code, error_message=message))
    return Msg(throttle_time_ms=0, results=results)
