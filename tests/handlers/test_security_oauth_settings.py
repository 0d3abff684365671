"""OAUTHBEARER with signed tokens configured through Kafka's broker settings (sasl.oauthbearer.jwks.endpoint.url
with a file: JWKS, expected audience and issuer, the sub claim's name, clock skew), over the wire: a token
signed by a key of the JWKS logs in as its claim; another key, another audience or an expired token is
refused as Kafka refuses it; an https JWKS URL or an unreadable file stops the broker from starting with a
message."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA
from tests.rawclient import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
ISSUER = "https://issuer.test"
INVALID = b'{"status":"invalid_token"}'


def jwks_file(tmp: Path, key: rsa.RSAPrivateKey, kid: str) -> str:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())) | {"kid": kid, "use": "sig", "alg": "RS256"}
    path = tmp / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    return path.as_uri()


def oauth_broker(factory: Callable[..., MockBroker], url: str, clock: Clock | None = None, **extra: str) -> MockBroker:
    return factory(security="SASL_PLAINTEXT", clock=clock, config={
        "sasl.enabled.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.jwks.endpoint.url": url,
        "sasl.oauthbearer.expected.audience": "other-api,kafka", "sasl.oauthbearer.expected.issuer": ISSUER,
        "sasl.oauthbearer.sub.claim.name": "client_id", **extra})


def login(broker: MockBroker, token: str) -> tuple[int, bytes, RawClient]:
    c = RawClient(broker.host, broker.port)
    assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
    resp = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": f"n,,\x01auth=Bearer {token}\x01\x01".encode()})
    return resp.error_code, bytes(resp.auth_bytes), c


def claims(broker: MockBroker, **changes: Any) -> dict[str, Any]:
    now = broker.clock.now_ms() // 1000
    return {"client_id": "svc-billing", "sub": "ignored", "aud": "kafka", "iss": ISSUER, "iat": now,
            "exp": now + 600} | changes


def test_a_token_signed_by_a_key_of_the_jwks_logs_in_as_the_configured_claim(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    broker = oauth_broker(mockbroker_factory, jwks_file(tmp_path, key, "k1"))
    token = jwt.encode(claims(broker), key, algorithm="RS256", headers={"kid": "k1"})
    code, answer, c = login(broker, token)
    with c:
        assert (code, answer) == (ErrorCode.NONE, b"")
        assert c.request(METADATA, 12, {"topics": None}).brokers
    assert broker.received(METADATA)[-1].principal == "User:svc-billing"


def test_tokens_the_settings_refuse(mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    # A frozen broker clock on a whole second: the tokens 4 s and 6 s past their expiry stay on their sides
    # of the 5 s skew however long the logins take (on wall time, exp = now - 4 fell past the skew once the
    # second that `now` was read in ended: a failure on a busy machine).
    broker = oauth_broker(mockbroker_factory, jwks_file(tmp_path, key, "k1"),
                          clock=Clock(start_ms=1_790_000_000_000, frozen=True),
                          **{"sasl.oauthbearer.clock.skew.seconds": "5"})
    now = broker.clock.now_ms() // 1000
    refused = [jwt.encode(claims(broker), other, algorithm="RS256", headers={"kid": "k1"}),  # not the JWKS's key
               jwt.encode(claims(broker, aud="billing"), key, algorithm="RS256"),  # not an expected audience
               jwt.encode(claims(broker, iss="https://evil.test"), key, algorithm="RS256"),  # another issuer
               jwt.encode(claims(broker, iat=now - 60, exp=now - 6), key, algorithm="RS256"),  # expired beyond the skew
               jwt.encode(claims(broker, client_id=None), key, algorithm="RS256")]  # no principal claim
    for token in refused:
        code, answer, c = login(broker, token)
        with c:
            assert (code, answer) == (ErrorCode.NONE, INVALID), jwt.decode(token, options={"verify_signature": False})
            final = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x01"})
            assert final.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    within_skew = jwt.encode(claims(broker, iat=now - 60, exp=now - 4), key, algorithm="RS256")
    code, answer, c = login(broker, within_skew)
    c.close()
    assert (code, answer) == (ErrorCode.NONE, b"")  # b"" is success; a refusal is the JSON error
    assert not broker.received(METADATA)


@pytest.mark.parametrize(("url", "message"), [("https://idp.test/jwks", "only file: URLs"),
                                              ("file:///nonexistent/jwks.json", "cannot read")])
def test_a_jwks_url_that_cannot_be_read_is_refused_at_start(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MockBroker(security="SASL_PLAINTEXT", config={"sasl.oauthbearer.jwks.endpoint.url": url})


def test_the_images_environment_spelling_reaches_the_broker(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    from mockbroker.envconfig import build_settings

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    settings = build_settings({"KAFKA_LISTENERS": "SASL_PLAINTEXT://127.0.0.1:0",
                               "KAFKA_SASL_ENABLED_MECHANISMS": "OAUTHBEARER",
                               "KAFKA_SASL_OAUTHBEARER_JWKS_ENDPOINT_URL": jwks_file(tmp_path, key, "k1"),
                               "KAFKA_SASL_OAUTHBEARER_EXPECTED_AUDIENCE": "kafka"})
    assert settings.unknown == {}
    broker = mockbroker_factory(**settings.broker_kwargs())
    token = jwt.encode(claims(broker, sub="svc-env"), key, algorithm="RS256")
    code, answer, c = login(broker, token)
    with c:
        assert (code, answer) == (ErrorCode.NONE, b"")
        assert c.request(METADATA, 12, {"topics": None}).brokers
    assert broker.received(METADATA)[-1].principal == "User:svc-env"
