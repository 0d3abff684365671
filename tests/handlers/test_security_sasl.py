"""Raw-protocol tests of SASL as Kafka frames it: SaslHandshake v0/v1, SaslAuthenticate v0-v2, raw tokens,
the errors (UNSUPPORTED_SASL_MECHANISM, SASL_AUTHENTICATION_FAILED, ILLEGAL_SASL_STATE) and what closes a
connection, with the broker serving everyone else throughout."""

from __future__ import annotations

import struct

import pytest
from scramp import ScramClient

from mockbroker.protocol.errors import ErrorCode
from mockbroker.security.failure import generic_failure
from mockbroker.server import MockBroker
from tests.handlers.conftest import API_VERSIONS, METADATA
from tests.rawclient import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
pytestmark = pytest.mark.mockbroker(security="SASL_PLAINTEXT", users={"alice": "secret"})


def connect(broker: MockBroker) -> RawClient:
    return RawClient(broker.host, broker.port)


def handshake(c: RawClient, mechanism: str, version: int = 1) -> None:
    resp = c.request(SASL_HANDSHAKE, version, {"mechanism": mechanism})
    assert resp.error_code == ErrorCode.NONE, resp
    assert resp.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


def authenticate(c: RawClient, token: bytes, version: int = 2, lifetime_ms: int | None = 0) -> bytes:
    """One SaslAuthenticate that must succeed; v1+ answers session_lifetime_ms (None: not checked)."""
    resp = c.request(SASL_AUTHENTICATE, version, {"auth_bytes": token})
    assert resp.error_code == ErrorCode.NONE, resp
    if version >= 1 and lifetime_ms is not None:
        assert resp.session_lifetime_ms == lifetime_ms
    return bytes(resp.auth_bytes)


def raw_token(c: RawClient, token: bytes) -> bytes:
    c.send_frame(struct.pack(">i", len(token)) + token)
    return c.recv_frame()


def scram(c: RawClient, mechanism: str, user: str, password: str, *, raw: bool = False) -> None:
    client = ScramClient([mechanism], user, password)
    step = (lambda t: raw_token(c, t)) if raw else (lambda t: authenticate(c, t))
    client.set_server_first(step(client.get_client_first().encode()).decode())
    client.set_server_final(step(client.get_client_final().encode()).decode())


def still_serving(broker: MockBroker) -> None:
    """A fresh client can log in and be served."""
    with connect(broker) as other:
        handshake(other, "PLAIN")
        authenticate(other, b"\0alice\0secret")
        assert other.request(METADATA, 12, {"topics": None}).brokers[0].node_id == broker.node_id


