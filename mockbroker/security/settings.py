"""A broker's listener security from MockBroker's arguments and Kafka's setting names
(listener.security.protocol.map, sasl.enabled.mechanisms, ssl.*, connections.failed.authentication.delay.ms,
sasl.server.max.receive.size): what `MockBroker(config=...)` and the Kafka images' environment give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.security import BrokerSecurity, resolve_protocols
from mockbroker.security.protocols import parse_protocol_map

if TYPE_CHECKING:
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.tls import TlsConfig
    from mockbroker.state.cluster import Listener


def security_from_settings(listeners: list[Listener], settings: dict[str, Any], mechanisms: list[str] | None,
                           tls: TlsConfig | None, oauth: OAuthConfig | None) -> BrokerSecurity:
    """Listener protocols, SASL mechanisms and TLS from the arguments and Kafka's setting names."""
    protocol_map = settings.get("listener.security.protocol.map")
    resolve_protocols(listeners, parse_protocol_map(str(protocol_map)) if protocol_map else None)
    if mechanisms is None and settings.get("sasl.enabled.mechanisms"):
        mechanisms = [m.strip() for m in str(settings["sasl.enabled.mechanisms"]).split(",") if m.strip()]
    if tls is None and any(key.startswith("ssl.") for key in settings):
        tls = tls_from_settings(settings)
    delay = int(settings.get("connections.failed.authentication.delay.ms", 100))
    security = BrokerSecurity(listeners, mechanisms=mechanisms, tls=tls, failed_authentication_delay_ms=delay,
                              oauth=oauth)
    security.max_receive_before_auth = int(settings.get("sasl.server.max.receive.size", 524288))
    return security


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
