"""SaslAuthenticate (key 36), v0-v2: one SASL token each way after a v1 SaslHandshake (KIP-152).

As Kafka's SaslServerAuthenticator answers it (mechanisms in mockbroker/security/sasl.py):
- a token the mechanism accepts: NONE and the server's token (empty for PLAIN); once the exchange is
  complete the connection is authenticated as User:<name>, and session_lifetime_ms (v1+) says when
  the client must re-authenticate (KIP-368): connections.max.reauth.ms, for OAUTHBEARER the token's
  remaining lifetime capped by it, 0 when neither applies.
- a failed authentication: SASL_AUTHENTICATION_FAILED with Kafka's message (for a wrong PLAIN password
  "Authentication failed: Invalid username or password"; for SCRAM, an unknown user and malformed
  messages "Authentication failed during authentication due to invalid credentials with SASL mechanism
  ..."), then the connection is closed.
- after authentication, or on a listener without SASL: ILLEGAL_SASL_STATE, as KafkaApis answers.
- before a SaslHandshake the connection closes (mockbroker/security: only ApiVersions and
  SaslHandshake come first).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security import connection_security

API_KEY = ApiKey.SASL_AUTHENTICATE


@handler(API_KEY, 0, 2)
def handle_sasl_authenticate(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    security = connection_security(ctx)
    sasl = security.sasl if security is not None else None
    if sasl is None or sasl.complete:
        return Msg(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                   error_message="SaslAuthenticate request received after successful authentication",
                   auth_bytes=b"", session_lifetime_ms=0)
    from mockbroker.security.failure import SaslFailure

    try:
        reply = sasl.authenticate(bytes(req.auth_bytes or b""))
    except SaslFailure as exc:
        return Msg(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=exc.message, auth_bytes=b"",
                   session_lifetime_ms=0)
    return Msg(error_code=ErrorCode.NONE, error_message=None, auth_bytes=reply,
               session_lifetime_ms=sasl.session_lifetime_ms if sasl.complete else 0)
