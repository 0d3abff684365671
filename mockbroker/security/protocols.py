"""The names of listener security: Kafka's security protocols and SASL mechanisms, and how to read
listener.security.protocol.map. A leaf module: everything else in mockbroker.security may import it."""

from __future__ import annotations

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# The mechanisms with stored credentials (credentials.py), and every mechanism served.
ALL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SERVED_MECHANISMS = (*ALL_MECHANISMS, "OAUTHBEARER")
ANONYMOUS = "User:ANONYMOUS"
DEFAULT_MECHANISMS = list(ALL_MECHANISMS)


def uses_tls(protocol: str) -> bool:
    return protocol in ("SSL", "SASL_SSL")


def uses_sasl(protocol: str) -> bool:
    return protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def parse_protocol_map(value: str) -> dict[str, str]:
    """Kafka's listener.security.protocol.map: "NAME:PROTOCOL,..." -> {NAME: PROTOCOL}."""
    out: dict[str, str] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or protocol not in PROTOCOLS:
            raise ValueError(f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL "
                             f"(PROTOCOL one of {', '.join(PROTOCOLS)})")
        out[name.strip().upper()] = protocol
    return out
