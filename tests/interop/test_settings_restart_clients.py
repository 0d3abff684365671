"""SCRAM users, ACLs and dynamic broker configs across a broker restart on the same data dir, with
confluent-kafka (issue #17): a user created with AlterUserScramCredentials authenticates with SCRAM-SHA-256
over SASL_PLAINTEXT after the restart (the broker's start names only the admin), the ACLs created with
CreateAcls still allow and deny as before, and a dynamic broker config set with IncrementalAlterConfigs is
described as such."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from mockbroker import MockBroker

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
USER, PASSWORD = "carol", "carol-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client_conf(bootstrap: str, user: str, password: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": password}


def start(port: int, data_dir: Path) -> MockBroker:
    return MockBroker(port=port, data_dir=data_dir, security="SASL_PLAINTEXT",
                      sasl_mechanisms=["SCRAM-SHA-256"], users={ADMIN: ADMIN_PASSWORD},
                      super_users=[f"User:{ADMIN}"])


def produce_one(bootstrap: str, user: str, password: str, topic: str) -> str | None:
    """Produce one record as `user`: the delivery error's name (or _AUTHENTICATION when the client reports
    a failed authentication first), None when it was written."""
    from confluent_kafka import KafkaError, Producer

    outcome: list[str | None] = []

    def on_error(err: Any) -> None:
        if err.code() == KafkaError._AUTHENTICATION:
            outcome.append(err.name())

    p = Producer({**client_conf(bootstrap, user, password), "linger.ms": 0, "message.timeout.ms": 15000,
                  "acks": "all", "error_cb": on_error})
    p.produce(topic, b"v", partition=0,
              on_delivery=lambda err, _msg: outcome.append(None if err is None else err.name()))
    deadline = time.monotonic() + 30
    while not outcome and time.monotonic() < deadline:
        p.poll(0.2)
    assert outcome, "no delivery report within 30 s"
    return outcome[0]


def test_scram_user_acls_and_broker_configs_survive_a_restart(tmp_path: Path) -> None:
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigSource,
        ResourcePatternType,
        ResourceType,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    port = free_port()
    principal = f"User:{USER}"
    with start(port, tmp_path).run_in_thread() as b1:
        b1.create_topic("open")
        b1.create_topic("secret")
        admin = AdminClient(client_conf(b1.bootstrap_servers, ADMIN, ADMIN_PASSWORD))
        upsert = UserScramCredentialUpsertion(USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                              PASSWORD.encode())
        for f in admin.alter_user_scram_credentials([upsert]).values():
            f.result(30)
        acls = [AclBinding(ResourceType.TOPIC, "*", ResourcePatternType.LITERAL, principal, "*",
                           AclOperation.ALL, AclPermissionType.ALLOW),
                AclBinding(ResourceType.TOPIC, "secret", ResourcePatternType.LITERAL, principal, "*",
                           AclOperation.WRITE, AclPermissionType.DENY)]
        for f in admin.create_acls(acls).values():
            f.result(30)
        broker = ConfigResource(ResourceType.BROKER, "1", incremental_configs=[
            ConfigEntry("log.retention.ms", "4321", incremental_operation=AlterConfigOpType.SET)])
        for f in admin.incremental_alter_configs([broker]).values():
            f.result(30)
        assert produce_one(b1.bootstrap_servers, USER, PASSWORD, "open") is None
        assert produce_one(b1.bootstrap_servers, USER, PASSWORD, "secret") == "TOPIC_AUTHORIZATION_FAILED"

    with start(port, tmp_path).run_in_thread() as b2:
        # carol was made by AlterUserScramCredentials only: her credential came back from the data dir.
        assert produce_one(b2.bootstrap_servers, USER, PASSWORD, "open") is None
        assert produce_one(b2.bootstrap_servers, USER, PASSWORD, "secret") == "TOPIC_AUTHORIZATION_FAILED"
        assert produce_one(b2.bootstrap_servers, USER, "wrong-password", "open") == "_AUTHENTICATION"
        assert b2.cluster.partition("open", 0).log.high_watermark == 2  # type: ignore[union-attr]
        admin = AdminClient(client_conf(b2.bootstrap_servers, ADMIN, ADMIN_PASSWORD))
        described = admin.describe_acls(
            AclBindingFilter(ResourceType.TOPIC, "secret", ResourcePatternType.LITERAL, principal, "*",
                       AclOperation.WRITE, AclPermissionType.DENY)).result(30)
        assert len(described) == 1
        [configs] = [f.result(30) for f in admin.describe_configs([ConfigResource(ResourceType.BROKER, "1")])
                     .values()]
        entry = configs["log.retention.ms"]
        assert entry.value == "4321"
        assert entry.source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
