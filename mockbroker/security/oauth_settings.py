"""OAUTHBEARER validation from Kafka's broker settings (sasl.oauthbearer.*), as Kafka's
OAuthBearerValidatorCallbackHandler reads them, so `MockBroker(config=...)`, the command's `--config` and
the images' KAFKA_SASL_OAUTHBEARER_* variables can ask for signed tokens:

- sasl.oauthbearer.jwks.endpoint.url: the keys, a JWKS. Only `file:` URLs are read (the file is loaded at
  start, as Kafka loads a file JWKS); an https endpoint would need the network, so it is refused with a
  message. Without this setting nothing here applies: Kafka's default validator (unsecured tokens) stays.
- sasl.oauthbearer.expected.audience (comma-separated: the token's `aud` must hold one of them),
  sasl.oauthbearer.expected.issuer, sasl.oauthbearer.sub.claim.name (default sub),
  sasl.oauthbearer.scope.claim.name (default scope), sasl.oauthbearer.clock.skew.seconds (default 30).

No I/O but reading the JWKS file; PyJWT parses it (imported only when the setting is there).
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from typing import Any

from mockbroker.extras import require
from mockbroker.security.oauth import SIGNED_TOKENS, OAuthConfig

JWKS_URL = "sasl.oauthbearer.jwks.endpoint.url"


def load_jwks(url: str) -> list[Any]:
    """The public keys of the JWKS at a `file:` URL (PyJWT key objects); ValueError saying why not."""
    jwt = require("jwt", SIGNED_TOKENS)

    parsed = urllib.parse.urlparse(url)
    if parsed.scheme != "file":
        raise ValueError(f"{JWKS_URL}: only file: URLs are read here (no network), not {url!r}")
    path = urllib.request.url2pathname(parsed.path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ValueError(f"{JWKS_URL}: cannot read {path}: {exc.strerror}") from None
    try:
        keys = [k.key for k in jwt.PyJWKSet.from_json(text).keys]
    except (jwt.PyJWTError, ValueError) as exc:
        raise ValueError(f"{JWKS_URL}: {path} is not a usable JWKS: {exc}") from None
    return keys


def oauth_from_settings(settings: dict[str, Any]) -> OAuthConfig | None:
    """Signed-token validation when sasl.oauthbearer.jwks.endpoint.url is set, else None."""

    def get(key: str) -> str | None:
        value = settings.get(key)
        return None if value is None or str(value).strip() == "" else str(value).strip()

    url = get(JWKS_URL)
    if url is None:
        return None
    audience = [a.strip() for a in (get("sasl.oauthbearer.expected.audience") or "").split(",") if a.strip()]
    return OAuthConfig(principal_claim=get("sasl.oauthbearer.sub.claim.name") or "sub",
                       scope_claim=get("sasl.oauthbearer.scope.claim.name") or "scope",
                       allowable_clock_skew_ms=int(get("sasl.oauthbearer.clock.skew.seconds") or 30) * 1000,
                       keys=load_jwks(url), audience=audience or None,
                       issuer=get("sasl.oauthbearer.expected.issuer"))
