"""The `mockbroker` command with Kafka's authorizer from its settings (--config authorizer.class.name=...,
super.users=...): the super user may do everything, another user only what an ACL allows."""

from __future__ import annotations

from tests.rawclient import RawClient
from tests.test_cli_security import METADATA, SASL_AUTHENTICATE, SASL_HANDSHAKE, start

DESCRIBE_ACLS, CREATE_ACLS = 29, 30
ACL_FILTER = {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1, "permission_type": 1}


def login(c: RawClient, user: str, password: str) -> None:
    assert c.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}).error_code == 0
    assert c.request(SASL_AUTHENTICATE, 2, {"auth_bytes": f"\0{user}\0{password}".encode()}).error_code == 0


def test_authorizer_and_super_users_from_config_flags() -> None:
    proc, listeners, _ = start("--listener", "SASL_PLAINTEXT://127.0.0.1:0", "--user", "admin:pw", "--user", "alice:pw",
                               "--topic", "orders",
                               "--config", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                               "--config", "super.users=User:admin")
    try:
        [(host, port, _)] = listeners
        with RawClient(host, port) as alice:
            login(alice, "alice", "pw")
            assert alice.request(METADATA, 12, {"topics": None}).topics == []
            assert alice.request(DESCRIBE_ACLS, 3, ACL_FILTER).error_code == 31  # CLUSTER_AUTHORIZATION_FAILED
            with RawClient(host, port) as admin:
                login(admin, "admin", "pw")
                assert [t.name for t in admin.request(METADATA, 12, {"topics": None}).topics] == ["orders"]
                created = admin.request(CREATE_ACLS, 3, {"creations": [
                    {"resource_type": 2, "resource_name": "orders", "resource_pattern_type": 3,
                     "principal": "User:alice", "host": "*", "operation": 8, "permission_type": 3}]})
                assert created.results[0].error_code == 0
            assert [t.name for t in alice.request(METADATA, 12, {"topics": None}).topics] == ["orders"]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
