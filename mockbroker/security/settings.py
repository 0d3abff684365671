"""A broker's listener security from MockBroker's arguments and Kafka's setting names
(listener.security.protocol.map, sasl.enabled.mechanisms, ssl.*, sasl.oauthbearer.* (oauth_settings.py),
connections.failed.authentication.delay.ms, sasl.server.max.receive.size, connections.max.reauth.ms,
authorizer.class.name, super.users, allow.everyone.if.no.acl.found): what `MockBroker(config=...)` and the Kafka images' environment give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.security import BrokerSecurity, resolve_protocols
from mockbroker.security.protocols import parse_protocol_map

if TYPE_CHECKING:
    from mockbroker.security.authorizer import Authorizer
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.tls import TlsConfig
    from mockbroker.state.cluster.cluster import Listener


def security_from_settings(listeners: list[Listener], settings: dict[str, Any], mechanisms: list[str] | None,
                           tls: TlsConfig | None, oauth: OAuthConfig | None, acls: bool | None = None,
                           super_users: list[str] | None = None) -> BrokerSecurity:
    """Listener protocols, SASL mechanisms and TLS from the arguments and Kafka's setting names."""
    protocol_map = settings.get("listener.security.protocol.map")
    resolve_protocols(listeners, parse_protocol_map(str(protocol_map)) if protocol_map else None)
    if mechanisms is None and settings.get("sasl.enabled.mechanisms"):
        mechanisms = [m.strip() for m in str(settings["sasl.enabled.mechanisms"]).split(",") if m.strip()]
    if tls is None and any(key.startswith("ssl.") for key in settings):
        tls = tls_from_settings(settings)
    if oauth is None and any(key.startswith("sasl.oauthbearer.") for key in settings):
        from mockbroker.security.oauth_settings import oauth_from_settings

        oauth = oauth_from_settings(settings)
    delay = int(settings.get("connections.failed.authentication.delay.ms", 100))
    security = BrokerSecurity(listeners, mechanisms=mechanisms, tls=tls, failed_authentication_delay_ms=delay,
                              oauth=oauth)
    security.max_receive_before_auth = int(settings.get("sasl.server.max.receive.size", 524288))
    security.max_reauth_ms = int(settings.get("connections.max.reauth.ms", 0))
    security.authorizer = authorizer_from_settings(settings, acls, super_users)
    return security


def authorizer_from_settings(settings: dict[str, Any], acls: bool | None,
                             super_users: list[str] | None) -> Authorizer | None:
    """The authorizer when one is on: authorizer.class.name set (Kafka's StandardAuthorizer is the one
    served, whatever the name), acls=True or super_users given; super.users and
    allow.everyone.if.no.acl.found (false by default) as Kafka reads them."""
    named = bool(str(settings.get("authorizer.class.name") or "").strip())
    if acls is False or not (acls or named or super_users):
        return None
    from mockbroker.security.authorizer import Authorizer, parse_super_users

    allow = str(settings.get("allow.everyone.if.no.acl.found", "false")).strip().lower() == "true"
    users = parse_super_users(settings.get("super.users")) | parse_super_users(super_users)
    return Authorizer(super_users=users, allow_everyone_if_no_acl_found=allow)


def tls_from_settings(settings: dict[str, Any]) -> TlsConfig:
    """TLS key material and client auth in Kafka's setting names: ssl.keystore.location (type PKCS12, or PEM:
    a file with the certificate chain and the key), ssl.keystore.password, ssl.key.password,
    ssl.truststore.location (PKCS12 or PEM CAs for client certificates), ssl.truststore.password,
    ssl.client.auth (none, requested, required)."""
    from mockbroker.security.tls import TlsConfig

    def get(key: str) -> str | None:
        value = settings.get(key)
        return None if value is None or str(value) == "" else str(value)

    keystore, truststore = get("ssl.keystore.location"), get("ssl.truststore.location")
    pem_keystore = (get("ssl.keystore.type") or "PKCS12").upper() == "PEM"
    pem_truststore = (get("ssl.truststore.type") or "PKCS12").upper() == "PEM"
    return TlsConfig(
        certfile=keystore if pem_keystore else None, keyfile=keystore if pem_keystore else None,
        key_password=get("ssl.key.password"),
        keystore=None if pem_keystore else keystore, keystore_password=get("ssl.keystore.password"),
        cafile=truststore if pem_truststore else None, truststore=None if pem_truststore else truststore,
        truststore_password=get("ssl.truststore.password"),
        client_auth=(get("ssl.client.auth") or "none").lower())
