"""Adversarial SASL and TLS input (issue #33 item 4): malformed SaslHandshake / SaslAuthenticate
sequences and garbage or truncated TLS handshakes each get Kafka's error code or a clean close, never a
traceback in the broker's log (caplog: no ERROR record carrying an exception), and the broker serves a
good client afterwards. Loopback only; every wait is bounded (RawClient's 10 s socket timeout,
is_closed_by_peer's bound).

Already covered elsewhere, and not repeated here:
- tests/handlers/test_security_sasl.py: a Metadata or SaslAuthenticate request before the handshake,
  GSSAPI (an unsupported mechanism), a request between handshake and authentication, a second handshake,
  SASL requests after authentication, a wrong PLAIN password, a wrong SCRAM password (a wrong proof from
  a real client), SCRAM client-first messages "garbage", "n,,n=alice", an unknown user and binary bytes,
  a truncated SaslAuthenticate frame, a v0 raw token with a wrong password, a frame over
  sasl.server.max.receive.size before authentication.
- tests/handlers/test_hardening_oauth.py: every malformed OAUTHBEARER token shape.
- tests/handlers/test_security_tls.py: a ClientHello on a PLAINTEXT port, a PLAINTEXT request on a TLS
  port, half a ClientHello left hanging until the handshake timeout, TLS 1.0 / 1.1, a client
  certificate from another CA.
- tests/fuzz/test_fuzz_requests.py: mutated frames of every API key on a PLAINTEXT listener.
"""

from __future__ import annotations

import logging
import random
import re
import socket
import ssl
import struct
from collections.abc import Callable, Iterator

import pytest
from scramp import ScramClient

from mockbroker.protocol.errors import ErrorCode
from mockbroker.security.failure import generic_failure
from mockbroker.security.tls import TlsConfig
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA
from tests.rawclient import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
USERS = {"alice": "secret"}
JUNK = random.Random(33).randbytes(1 << 20)  # 1 MiB, the same every run
pytestmark = [pytest.mark.adversarial, pytest.mark.mockbroker(security="SASL_PLAINTEXT", users=USERS)]


@pytest.fixture(autouse=True)
def no_traceback(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.INFO)
    yield
    crashes = [r for r in caplog.records if r.levelno >= logging.ERROR and (r.exc_info or "Traceback" in r.getMessage())]
    assert not crashes, [f"{r.name}: {r.getMessage()}" for r in crashes]


def still_serving(broker: MockBroker, client: Callable[[], RawClient] | None = None) -> None:
    """A fresh client logs in (SASL listeners) and is served."""
    with (client or (lambda: RawClient(broker.host, broker.port)))() as c:
        if broker.cluster.listeners[0].security_protocol.startswith("SASL"):
            assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
            assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"}).error_code == ErrorCode.NONE
        assert c.request(METADATA, 12, {"topics": None}).brokers


def refused_then_closed(c: RawClient, token: bytes, message: str) -> None:
    resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
    assert (resp.error_code, resp.error_message) == (ErrorCode.SASL_AUTHENTICATION_FAILED, message)
    assert c.is_closed_by_peer()


def handshake(c: RawClient, mechanism: str, version: int = 1) -> None:
    assert c.request(SASL_HANDSHAKE, version, {"mechanism": mechanism}).error_code == ErrorCode.NONE


# -- SASL --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [b"\0alice\0secret", b"n,,n=alice,r=abcdefgh", JUNK[:4096]],
                         ids=["plain", "scram-first", "junk"])
def test_raw_auth_bytes_before_any_handshake_close_the_connection(mockbroker: MockBroker, token: bytes) -> None:
    # Without a handshake the bytes are read as a request header (Kafka's SaslServerAuthenticator does the
    # same): no API it knows, so the connection closes, unanswered.
    with RawClient(mockbroker.host, mockbroker.port) as c:
        c.send_frame(struct.pack(">i", len(token)) + token)
        assert c.is_closed_by_peer()
    assert not mockbroker.received(SASL_AUTHENTICATE)
    still_serving(mockbroker)


