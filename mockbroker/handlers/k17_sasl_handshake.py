"""SaslHandshake (key 17), v0-v1: the client names its SASL mechanism (mockbroker/security/sasl.py).

As Kafka's SaslServerAuthenticator and KafkaApis answer it:
- on a SASL listener before authentication: an enabled mechanism gets NONE and the enabled list, and
  the exchange begins: v0 with bare SASL tokens as frames (pre-KIP-152 clients), v1 with
  SaslAuthenticate requests. Another mechanism gets UNSUPPORTED_SASL_MECHANISM with the enabled list,
  then the connection is closed.
- a second SaslHandshake during the exchange: ILLEGAL_SASL_STATE, then the connection is closed.
- after authentication, or on a PLAINTEXT/SSL listener: ILLEGAL_SASL_STATE; but on a connection whose
  session has a lifetime (connections.max.reauth.ms, an OAUTHBEARER token) it starts a re-authentication
  (KIP-368, mockbroker/security/sasl.py), at most once a second.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security import connection_security

API_KEY = ApiKey.SASL_HANDSHAKE


@handler(API_KEY, 0, 1)
def handle_sasl_handshake(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    security = connection_security(ctx)
    sasl = security.sasl if security is not None else None
    if sasl is None or sasl.complete:
        return Msg(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
    from mockbroker.security.sasl import AuthState

    if sasl.state is AuthState.AUTHENTICATE:
        sasl.handshake(req.mechanism, header.api_version)  # fails the exchange
        return Msg(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=list(sasl.mechanisms))
    if sasl.handshake(req.mechanism, header.api_version):
        return Msg(error_code=ErrorCode.NONE, mechanisms=list(sasl.mechanisms))
    return Msg(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=list(sasl.mechanisms))
