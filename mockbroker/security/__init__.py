"""Listener security as Kafka has it: PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL per named listener.

- `BrokerSecurity` (broker.security): the users (credentials.py), the enabled SASL mechanisms, the TLS
  material (tls.py, made only when an SSL or SASL_SSL listener exists) and the listener -> protocol map
  (Kafka's listener.security.protocol.map; by default a listener named after a protocol uses it).
- `ConnectionSecurity`: one connection's principal and, on SASL listeners, its authenticator (sasl.py).
  The connection asks it, before each request, whether to serve it (only ApiVersions and SaslHandshake
  before authentication) and closes the connection after a failed authentication's answer.

Only this module is imported on a broker with PLAINTEXT listeners and no users, so start-up does not
pay for TLS, SASL or the users' store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.security.protocols import (
    ANONYMOUS,
    DEFAULT_MECHANISMS,
    PROTOCOLS,
    SERVED_MECHANISMS,
    uses_sasl,
    uses_tls,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from mockbroker.security.authorizer import Authorizer
    from mockbroker.security.credentials import Credentials
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.sasl import Gate, SaslAuthenticator
    from mockbroker.security.tls import BrokerTls, TlsConfig
    from mockbroker.state.cluster.cluster import Listener

def resolve_protocols(listeners: list[Listener], protocol_map: dict[str, str] | None) -> None:
    """Give each listener its security protocol: from the map when one is set (it must name every
    listener), else a listener named PLAINTEXT/SSL/SASL_PLAINTEXT/SASL_SSL uses that protocol."""
    for listener in listeners:
        if protocol_map is not None:
            protocol = protocol_map.get(listener.name.upper())
            if protocol is None:
                raise ValueError(f"listener.security.protocol.map gives no protocol for listener {listener.name}")
            listener.security_protocol = protocol
        elif listener.security_protocol == "PLAINTEXT" and listener.name.upper() in PROTOCOLS:
            listener.security_protocol = listener.name.upper()
        if listener.security_protocol not in PROTOCOLS:
            raise ValueError(f"listener {listener.name}: unknown security protocol {listener.security_protocol!r} "
                             f"(one of {', '.join(PROTOCOLS)})")


class BrokerSecurity:
    """Users, SASL mechanisms and TLS of one broker."""

    def __init__(self, listeners: list[Listener], *, mechanisms: list[str] | None = None,
                 tls: TlsConfig | None = None, failed_authentication_delay_ms: int = 100,
                 oauth: OAuthConfig | None = None, now_ms: Callable[[], int] | None = None) -> None:
        self.listeners = listeners
        self.oauth = oauth  # OAUTHBEARER token validation (enabled by default when given)
        self.now_ms = now_ms  # the broker clock, for token expiry
        # Kafka's connections.failed.authentication.delay.ms: a connection whose authentication failed is
        # closed this long after the failure's answer (real time: it is about sockets, not the broker clock).
        self.failed_authentication_delay_s = failed_authentication_delay_ms / 1000
        # Kafka's sasl.server.max.receive.size: the largest frame a SASL connection may send before it is
        # authenticated (a bigger one closes the connection).
        self.max_receive_before_auth = 524288
        self._credentials: Credentials | None = None
        if mechanisms is None:
            mechanisms = DEFAULT_MECHANISMS + (["OAUTHBEARER"] if oauth is not None else [])
        self.mechanisms = list(mechanisms)
        unknown = [m for m in self.mechanisms if m not in SERVED_MECHANISMS]
        if unknown:
            raise ValueError(f"SASL mechanisms not served: {', '.join(unknown)} (served: {', '.join(SERVED_MECHANISMS)})")
        self.tls_config = tls
        self._tls: BrokerTls | None = None
        # Kafka's authorizer.class.name (authorizer.py): None means every principal may do everything.
        self.authorizer: Authorizer | None = None
        # Kafka's connections.max.reauth.ms: 0 means a SASL session never expires (no re-authentication).
        self.max_reauth_ms = 0

    @property
    def credentials(self) -> Credentials:
        """The broker's users (made on first use: a PLAINTEXT broker without users never needs them)."""
        if self._credentials is None:
            from mockbroker.security.credentials import Credentials

            self._credentials = Credentials()
        return self._credentials

    @property
    def secured(self) -> bool:
        return any(lst.security_protocol != "PLAINTEXT" for lst in self.listeners)

    @property
    def tls(self) -> BrokerTls | None:
        """The TLS material (made on first use when a listener uses TLS; None when none does)."""
        if self._tls is None and any(uses_tls(lst.security_protocol) for lst in self.listeners):
            from mockbroker.security.tls import BrokerTls, TlsConfig

            hosts = [h for lst in self.listeners for h in (lst.host, lst.advertised_host) if h]
            self._tls = BrokerTls(self.tls_config or TlsConfig(), hosts)
        return self._tls

    def ssl_context(self, listener: Listener) -> Any:
        if not uses_tls(listener.security_protocol):
            return None
        tls = self.tls
        assert tls is not None
        return tls.context

    def handshake_timeout_s(self) -> float:
        return self.tls_config.handshake_timeout_s if self.tls_config is not None else 60.0

    def for_connection(self, listener: Listener, ssl_object: Any) -> ConnectionSecurity | None:
        """The security state of a new connection (None on a PLAINTEXT listener: nothing to check)."""
        protocol = listener.security_protocol
        if protocol == "PLAINTEXT":
            return None
        principal = ANONYMOUS
        if protocol == "SSL":
            from mockbroker.security.tls import peer_principal

            principal = peer_principal(ssl_object)
        authenticator = None
        if uses_sasl(protocol):
            from mockbroker.security.sasl import SaslAuthenticator

            authenticator = SaslAuthenticator(self.mechanisms, self.credentials, self.oauth, self.now_ms,
                                              self.max_reauth_ms)
        return ConnectionSecurity(listener.name, protocol, principal, authenticator, self.max_receive_before_auth)


class ConnectionSecurity:
    """One connection's principal and SASL state."""

    def __init__(self, listener_name: str, protocol: str, principal: str,
                 sasl: SaslAuthenticator | None, max_receive_before_auth: int = 524288) -> None:
        self.max_receive_before_auth = max_receive_before_auth
        self.settled = sasl is None  # no SASL, or its exchange is over and the connection was told
        self.listener_name = listener_name
        self.protocol = protocol
        self._principal = principal
        self.sasl = sasl

    @property
    def principal(self) -> str:
        if self.sasl is not None:
            return f"User:{self.sasl.user}" if self.sasl.user is not None else ANONYMOUS
        return self._principal

    @property
    def authenticated(self) -> bool:
        return self.sasl is None or self.sasl.user is not None

    def gate(self, api_key: int, api_version: int) -> Gate | None:
        """None: serve the request; else the Gate that says why the connection closes."""
        if self.sasl is None:
            return None
        verdict = self.sasl.gate(api_key, api_version)
        if not self.sasl.complete:
            self.settled = False  # (re-)authenticating: the connection checks each SASL step's outcome
        return None if verdict.serve else verdict


def connection_security(ctx: Any) -> ConnectionSecurity | None:
    """The ConnectionSecurity of a request's connection (None on PLAINTEXT listeners)."""
    return ctx.extra.get("security")  # type: ignore[no-any-return]


def principal_of(ctx: Any) -> str:
    security = connection_security(ctx)
    return security.principal if security is not None else ANONYMOUS
