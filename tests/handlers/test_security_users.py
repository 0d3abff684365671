"""Raw-protocol tests of DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): Kafka's
checks and messages, and users created over the wire logging in at once."""

from __future__ import annotations

import hashlib
import os

import pytest
from scramp import ScramClient

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

DESCRIBE, ALTER, SASL_HANDSHAKE, SASL_AUTHENTICATE = 50, 51, 17, 36
SHA256, SHA512 = 1, 2


def connect(broker: MockBroker) -> RawClient:
    return RawClient(broker.host, broker.port)


def upsertion(name: str, password: str, mechanism: int = SHA256, iterations: int = 4096) -> dict[str, object]:
    salt = os.urandom(16)
    algorithm = {SHA256: "sha256", SHA512: "sha512"}.get(mechanism, "sha256")
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt,
            "salted_password": hashlib.pbkdf2_hmac(algorithm, password.encode(), salt, iterations)}


def alter(c: RawClient, deletions: list[dict[str, object]] | None = None,
          upsertions: list[dict[str, object]] | None = None) -> dict[str, tuple[int, str | None]]:
    resp = c.request(ALTER, 0, {"deletions": deletions or [], "upsertions": upsertions or []})
    return {r.user: (r.error_code, r.error_message) for r in resp.results}


def describe(c: RawClient, names: list[str] | None) -> dict[str, tuple[int, str | None, list[tuple[int, int]]]]:
    users = None if names is None else [{"name": n} for n in names]
    resp = c.request(DESCRIBE, 0, {"users": users})
    assert resp.error_code == ErrorCode.NONE
    return {r.user: (r.error_code, r.error_message, [(i.mechanism, i.iterations) for i in r.credential_infos])
            for r in resp.results}


def test_describe_lists_users_added_in_python_with_their_scram_mechanisms(mockbroker: MockBroker) -> None:
    mockbroker.add_user("alice", "secret")
    mockbroker.add_user("bob", "pw", mechanism="SCRAM-SHA-512", iterations=8192)
    mockbroker.add_user("plain-only", "pw", mechanism="PLAIN")
    with connect(mockbroker) as c:
        assert describe(c, None) == {"alice": (0, None, [(SHA256, 4096), (SHA512, 4096)]),
                                     "bob": (0, None, [(SHA512, 8192)])}
        assert describe(c, []) == describe(c, None)
        got = describe(c, ["bob", "nobody", "alice", "alice"])
    assert got["bob"] == (0, None, [(SHA512, 8192)])
    assert got["nobody"] == (ErrorCode.RESOURCE_NOT_FOUND,
                             "Attempt to describe a user credential that does not exist: nobody", [])
    assert got["alice"] == (ErrorCode.DUPLICATE_RESOURCE,
                            "Cannot describe SCRAM credentials for the same user twice in a single request: alice", [])


def test_alter_checks_as_kafka(mockbroker: MockBroker) -> None:
    with connect(mockbroker) as c:
        got = alter(c, deletions=[{"name": "ghost", "mechanism": SHA256}, {"name": "dup", "mechanism": SHA256}],
                    upsertions=[upsertion("", "pw"), upsertion("few", "pw", iterations=4095),
                                upsertion("many", "pw", iterations=16385), upsertion("mech", "pw", mechanism=3),
                                upsertion("dup", "pw"), upsertion("ok", "pw", SHA512, 16384)])
    assert got == {
        "ghost": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "dup": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "mech": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "ok": (ErrorCode.NONE, None),
    }
    assert sorted(mockbroker.security.credentials.scram_users()) == ["ok"]


def test_alter_refuses_a_user_twice_in_one_request(mockbroker: MockBroker) -> None:
    mockbroker.add_user("alice", "secret")
    with connect(mockbroker) as c:
        got = alter(c, deletions=[{"name": "alice", "mechanism": SHA256}],
                    upsertions=[upsertion("alice", "new", SHA512), upsertion("bob", "a"), upsertion("bob", "b", SHA512)])
        assert got == {"alice": (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the "
                                                               "same request"),
                       "bob": (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the "
                                                             "same request")}
        assert describe(c, ["alice"])["alice"][2] == [(SHA256, 4096), (SHA512, 4096)]  # nothing changed


def test_alter_deletes_one_mechanism(mockbroker: MockBroker) -> None:
    mockbroker.add_user("alice", "secret")
    with connect(mockbroker) as c:
        assert alter(c, deletions=[{"name": "alice", "mechanism": SHA256}]) == {"alice": (0, None)}
        assert describe(c, ["alice"])["alice"][2] == [(SHA512, 4096)]


@pytest.mark.mockbroker(security="SASL_PLAINTEXT")
def test_user_created_over_the_wire_logs_in_at_once(mockbroker: MockBroker) -> None:
    mockbroker.add_user("admin", "admin-secret")
    with connect(mockbroker) as admin:
        assert admin.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == 0
        assert admin.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0admin\0admin-secret"}).error_code == 0
        assert alter(admin, upsertions=[upsertion("dave", "dave-pw", SHA512, 5000)]) == {"dave": (0, None)}
        with connect(mockbroker) as c:
            assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"}).error_code == 0
            client = ScramClient(["SCRAM-SHA-512"], "dave", "dave-pw")
            first = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_first().encode()})
            client.set_server_first(bytes(first.auth_bytes).decode())
            assert ",i=5000" in bytes(first.auth_bytes).decode()
            final = c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": client.get_client_final().encode()})
            assert final.error_code == 0
            client.set_server_final(bytes(final.auth_bytes).decode())
            assert c.request(DESCRIBE, 0, {"users": [{"name": "dave"}]}).results[0].error_code == 0
    assert mockbroker.received(DESCRIBE)[-1].principal == "User:dave"
