"""TLS for SSL and SASL_SSL listeners: the server's SSLContext, a throwaway CA for tests, TLS principals.

- Key material: PEM files (certfile/keyfile, optionally a key password) or a PKCS12 keystore, as
  Kafka's ssl.keystore.* settings; trusted CAs for client certificates as a PEM file or a PKCS12
  truststore. When none is given the broker makes a throwaway CA (EC P-256, a day long) and a server
  certificate for its listeners' host names plus localhost and 127.0.0.1, so a test hands
  `broker.tls.ca_file` (or `ca_pem`) to its client and is done; `broker.tls.client_cert("alice")`
  issues client certificates from that CA for mTLS.
- TLS 1.2 and 1.3 only (Kafka 4's default ssl.enabled.protocols).
- ssl.client.auth: "required" (no certificate: the handshake fails), "requested" (optional), "none".
- The principal of a TLS client is Kafka's default (ssl.principal.mapping.rules=DEFAULT): "User:" and
  its certificate's subject in RFC 2253 form as Java's X500Principal writes it ("User:CN=alice,O=Acme";
  types without an RFC 2253 keyword, such as emailAddress, as `1.2.840.113549.1.9.1=#<hex of the DER
  value>`); without a certificate "User:ANONYMOUS".

cryptography (the `security` extra) is imported only here, past BrokerTls's require(), and this module
only when a TLS listener is configured.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from typing import Any

from mockbroker.extras import require

ANONYMOUS = "User:ANONYMOUS"
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass
class TlsConfig:
    """TLS settings of the broker's SSL and SASL_SSL listeners (all optional: a generated CA otherwise)."""

    certfile: str | None = None  # PEM: the server certificate (and chain), with keyfile
    keyfile: str | None = None
    key_password: str | None = None
    keystore: str | None = None  # PKCS12 instead of certfile/keyfile (Kafka's ssl.keystore.type=PKCS12)
    keystore_password: str | None = None
    cafile: str | None = None  # PEM CAs that sign client certificates (mTLS); default: the generated CA
    truststore: str | None = None  # the same as PKCS12
    truststore_password: str | None = None
    client_auth: str = "none"  # Kafka's ssl.client.auth: required, requested, none
    handshake_timeout_s: float = 60.0  # a TLS handshake not done by then is dropped
    host_names: list[str] = field(default_factory=list)  # extra names for the generated certificate

    def __post_init__(self) -> None:
        if self.client_auth not in CLIENT_AUTH:
            raise ValueError(f"ssl.client.auth must be one of {', '.join(CLIENT_AUTH)}, not {self.client_auth!r}")
        if (self.certfile is None) != (self.keyfile is None):
            raise ValueError("give certfile and keyfile together")


@dataclass(frozen=True)
class ClientCert:
    """A client certificate issued by the broker's generated CA (files in the broker's TLS folder)."""

    cert_file: str
    key_file: str
    cert_pem: bytes
    key_pem: bytes
    principal: str  # what the broker will see: "User:CN=...,O=..."


def _name(common_name: str, organization: str | None = None, unit: str | None = None) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    attributes = []
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    if unit:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _pem_key(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class CertificateAuthority:
    """A throwaway CA (EC P-256) that signs server and client certificates."""

    def __init__(self) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        name = _name("mockbroker test CA", "mockbroker")
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )

    @property
    def cert_pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self.cert.public_bytes(serialization.Encoding.PEM)  # type: ignore[no-any-return]

    def issue(self, subject: Any, *, hosts: list[str] | None = None, client: bool = False) -> tuple[bytes, bytes]:
        """(certificate PEM, PKCS8 key PEM) for subject, with hosts as subject alternative names."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID

        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(self.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client
                                                  else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
        )
        if hosts:
            names: list[x509.GeneralName] = []
            for host in dict.fromkeys(hosts):
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def _pkcs12_to_pem(path: str, password: str | None) -> tuple[bytes, bytes | None, list[bytes]]:
    """(certificate chain PEM, key PEM or None, extra CA certificates PEM) from a PKCS12 file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    with open(path, "rb") as f:
        key, cert, extra = pkcs12.load_key_and_certificates(f.read(), password.encode() if password else None)
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in ([cert] if cert else []) + list(extra))
    cas = [c.public_bytes(serialization.Encoding.PEM) for c in ([cert] if cert else []) + list(extra)]
    return chain, _pem_key(key) if key is not None else None, cas


