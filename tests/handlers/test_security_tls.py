"""Raw-protocol tests of TLS listeners: SSL and SASL_SSL, TLS 1.2 and 1.3, mTLS with ssl.client.auth and
Kafka's principal from the certificate's subject, user-given PEM and PKCS12 key material, several
listeners of different protocols at once, and bad input (TLS on a PLAINTEXT port, PLAINTEXT on a TLS
port, a handshake left half-finished) answered with a closed connection while others are served."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable

import pytest

from mockbroker.security.tls import CertificateAuthority, ClientCert, TlsConfig, _name
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import Listener
from tests.handlers.conftest import METADATA
from tests.rawclient import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def tls_client(host: str, port: int, cafile: str | None, cert: ClientCert | None = None,
               version: ssl.TLSVersion | None = None) -> RawClient:
    ctx = ssl.create_default_context(cafile=cafile)
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    if cert is not None:
        ctx.load_cert_chain(cert.cert_file, cert.key_file)
    client = RawClient(host, port)
    client.sock = ctx.wrap_socket(client.sock, server_hostname="localhost")
    return client


def metadata_ok(c: RawClient) -> bool:
    return bool(c.request(METADATA, 12, {"topics": None}).brokers)


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
@pytest.mark.mockbroker(security="SSL")
def test_ssl_listener_serves_tls_12_and_13_with_the_generated_ca(mockbroker: MockBroker,
                                                                 version: ssl.TLSVersion) -> None:
    with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file, version=version) as c:
        assert isinstance(c.sock, ssl.SSLSocket)
        assert c.sock.version() == {ssl.TLSVersion.TLSv1_2: "TLSv1.2", ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version]
        assert metadata_ok(c)
    last = mockbroker.received(METADATA)[-1]
    assert (last.principal, last.listener) == ("User:ANONYMOUS", "SSL")
    assert mockbroker.tls.ca_pem.startswith(b"-----BEGIN CERTIFICATE-----")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.mockbroker(security="SSL")
def test_tls_10_and_11_are_refused(mockbroker: MockBroker) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.minimum_version = ssl.TLSVersion.TLSv1
    except (ValueError, ssl.SSLError):
        pytest.skip("this OpenSSL cannot even offer TLS 1.1")
    with socket.create_connection((mockbroker.host, mockbroker.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            ctx.wrap_socket(raw, server_hostname="localhost")


@pytest.mark.mockbroker(security="SSL", tls=TlsConfig(client_auth="required"))
def test_mtls_required_gives_the_certificate_subject_as_principal(mockbroker: MockBroker) -> None:
    cert = mockbroker.tls.client_cert("alice", organization="Acme", unit="payments")
    assert cert.principal == "User:CN=alice,OU=payments,O=Acme"
    with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file, cert) as c:
        assert metadata_ok(c)
    assert mockbroker.received(METADATA)[-1].principal == "User:CN=alice,OU=payments,O=Acme"


@pytest.mark.mockbroker(security="SSL", tls=TlsConfig(client_auth="required"))
def test_mtls_required_refuses_a_client_without_a_certificate(mockbroker: MockBroker) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file) as c:
            c.request(METADATA, 12, {"topics": None})  # TLS 1.3: the refusal arrives after the handshake
    assert not mockbroker.received(METADATA)


@pytest.mark.mockbroker(security="SSL", config={"ssl.client.auth": "requested"})
def test_mtls_requested_serves_clients_with_and_without_certificates(mockbroker: MockBroker) -> None:
    with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file) as c:
        assert metadata_ok(c)
    assert mockbroker.received(METADATA)[-1].principal == "User:ANONYMOUS"
    cert = mockbroker.tls.client_cert("bob")
    with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file, cert) as c:
        assert metadata_ok(c)
    assert mockbroker.received(METADATA)[-1].principal == "User:CN=bob"


@pytest.mark.mockbroker(security="SSL", tls=TlsConfig(client_auth="required"))
def test_mtls_refuses_a_certificate_from_another_ca(mockbroker: MockBroker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    other = CertificateAuthority()
    cert_pem, key_pem = other.issue(_name("mallory"), client=True)
    (tmp_path / "c.pem").write_bytes(cert_pem)
    (tmp_path / "c.key").write_bytes(key_pem)
    cert = ClientCert(str(tmp_path / "c.pem"), str(tmp_path / "c.key"), cert_pem, key_pem, "User:CN=mallory")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file, cert) as c:
            c.request(METADATA, 12, {"topics": None})
    assert not mockbroker.received(METADATA)


@pytest.mark.mockbroker(security="SASL_SSL", users={"alice": "secret"})
def test_sasl_ssl_principal_is_the_sasl_user(mockbroker: MockBroker) -> None:
    with tls_client(mockbroker.host, mockbroker.port, mockbroker.tls.ca_file) as c:
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == 0
        assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"}).error_code == 0
        assert metadata_ok(c)
    last = mockbroker.received(METADATA)[-1]
    assert (last.principal, last.listener) == ("User:alice", "SASL_SSL")


def test_user_given_pem_and_pkcs12_key_material(mockbroker_factory: Callable[..., MockBroker], tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        load_pem_private_key,
        pkcs12,
    )
    from cryptography.x509 import load_pem_x509_certificate

    ca = CertificateAuthority()
    cert_pem, key_pem = ca.issue(_name("localhost"), hosts=["localhost", "127.0.0.1"])
    (tmp_path / "ca.pem").write_bytes(ca.cert_pem)
    (tmp_path / "server.pem").write_bytes(cert_pem)
    (tmp_path / "server.key").write_bytes(key_pem)
    (tmp_path / "server.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        b"server", load_pem_private_key(key_pem, None), load_pem_x509_certificate(cert_pem), None,  # type: ignore[arg-type]
        BestAvailableEncryption(b"changeit")))
    for tls in (TlsConfig(certfile=str(tmp_path / "server.pem"), keyfile=str(tmp_path / "server.key")),
                TlsConfig(keystore=str(tmp_path / "server.p12"), keystore_password="changeit")):
        broker = mockbroker_factory(security="SSL", tls=tls)
        with tls_client(broker.host, broker.port, str(tmp_path / "ca.pem")) as c:
            assert metadata_ok(c)


def test_listeners_of_different_protocols_at_once(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(
        listeners=[Listener("PLAINTEXT", 1, "127.0.0.1", 0), Listener("SASL_SSL", 1, "127.0.0.1", 0),
                   Listener("INTERNAL", 1, "127.0.0.1", 0)],
        config={"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,INTERNAL:SSL"},
        users={"alice": "secret"})
    assert [lst.security_protocol for lst in broker.cluster.listeners] == ["PLAINTEXT", "SASL_SSL", "SSL"]
    plain, sasl_ssl, internal = broker.cluster.listeners
    with RawClient("127.0.0.1", plain.port) as c:
        assert c.request(METADATA, 12, {"topics": None}).brokers[0].port == plain.port
    with tls_client("127.0.0.1", sasl_ssl.port, broker.tls.ca_file) as c:
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"}).error_code == 0
        assert c.request(METADATA, 12, {"topics": None}).brokers[0].port == sasl_ssl.port
    with tls_client("127.0.0.1", internal.port, broker.tls.ca_file) as c:
        assert c.request(METADATA, 12, {"topics": None}).brokers[0].port == internal.port
    seen = [(r.listener, r.principal) for r in broker.received(METADATA)]
    assert seen == [("PLAINTEXT", "User:ANONYMOUS"), ("SASL_SSL", "User:alice"), ("INTERNAL", "User:ANONYMOUS")]


# -- bad input -----------------------------------------------------------------------------------


def _client_hello() -> bytes:
    """The first bytes a TLS client sends (a real ClientHello, produced by Python's ssl module)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    ctx = ssl.create_default_context()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


def test_tls_client_hello_on_a_plaintext_port_closes_the_connection(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        c.send_frame(_client_hello())
        assert c.is_closed_by_peer(timeout=30)
    with RawClient(mockbroker.host, mockbroker.port) as other:
        assert metadata_ok(other)


@pytest.mark.parametrize("security", ["SSL", "SASL_SSL"])
def test_plaintext_request_on_a_tls_port_closes_the_connection(mockbroker_factory: Callable[..., MockBroker],
                                                              security: str) -> None:
    broker = mockbroker_factory(security=security, users={"alice": "secret"})
    with RawClient(broker.host, broker.port) as c:
        c.send(METADATA, 12, {"topics": None})
        assert c.is_closed_by_peer(timeout=30)
    assert not broker.received()


def test_half_finished_tls_handshake_is_dropped_and_others_are_served(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(security="SSL", tls=TlsConfig(handshake_timeout_s=1.0))
    with socket.create_connection((broker.host, broker.port), timeout=10) as stuck:
        hello = _client_hello()
        stuck.sendall(hello[: len(hello) // 2])  # half a ClientHello, then nothing
        with tls_client(broker.host, broker.port, broker.tls.ca_file) as other:
            assert metadata_ok(other)
        stuck.settimeout(1)
        deadline = time.monotonic() + 60
        closed = False
        while not closed and time.monotonic() < deadline:
            try:
                closed = stuck.recv(65536) == b""
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                closed = True
        assert closed, "the broker kept a half-finished TLS handshake open for a minute"


def test_security_and_listeners_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        MockBroker(security="SSL", listeners=[Listener("SSL", 1, "127.0.0.1", 0)])
    with pytest.raises(ValueError, match="unknown security protocol"):
        MockBroker(security="TLS")
    with pytest.raises(ValueError, match="gives no protocol for listener"):
        MockBroker(listeners=[Listener("INTERNAL", 1, "127.0.0.1", 0)],
                   config={"listener.security.protocol.map": "EXTERNAL:SSL"})


def test_generated_certificate_names_the_listeners_hosts(mockbroker_factory: Callable[..., MockBroker]) -> None:
    # A client verifies the broker by the advertised name it was given (here one no resolver knows).
    broker = mockbroker_factory(listeners=[Listener("SSL", 1, "127.0.0.1", 0, advertised_host="kafka-1.test")],
                                tls=TlsConfig(host_names=["extra.test"]))
    ctx = ssl.create_default_context(cafile=broker.tls.ca_file)
    for name in ("kafka-1.test", "extra.test", "localhost", "127.0.0.1"):
        client = RawClient("127.0.0.1", broker.port)
        client.sock = ctx.wrap_socket(client.sock, server_hostname=name)
        with client as c:
            assert c.request(METADATA, 12, {"topics": None}).brokers[0].host == "kafka-1.test"
    refused = RawClient("127.0.0.1", broker.port)
    with pytest.raises(ssl.SSLCertVerificationError):
        ctx.wrap_socket(refused.sock, server_hostname="other.test")
    refused.sock.close()
