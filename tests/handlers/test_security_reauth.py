"""Raw-protocol tests of re-authentication (KIP-368) on the broker clock: session_lifetime_ms from
connections.max.reauth.ms and OAUTHBEARER token lifetimes, the connection closed at its first request
after the session expired, and a SaslHandshake + SaslAuthenticate on the same connection renewing it
(same mechanism, same principal, at most once a second), as Kafka's SaslServerAuthenticator and
SocketServer do."""

from __future__ import annotations

import math

import pytest
from scramp import ScramClient

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA
from tests.handlers.test_security_sasl import SASL_AUTHENTICATE, SASL_HANDSHAKE, connect, oauth_first
from tests.rawclient import RawClient

REAUTH = pytest.mark.mockbroker(security="SASL_PLAINTEXT", users={"alice": "secret", "bob": "pw"},
                                config={"connections.max.reauth.ms": 60000})


def login(c: RawClient, user: str = "alice", password: str = "secret", mechanism: str = "PLAIN") -> int:
    """A PLAIN (or SCRAM) login; the session_lifetime_ms answered."""
    assert c.request(SASL_HANDSHAKE, 1, {"mechanism": mechanism}).error_code == ErrorCode.NONE
    resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": f"\0{user}\0{password}".encode()})
    assert resp.error_code == ErrorCode.NONE, resp
    return int(resp.session_lifetime_ms)


def served(c: RawClient) -> bool:
    return bool(c.request(METADATA, 12, {"topics": None}).brokers)


@REAUTH
def test_session_lifetime_is_connections_max_reauth_ms_and_expiry_closes(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert login(c) == 60000
        mockbroker.clock.advance(59)
        assert served(c)
        mockbroker.clock.advance(2)
        c.send(METADATA, 12, {"topics": None})
        assert c.is_closed_by_peer()
    with connect(mockbroker) as other:  # everyone else is served
        login(other)
        assert served(other)


@REAUTH
def test_reauthentication_on_the_same_connection_renews_the_session(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        login(c)
        mockbroker.clock.advance(30)
        assert login(c) == 60000
        mockbroker.clock.advance(45)  # 75 s after the first login, 45 s into the second session
        assert served(c)
        mockbroker.clock.advance(20)
        assert login(c) == 60000  # an expired session may still re-authenticate
        assert served(c)
    assert {r.principal for r in mockbroker.received(METADATA)} == {"User:alice"}


@REAUTH
def test_reauthentication_with_scram(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
        scram_lifetime = _scram(c)
        assert scram_lifetime == 60000
        mockbroker.clock.advance(10)
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
        _scram(c)
        mockbroker.clock.advance(55)
        assert served(c)


def _scram(c: RawClient) -> int:
    """A SCRAM-SHA-256 exchange as alice after its handshake; the session_lifetime_ms answered."""
    client = ScramClient(["SCRAM-SHA-256"], "alice", "secret")
    first = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_first().encode()})
    client.set_server_first(bytes(first.auth_bytes).decode())
    final = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_final().encode()})
    assert final.error_code == ErrorCode.NONE, final
    client.set_server_final(bytes(final.auth_bytes).decode())
    return int(final.session_lifetime_ms)


@REAUTH
def test_reauthentication_cannot_change_the_principal(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        login(c)
        mockbroker.clock.advance(5)
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.NONE
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0bob\0pw"})
        assert (resp.error_code, resp.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED, "Cannot change principals during re-authentication from "
                                                  "User.alice: User.bob")
        assert c.is_closed_by_peer()


@REAUTH
def test_reauthentication_cannot_change_the_mechanism(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        login(c)
        mockbroker.clock.advance(5)
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"}).error_code == ErrorCode.NONE
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"n,,n=alice,r=abc"})
        assert (resp.error_code, resp.error_message) == (
            ErrorCode.SASL_AUTHENTICATION_FAILED, "SASL mechanism 'SCRAM-SHA-256' requested by client is not "
                                                  "supported for re-authentication of mechanism 'PLAIN'")
        assert c.is_closed_by_peer()


@REAUTH
def test_reauthentication_at_most_once_a_second(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        login(c)
        mockbroker.clock.advance(5)
        login(c)
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})  # within the same second
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert served(c)


@REAUTH
def test_a_request_during_reauthentication_closes_the_connection(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        login(c)
        mockbroker.clock.advance(5)
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        c.send(METADATA, 12, {"topics": None})
        assert c.is_closed_by_peer()


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", users={"alice": "secret"})
def test_without_max_reauth_sessions_never_expire_and_handshake_is_illegal(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert login(c) == 0
        mockbroker.clock.advance(540)  # under connections.max.idle.ms
        assert served(c)
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.ILLEGAL_SASL_STATE


@pytest.mark.parametrize(("max_reauth_ms", "token_s", "expected"), [(60000, 3600, 60000), (0, 120, 120000),
                                                                    (600000, 120, 120000)])
def test_oauthbearer_session_is_the_token_lifetime_capped_by_the_setting(
        mockbroker_factory, max_reauth_ms: int, token_s: int, expected: int) -> None:  # type: ignore[no-untyped-def]
    from mockbroker.security.oauth import unsecured_token

    broker = mockbroker_factory(security="SASL_PLAINTEXT", sasl_mechanisms=["OAUTHBEARER"],
                                config={"connections.max.reauth.ms": max_reauth_ms})
    with connect(broker) as c:
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})
        now_s = math.ceil(broker.clock.now_ms() / 1000)  # a whole second (the broker clock runs on)
        broker.clock.advance(now_s - broker.clock.now_ms() / 1000 + 0.002)
        token = unsecured_token("svc", now_s=now_s, lifetime_s=token_s)
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": oauth_first(token)})
        assert resp.error_code == ErrorCode.NONE
        assert expected - 1000 < resp.session_lifetime_ms <= expected
        broker.clock.advance(expected / 1000 + 1)
        c.send(METADATA, 12, {"topics": None})
        assert c.is_closed_by_peer()
