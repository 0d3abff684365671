"""How the remote target logs in to a secured cluster: settings in librdkafka's and Java's property names read
into `ClientSecurity`, which wraps a socket in TLS and runs the SASL exchange (PLAIN, SCRAM-SHA-256/512)
on a new connection, as Kafka's clients do: ApiVersions, SaslHandshake v1, SaslAuthenticate.

Settings understood (both clients' spellings where they differ):
  security.protocol                      PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
  sasl.mechanism / sasl.mechanisms       PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  sasl.username, sasl.password           librdkafka's
  sasl.jaas.config                       Java's: a PlainLoginModule or ScramLoginModule with username, password
  ssl.ca.location / ssl.ca.pem           librdkafka's CA file / inline PEM
  ssl.truststore.location, .type=PEM     Java's, PEM trust stores only; ssl.truststore.certificates inline PEM
  ssl.certificate.location, ssl.key.location, ssl.key.password    a client certificate (mutual TLS)
  ssl.endpoint.identification.algorithm  "https" (default) checks the host name; "none" or "" does not
  enable.ssl.certificate.verification    "false" trusts any certificate (librdkafka's)
Any other ssl.* or sasl.* setting (key stores, Kerberos, OAUTHBEARER) is refused with ValueError naming it;
other settings (client.id, acks...) are not about the connection and are left to the test's own clients.
`read_properties` reads a Java properties file (key=value or key: value lines, # and ! comments).
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.security.jaas import JaasError, parse_jaas_config
from mockbroker.security.protocols import PROTOCOLS, uses_sasl, uses_tls

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
KNOWN = {
    "security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password", "sasl.jaas.config",
    "ssl.ca.location", "ssl.ca.pem", "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.certificates",
    "ssl.certificate.location", "ssl.key.location", "ssl.key.password", "ssl.endpoint.identification.algorithm",
    "enable.ssl.certificate.verification",
}
# A request on one connection: (api key, version, body) -> the decoded answer (client.py's Connection.send).
Send = Callable[[int, int, dict[str, Any]], Any]


class AuthenticationFailed(KafkaError):
    """The cluster refused the SASL login: KafkaError SASL_AUTHENTICATION_FAILED, the broker's message included."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.SASL_AUTHENTICATION_FAILED, message)


