"""OAUTHBEARER tokens that once crashed the SASL exchange (issue 33, item 2) and a sweep of malformed ones:
every bad token is answered with Kafka's JSON error (KIP-255), then SASL_AUTHENTICATION_FAILED on the
client's 0x01, and never with an exception out of the exchange."""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker import bounded_json
from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.security.failure import SaslFailure
from mockbroker.security.oauth import OAuthBearerServer, OAuthConfig
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

pytestmark = pytest.mark.adversarial

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
INVALID = b'{"status":"invalid_token"}'
NOW_S = 1_800_000_000
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsecured(claims_json: str) -> str:
    return b64('{"alg":"none"}') + "." + b64(claims_json) + "."


def first_message(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def hs256_token() -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyJWT warns of the short HMAC secret
        return jwt.encode({"sub": "alice", "exp": NOW_S + 60}, "secret", algorithm="HS256")


EXP_1E999 = unsecured('{"sub":"alice","exp":1e999}')
NESTED_100K = unsecured('{"sub":"alice","exp":1900000000,"x":' + "[" * 100_000 + "]" * 100_000 + "}")


def jwks_url(tmp: Path) -> str:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key())) | {"kid": "k1", "use": "sig", "alg": "RS256"}
    path = tmp / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    return path.as_uri()


def refused_over_the_wire(broker: MockBroker, token: str) -> None:
    with RawClient(broker.host, broker.port) as c:
        assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"}).error_code == ErrorCode.NONE
        first = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": first_message(token)})
        assert (first.error_code, bytes(first.auth_bytes)) == (ErrorCode.NONE, INVALID)
        final = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x01"})
        assert final.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert final.error_message == INVALID.decode()


@pytest.mark.parametrize("token", [EXP_1E999, NESTED_100K], ids=["exp-1e999", "claims-nested-100000-deep"])
def test_unsecured_tokens_that_crashed_the_exchange_get_kafkas_error(
        mockbroker_factory: Callable[..., MockBroker], token: str) -> None:
    broker = mockbroker_factory(security="SASL_PLAINTEXT", clock=Clock(start_ms=NOW_S * 1000, frozen=True),
                                config={"sasl.enabled.mechanisms": "OAUTHBEARER"})
    refused_over_the_wire(broker, token)


def test_an_hs256_token_against_a_jwks_gets_kafkas_error(
        mockbroker_factory: Callable[..., MockBroker], tmp_path: Path) -> None:
    broker = mockbroker_factory(security="SASL_PLAINTEXT", clock=Clock(start_ms=NOW_S * 1000, frozen=True),
                                config={"sasl.enabled.mechanisms": "OAUTHBEARER",
                                        "sasl.oauthbearer.jwks.endpoint.url": jwks_url(tmp_path)})
    refused_over_the_wire(broker, hs256_token())


@pytest.mark.parametrize("claims", [
    '{"sub":"alice","exp":' + "9" * 400 + "}",  # an int too large for a float
    '{"sub":"alice","exp":1e300}',  # finite, but its milliseconds are no Java long
    '{"sub":"alice","exp":NaN}',
    '{"sub":"alice","exp":-Infinity}',
    '{"sub":"alice","exp":1900000000,"iat":1e999}',
    '{"sub":"alice","exp":1900000000,"scope":[{},[]]}',  # scopes that are not strings (unhashable)
], ids=["exp-400-digits", "exp-1e300", "exp-nan", "exp-minus-infinity", "iat-1e999", "scope-of-objects"])
def test_numbers_and_scopes_out_of_range_are_invalid_tokens(claims: str) -> None:
    s = OAuthBearerServer(OAuthConfig(required_scopes=["write"]), lambda: NOW_S * 1000)
    assert s.evaluate(first_message(unsecured(claims))) in (INVALID, b'{"status":"insufficient_scope", "scope":"write"}')
    with pytest.raises(SaslFailure):
        s.evaluate(b"\x01")