class BrokerTls:
    """The broker's TLS material and server SSLContext (`broker.tls`)."""

    def __init__(self, config: TlsConfig, host_names: list[str]) -> None:
        require("cryptography", "TLS listeners (SSL, SASL_SSL)")
        self.config = config
        self._dir = tempfile.TemporaryDirectory(prefix="mockbroker-tls-")
        self.ca: CertificateAuthority | None = None
        if config.certfile is None and config.keystore is None:
            self.ca = CertificateAuthority()
            hosts = ["localhost", "127.0.0.1", *host_names, *config.host_names]
            hosts = [h for h in hosts if h not in ("", "0.0.0.0", "::")]
            cert_pem, key_pem = self.ca.issue(_name(hosts[0] if hosts else "localhost", "mockbroker"), hosts=hosts)
            self.certfile = self._write("server.pem", cert_pem)
            self.keyfile = self._write("server.key", key_pem)
            self.key_password: str | None = None
        elif config.keystore is not None:
            chain, keystore_key, _ = _pkcs12_to_pem(config.keystore, config.keystore_password)
            if keystore_key is None:
                raise ValueError(f"the keystore {config.keystore} holds no private key")
            self.certfile = self._write("server.pem", chain)
            self.keyfile = self._write("server.key", keystore_key)
            self.key_password = None
        else:
            assert config.certfile is not None and config.keyfile is not None
            self.certfile, self.keyfile, self.key_password = config.certfile, config.keyfile, config.key_password
        ca_pems: list[bytes] = []
        if self.ca is not None:
            ca_pems.append(self.ca.cert_pem)
        if config.cafile is not None:
            with open(config.cafile, "rb") as f:
                ca_pems.append(f.read())
        if config.truststore is not None:
            ca_pems.extend(_pkcs12_to_pem(config.truststore, config.truststore_password)[2])
        self.ca_pem = b"".join(ca_pems)  # what clients trust (the generated CA) and client certificates need
        self.ca_file = self._write("ca.pem", self.ca_pem) if self.ca_pem else None
        self.context = self._server_context()

    def _write(self, name: str, data: bytes) -> str:
        path = os.path.join(self._dir.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.certfile, self.keyfile, self.key_password)
        ctx.verify_mode = CLIENT_AUTH[self.config.client_auth]
        if self.ca_pem:
            ctx.load_verify_locations(cadata=self.ca_pem.decode("ascii"))
        elif ctx.verify_mode != ssl.CERT_NONE:
            raise ValueError("ssl.client.auth needs trusted CAs (cafile or truststore) for client certificates")
        return ctx

    def client_cert(self, common_name: str, organization: str | None = None, unit: str | None = None) -> ClientCert:
        """A client certificate for mTLS, signed by the generated CA (subject O=organization,OU=unit,CN=...)."""
        if self.ca is None:
            raise ValueError("client certificates come from the generated CA; this broker was given its own")
        subject = _name(common_name, organization, unit)
        cert_pem, key_pem = self.ca.issue(subject, client=True)
        stem = f"client-{len(os.listdir(self._dir.name))}"
        return ClientCert(self._write(stem + ".pem", cert_pem), self._write(stem + ".key", key_pem), cert_pem, key_pem,
                          "User:" + rfc2253(subject))

    def close(self) -> None:
        self._dir.cleanup()


def peer_principal(ssl_object: Any) -> str:
    """Kafka's default principal of a TLS client: User:<subject in RFC 2253 form>, or User:ANONYMOUS."""
    if ssl_object is None:
        return ANONYMOUS
    der = ssl_object.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    from cryptography import x509

    return "User:" + rfc2253(x509.load_der_x509_certificate(der).subject)


# The attribute types Java's X500Principal.getName() (RFC 2253) writes by keyword; others by dotted OID.
_RFC2253_KEYWORDS = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "STREET",
                     "2.5.4.10": "O", "2.5.4.11": "OU", "0.9.2342.19200300.100.1.25": "DC",
                     "0.9.2342.19200300.100.1.1": "UID"}
# The ASN.1 string types Java writes as text (PrintableString, T61String, IA5String, GeneralString,
# BMPString, UTF8String); any other value, and every value of a dotted-OID type, is #<hex of its DER>.
_TEXT_TAGS = {19, 20, 22, 27, 30, 12}
_ESCAPED = ',=+<>#;"\\'


def _der_value(tag: int, value: str | bytes) -> bytes:
    """An attribute value's DER encoding (tag, length, content), which Java shows as #<hex>."""
    if isinstance(value, str):
        value = value.encode({30: "utf-16-be", 28: "utf-32-be"}.get(tag, "utf-8"))
    n = len(value)
    size = n.to_bytes((n.bit_length() + 7) // 8 or 1, "big")
    return bytes([tag]) + (size if n < 128 else bytes([0x80 | len(size)]) + size) + value


def _escape_2253(value: str) -> str:
    chars = ["\\00" if c == "\0" else "\\" + c if c in _ESCAPED else c for c in value]
    lead = next((i for i, c in enumerate(chars) if c not in (" ", "\r")), len(chars))
    last = next((i for i in range(len(chars) - 1, -1, -1) if chars[i] not in (" ", "\r")), -1)
    return "".join("\\" + c if i < lead or i > last else c for i, c in enumerate(chars))


def rfc2253(name: Any) -> str:
    """A certificate subject (cryptography's x509.Name) as Java's X500Principal.getName() writes it, which
    is Kafka's default TLS principal: the RDNs last first, keywords for the RFC 2253 types, `#` and the
    hex of the DER value for other types (e.g. emailAddress), and Java's escaping (`,=+<>#;"\\`, NUL,
    leading and trailing spaces)."""
    rdns = []
    for rdn in reversed(list(name.rdns)):
        parts = []
        for attr in rdn:
            oid = attr.oid.dotted_string
            tag = int(getattr(getattr(attr, "_type", None), "value", 12))
            keyword = _RFC2253_KEYWORDS.get(oid)
            if keyword is not None and tag in _TEXT_TAGS and isinstance(attr.value, str):
                parts.append(f"{keyword}={_escape_2253(attr.value)}")
            else:
                parts.append(f"{keyword or oid}=#{_der_value(tag, attr.value).hex()}")
        rdns.append("+".join(parts))
    return ",".join(rdns)
