"""The SASL mechanism servers and the per-connection authenticator, without sockets."""

from __future__ import annotations

import pytest
from scramp import ScramClient

from mockbroker.security.credentials import (
    Credentials,
    credential_from_password,
    credential_from_salted_password,
)
from mockbroker.security.sasl import (
    AuthState,
    PlainServer,
    SaslAuthenticator,
    SaslFailure,
    ScramServer,
    generic_failure,
)

ALL = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture
def users() -> Credentials:
    creds = Credentials()
    creds.add_user("alice", "secret")
    creds.add_user("bob", "hunter2", ["SCRAM-SHA-512"])
    return creds


def scram_exchange(server: ScramServer, user: str, password: str) -> str:
    client = ScramClient([server.mechanism], user, password)
    server_first = server.evaluate(client.get_client_first().encode()).decode()
    client.set_server_first(server_first)
    server_final = server.evaluate(client.get_client_final().encode()).decode()
    client.set_server_final(server_final)  # checks the server's signature
    return server_final


# -- PLAIN ---------------------------------------------------------------------------------------


def test_plain_accepts_the_right_password(users: Credentials) -> None:
    server = PlainServer(users)
    assert server.evaluate(b"\0alice\0secret") == b""
    assert server.complete and server.authorization_id == "alice"


def test_plain_accepts_an_authorization_id_equal_to_the_user(users: Credentials) -> None:
    server = PlainServer(users)
    server.evaluate(b"alice\0alice\0secret")
    assert server.authorization_id == "alice"


@pytest.mark.parametrize("token", [b"\0alice\0wrong", b"\0mallory\0secret"])
def test_plain_wrong_password_or_unknown_user_gets_kafkas_message(users: Credentials, token: bytes) -> None:
    with pytest.raises(SaslFailure) as failure:
        PlainServer(users).evaluate(token)
    assert failure.value.message == "Authentication failed: Invalid username or password"


def test_plain_other_authorization_id_is_refused(users: Credentials) -> None:
    with pytest.raises(SaslFailure) as failure:
        PlainServer(users).evaluate(b"bob\0alice\0secret")
    assert "authorization id that is different from username" in failure.value.message


@pytest.mark.parametrize("token", [b"alice", b"\0alice", b"\0alice\0secret\0more", b"\0\0secret", b"\0alice\0",
                                   b"\xff\xfe\0alice\0secret"])
def test_plain_malformed_message_gets_the_generic_message(users: Credentials, token: bytes) -> None:
    with pytest.raises(SaslFailure) as failure:
        PlainServer(users).evaluate(token)
    assert failure.value.message == generic_failure("PLAIN")


def test_plain_user_without_a_plain_password_cannot_log_in(users: Credentials) -> None:
    with pytest.raises(SaslFailure):
        PlainServer(users).evaluate(b"\0bob\0hunter2")  # bob has SCRAM-SHA-512 only


# -- SCRAM ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_completes_with_the_right_password(users: Credentials, mechanism: str) -> None:
    server = ScramServer(mechanism, users)
    final = scram_exchange(server, "alice", "secret")
    assert final.startswith("v=")
    assert server.complete and server.authorization_id == "alice"


@pytest.mark.parametrize("user,password,mechanism", [
    ("alice", "wrong", "SCRAM-SHA-256"),  # bad proof
    ("mallory", "secret", "SCRAM-SHA-256"),  # unknown user
    ("bob", "hunter2", "SCRAM-SHA-256"),  # bob has no SCRAM-SHA-256 credential
])
def test_scram_failures_get_the_generic_message(users: Credentials, user: str, password: str, mechanism: str) -> None:
    server = ScramServer(mechanism, users)
    with pytest.raises(SaslFailure) as failure:
        scram_exchange(server, user, password)
    assert failure.value.message == generic_failure(mechanism)
    assert not server.complete


@pytest.mark.parametrize("first", [b"", b"garbage", b"n,,", b"n,,n=alice", b"y,,n=alice,r=abc", b"p=tls-unique,,n=alice,r=x",
                                   b"\xff\xff", b"n,,r=abc,n=alice"])