@dataclass(frozen=True)
class ClientSecurity:
    """A connection's security: the protocol, the TLS context (SSL, SASL_SSL), the SASL login (SASL_*)."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    context: ssl.SSLContext | None = None

    def wrap(self, sock: socket.socket, host: str) -> socket.socket:
        """The socket in TLS when the protocol asks for it (host checked against the certificate)."""
        if self.context is None:
            return sock
        return self.context.wrap_socket(sock, server_hostname=host)

    def authenticate(self, send: Send, versions: dict[int, tuple[int, int]], address: str) -> None:
        """The SASL exchange on a new connection (after ApiVersions); AuthenticationFailed if refused."""
        if self.mechanism is None:
            return
        if SASL_AUTHENTICATE not in versions:
            raise AuthenticationFailed(f"{address} serves no SaslAuthenticate: is it a SASL listener?")
        answer = send(SASL_HANDSHAKE, 1, {"mechanism": self.mechanism})
        if answer.error_code != 0:
            raise AuthenticationFailed(f"{address} does not serve SASL mechanism {self.mechanism} "
                                       f"(serves {', '.join(answer.mechanisms)}; error {answer.error_code})")
        version = min(2, versions[SASL_AUTHENTICATE][1])
        steps = _scram_steps(self) if self.mechanism.startswith("SCRAM-") else _plain_steps(self)
        token = next(steps)
        while True:
            answer = send(SASL_AUTHENTICATE, version, {"auth_bytes": token})
            if answer.error_code != 0:
                raise AuthenticationFailed(f"{address} refused the {self.mechanism} login of {self.username!r}: "
                                           f"{answer.error_message or answer.error_code}")
            try:
                token = steps.send(bytes(answer.auth_bytes or b""))
            except StopIteration:
                return


def _plain_steps(security: ClientSecurity) -> Any:
    yield f"\0{security.username}\0{security.password}".encode()


def _scram_steps(security: ClientSecurity) -> Any:
    from scramp import ScramClient, ScramException

    client = ScramClient([security.mechanism], security.username, security.password)
    server_first = yield client.get_client_first().encode()
    client.set_server_first(server_first.decode())
    server_final = yield client.get_client_final().encode()
    try:
        client.set_server_final(server_final.decode())
    except ScramException as exc:  # the server did not prove it knows the credential
        raise AuthenticationFailed(f"the server's SCRAM signature did not check: {exc}") from None


def _login_from_jaas(text: str) -> tuple[str | None, str | None]:
    try:
        modules = parse_jaas_config(text)
    except JaasError as exc:
        raise ValueError(f"sasl.jaas.config: {exc}") from None
    for module in modules:
        if module.short_name in ("PlainLoginModule", "ScramLoginModule"):
            return module.options.get("username"), module.options.get("password")
    raise ValueError("sasl.jaas.config: no PlainLoginModule or ScramLoginModule in it")


def _context(config: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context()
    truststore_type = config.get("ssl.truststore.type", "PEM").upper()
    if "ssl.truststore.location" in config and truststore_type != "PEM":
        raise ValueError(f"ssl.truststore.type {truststore_type} is not supported by the remote target: "
                         "give a PEM file (ssl.truststore.type=PEM or ssl.ca.location)")
    for key in ("ssl.ca.location", "ssl.truststore.location"):
        if config.get(key):
            context.load_verify_locations(cafile=config[key])
    for key in ("ssl.ca.pem", "ssl.truststore.certificates"):
        if config.get(key):
            context.load_verify_locations(cadata=config[key])
    if config.get("ssl.certificate.location") or config.get("ssl.key.location"):
        context.load_cert_chain(config.get("ssl.certificate.location", ""), config.get("ssl.key.location"),
                                config.get("ssl.key.password"))
    if config.get("ssl.endpoint.identification.algorithm", "https").lower() in ("", "none"):
        context.check_hostname = False
    if config.get("enable.ssl.certificate.verification", "true").lower() == "false":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def client_security(config: dict[str, str]) -> ClientSecurity:
    """The connection settings of `config` (property names as above); ValueError naming a bad setting."""
    unknown = sorted(k for k in config if k.startswith(("ssl.", "sasl.")) and k not in KNOWN)
    if unknown:
        raise ValueError(f"not supported by the remote target: {', '.join(unknown)} (it takes {', '.join(sorted(KNOWN))})")
    protocol = config.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ValueError(f"security.protocol {protocol!r}: one of {', '.join(PROTOCOLS)}")
    context = _context(config) if uses_tls(protocol) else None
    if not uses_sasl(protocol):
        return ClientSecurity(protocol, context=context)
    mechanism = (config.get("sasl.mechanism") or config.get("sasl.mechanisms") or "GSSAPI").upper()
    if mechanism not in MECHANISMS:
        raise ValueError(f"sasl.mechanism {mechanism}: the remote target logs in with {', '.join(MECHANISMS)}")
    username, password = config.get("sasl.username"), config.get("sasl.password")
    if "sasl.jaas.config" in config:
        username, password = _login_from_jaas(config["sasl.jaas.config"])
    if not username or password is None:
        raise ValueError(f"{protocol} with {mechanism} needs sasl.username and sasl.password "
                         "(or sasl.jaas.config with username and password)")
    return ClientSecurity(protocol, mechanism, username, password, context)


def read_properties(path: str) -> dict[str, str]:
    """A Java properties file's settings: `key=value` or `key: value` lines; # and ! start comments."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith(("#", "!")):
                continue
            cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
            if cut <= 0:
                raise ValueError(f"{path}:{number}: not key=value: {line!r}")
            out[line[:cut].strip()] = line[cut + 1:].strip()
    return out


def parse_setting(text: str) -> tuple[str, str]:
    """One KEY=VALUE (a --kafka-config option); ValueError if there is no '='."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--kafka-config {text!r}: give KEY=VALUE")
    return key.strip(), value
