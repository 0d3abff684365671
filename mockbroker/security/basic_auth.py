"""HTTP Basic credentials checked against the broker's SASL users, for the broker's HTTP surfaces (the control
endpoint, http/auth.py, and the Schema Registry, registry/http.py): `decode_basic` reads an Authorization
header, `password_matches` says whether a SASL login of that user with that password would succeed (the
PLAIN password, or one whose SCRAM salted password, PBKDF2 with the credential's salt and iterations, gives
the stored key), and `BasicCheck` remembers what it verified so a SCRAM check is not redone per request."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from mockbroker.security.credentials import SCRAM_MECHANISMS, Credentials, credential_from_salted_password

_CACHE_LIMIT = 256  # verified (name, password digest) pairs kept


def has_users(credentials: Credentials) -> bool:
    """Does the broker have SASL users (PLAIN passwords or SCRAM credentials), so HTTP needs one?"""
    return bool(credentials.plain or credentials.scram)


def decode_basic(header: str) -> tuple[str, str] | None:
    """(name, password) of an `Authorization: Basic base64(name:password)` header; None when the header is
    absent, of another scheme, or malformed."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "basic" or not token.strip():
        return None
    try:
        name, sep, password = base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, ValueError):
        return None
    return (name, password) if sep else None


def password_matches(credentials: Credentials, name: str, password: str) -> object | None:
    """The credential entry (the PLAIN password or a SCRAM credential of `name`) that `password` opens, or
    None: what a SASL login of `name` with `password` would be checked against."""
    if credentials.check_plain(name, password):
        return credentials.plain[name]
    for mechanism, stored in credentials.scram.get(name, {}).items():
        hash_name = SCRAM_MECHANISMS[mechanism][1]
        salted = hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), stored.salt, stored.iterations)
        made = credential_from_salted_password(mechanism, stored.salt, salted, stored.iterations)
        if hmac.compare_digest(made.stored_key, stored.stored_key):
            return stored
    return None


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode("utf-8", "surrogatepass")).digest()


class BasicCheck:
    """password_matches with a memory: a (name, password) verified before against the very entry still
    held is accepted without PBKDF2 again (a changed or removed user is checked afresh)."""

    def __init__(self) -> None:
        self._verified: dict[tuple[str, bytes], object] = {}

    def check(self, credentials: Credentials, name: str, password: str) -> bool:
        key = (name, _digest(password))
        known = self._verified.get(key)
        if known is not None and (known is credentials.plain.get(name)
                                  or known in credentials.scram.get(name, {}).values()):
            return True
        entry = password_matches(credentials, name, password)
        if entry is None:
            return False
        if len(self._verified) >= _CACHE_LIMIT:
            self._verified.clear()
        self._verified[key] = entry
        return True
