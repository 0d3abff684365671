"""SASL as a Kafka broker runs it, without I/O: the mechanism servers and one connection's authenticator.

Mechanism servers (`evaluate(token) -> token`, `complete`, `authorization_id`), as Kafka's SaslServers:
- PLAIN (RFC 4616): `[authzid] NUL authcid NUL passwd`; Kafka's messages for a wrong password, an
  authorization id other than the user name; a malformed message gets the generic message.
- SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) through scramp: client-first, server-first,
  client-final, server-final. Unknown user, bad proof, bad nonce, malformed messages: the generic
  message, as Kafka (which never tells an unauthenticated client whether a user exists).
- OAUTHBEARER (RFC 7628): oauth.py.

SaslAuthenticator follows Kafka's SaslServerAuthenticator states:
    HANDSHAKE_OR_VERSIONS --ApiVersions--> HANDSHAKE --SaslHandshake(ok)--> AUTHENTICATE --done--> COMPLETE
Before COMPLETE only ApiVersions (once) and SaslHandshake are served; any other request closes the
connection. SaslHandshake v0 switches to raw tokens (each frame a bare SASL token, each answer a
size-prefixed token: the framing of clients older than KIP-152); v1 to SaslAuthenticate requests. An
unsupported mechanism or a failed authentication is answered, then the connection is closed.

Re-authentication (KIP-368), as Kafka's SaslServerAuthenticator and SocketServer run it: a completed
authentication gets a session lifetime, answered as SaslAuthenticate v1+'s session_lifetime_ms:
connections.max.reauth.ms, or for OAUTHBEARER the token's remaining lifetime capped by it (0: the
session never expires). Once the session has expired, any request but a SaslHandshake closes the
connection. A SaslHandshake on a connection with a session lifetime (at most one a second) starts
the exchange again: same mechanism (another one fails at its SaslAuthenticate with Kafka's message),
same principal ("Cannot change principals during re-authentication ..."), then a new session.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from mockbroker.security.credentials import SCRAM_MECHANISMS, Credentials
from mockbroker.security.failure import SaslFailure, generic_failure

if TYPE_CHECKING:
    from mockbroker.security.oauth import OAuthConfig

API_VERSIONS = 18
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
API_VERSIONS_MAX = 4
MIN_REAUTH_INTERVAL_MS = 1000  # Kafka's KafkaChannel: at most one re-authentication a second


class MechanismServer(Protocol):
    mechanism: str
    complete: bool
    authorization_id: str | None

    def evaluate(self, token: bytes) -> bytes: ...


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise SaslFailure(generic_failure(self.mechanism))
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise SaslFailure(generic_failure(self.mechanism)) from None
        parts = text.split("\0")
        if len(parts) != 3:
            raise SaslFailure(generic_failure(self.mechanism))  # Kafka: "expected 3 tokens" as a SaslException
        authzid, user, password = parts
        if not user or not password:
            raise SaslFailure(generic_failure(self.mechanism))
        if not self.credentials.check_plain(user, password):
            raise SaslFailure("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslFailure("Authentication failed: Client requested an authorization id that is different "
                              "from username")
        self.authorization_id = user
        self.complete = True
        return b""


class ScramServer:
    """One SCRAM exchange; the credential is looked up when the client-first message names the user."""

    def __init__(self, mechanism: str, credentials: Credentials) -> None:
        from scramp import ScramMechanism

        self.mechanism = mechanism
        self.credentials = credentials
        self.complete = False
        self.authorization_id: str | None = None
        self._user: str | None = None
        self._server = ScramMechanism(mechanism).make_server(self._auth_info)
        self._step = 0

    def _auth_info(self, user: str) -> tuple[bytes, bytes, bytes, int]:
        from scramp import ScramException

        credential = self.credentials.scram_credential(user, self.mechanism)
        if credential is None:
            raise ScramException("unknown user")
        if credential.iterations < SCRAM_MECHANISMS[self.mechanism][2]:
            raise ScramException("too few iterations")
        self._user = user
        return credential.salt, credential.stored_key, credential.server_key, credential.iterations

    def evaluate(self, token: bytes) -> bytes:
        from scramp import ScramException

        try:
            message = token.decode("utf-8")
            if self._step == 0:
                if not message.startswith("n,"):  # Kafka's ClientFirstMessage: no channel binding ("y"/"p")
                    raise ScramException("channel binding is not supported")
                self._server.set_client_first(message)
                self._step = 1
                authzid = message.split(",", 2)[1]
                if authzid and authzid != "a=" + (self._user or ""):
                    self._step = 3
                    raise SaslFailure("Authentication failed: Client requested an authorization id that is "
                                      "different from username")
                return self._server.get_server_first().encode()
            if self._step == 1:
                self._step = 2
                self._server.set_client_final(message)
                final = self._server.get_server_final()
                self.authorization_id = self._user
                self.complete = True
                self._step = 3
                return final.encode()
        except (ScramException, UnicodeDecodeError, ValueError, IndexError, TypeError):
            self._step = 3
            raise SaslFailure(generic_failure(self.mechanism)) from None
        raise SaslFailure(generic_failure(self.mechanism))


def mechanism_server(mechanism: str, credentials: Credentials, oauth: OAuthConfig | None = None,
                     now_ms: Callable[[], int] | None = None) -> MechanismServer:
    if mechanism == "PLAIN":
        return PlainServer(credentials)
    if mechanism in SCRAM_MECHANISMS:
        return ScramServer(mechanism, credentials)
    if mechanism == "OAUTHBEARER":
        from mockbroker.security.oauth import OAuthBearerServer, OAuthConfig

        return OAuthBearerServer(oauth or OAuthConfig(), now_ms or _wall_clock_ms)
    raise ValueError(f"no server for SASL mechanism {mechanism}")


def _wall_clock_ms() -> int:
    import time

    return int(time.time() * 1000)


class AuthState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "handshake or versions"
    HANDSHAKE = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


@dataclass(frozen=True)
class Gate:
    """What the connection does with a request before its handler: serve it, or close (and why); with
    `answer`, the request first gets its error response with ILLEGAL_SASL_STATE, as Kafka answers a request
    other than SaslAuthenticate in the middle of a SASL exchange."""

    serve: bool
    reason: str = ""
    answer: bool = False


SERVE = Gate(True)


class SaslAuthenticator:
    """One SASL connection's authentication state (Kafka's SaslServerAuthenticator, without I/O)."""

    def __init__(self, mechanisms: list[str], credentials: Credentials, oauth: OAuthConfig | None = None,
                 now_ms: Callable[[], int] | None = None, max_reauth_ms: int = 0) -> None:
        self.mechanisms = list(mechanisms)
        self.credentials = credentials
        self.oauth = oauth
        self.now_ms = now_ms or _wall_clock_ms
        self.max_reauth_ms = max_reauth_ms  # connections.max.reauth.ms (0: none)
        self.state = AuthState.HANDSHAKE_OR_VERSIONS
        self.raw_tokens = False  # SaslHandshake v0: the tokens come as bare frames
        self.server: MechanismServer | None = None
        self.user: str | None = None
        self.session_expires_ms: int | None = None  # broker clock; None: the session never expires
        self.session_lifetime_ms = 0  # what the last completed authentication answered
        self.reauthenticating: tuple[str, str] | None = None  # (mechanism, user) of the session being renewed
        self._reauth_started_ms: int | None = None
        self._bad_mechanism: str | None = None  # re-authentication asked for another mechanism

    @property
    def expects_raw_token(self) -> bool:
        return self.state is AuthState.AUTHENTICATE and self.raw_tokens

    @property
    def failed(self) -> bool:
        return self.state is AuthState.FAILED

    def gate(self, api_key: int, api_version: int) -> Gate:
        """May a request of this API key be served now? Moves past the ApiVersions step."""
        state = self.state
        if state is AuthState.COMPLETE:
            if api_key == SASL_HANDSHAKE and self._may_reauthenticate():
                self._begin_reauthentication()
                return SERVE
            if self.session_expired:
                return Gate(False, "the SASL session expired (connections.max.reauth.ms / token lifetime)")
            return SERVE
        if state is AuthState.FAILED:
            return Gate(False, "authentication failed")
        if state is AuthState.AUTHENTICATE:
            if api_key in (SASL_AUTHENTICATE, SASL_HANDSHAKE):
                return SERVE  # the handlers answer (a second SaslHandshake: ILLEGAL_SASL_STATE, then close)
            return Gate(False, f"unexpected request (API key {api_key}) during SASL authentication", answer=True)
        if api_key == SASL_HANDSHAKE:
            return SERVE
        if api_key == API_VERSIONS and state is AuthState.HANDSHAKE_OR_VERSIONS:
            if api_version <= API_VERSIONS_MAX:
                self.state = AuthState.HANDSHAKE  # an unknown version is answered and may be retried
            return SERVE
        return Gate(False, f"unexpected request (API key {api_key}) during SASL handshake")

    @property
    def complete(self) -> bool:
        return self.state is AuthState.COMPLETE

    @property
    def session_expired(self) -> bool:
        return self.session_expires_ms is not None and self.now_ms() > self.session_expires_ms

    def _may_reauthenticate(self) -> bool:
        """KafkaChannel.maybeBeginServerReauthentication: a session that expires, not renewed within a second."""
        if self.session_expires_ms is None or self.server is None or self.user is None:
            return False
        now = self.now_ms()
        return self._reauth_started_ms is None or now - self._reauth_started_ms >= MIN_REAUTH_INTERVAL_MS

    def _begin_reauthentication(self) -> None:
        assert self.server is not None and self.user is not None
        self.reauthenticating = (self.server.mechanism, self.user)
        self._reauth_started_ms = self.now_ms()
        self.state = AuthState.HANDSHAKE

    def handshake(self, mechanism: str, version: int) -> bool:
        """SaslHandshake: True if the mechanism is enabled (then AUTHENTICATE), else FAILED."""
        if self.state is AuthState.AUTHENTICATE:
            self.state = AuthState.FAILED  # a second handshake (Kafka: ILLEGAL_SASL_STATE, then close)
            return False
        if mechanism not in self.mechanisms:
            self.state = AuthState.FAILED
            return False
        if self.reauthenticating is not None and mechanism != self.reauthenticating[0]:
            self._bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                   f"re-authentication of mechanism '{self.reauthenticating[0]}'")
        self.server = mechanism_server(mechanism, self.credentials, self.oauth, self.now_ms)
        self.raw_tokens = version == 0
        self.state = AuthState.AUTHENTICATE
        return True

    def authenticate(self, token: bytes) -> bytes:
        """One client token -> the server's token; raises SaslFailure (state FAILED)."""
        if self.state is not AuthState.AUTHENTICATE or self.server is None:
            self.state = AuthState.FAILED
            raise SaslFailure("Unexpected SASL token")
        if self._bad_mechanism is not None:
            self.state = AuthState.FAILED
            raise SaslFailure(self._bad_mechanism)
        try:
            reply = self.server.evaluate(token)
        except SaslFailure:
            self.state = AuthState.FAILED
            raise
        if self.server.complete:
            user = self.server.authorization_id
            if self.reauthenticating is not None and user != self.reauthenticating[1]:
                self.state = AuthState.FAILED
                raise SaslFailure(f"Cannot change principals during re-authentication from "
                                  f"User.{self.reauthenticating[1]}: User.{user}")
            self.user = user
            self.reauthenticating = None
            self._start_session()
            self.state = AuthState.COMPLETE
        return reply

    def _start_session(self) -> None:
        """The new session's lifetime (SaslServerAuthenticator.calcCompletionTimesAndReturnSessionLifetimeMs)."""
        now = self.now_ms()
        credential_expiry = getattr(self.server, "credential_expiry_ms", None)
        lifetimes = [] if credential_expiry is None else [max(0, credential_expiry - now)]
        if self.max_reauth_ms > 0:
            lifetimes.append(self.max_reauth_ms)
        self.session_lifetime_ms = min(lifetimes) if lifetimes else 0
        self.session_expires_ms = now + self.session_lifetime_ms if lifetimes else None
