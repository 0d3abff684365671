"""Dynamic broker configs, SCRAM credentials and ACL bindings survive a restart on the same data dir
(storage/cluster_settings.py): they are written to mockbroker-metadata.json on each change and loaded
before the broker serves. Brokers without sockets."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mockbroker.security.acls import AclOperation, ResourceType
from mockbroker.security.credentials import credential_from_salted_password
from mockbroker.server import MockBroker
from mockbroker.state.configs import ConfigSource
from mockbroker.storage.metadata import FILE_NAME
from tests.storage.helpers import open_broker

SECURE: dict[str, Any] = {"security": "SASL_PLAINTEXT", "sasl_mechanisms": ["PLAIN", "SCRAM-SHA-256",
                                                                           "SCRAM-SHA-512"]}


def restart(data_dir: Path, old: MockBroker, **kwargs: Any) -> MockBroker:
    assert old.storage is not None
    old.storage.close()
    return open_broker(data_dir, **kwargs)


def stored(data_dir: Path) -> dict[str, Any]:
    return json.loads((data_dir / FILE_NAME).read_text())  # type: ignore[no-any-return]


def scram_login(broker: MockBroker, user: str, password: str, mechanism: str = "SCRAM-SHA-256") -> bool:
    """A whole SCRAM exchange (scramp's client) against the broker's stored credential."""
    from scramp import ScramClient, ScramException, ScramMechanism

    credential = broker.security.credentials.scram_credential(user, mechanism)
    if credential is None:
        return False
    server = ScramMechanism(mechanism).make_server(
        lambda _: (credential.salt, credential.stored_key, credential.server_key, credential.iterations))
    client = ScramClient([mechanism], user, password)
    try:
        server.set_client_first(client.get_client_first())
        client.set_server_first(server.get_server_first())
        server.set_client_final(client.get_client_final())
        client.set_server_final(server.get_server_final())
    except ScramException:
        return False
    return True


# -- dynamic broker configs --------------------------------------------------------------------------

def test_dynamic_broker_configs_survive_a_restart(tmp_path: Path) -> None:
    b = open_broker(tmp_path)
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "12345")], per_broker=False)  # the default ("")
    b.cluster.config.replace_dynamic({"producer.id.expiration.ms": "60000"}, per_broker=True)  # broker 1
    assert stored(tmp_path)["broker_configs"] == {"": {"log.retention.ms": "12345"}, "1": {"producer.id.expiration.ms": "60000"}}
    b = restart(tmp_path, b)
    config = b.cluster.config
    assert config.get("log.retention.ms") == 12345
    assert config.source_of("log.retention.ms") is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert config.get("producer.id.expiration.ms") == 60000
    assert config.source_of("producer.id.expiration.ms") is ConfigSource.DYNAMIC_BROKER_CONFIG
    # A topic without its own setting falls back to the loaded default.
    t = b.create_topic("t")
    assert t.config.get("retention.ms") == 12345
    # Deleting it is stored too.
    config.alter_dynamic([("log.retention.ms", 1, None)], per_broker=False)
    b = restart(tmp_path, b)
    assert b.cluster.config.source_of("log.retention.ms") is ConfigSource.DEFAULT_CONFIG
    assert b.cluster.config.get("producer.id.expiration.ms") == 60000


def test_a_validate_only_alter_stores_nothing(tmp_path: Path) -> None:
    b = open_broker(tmp_path)
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "777")], per_broker=False, validate_only=True)
    assert stored(tmp_path)["broker_configs"] == {}
    b = restart(tmp_path, b)
    assert b.cluster.config.source_of("log.retention.ms") is ConfigSource.DEFAULT_CONFIG


def test_a_dynamic_config_wins_over_the_static_one_after_a_restart(tmp_path: Path) -> None:
    b = open_broker(tmp_path, config={"log.retention.ms": "1000"})
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "2000")], per_broker=False)
    b = restart(tmp_path, b, config={"log.retention.ms": "1000"})
    assert b.cluster.config.get("log.retention.ms") == 2000


def test_another_nodes_per_broker_configs_are_kept_in_the_file(tmp_path: Path) -> None:
    b = open_broker(tmp_path)
    assert b.storage is not None
    b.storage.close()
    doc = stored(tmp_path)
    doc["broker_configs"] = {"7": {"producer.id.expiration.ms": "3"}}  # another node's (Kafka: ConfigRecord "7")
    (tmp_path / FILE_NAME).write_text(json.dumps(doc))
    b = open_broker(tmp_path)
    assert b.cluster.config.source_of("producer.id.expiration.ms") is ConfigSource.DEFAULT_CONFIG
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "5")], per_broker=True)
    assert stored(tmp_path)["broker_configs"] == {"7": {"producer.id.expiration.ms": "3"}, "1": {"log.retention.ms": "5"}}


def test_a_stored_config_that_no_longer_loads_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    b = open_broker(tmp_path)
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "99")], per_broker=False)
    assert b.storage is not None
    b.storage.close()
    doc = stored(tmp_path)
    doc["broker_configs"][""]["num.partitions.not.a.config"] = "1"
    doc["broker_configs"][""]["log.segment.bytes"] = "many"
    (tmp_path / FILE_NAME).write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        b = open_broker(tmp_path)
    assert b.cluster.config.get("log.retention.ms") == 99
    assert b.cluster.config.source_of("log.segment.bytes") is ConfigSource.DEFAULT_CONFIG
    assert "num.partitions.not.a.config" in caplog.text and "log.segment.bytes" in caplog.text


# -- SCRAM credentials -------------------------------------------------------------------------------

def test_scram_credentials_survive_a_restart_without_the_password(tmp_path: Path) -> None:
    b = open_broker(tmp_path, **SECURE)
    b.add_user("alice", "alice-secret", "SCRAM-SHA-512", iterations=8192)
    # What AlterUserScramCredentials stores: a credential from the client's salted password.
    import hashlib

    salted = hashlib.pbkdf2_hmac("sha256", b"bob-secret", b"bob-salt-16bytes", 4096)
    b.security.credentials.set_scram("bob", "SCRAM-SHA-256",
                                     credential_from_salted_password("SCRAM-SHA-256", b"bob-salt-16bytes", salted, 4096))
    text = (tmp_path / FILE_NAME).read_text()
    assert "alice-secret" not in text and "bob-secret" not in text
    entries = {(e["name"], e["mechanism"]): e for e in stored(tmp_path)["scram_credentials"]}
    assert set(entries) == {("alice", "SCRAM-SHA-512"), ("bob", "SCRAM-SHA-256")}
    assert entries["alice", "SCRAM-SHA-512"]["iterations"] == 8192
    assert entries["bob", "SCRAM-SHA-256"]["salt"] == "Ym9iLXNhbHQtMTZieXRlcw=="  # base64 of b"bob-salt-16bytes"
    before = b.security.credentials.scram_credential("alice", "SCRAM-SHA-512")

    b = restart(tmp_path, b, **SECURE)
    assert b.security.credentials.scram_credential("alice", "SCRAM-SHA-512") == before
    assert scram_login(b, "alice", "alice-secret", "SCRAM-SHA-512")
    assert not scram_login(b, "alice", "wrong", "SCRAM-SHA-512")
    assert scram_login(b, "bob", "bob-secret")
    assert b.security.credentials.plain == {}  # PLAIN passwords are configuration, not stored


def test_a_deleted_scram_credential_stays_deleted(tmp_path: Path) -> None:
    b = open_broker(tmp_path, **SECURE)
    b.add_user("alice", "pw", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
    b.add_user("carol", "pw", "SCRAM-SHA-256")
    assert b.security.credentials.delete_scram("alice", "SCRAM-SHA-512")
    b.remove_user("carol")
    b = restart(tmp_path, b, **SECURE)
    assert b.security.credentials.scram_users() == ["alice"]
    assert scram_login(b, "alice", "pw")
    assert not scram_login(b, "alice", "pw", "SCRAM-SHA-512")


def test_a_changed_password_wins_over_users_given_at_start(tmp_path: Path) -> None:
    b = open_broker(tmp_path, users={"alice": "first"}, **SECURE)
    b.add_user("alice", "second", "SCRAM-SHA-256")
    b = restart(tmp_path, b, users={"alice": "first"}, **SECURE)
    assert scram_login(b, "alice", "second")
    assert not scram_login(b, "alice", "first")
    assert scram_login(b, "alice", "first", "SCRAM-SHA-512")  # users= made it and nothing replaced it
    assert b.security.credentials.check_plain("alice", "first")


# -- ACLs --------------------------------------------------------------------------------------------

def test_acls_survive_a_restart(tmp_path: Path) -> None:
    b = open_broker(tmp_path, acls=True)
    b.add_acl("User:bob", ["READ", "DESCRIBE"], topic="orders")
    b.add_acl("User:bob", "READ", topic="orders-secret", pattern="PREFIXED", permission="DENY")
    b.add_acl("User:*", "WRITE", topic="*", host="127.0.0.1")
    before = b.acls()
    assert len(stored(tmp_path)["acls"]) == 4
    b = restart(tmp_path, b, acls=True)
    assert b.acls() == before
    authorizer = b.security.authorizer
    assert authorizer is not None
    assert authorizer.authorize("User:bob", "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "orders")
    assert not authorizer.authorize("User:bob", "10.0.0.1", AclOperation.READ, ResourceType.TOPIC,
                                    "orders-secret-x")
    b.remove_acls("User:bob", topic="orders")
    b = restart(tmp_path, b, acls=True)
    assert len(b.acls()) == 2
    assert not b.security.authorizer.authorize(  # type: ignore[union-attr]
        "User:bob", "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "orders")


def test_acls_are_kept_by_a_broker_started_without_an_authorizer(tmp_path: Path) -> None:
    b = open_broker(tmp_path, acls=True)
    b.add_acl("User:bob", "READ", topic="orders")
    b = restart(tmp_path, b)  # no authorizer: nothing is checked, the bindings stay in the file
    assert b.security.authorizer is None
    b.create_topic("t")  # another write of the file
    assert len(stored(tmp_path)["acls"]) == 1
    b = restart(tmp_path, b, acls=True)
    assert [(x.principal, x.resource_name, x.operation) for x in b.acls()] == [("User:bob", "orders",
                                                                               AclOperation.READ)]


def test_a_stored_binding_kafka_would_refuse_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    b = open_broker(tmp_path, acls=True)
    b.add_acl("User:bob", "READ", topic="orders")
    assert b.storage is not None
    b.storage.close()
    doc = stored(tmp_path)
    doc["acls"].append(dict(doc["acls"][0], principal="no-colon"))
    doc["acls"].append(dict(doc["acls"][0], operation="JUMP"))
    (tmp_path / FILE_NAME).write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        b = open_broker(tmp_path, acls=True)
    assert [x.principal for x in b.acls()] == ["User:bob"]
    assert "no-colon" in caplog.text and "JUMP" in caplog.text


def test_in_memory_brokers_attach_no_writer() -> None:
    b = MockBroker(acls=True, **SECURE)
    assert b.storage is None
    assert b.cluster.config.on_dynamic_change is None
    assert b.security.credentials.on_change is None
    assert b.security.authorizer is not None and b.security.authorizer.acls.on_change is None
    b.add_acl("User:bob", "READ", topic="orders")
    b.add_user("alice", "pw")
    b.cluster.config.alter_dynamic([("log.retention.ms", 0, "1")], per_broker=False)
    assert b.cluster.config.get("log.retention.ms") == 1


def test_a_stopped_broker_stops_writing(tmp_path: Path) -> None:
    b = open_broker(tmp_path, acls=True)
    assert b.storage is not None
    b.storage.close()
    assert b.cluster.config.on_dynamic_change is None and b.security.credentials.on_change is None
    b.add_acl("User:bob", "READ", topic="orders")
    assert stored(tmp_path)["acls"] == []