def test_a_client_first_message_over_kafkas_receive_size_is_refused_unread() -> None:
    s = OAuthBearerServer(OAuthConfig(), lambda: NOW_S * 1000)
    with pytest.raises(SaslFailure):
        s.evaluate(first_message(unsecured('{"sub":"alice","exp":1900000000,"pad":"' + "x" * 600_000 + '"}')))


def test_bounded_json_refuses_depth_constants_and_huge_numbers_but_reads_the_rest() -> None:
    assert bounded_json.loads('{"a":[{"b":"[[[[[[["}]}', max_depth=3) == {"a": [{"b": "[[[[[[["}]}  # brackets in strings
    for text in ["[" * 5 + "]" * 5, "NaN", "[Infinity]", "1e999", "9" * 5000, "[" * 100_000]:
        with pytest.raises(bounded_json.JsonLimitError):
            bounded_json.loads(text, max_depth=4)
    with pytest.raises(bounded_json.JsonLimitError):
        bounded_json.loads("[1, 2]", max_chars=3)


# The sweep: header and claims of every JSON shape, of the claims Kafka reads, and raw bytes; against
# the default (unsecured) validator and against signed-token validation. Whatever comes in, the exchange
# answers (the JSON error, success, or a SaslFailure) and never raises anything else.
JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)
CLAIM = st.sampled_from(["sub", "exp", "iat", "scope", "aud", "iss", "nbf", "alg", "kid", "typ"])
OBJECTS = st.dictionaries(CLAIM | st.text(max_size=4), JSON_VALUES, max_size=6)
# Claims that pass the principal check, so the time and scope claims are read too.
EDGES = st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e300, 10**400, 2**63, NOW_S + 60])
TIMES = EDGES | st.floats() | st.integers(min_value=-(2**80), max_value=2**80) | JSON_VALUES
CLAIMS = st.fixed_dictionaries({"sub": st.just("alice"), "exp": TIMES},
                               optional={"iat": TIMES, "scope": JSON_VALUES}) | OBJECTS


def dump(value: Any) -> str:
    return json.dumps(value)  # writes NaN / Infinity as Python does; the validator must refuse them


def exchange_answers(config: OAuthConfig, message: bytes) -> None:
    s = OAuthBearerServer(config, lambda: NOW_S * 1000)
    try:
        reply = s.evaluate(message)
    except SaslFailure:
        return
    if not s.complete:
        assert json.loads(reply)["status"] in ("invalid_token", "insufficient_scope")
        with pytest.raises(SaslFailure):
            s.evaluate(b"\x01")


SWEEP = settings(derandomize=True, max_examples=300, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


@SWEEP
@given(header=OBJECTS, claims=CLAIMS, signature=st.sampled_from(["", "", "c2ln", "!!"]),
       scopes=st.sampled_from([[], ["write"]]))
def test_sweep_of_json_shapes_unsecured(header: dict[str, Any], claims: dict[str, Any], signature: str,
                                        scopes: list[str]) -> None:
    header = {"alg": "none", **header} if "alg" not in header else header
    exchange_answers(OAuthConfig(required_scopes=scopes),
                     first_message(f"{b64(dump(header))}.{b64(dump(claims))}.{signature}"))


@SWEEP
@given(header=OBJECTS, claims=CLAIMS, alg=st.sampled_from(["HS256", "RS256", "none", "ES256", "PS256"]))
def test_sweep_of_json_shapes_signed(header: dict[str, Any], claims: dict[str, Any], alg: str) -> None:
    header = {"alg": alg, **header} if "alg" not in header else header
    token = f"{b64(dump(header))}.{b64(dump(claims))}.c2lnbmF0dXJl"
    exchange_answers(OAuthConfig(keys=[KEY.public_key(), b"an-hmac-secret-of-thirty-two-bytes!"]), first_message(token))


@SWEEP
@given(raw=st.binary(max_size=300))
def test_sweep_of_raw_bytes(raw: bytes) -> None:
    exchange_answers(OAuthConfig(), raw)
    exchange_answers(OAuthConfig(), first_message(b64(raw) + "." + b64(raw) + "."))
    exchange_answers(OAuthConfig(keys=[KEY.public_key()]), first_message(b64(raw) + "." + b64(raw) + ".c2ln"))
