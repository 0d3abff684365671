"""SASL/OAUTHBEARER (RFC 7628) as Kafka's broker serves it, without I/O.

The client's first message is `n,[a=<authzid>],` 0x01 `auth=Bearer <token>` 0x01 [key=value 0x01]... 0x01
(anything else: the generic failure). The token is validated as Kafka's default validator
(OAuthBearerUnsecuredValidatorCallbackHandler) does, on the broker clock:
- an unsecured JWS: `<base64url header>.<base64url claims>.` with alg "none";
- the principal claim (`sub`, or principal_claim) a non-empty string: the principal is User:<it>;
- `exp` a number of seconds, not past (allowable clock skew); `iat`, if there, a number not in the
  future and before exp; the required scopes (the `scope` claim, a string of space-separated scopes
  or a list) all present.
With `keys` given, tokens must instead be signed JWTs that PyJWT verifies with one of the keys
(signature, exp, iat, and audience / issuer when set), as Kafka's OAuthBearerValidatorCallbackHandler
does against its JWKS.

A token that fails is answered (NONE) with Kafka's JSON error, `{"status":"invalid_token"}` or
`{"status":"insufficient_scope", "scope":"..."}`; the client then sends 0x01 and gets
SASL_AUTHENTICATION_FAILED with that JSON as the message (KIP-255's exchange).

What is parsed is bounded, so every bad token gets that answer and none an exception: the client's
first message at most Kafka's sasl.server.max.receive.size (512 KiB), the header and claims JSON nested
at most MAX_JSON_DEPTH levels and without NaN / Infinity (mockbroker/bounded_json.py), `exp` and `iat`
finite numbers of seconds whose milliseconds fit a Java long (what Kafka computes with them), and
whatever PyJWT raises for a token it cannot use (an HS256 token against an RSA key raises TypeError)
taken as an invalid token.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mockbroker import bounded_json
from mockbroker.extras import require
from mockbroker.security.failure import SaslFailure, generic_failure

MECHANISM = "OAUTHBEARER"
SIGNED_TOKENS = "OAUTHBEARER with signed tokens (verification keys, a JWKS)"
_SASLNAME = r"(?:[\x01-\x7f](?<![=,])|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_CLIENT_FIRST = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01", re.S)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")
MAX_CLIENT_FIRST_BYTES = 524288  # Kafka's sasl.server.max.receive.size default: no larger token is read
MAX_JSON_DEPTH = 32  # the header's and the claims' nesting (real claims nest 2 or 3 levels)
MAX_TIME_S = (2**63 - 1) // 1000  # exp / iat in seconds: their milliseconds are a Java long in Kafka


@dataclass
class OAuthConfig:
    """How OAUTHBEARER tokens are validated (Kafka's unsecuredValidator* options, or signed with keys)."""

    principal_claim: str = "sub"  # unsecuredValidatorPrincipalClaimName / sasl.oauthbearer.sub.claim.name
    scope_claim: str = "scope"  # unsecuredValidatorScopeClaimName / sasl.oauthbearer.scope.claim.name
    required_scopes: list[str] = field(default_factory=list)  # unsecuredValidatorRequiredScope
    allowable_clock_skew_ms: int = 0  # unsecuredValidatorAllowableClockSkewMs
    keys: list[Any] | None = None  # verification keys (PEM public keys, HMAC secrets): signed tokens only
    algorithms: list[str] = field(default_factory=lambda: ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512",
                                                           "PS256", "HS256", "HS384", "HS512"])
    audience: str | list[str] | None = None  # sasl.oauthbearer.expected.audience
    issuer: str | None = None  # sasl.oauthbearer.expected.issuer

    def __post_init__(self) -> None:
        if self.keys is not None:
            require("jwt", SIGNED_TOKENS)


class TokenInvalid(Exception):
    """A token Kafka's validator refuses; `scope` set when a required scope is missing."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


def _b64url_json(part: str) -> dict[str, Any]:
    try:
        value = bounded_json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)), max_depth=MAX_JSON_DEPTH)
    except (binascii.Error, ValueError) as exc:
        raise TokenInvalid(f"not base64url-encoded JSON: {exc}") from None
    if not isinstance(value, dict):
        raise TokenInvalid("not a JSON object")
    return value


def _number(claims: dict[str, Any], name: str, required: bool) -> float | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise TokenInvalid(f"required claim missing: {name}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenInvalid(f"claim {name} is not a number")
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > MAX_TIME_S:
        raise TokenInvalid(f"claim {name} is out of range: {str(value)[:40]}")
    return float(value)


def validate_claims(claims: dict[str, Any], config: OAuthConfig, now_ms: int) -> tuple[str, int]:
    """Kafka's checks of a token's claims; the principal name and when the token expires (ms)."""
    principal = claims.get(config.principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise TokenInvalid(f"required claim missing or not a non-empty string: {config.principal_claim}")
    skew = config.allowable_clock_skew_ms
    exp = _number(claims, "exp", required=True)
    iat = _number(claims, "iat", required=False)
    assert exp is not None
    if iat is not None and iat * 1000 > now_ms + skew:
        raise TokenInvalid("the token was issued in the future")
    if exp * 1000 <= now_ms - skew:
        raise TokenInvalid("the token has expired")
    if iat is not None and exp <= iat:
        raise TokenInvalid("the token expires before it was issued")
    if config.required_scopes:
        scope = claims.get(config.scope_claim)
        items = scope.split() if isinstance(scope, str) else scope if isinstance(scope, list) else []
        granted = {item for item in items if isinstance(item, str)}
        if not set(config.required_scopes) <= granted:
            raise TokenInvalid("required scope missing", scope=" ".join(config.required_scopes))
    return principal, int(exp * 1000)


def validate_unsecured(token: str, config: OAuthConfig, now_ms: int) -> tuple[str, int]:
    """An unsecured JWS (`header.claims.`, alg none), as Kafka's default validator; the principal and
    the token's expiry (ms)."""
    parts = token.split(".")
    if len(parts) != 3 or parts[2] != "":
        raise TokenInvalid("an unsecured JWS has 3 dot-separated parts, the last empty")
    header = _b64url_json(parts[0])
    if header.get("alg") != "none":
        raise TokenInvalid("an unsecured JWS must have alg none")
    return validate_claims(_b64url_json(parts[1]), config, now_ms)