def test_scram_malformed_client_first_is_refused(users: Credentials, first: bytes) -> None:
    with pytest.raises(SaslFailure) as failure:
        ScramServer("SCRAM-SHA-256", users).evaluate(first)
    assert failure.value.message == generic_failure("SCRAM-SHA-256")


@pytest.mark.parametrize("final", [b"", b"c=biws", b"c=biws,r=wrongnonce,p=AAAA", b"\xff"])
def test_scram_malformed_client_final_is_refused(users: Credentials, final: bytes) -> None:
    server = ScramServer("SCRAM-SHA-256", users)
    client = ScramClient(["SCRAM-SHA-256"], "alice", "secret")
    server.evaluate(client.get_client_first().encode())
    with pytest.raises(SaslFailure):
        server.evaluate(final)
    assert not server.complete


def test_scram_token_after_completion_is_refused(users: Credentials) -> None:
    server = ScramServer("SCRAM-SHA-256", users)
    scram_exchange(server, "alice", "secret")
    with pytest.raises(SaslFailure):
        server.evaluate(b"n,,n=alice,r=abc")


def test_scram_credential_with_too_few_iterations_cannot_log_in() -> None:
    import hashlib

    creds = Credentials()
    salt = b"salt-of-carol"
    salted = hashlib.pbkdf2_hmac("sha256", b"pw", salt, 1000)
    creds.set_scram("carol", "SCRAM-SHA-256", credential_from_salted_password("SCRAM-SHA-256", salt, salted, 1000))
    with pytest.raises(SaslFailure):
        scram_exchange(ScramServer("SCRAM-SHA-256", creds), "carol", "pw")


def test_credential_from_salted_password_matches_the_one_from_the_password() -> None:
    import hashlib

    salt = b"0123456789abcdef"
    from_password = credential_from_password("SCRAM-SHA-512", "pw", 4096, salt)
    salted = hashlib.pbkdf2_hmac("sha512", b"pw", salt, 4096)
    assert credential_from_salted_password("SCRAM-SHA-512", salt, salted, 4096) == from_password


# -- the authenticator ---------------------------------------------------------------------------


def test_authenticator_allows_api_versions_once_then_only_the_handshake(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    assert auth.gate(18, 3).serve
    assert not auth.gate(18, 3).serve  # a second ApiVersions closes, as Kafka
    assert not auth.gate(3, 12).serve


def test_authenticator_api_versions_at_an_unknown_version_may_be_retried(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    assert auth.gate(18, 99).serve
    assert auth.state is AuthState.HANDSHAKE_OR_VERSIONS
    assert auth.gate(18, 3).serve


@pytest.mark.parametrize("api_key", [0, 1, 3, 36, 50])
def test_authenticator_refuses_other_requests_before_the_handshake(users: Credentials, api_key: int) -> None:
    assert not SaslAuthenticator(ALL, users).gate(api_key, 0).serve


def test_authenticator_full_plain_exchange(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    assert auth.gate(17, 1).serve and auth.handshake("PLAIN", 1)
    assert not auth.gate(3, 12).serve  # still authenticating
    assert auth.gate(36, 2).serve
    assert auth.authenticate(b"\0alice\0secret") == b""
    assert auth.state is AuthState.COMPLETE and auth.user == "alice"
    assert auth.gate(3, 12).serve


def test_authenticator_v0_handshake_switches_to_raw_tokens(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    assert auth.handshake("PLAIN", 0)
    assert auth.expects_raw_token
    auth.authenticate(b"\0alice\0secret")
    assert not auth.expects_raw_token and auth.user == "alice"


def test_authenticator_unsupported_mechanism_fails(users: Credentials) -> None:
    auth = SaslAuthenticator(["SCRAM-SHA-512"], users)
    assert not auth.handshake("PLAIN", 1)
    assert auth.failed


def test_authenticator_second_handshake_fails(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    auth.handshake("PLAIN", 1)
    assert not auth.handshake("PLAIN", 1)
    assert auth.failed


def test_authenticator_failed_exchange_refuses_everything(users: Credentials) -> None:
    auth = SaslAuthenticator(ALL, users)
    auth.handshake("PLAIN", 1)
    with pytest.raises(SaslFailure):
        auth.authenticate(b"\0alice\0nope")
    assert auth.failed and auth.user is None
    assert not auth.gate(36, 2).serve and not auth.gate(18, 3).serve