def test_plain_login_then_requests_are_served_as_the_user(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        assert c.request(API_VERSIONS, 3, {"client_software_name": "raw", "client_software_version": "1"}
                         ).error_code == ErrorCode.NONE
        handshake(c, "PLAIN")
        assert authenticate(c, b"\0alice\0secret") == b""
        assert c.request(METADATA, 12, {"topics": None}).brokers
    metadata = mockbroker.received(METADATA)[-1]
    assert (metadata.principal, metadata.listener) == ("User:alice", "SASL_PLAINTEXT")
    assert mockbroker.received(SASL_HANDSHAKE)[-1].principal == "User:ANONYMOUS"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("version", [0, 1, 2])
def test_scram_login_over_sasl_authenticate(mockbroker: MockBroker, mechanism: str, version: int) -> None:
    with connect(mockbroker) as c:
        handshake(c, mechanism)
        client = ScramClient([mechanism], "alice", "secret")
        client.set_server_first(authenticate(c, client.get_client_first().encode(), version).decode())
        client.set_server_final(authenticate(c, client.get_client_final().encode(), version).decode())
        assert c.request(METADATA, 12, {"topics": None}).brokers
    assert mockbroker.received(METADATA)[-1].principal == "User:alice"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_v0_handshake_takes_raw_tokens(mockbroker: MockBroker, mechanism: str) -> None:
    with connect(mockbroker) as c:
        handshake(c, mechanism, version=0)
        if mechanism == "PLAIN":
            assert raw_token(c, b"\0alice\0secret") == b""  # a size-prefixed empty token
        else:
            scram(c, mechanism, "alice", "secret", raw=True)
        assert c.request(METADATA, 12, {"topics": None}).brokers
    assert mockbroker.received(METADATA)[-1].principal == "User:alice"


def test_v0_raw_token_with_a_wrong_password_closes_the_connection(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN", version=0)
        c.send_frame(struct.pack(">i", 12) + b"\0alice\0wrong")
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_unsupported_mechanism_is_answered_with_the_enabled_list_then_closed(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"})
        assert resp.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert resp.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", users={"alice": "secret"}, sasl_mechanisms=["SCRAM-SHA-512"])
def test_only_the_enabled_mechanisms_are_offered(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.UNSUPPORTED_SASL_MECHANISM, ["SCRAM-SHA-512"])


def test_wrong_plain_password_gets_kafkas_message_then_the_connection_closes(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0wrong"})
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == "Authentication failed: Invalid username or password"
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_scram_password_gets_the_generic_message(mockbroker: MockBroker, mechanism: str) -> None:
    with connect(mockbroker) as c:
        handshake(c, mechanism)
        client = ScramClient([mechanism], "alice", "wrong")
        client.set_server_first(authenticate(c, client.get_client_first().encode()).decode())
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_final().encode()})
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == generic_failure(mechanism)
        assert c.is_closed_by_peer()


@pytest.mark.parametrize("token", [b"garbage", b"n,,n=alice", b"n,,n=nobody,r=abcdef", b"\xff\x00\xfe"])
def test_malformed_or_unknown_scram_client_first_fails_cleanly(mockbroker: MockBroker, token: bytes) -> None:
    with connect(mockbroker) as c:
        handshake(c, "SCRAM-SHA-256")
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
        assert (resp.error_code, resp.error_message) == (ErrorCode.SASL_AUTHENTICATION_FAILED,
                                                         generic_failure("SCRAM-SHA-256"))
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


@pytest.mark.parametrize("api_key,version,body", [
    (METADATA, 12, {"topics": None}),
    (SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"}),
])
def test_requests_before_the_handshake_close_the_connection(mockbroker: MockBroker, api_key: int, version: int,
                                                           body: dict[str, object]) -> None:
    with connect(mockbroker) as c:
        c.send(api_key, version, body)
        assert c.is_closed_by_peer()
    assert not mockbroker.received(api_key)
    still_serving(mockbroker)


def test_request_between_handshake_and_authentication_gets_illegal_sasl_state_then_closes(
        mockbroker: MockBroker) -> None:
    # Kafka's SaslServerAuthenticator answers such a request with its error response, then closes.
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        assert c.request(METADATA, 12, {"topics": [{"name": "t"}]}).topics[0].error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert c.is_closed_by_peer()
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        assert c.request(API_VERSIONS, 3, {}).error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert c.is_closed_by_peer()
    assert not mockbroker.received(METADATA)
    still_serving(mockbroker)


def test_second_api_versions_before_authentication_closes_the_connection(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        c.request(API_VERSIONS, 0, {})
        c.send(API_VERSIONS, 0, {})
        assert c.is_closed_by_peer()


def test_handshake_loop_gets_illegal_sasl_state_then_closes(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_sasl_requests_after_authentication_get_illegal_sasl_state(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        authenticate(c, b"\0alice\0secret")
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == ErrorCode.ILLEGAL_SASL_STATE
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"})
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert resp.error_message == "SaslAuthenticate request received after successful authentication"
        assert c.request(METADATA, 12, {"topics": None}).brokers  # still open and authenticated


def test_truncated_sasl_authenticate_closes_the_connection(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        frame = c.encode(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0secret"})
        body = frame[4:-6]  # the auth bytes cut short
        c.send_frame(struct.pack(">i", len(body)) + body)
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_sasl_handshake_on_a_plaintext_listener_gets_illegal_sasl_state(mockbroker_factory) -> None:  # type: ignore[no-untyped-def]
    broker = mockbroker_factory()
    with connect(broker) as c:
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        assert c.request(SASL_AUTHENTICATE, 1, {"auth_bytes": b""}).error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert c.request(METADATA, 12, {"topics": None}).brokers


def test_user_added_while_running_logs_in_and_removed_user_cannot(mockbroker: MockBroker) -> None:
    mockbroker.add_user("carol", "pw", mechanism="SCRAM-SHA-512")
    with connect(mockbroker) as c:
        handshake(c, "SCRAM-SHA-512")
        scram(c, "SCRAM-SHA-512", "carol", "pw")
    with connect(mockbroker) as c:  # carol got SCRAM-SHA-512 only
        handshake(c, "PLAIN")
        assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0carol\0pw"}).error_code == \
            ErrorCode.SASL_AUTHENTICATION_FAILED
    mockbroker.remove_user("carol")
    with connect(mockbroker) as c:
        handshake(c, "SCRAM-SHA-512")
        client = ScramClient(["SCRAM-SHA-512"], "carol", "pw")
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_first().encode()})
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED


def test_frame_over_sasl_server_max_receive_size_before_authentication_closes(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        c.send_frame(struct.pack(">i", 524289))  # Kafka's sasl.server.max.receive.size is 512 KiB
        assert c.is_closed_by_peer()
    still_serving(mockbroker)


def test_large_requests_are_served_once_authenticated(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        handshake(c, "PLAIN")
        authenticate(c, b"\0alice\0secret")
        topics = [{"name": f"t{i:06d}"} for i in range(60_000)]  # a Metadata request of about 600 KB
        frame = c.encode(METADATA, 12, {"topics": topics, "allow_auto_topic_creation": False})
        assert len(frame) > 524288
        c.send_frame(frame)
        _, resp = c.recv(METADATA, 12)
        assert len(resp.topics) == 60_000


# -- OAUTHBEARER ---------------------------------------------------------------------------------


def oauth_first(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", sasl_mechanisms=["OAUTHBEARER", "PLAIN"])
def test_oauthbearer_unsecured_token_logs_in_as_its_subject(mockbroker: MockBroker) -> None:
    from mockbroker.security.oauth import unsecured_token

    with connect(mockbroker) as c:
        resp = c.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.NONE, ["OAUTHBEARER", "PLAIN"])
        now_s = mockbroker.clock.now_ms() / 1000
        token = oauth_first(unsecured_token("svc-orders", now_s=now_s))
        resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
        assert (resp.error_code, bytes(resp.auth_bytes)) == (ErrorCode.NONE, b"")
        # KIP-368: the session lasts as long as the token (an hour), as Kafka answers it.
        assert 3_500_000 < resp.session_lifetime_ms <= 3_600_000
        assert c.request(METADATA, 12, {"topics": None}).brokers
    assert mockbroker.received(METADATA)[-1].principal == "User:svc-orders"


@pytest.mark.mockbroker(security="SASL_PLAINTEXT", sasl_mechanisms=["OAUTHBEARER"])
def test_oauthbearer_token_expired_on_the_broker_clock_is_refused_as_kafka(mockbroker: MockBroker) -> None:
    from mockbroker.security.oauth import unsecured_token

    token = unsecured_token("alice", now_s=mockbroker.clock.now_ms() / 1000, lifetime_s=60)
    mockbroker.clock.advance(61)
    with connect(mockbroker) as c:
        c.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})
        first = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": oauth_first(token)})
        assert (first.error_code, bytes(first.auth_bytes)) == (ErrorCode.NONE, b'{"status":"invalid_token"}')
        final = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x01"})
        assert (final.error_code, final.error_message) == (ErrorCode.SASL_AUTHENTICATION_FAILED,
                                                           '{"status":"invalid_token"}')
        assert c.is_closed_by_peer()