@pytest.mark.parametrize("mechanism", ["plain", "", "SCRAM-SHA-1", "PLAIN\0", "M" * 10_000])
def test_a_wrong_mechanism_name_is_answered_with_the_enabled_ones_then_closed(mockbroker: MockBroker,
                                                                              mechanism: str) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": mechanism})
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.UNSUPPORTED_SASL_MECHANISM, MECHANISMS)
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_scram_bytes_after_a_plain_handshake_fail_as_plain(mockbroker: MockBroker) -> None:
    first = ScramClient(["SCRAM-SHA-256"], "alice", "secret").get_client_first().encode()
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, "PLAIN")
        refused_then_closed(c, first, generic_failure("PLAIN"))
    still_serving(mockbroker)


@pytest.mark.parametrize("token", [b"alicesecret", b"\0alice", b"alice\0secret", b"\0\0secret", b"\0alice\0",
                                   b"", b"\0\0", b"\xff\xfe\0alice\0secret"])
def test_plain_with_missing_or_empty_fields_gets_kafkas_generic_failure(mockbroker: MockBroker,
                                                                        token: bytes) -> None:
    # PlainSaslServer: an empty username or password (what missing NULs leave) is a SaslException, whose
    # text Kafka never sends: the generic message.
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, "PLAIN")
        refused_then_closed(c, token, generic_failure("PLAIN"))
    still_serving(mockbroker)


@pytest.mark.parametrize("token", [b"n,,", b"n", b"n,,n=alice,r=", b"y,,n=alice,r=abc", b"p=tls-unique,,n=alice,r=x",
                                   b"n,,r=abc,n=alice", b"n,,n=alice,r=abc,m=ext"])
def test_malformed_scram_client_first_gets_the_generic_failure(mockbroker: MockBroker, token: bytes) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, "SCRAM-SHA-256")
        refused_then_closed(c, token, generic_failure("SCRAM-SHA-256"))
    still_serving(mockbroker)


def _wrong_nonce(final: str) -> str:
    return re.sub(r"r=[^,]+", "r=not-the-servers-nonce", final)


def _zero_proof(final: str) -> str:
    return re.sub(r"p=[^,]+", "p=" + "A" * 43 + "=", final)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("spoil", [
    lambda f: f[: len(f) // 2],  # truncated
    lambda f: f[: f.index(",p=")],  # no proof
    _wrong_nonce,
    _zero_proof,
    lambda f: f.replace("p=", "p=!!not base64!!"),
    lambda f: f.replace("c=biws", "c=eSws"),  # channel binding flag changed between the messages
    lambda f: f + "," + "x" * 100_000,
], ids=["truncated", "no-proof", "wrong-nonce", "wrong-proof", "bad-base64", "binding", "trailing-junk"])
def test_spoiled_scram_client_final_gets_the_generic_failure(mockbroker: MockBroker, mechanism: str,
                                                             spoil: Callable[[str], str]) -> None:
    client = ScramClient([mechanism], "alice", "secret")
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, mechanism)
        first = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_first().encode()})
        assert first.error_code == ErrorCode.NONE
        client.set_server_first(bytes(first.auth_bytes).decode())
        refused_then_closed(c, spoil(client.get_client_final()).encode(), generic_failure(mechanism))
    still_serving(mockbroker)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_large_junk_auth_bytes_get_the_generic_failure(mockbroker: MockBroker, mechanism: str) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, mechanism)
        refused_then_closed(c, JUNK[: 400 * 1024], generic_failure(mechanism))  # under the 512 KiB limit
    still_serving(mockbroker)


