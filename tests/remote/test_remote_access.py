"""ACLs and SCRAM users on the remote target (mockbroker/remote/access.py): add_acl, remove_acls, acls,
add_user and remove_user sent as CreateAcls/DeleteAcls/DescribeAcls and AlterUserScramCredentials to a secured
MockBroker(brokers=3) reached only over the wire. Checked on the cluster's side (its authorizer's bindings, a
login with the new user) and through the test's names when the target isolates the test."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.remote import RemoteBroker

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"


def secured(factory: Callable[..., MockBroker]) -> MockBroker:
    return factory(brokers=3, security="SASL_PLAINTEXT", users={ADMIN: ADMIN_PASSWORD}, acls=True,
                   super_users=[f"User:{ADMIN}"], sasl_mechanisms=["SCRAM-SHA-256", "SCRAM-SHA-512"])


def login(user: str, password: str, mechanism: str = "SCRAM-SHA-256") -> dict[str, str]:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.username": user,
            "sasl.password": password}


def test_acls_are_created_listed_and_removed_over_the_wire(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = secured(mockbroker_factory)
    with RemoteBroker(cluster.bootstrap_servers, config=login(ADMIN, ADMIN_PASSWORD)) as remote:
        added = remote.add_acl("User:alice", ["READ", "DESCRIBE"], topic="orders")
        remote.add_acl("User:alice", "READ", group="billing-", pattern="PREFIXED")
        assert {(b.resource_name, b.operation.name) for b in added} == {("orders", "READ"), ("orders", "DESCRIBE")}
        on_cluster = {(b.resource_type.name, b.resource_name, b.pattern_type.name, b.operation.name)
                      for b in cluster.acls()}
        assert on_cluster == {("TOPIC", "orders", "LITERAL", "READ"), ("TOPIC", "orders", "LITERAL", "DESCRIBE"),
                              ("GROUP", "billing-", "PREFIXED", "READ")}
        assert set(remote.acls()) == set(cluster.acls())
        removed = remote.remove_acls(principal="User:alice", topic="orders")
        assert {b.operation.name for b in removed} == {"READ", "DESCRIBE"}
        assert [b.resource_name for b in cluster.acls()] == ["billing-"]


def test_an_acl_error_is_kafkas_code(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = secured(mockbroker_factory)
    cluster.add_user("bob", "bob-secret", "SCRAM-SHA-256")
    with RemoteBroker(cluster.bootstrap_servers, config=login("bob", "bob-secret")) as remote:
        with pytest.raises(KafkaError) as refused:  # bob has no ALTER on the cluster
            remote.add_acl("User:alice", "READ", topic="orders")
    assert refused.value.code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    plain = mockbroker_factory()  # no authorizer
    with RemoteBroker(plain.bootstrap_servers) as remote, pytest.raises(KafkaError) as disabled:
        remote.acls()
    assert disabled.value.code == ErrorCode.SECURITY_DISABLED


def test_a_user_added_remotely_logs_in_and_is_gone_after_remove_user(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = secured(mockbroker_factory)
    with RemoteBroker(cluster.bootstrap_servers, config=login(ADMIN, ADMIN_PASSWORD)) as remote:
        remote.add_user("carol", "carol-secret")  # both SCRAMs
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            with RemoteBroker(cluster.bootstrap_servers, config=login("carol", "carol-secret", mechanism)) as carol:
                assert carol.topics() == []  # logged in (a refused login raises)
        with pytest.raises(KafkaError) as wrong:
            RemoteBroker(cluster.bootstrap_servers, config=login("carol", "not-her-password")).topics()
        assert wrong.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED
        with pytest.raises(ValueError, match="SCRAM-SHA-256 or SCRAM-SHA-512 only"):
            remote.add_user("dave", "x", "PLAIN")
        remote.remove_user("carol")
        with pytest.raises(KafkaError) as gone:
            RemoteBroker(cluster.bootstrap_servers, config=login("carol", "carol-secret")).topics()
        assert gone.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED


def test_an_isolated_test_names_its_own_resources_and_its_acls_and_users_go_at_cleanup(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = secured(mockbroker_factory)
    cluster.add_acl("User:someone", "READ", topic="theirs")  # not the test's: kept
    with RemoteBroker(cluster.bootstrap_servers, config=login(ADMIN, ADMIN_PASSWORD), prefix="mb-t-") as remote:
        remote.add_acl("User:alice", "WRITE", topic="orders")
        remote.add_acl("User:alice", "DESCRIBE", cluster=True)
        remote.add_user("erin", "erin-secret", "SCRAM-SHA-512")
        assert ("orders", "mb-t-orders") in {(b.resource_name, c.resource_name)
                                             for b in remote.acls() for c in cluster.acls()
                                             if b.operation.name == c.operation.name == "WRITE"}
        assert {b.resource_name for b in remote.acls()} == {"orders", "theirs", "kafka-cluster"}
        assert remote.cleanup() == []
    assert [(b.principal, b.resource_name) for b in cluster.acls()] == [("User:someone", "theirs")]
    with pytest.raises(KafkaError):
        RemoteBroker(cluster.bootstrap_servers, config=login("erin", "erin-secret", "SCRAM-SHA-512")).topics()


def test_an_isolated_tests_fault_rule_names_its_topic_on_the_cluster(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory()
    with RemoteBroker(cluster.bootstrap_servers, prefix="mb-f-", proxy=True) as remote:
        rule = remote.inject(0, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="orders")
        assert rule.topic == "mb-f-orders"  # the proxy sees the cluster's name in the requests
