"""OAUTHBEARER without sockets: the client's first message, Kafka's unsecured-JWT checks on a given clock,
the JSON error then the 0x01 answer, and signed tokens verified with PyJWT."""

from __future__ import annotations

import base64
import json
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mockbroker.security.failure import SaslFailure, generic_failure
from mockbroker.security.oauth import OAuthBearerServer, OAuthConfig, unsecured_token

NOW_S = 1_800_000_000
INVALID = b'{"status":"invalid_token"}'


def first_message(token: str, authzid: str = "", extensions: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01{extensions}\x01".encode()


def server(config: OAuthConfig | None = None, now_s: float = NOW_S) -> OAuthBearerServer:
    return OAuthBearerServer(config or OAuthConfig(), lambda: int(now_s * 1000))


def jws(header: dict[str, Any], claims: dict[str, Any]) -> str:
    def enc(v: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()

    return f"{enc(header)}.{enc(claims)}."


def test_valid_unsecured_token_authenticates_its_subject() -> None:
    s = server()
    assert s.evaluate(first_message(unsecured_token("alice", now_s=NOW_S), extensions="traceId=1\x01")) == b""
    assert s.complete and s.authorization_id == "alice" and s.extensions == {"traceId": "1"}


@pytest.mark.parametrize("token", [
    unsecured_token("alice", now_s=NOW_S - 7200),  # expired an hour ago
    unsecured_token("alice", now_s=NOW_S + 60),  # issued in the future
    jws({"alg": "none"}, {"exp": NOW_S + 60}),  # no sub
    jws({"alg": "none"}, {"sub": "", "exp": NOW_S + 60}),  # empty sub
    jws({"alg": "none"}, {"sub": "alice"}),  # no exp
    jws({"alg": "none"}, {"sub": "alice", "exp": "tomorrow"}),  # exp not a number
    jws({"alg": "none"}, {"sub": "alice", "iat": "yesterday", "exp": NOW_S + 60}),  # iat not a number
    jws({"alg": "HS256"}, {"sub": "alice", "exp": NOW_S + 60}),  # not unsecured
    jws({"alg": "none"}, {"sub": "alice", "exp": NOW_S + 60}) + "c2lnbmF0dXJl",  # a signature
    "bm90IGpzb24.bm90IGpzb24.",  # not JSON
])
def test_invalid_tokens_get_the_json_error_then_fail_on_the_clients_0x01(token: str) -> None:
    s = server()
    assert s.evaluate(first_message(token)) == INVALID
    assert not s.complete
    with pytest.raises(SaslFailure) as failure:
        s.evaluate(b"\x01")
    assert failure.value.message == INVALID.decode()


def test_clock_skew_lets_a_just_expired_token_in() -> None:
    token = unsecured_token("alice", now_s=NOW_S - 3600 - 1)  # expired a second ago
    assert server().evaluate(first_message(token)) == INVALID
    assert server(OAuthConfig(allowable_clock_skew_ms=5000)).evaluate(first_message(token)) == b""


def test_required_scope_missing_is_insufficient_scope() -> None:
    config = OAuthConfig(required_scopes=["write"])
    assert server(config).evaluate(first_message(unsecured_token("alice", now_s=NOW_S, scope="read write"))) == b""
    assert server(config).evaluate(first_message(unsecured_token("alice", now_s=NOW_S, scope=["write"]))) == b""
    reply = server(config).evaluate(first_message(unsecured_token("alice", now_s=NOW_S, scope="read")))
    assert json.loads(reply) == {"status": "insufficient_scope", "scope": "write"}


def test_other_principal_claim() -> None:
    token = jws({"alg": "none"}, {"client_id": "svc", "exp": NOW_S + 60})
    s = server(OAuthConfig(principal_claim="client_id"))
    assert s.evaluate(first_message(token)) == b"" and s.authorization_id == "svc"


def test_authorization_id_other_than_the_principal_is_refused() -> None:
    with pytest.raises(SaslFailure) as failure:
        server().evaluate(first_message(unsecured_token("alice", now_s=NOW_S), authzid="bob"))
    assert "different from the token's principal name" in failure.value.message
    assert server().evaluate(first_message(unsecured_token("alice", now_s=NOW_S), authzid="alice")) == b""


@pytest.mark.parametrize("message", [b"", b"garbage", b"n,,auth=Bearer x", b"n,,\x01auth=Basic abc\x01\x01",
                                     b"n,,\x01auth=Bearer \x01\x01", b"n,,\x01\x01", b"\xff\xfe"])
def test_malformed_first_message_gets_the_generic_message(message: bytes) -> None:
    with pytest.raises(SaslFailure) as failure:
        server().evaluate(message)
    assert failure.value.message == generic_failure("OAUTHBEARER")


def test_0x01_without_an_earlier_error_is_malformed() -> None:
    with pytest.raises(SaslFailure) as failure:
        server().evaluate(b"\x01")
    assert failure.value.message == generic_failure("OAUTHBEARER")


def test_signed_tokens_are_verified_with_the_given_keys() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    other = ec.generate_private_key(ec.SECP256R1())
    config = OAuthConfig(keys=[public_pem], audience="kafka", issuer="https://issuer")
    claims = {"sub": "alice", "exp": NOW_S + 60, "iat": NOW_S, "aud": "kafka", "iss": "https://issuer"}
    good = jwt.encode(claims, key, algorithm="ES256")
    s = server(config)
    assert s.evaluate(first_message(good)) == b"" and s.authorization_id == "alice"
    for bad in (jwt.encode(claims, other, algorithm="ES256"),  # another key
                jwt.encode(claims | {"aud": "other"}, key, algorithm="ES256"),  # wrong audience
                jwt.encode(claims | {"exp": NOW_S - 1}, key, algorithm="ES256"),  # expired on the given clock
                unsecured_token("alice", now_s=NOW_S)):  # unsigned
        assert server(config).evaluate(first_message(bad)) == INVALID