@pytest.mark.parametrize("framed", [True, False], ids=["framed", "raw-stream"])
def test_a_mebibyte_of_junk_closes_the_connection(mockbroker: MockBroker, framed: bool) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, "PLAIN", version=0)  # v0: the next bytes are a raw, size-prefixed token
        try:
            c.send_frame(struct.pack(">i", len(JUNK)) + JUNK if framed else JUNK)
        except (ConnectionResetError, BrokenPipeError):
            pass  # closed while we were still sending: as good
        assert c.is_closed_by_peer()
    with RawClient(mockbroker.host, mockbroker.port) as c:  # and before any handshake
        try:
            c.send_frame(JUNK)
        except (ConnectionResetError, BrokenPipeError):
            pass
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_authenticate_twice_after_a_failure_is_never_answered_as_success(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        handshake(c, "PLAIN")
        c.send(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0wrong"})
        c.send(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"})  # pipelined behind the failure
        c.send(METADATA, 12, {"topics": None})
        _, resp = c.recv(SASL_AUTHENTICATE, 2)
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert c.is_closed_by_peer()
    assert not mockbroker.received(METADATA)
    still_serving(mockbroker)


# -- TLS ---------------------------------------------------------------------------------------------


def _client_hello() -> tuple[ssl.SSLObject, ssl.MemoryBIO, bytes]:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return obj, incoming, outgoing.read()


def _corrupt(hello: bytes) -> bytes:
    out = bytearray(hello)
    for i in range(9, len(out), 7):  # past the record and handshake headers
        out[i] ^= 0xA5
    return bytes(out)


def _sent_then_closed(broker: MockBroker, data: bytes, *, shut_write: bool = False) -> bool:
    with socket.create_connection((broker.host, broker.port), timeout=10) as s:
        try:
            s.sendall(data)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except (ConnectionResetError, BrokenPipeError):
            return True
        c = RawClient.__new__(RawClient)
        c.sock = s
        return c.is_closed_by_peer(timeout=30)


TLS_GARBAGE = {
    "junk": JUNK[:4096],
    "mebibyte": JUNK,
    "handshake-record-of-junk": b"\x16\x03\x01\x00\x40" + JUNK[:64],
    "huge-record-length": b"\x16\x03\x01\xff\xff" + JUNK[:1024],
    "alert-record": b"\x15\x03\x03\x00\x02\x02\x28",
    "sslv2-hello": b"\x80\x2e\x01\x00\x02\x00\x15" + JUNK[:48],
}


@pytest.mark.parametrize("security", ["SSL", "SASL_SSL"])
@pytest.mark.parametrize("name", list(TLS_GARBAGE))
def test_garbage_on_a_tls_listener_closes_the_connection(mockbroker_factory: Callable[..., MockBroker],
                                                         security: str, name: str) -> None:
    broker = mockbroker_factory(security=security, users=USERS)
    assert _sent_then_closed(broker, TLS_GARBAGE[name])
    still_serving(broker, lambda: _tls_client(broker))


@pytest.mark.parametrize("how", ["truncated-then-eof", "corrupted", "hello-then-junk"])
def test_broken_client_hellos_close_the_connection(mockbroker_factory: Callable[..., MockBroker], how: str) -> None:
    broker = mockbroker_factory(security="SSL", tls=TlsConfig(handshake_timeout_s=5.0))
    obj, incoming, hello = _client_hello()
    if how == "truncated-then-eof":
        assert _sent_then_closed(broker, hello[: len(hello) // 3], shut_write=True)
    elif how == "corrupted":
        assert _sent_then_closed(broker, _corrupt(hello))
    else:  # a real ClientHello, the server's answer read, then junk where the client's Finished belongs
        with socket.create_connection((broker.host, broker.port), timeout=10) as s:
            s.sendall(hello)
            assert s.recv(65536)  # the ServerHello and the rest of the server's flight
            try:
                s.sendall(b"\x17\x03\x03\x01\x00" + JUNK[:256])
            except (ConnectionResetError, BrokenPipeError):
                pass
            c = RawClient.__new__(RawClient)
            c.sock = s
            assert c.is_closed_by_peer(timeout=30)
    still_serving(broker, lambda: _tls_client(broker))


def test_sasl_ssl_plain_without_nuls_gets_the_generic_failure(mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(security="SASL_SSL", users=USERS)
    with _tls_client(broker) as c:
        handshake(c, "PLAIN")
        refused_then_closed(c, b"alicesecret", generic_failure("PLAIN"))
    still_serving(broker, lambda: _tls_client(broker))


def _tls_client(broker: MockBroker) -> RawClient:
    ctx = ssl.create_default_context(cafile=broker.tls.ca_file)
    client = RawClient(broker.host, broker.port)
    client.sock = ctx.wrap_socket(client.sock, server_hostname="localhost")
    return client
