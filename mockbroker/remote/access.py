"""ACLs and SCRAM users on a real cluster, for RemoteBroker's `add_acl`, `remove_acls`, `acls`, `add_user` and
`remove_user` (the embedded broker's calls of the same names and arguments: mockbroker/acl_api.py, server.py).

- ACLs: CreateAcls, DeleteAcls and DescribeAcls (v1-3), sent to any node (Kafka's brokers forward them to the
  controller). The bindings are built and checked as the embedded broker builds them (acl_api.bindings_from /
  filter_from); an error in an answer raises KafkaError with Kafka's code (SECURITY_DISABLED on a cluster
  without an authorizer, CLUSTER_AUTHORIZATION_FAILED for a login without ALTER on the cluster).
- Users: AlterUserScramCredentials (v0), one mechanism a request (Kafka refuses a user named twice in one
  request, whatever the mechanisms: DUPLICATE_RESOURCE). An upsertion carries the salted password, Hi(password, salt, i), as
  Kafka's admin client sends it (RFC 5802: PBKDF2 with HMAC of the mechanism's hash), with a random salt; a
  deletion names the user and the mechanism. `remove_user` deletes every mechanism DescribeUserScramCredentials
  lists for the user.

The names a test gives are mapped to the cluster's by the caller (an isolated test's topic "orders" is its
prefixed topic), and ACL bindings on the test's own resources are given back under the test's names. What a
test created is remembered, so an isolated test's teardown can remove it (mockbroker/remote/teardown.py).
No asyncio: the blocking ClusterClient of mockbroker/remote/client.py.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import replace

from mockbroker.acl_api import bindings_from, filter_from
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.remote.client import ClusterClient, check
from mockbroker.security.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)

NAMED_BY_THE_TEST = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID)
MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
MECHANISM_NAMES = {code: name for name, (code, _) in MECHANISMS.items()}


def _mapped(binding: AclBinding, mapping: Callable[[str], str]) -> AclBinding:
    """The binding with its resource name mapped, for the resource types a test names (topics, groups, ids)."""
    if binding.resource_type not in NAMED_BY_THE_TEST or binding.resource_name == "*":
        return binding
    return replace(binding, resource_name=mapping(binding.resource_name))


def _filter_body(f: AclFilter) -> dict[str, object]:
    return {"resource_type_filter": int(f.resource_type), "resource_name_filter": f.resource_name,
            "pattern_type_filter": int(f.pattern_type), "principal_filter": f.principal, "host_filter": f.host,
            "operation": int(f.operation), "permission_type": int(f.permission)}


def _binding(resource_type: int, name: str, pattern: int, principal: str, host: str, op: int,
             permission: int) -> AclBinding:
    return AclBinding(ResourceType(resource_type), name, PatternType(pattern), principal, host, AclOperation(op),
                      AclPermissionType(permission))


class RemoteAccess:
    """A test's ACLs and SCRAM users on the cluster; `to_real` / `to_test` map a test's resource names."""

    def __init__(self, client: ClusterClient, to_real: Callable[[str], str], to_test: Callable[[str], str]) -> None:
        self._client = client
        self._to_real = to_real
        self._to_test = to_test
        self.created_acls: list[AclBinding] = []  # on the cluster, under the cluster's names
        self.created_users: list[str] = []

    # -- ACLs --------------------------------------------------------------------------------------------
    def add_acl(self, principal: str, operation: str | list[str], *, topic: str | None = None,
                group: str | None = None, transactional_id: str | None = None, cluster: bool = False,
                resource_type: str | None = None, name: str | None = None, pattern: str = "LITERAL",
                permission: str = "ALLOW", host: str = "*") -> list[AclBinding]:
        """CreateAcls: one binding per operation, as MockBroker.add_acl; the bindings, under the test's names."""
        bindings = bindings_from(principal, operation, topic=topic, group=group, transactional_id=transactional_id,
                                 cluster=cluster, resource_type_name=resource_type, name=name, pattern=pattern,
                                 allow=permission, host=host)
        real = [_mapped(b, self._to_real) for b in bindings]
        answer = self._client.any().request(ApiKey.CREATE_ACLS, {"creations": [
            {"resource_type": int(b.resource_type), "resource_name": b.resource_name,
             "resource_pattern_type": int(b.pattern_type), "principal": b.principal, "host": b.host,
             "operation": int(b.operation), "permission_type": int(b.permission)} for b in real]}, newest=3, oldest=1)
        for result in answer.results:
            check(result.error_code, f"CreateAcls: {result.get('error_message')}")
        self.created_acls += real
        return bindings

    def remove_acls(self, principal: str | None = None, operation: str = "ANY", *, topic: str | None = None,
                    group: str | None = None, transactional_id: str | None = None, cluster: bool = False,
                    resource_type: str | None = None, name: str | None = None, pattern: str = "ANY",
                    permission: str = "ANY", host: str | None = None) -> list[AclBinding]:
        """DeleteAcls with the filter MockBroker.remove_acls builds; the removed bindings, under the test's names."""
        acl_filter = filter_from(principal, operation, topic=topic, group=group, transactional_id=transactional_id,
                                 cluster=cluster, resource_type_name=resource_type, name=name, pattern=pattern,
                                 allow=permission, host=host)
        if acl_filter.resource_name is not None and acl_filter.resource_type in NAMED_BY_THE_TEST:
            acl_filter = replace(acl_filter, resource_name=self._to_real(acl_filter.resource_name))
        return [_mapped(b, self._to_test) for b in self.delete(acl_filter)]

    def delete(self, acl_filter: AclFilter) -> list[AclBinding]:
        """DeleteAcls of one filter; the removed bindings under the cluster's names."""
        answer = self._client.any().request(ApiKey.DELETE_ACLS, {"filters": [_filter_body(acl_filter)]},
                                            newest=3, oldest=1)
        [result] = answer.filter_results
        check(result.error_code, f"DeleteAcls: {result.get('error_message')}")
        removed = [_binding(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
                            m.permission_type) for m in result.matching_acls if m.error_code == ErrorCode.NONE]
        self.created_acls = [b for b in self.created_acls if b not in removed]
        return removed

    def acls(self) -> list[AclBinding]:
        """DescribeAcls of every binding on the cluster, the test's own resources under the test's names."""
        answer = self._client.any().request(ApiKey.DESCRIBE_ACLS, _filter_body(AclFilter()), newest=3, oldest=1)
        check(answer.error_code, f"DescribeAcls: {answer.get('error_message')}")
        return [_mapped(_binding(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                                 a.permission_type), self._to_test) for r in answer.resources for a in r.acls]

    # -- SCRAM users -------------------------------------------------------------------------------------
    def add_user(self, name: str, password: str, mechanism: str | list[str] | None = None,
                 iterations: int = 4096) -> None:
        """AlterUserScramCredentials upserting name's credential for each mechanism (None: both SCRAMs; PLAIN
        users live in a real cluster's JAAS settings, which no Kafka request changes)."""
        names = list(MECHANISMS) if mechanism is None else [mechanism] if isinstance(mechanism, str) else list(mechanism)
        unknown = [m for m in names if m.upper() not in MECHANISMS]
        if unknown:
            raise ValueError(f"{unknown}: a real cluster's users are added with SCRAM-SHA-256 or SCRAM-SHA-512 only")
        upsertions = []
        for m in names:
            code, digest = MECHANISMS[m.upper()]
            salt = os.urandom(32)
            upsertions.append({"name": name, "mechanism": code, "iterations": iterations, "salt": salt,
                               "salted_password": hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)})
        for upsertion in upsertions:  # one a request: Kafka refuses a user named twice in one (DUPLICATE_RESOURCE)
            self._alter_users([], [upsertion])
        if name not in self.created_users:
            self.created_users.append(name)

    def remove_user(self, name: str) -> None:
        """AlterUserScramCredentials deleting every SCRAM credential the cluster has for name."""
        answer = self._client.any().request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, {"users": [{"name": name}]},
                                            newest=0)
        check(answer.error_code, f"DescribeUserScramCredentials: {answer.get('error_message')}")
        mechanisms = [c.mechanism for r in answer.results if r.error_code == ErrorCode.NONE for c in r.credential_infos]
        for m in mechanisms:  # one a request, as for add_user
            self._alter_users([{"name": name, "mechanism": m}], [])
        if name in self.created_users:
            self.created_users.remove(name)

    def _alter_users(self, deletions: list[dict[str, object]], upsertions: list[dict[str, object]]) -> None:
        answer = self._client.any().request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
                                            {"deletions": deletions, "upsertions": upsertions}, newest=0)
        for result in answer.results:
            check(result.error_code, f"AlterUserScramCredentials {result.user!r}: {result.get('error_message')}")

    # -- teardown ----------------------------------------------------------------------------------------
    def remove_created(self) -> list[str]:
        """Remove the ACLs and users this test created (an isolated test's teardown); what failed, a line each."""
        problems = []
        for b in list(self.created_acls):
            try:
                self.delete(AclFilter(b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host,
                                      b.operation, b.permission))
            except Exception as exc:  # best effort: report and go on
                problems.append(f"ACL {b.as_dict()} not removed: {type(exc).__name__}: {exc}")
        for user in list(self.created_users):
            try:
                self.remove_user(user)
            except Exception as exc:
                problems.append(f"user {user!r} not removed: {type(exc).__name__}: {exc}")
        return problems
