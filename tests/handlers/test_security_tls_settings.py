"""TLS key material given in the Kafka images' spelling (KAFKA_SSL_* and KAFKA_CFG_SSL_*), end to end: the
environment becomes the broker's settings, the listener serves with that keystore, and with
ssl.client.auth=required and the truststore a client certificate from the trusted CA gets in (its subject
is the principal) while one without a certificate does not. A PKCS12 keystore and truststore (what
keytool makes), and a PEM keystore (an encrypted PKCS8 key and the certificate chain in one file, its
password in ssl.key.password) with a PEM truststore. And the principal of a subject with a type that has
no RFC 2253 keyword (emailAddress), as Kafka's default principal builder gives it."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from mockbroker.envconfig import build_settings
from mockbroker.security.tls import CertificateAuthority, ClientCert, TlsConfig, _name
from mockbroker.server import MockBroker
from tests.handlers.test_security_tls import metadata_ok, tls_client

PASSWORD = b"changeit"


def key_material(tmp: Path, store_type: str) -> tuple[dict[str, str], CertificateAuthority]:
    """The environment for a keystore and truststore of `store_type`, written to tmp."""
    ca = CertificateAuthority()
    cert_pem, key_pem = ca.issue(_name("localhost"), hosts=["localhost", "127.0.0.1"])
    key = serialization.load_pem_private_key(key_pem, None)
    cert, ca_cert = x509.load_pem_x509_certificate(cert_pem), x509.load_pem_x509_certificate(ca.cert_pem)
    if store_type == "PKCS12":
        (tmp / "server.p12").write_bytes(pkcs12.serialize_key_and_certificates(
            b"server", key, cert, [ca_cert], serialization.BestAvailableEncryption(PASSWORD)))  # type: ignore[arg-type]
        (tmp / "trust.p12").write_bytes(pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca_cert, b"ca")], serialization.BestAvailableEncryption(PASSWORD)))
        return {"KAFKA_SSL_KEYSTORE_LOCATION": str(tmp / "server.p12"), "KAFKA_SSL_KEYSTORE_PASSWORD": "changeit",
                "KAFKA_SSL_TRUSTSTORE_LOCATION": str(tmp / "trust.p12"),
                "KAFKA_SSL_TRUSTSTORE_PASSWORD": "changeit"}, ca
    encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(PASSWORD))
    (tmp / "server.pem").write_bytes(encrypted + cert_pem + ca.cert_pem)
    (tmp / "trust.pem").write_bytes(ca.cert_pem)
    return {"KAFKA_CFG_SSL_KEYSTORE_TYPE": "PEM", "KAFKA_CFG_SSL_KEYSTORE_LOCATION": str(tmp / "server.pem"),
            "KAFKA_CFG_SSL_KEY_PASSWORD": "changeit", "KAFKA_CFG_SSL_TRUSTSTORE_TYPE": "PEM",
            "KAFKA_CFG_SSL_TRUSTSTORE_LOCATION": str(tmp / "trust.pem")}, ca


@pytest.mark.parametrize("store_type", ["PKCS12", "PEM"])
def test_keystore_and_truststore_from_the_images_environment_serve_mtls(
        store_type: str, mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    env, ca = key_material(tmp_path, store_type)
    settings = build_settings({"KAFKA_LISTENERS": "SSL://127.0.0.1:0", "KAFKA_SSL_CLIENT_AUTH": "required", **env})
    broker = mockbroker_factory(**settings.broker_kwargs())
    (tmp_path / "ca.pem").write_bytes(ca.cert_pem)  # the client trusts the CA that issued the keystore's certificate
    cert_pem, key_pem = ca.issue(_name("alice", "Acme"), client=True)
    (tmp_path / "alice.pem").write_bytes(cert_pem)
    (tmp_path / "alice.key").write_bytes(key_pem)
    alice = ClientCert(str(tmp_path / "alice.pem"), str(tmp_path / "alice.key"), cert_pem, key_pem, "")
    with tls_client(broker.host, broker.port, str(tmp_path / "ca.pem"), alice) as c:
        assert metadata_ok(c)
    assert broker.received(3)[-1].principal == "User:CN=alice,O=Acme"  # 3 = Metadata
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        with tls_client(broker.host, broker.port, str(tmp_path / "ca.pem")) as c:  # no client certificate
            c.request(3, 12, {"topics": None})
    assert len(broker.received(3)) == 1


def test_mtls_principal_of_a_subject_with_an_email_address_is_javas(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    from cryptography.x509.oid import NameOID

    broker = mockbroker_factory(security="SSL", tls=TlsConfig(client_auth="required"))
    assert broker.tls.ca is not None
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc."),
                         x509.NameAttribute(NameOID.EMAIL_ADDRESS, "alice@example.com"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    cert_pem, key_pem = broker.tls.ca.issue(subject, client=True)
    (tmp_path / "alice.pem").write_bytes(cert_pem)
    (tmp_path / "alice.key").write_bytes(key_pem)
    alice = ClientCert(str(tmp_path / "alice.pem"), str(tmp_path / "alice.key"), cert_pem, key_pem, "")
    with tls_client(broker.host, broker.port, broker.tls.ca_file, alice) as c:
        assert metadata_ok(c)
    # What Kafka's default principal builder gives (X500Principal.getName(): no keyword for emailAddress).
    assert broker.received(3)[-1].principal == \
        "User:CN=alice,1.2.840.113549.1.9.1=#1611616c696365406578616d706c652e636f6d,O=Acme\\, Inc."