def validate_signed(token: str, config: OAuthConfig, now_ms: int) -> tuple[str, int]:
    """A signed JWT verified with PyJWT against the configured keys; the principal and its expiry (ms)."""
    jwt = require("jwt", SIGNED_TOKENS)

    parts = token.split(".")
    if len(parts) != 3:
        raise TokenInvalid("a signed JWT has 3 dot-separated parts")
    _b64url_json(parts[0]), _b64url_json(parts[1])  # bounded before PyJWT parses them (its json is not)
    last: Exception | None = None
    for key in config.keys or []:
        try:
            claims = jwt.decode(token, key, algorithms=config.algorithms, audience=config.audience,
                                issuer=config.issuer, leeway=config.allowable_clock_skew_ms / 1000,
                                options={"verify_exp": False, "verify_iat": False, "verify_nbf": False,
                                         "verify_aud": config.audience is not None,
                                         "verify_iss": config.issuer is not None})
        except (jwt.PyJWTError, TypeError, ValueError) as exc:  # TypeError: the token's alg does not fit the key
            last = exc
            continue
        return validate_claims(claims, config, now_ms)  # exp and iat on the broker clock
    raise TokenInvalid(f"no key verifies the token: {last}")


class OAuthBearerServer:
    mechanism = MECHANISM

    def __init__(self, config: OAuthConfig, now_ms: Callable[[], int]) -> None:
        self.config = config
        self.now_ms = now_ms
        self.complete = False
        self.authorization_id: str | None = None
        self.extensions: dict[str, str] = {}
        self._error: str | None = None
        # When the token expires (ms): KIP-368's credential lifetime, the session's longest life.
        self.credential_expiry_ms: int | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise SaslFailure(generic_failure(MECHANISM))
        if token == b"\x01" and self._error is not None:
            raise SaslFailure(self._error)  # the client's answer to our error
        self._error = None
        if len(token) > MAX_CLIENT_FIRST_BYTES:
            raise SaslFailure(generic_failure(MECHANISM))
        match = _CLIENT_FIRST.fullmatch(token.decode("utf-8", "replace"))
        if match is None:
            raise SaslFailure(generic_failure(MECHANISM))  # Kafka: "Invalid OAUTHBEARER client first message"
        pairs = dict(item.split("=", 1) for item in match["kvpairs"].split("\x01") if item)
        auth = _AUTH.fullmatch(pairs.pop("auth", ""))
        if auth is None or auth["scheme"].lower() != "bearer":
            raise SaslFailure(generic_failure(MECHANISM))
        self.extensions = pairs
        try:
            if self.config.keys:
                principal, expiry = validate_signed(auth["token"], self.config, self.now_ms())
            else:
                principal, expiry = validate_unsecured(auth["token"], self.config, self.now_ms())
        except TokenInvalid as exc:
            if exc.scope is not None:
                self._error = json.dumps({"status": "insufficient_scope", "scope": exc.scope}, separators=(", ", ":"))
            else:
                self._error = '{"status":"invalid_token"}'
            return self._error.encode()
        authzid = (match["authzid"] or "").replace("=2C", ",").replace("=3D", "=")
        if authzid and authzid != principal:
            raise SaslFailure(f"Authentication failed: Client requested an authorization id ({authzid}) that is "
                              f"different from the token's principal name ({principal})")
        self.authorization_id = principal
        self.credential_expiry_ms = expiry
        self.complete = True
        return b""


def unsecured_token(principal: str, *, lifetime_s: float = 3600, now_s: float | None = None,
                    scope: str | list[str] | None = None, **claims: Any) -> str:
    """An unsecured JWS for tests (what Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes)."""
    import time

    issued = time.time() if now_s is None else now_s
    body: dict[str, Any] = {"sub": principal, "iat": issued, "exp": issued + lifetime_s, **claims}
    if scope is not None:
        body["scope"] = scope

    def encode(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{encode({'alg': 'none'})}.{encode(body)}."
