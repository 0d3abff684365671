"""The broker's users: PLAIN passwords and SCRAM credentials (no I/O, no asyncio).

As Kafka keeps them: PLAIN checks a password the broker was configured with (Kafka: the JAAS
`user_<name>="<password>"` entries), SCRAM checks a stored credential per user and mechanism (salt,
StoredKey, ServerKey, iterations; RFC 5802), which AlterUserScramCredentials creates, replaces and
deletes and DescribeUserScramCredentials lists. A user added with `add_user` gets both: its password
for PLAIN and a credential for each SCRAM mechanism asked for.

`on_change` (set by a data dir, mockbroker/storage) is called after each change of a SCRAM credential
(PLAIN passwords are configuration, as Kafka's JAAS entries, and are not stored).

scramp is imported only when a SCRAM credential is made from a password, hashlib and hmac only when a
credential is made or checked (the broker's start-up does not pay for them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from mockbroker.security.protocols import ALL_MECHANISMS

# Kafka's ScramMechanism: name -> (type id on the wire, hash, minimum iterations).
SCRAM_MECHANISMS: dict[str, tuple[int, str, int]] = {
    "SCRAM-SHA-256": (1, "sha256", 4096),
    "SCRAM-SHA-512": (2, "sha512", 4096),
}
SCRAM_BY_TYPE: dict[int, str] = {type_id: name for name, (type_id, _, _) in SCRAM_MECHANISMS.items()}
# AlterUserScramCredentials refuses more iterations than this (Kafka's ScramMechanism.maxIterations).
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096



@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def credential_from_salted_password(mechanism: str, salt: bytes, salted_password: bytes,
                                    iterations: int) -> ScramCredential:
    """StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key")."""
    import hashlib
    import hmac

    hash_name = SCRAM_MECHANISMS[mechanism][1]
    client_key = hmac.digest(salted_password, b"Client Key", hash_name)
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = hmac.digest(salted_password, b"Server Key", hash_name)
    return ScramCredential(salt, stored_key, server_key, iterations)


def credential_from_password(mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS,
                             salt: bytes | None = None) -> ScramCredential:
    from scramp import ScramMechanism

    salt_, stored_key, server_key, count = ScramMechanism(mechanism).make_auth_info(
        password, iteration_count=iterations, salt=salt if salt is not None else os.urandom(32))
    return ScramCredential(salt_, stored_key, server_key, count)


class Credentials:
    """Every user the broker knows: PLAIN passwords and SCRAM credentials by user and mechanism."""

    def __init__(self) -> None:
        self.plain: dict[str, str] = {}
        self.scram: dict[str, dict[str, ScramCredential]] = {}
        self.on_change: Callable[[], None] | None = None  # a data dir's writer (mockbroker/storage)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def add_user(self, name: str, password: str, mechanisms: tuple[str, ...] | list[str] = ALL_MECHANISMS,
                 iterations: int = DEFAULT_ITERATIONS) -> None:
        """Let `name` log in with `password` with each of `mechanisms` (PLAIN, SCRAM-SHA-256/512)."""
        for mechanism in mechanisms:
            if mechanism == "PLAIN":
                self.plain[name] = password
            elif mechanism in SCRAM_MECHANISMS:
                self.scram.setdefault(name, {})[mechanism] = credential_from_password(mechanism, password, iterations)
            elif mechanism == "OAUTHBEARER":
                continue
            else:
                raise ValueError(f"unknown SASL mechanism {mechanism!r} (known: {', '.join(ALL_MECHANISMS)})")
        if any(m in SCRAM_MECHANISMS for m in mechanisms):
            self._changed()

    def remove_user(self, name: str) -> None:
        self.plain.pop(name, None)
        if self.scram.pop(name, None) is not None:
            self._changed()

    def check_plain(self, name: str, password: str) -> bool:
        import hmac

        expected = self.plain.get(name)
        return expected is not None and hmac.compare_digest(expected.encode(), password.encode())

    def scram_credential(self, name: str, mechanism: str) -> ScramCredential | None:
        return self.scram.get(name, {}).get(mechanism)

    def set_scram(self, name: str, mechanism: str, credential: ScramCredential) -> None:
        self.scram.setdefault(name, {})[mechanism] = credential
        self._changed()

    def delete_scram(self, name: str, mechanism: str) -> bool:
        """Remove one SCRAM credential; False if there was none."""
        by_mechanism = self.scram.get(name)
        if not by_mechanism or mechanism not in by_mechanism:
            return False
        del by_mechanism[mechanism]
        if not by_mechanism:
            del self.scram[name]
        self._changed()
        return True

    def scram_users(self) -> list[str]:
        return sorted(self.scram)
