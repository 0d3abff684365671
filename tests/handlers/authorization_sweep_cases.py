"""The cases of the authorization sweep (tests/handlers/test_authorization_sweep.py): the broker's state
before the sweep (made by an admin with ACLs on everything), and for every API whose request takes a list
of resources, requests naming only resources User:mallory (no ACLs) may not touch, existing and absent,
with what Kafka answers: every named resource with the authorization code of its kind, nothing else.

Kafka's codes, as KafkaApis / ControllerApis / AclApis answer a principal without ACLs: topics
TOPIC_AUTHORIZATION_FAILED (checked before existence, so an absent topic gets it too; an unknown topic id
UNKNOWN_TOPIC_ID, since no name is disclosed by it), groups GROUP_AUTHORIZATION_FAILED, transactional ids
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, cluster operations (ACLs, log dirs, elections, reassignments, SCRAM
users, broker configs, AddPartitionsToTxn v4+) CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

ADMIN = ("admin", "admin-pw")
MALLORY = ("mallory", "mallory-pw")
TOPIC = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP = ErrorCode.GROUP_AUTHORIZATION_FAILED
TXN = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
CLUSTER = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
NONE = ErrorCode.NONE
# What the admin made; each list names one resource that does not exist.
EVERYTHING = {"topics": ["orders", "secret"], "groups": ["billing", "live"], "transactional_ids": ["tx-1"]}
T = ["orders", "secret", "absent"]
G = ["billing", "live", "ghost"]
X = ["tx-1", "tx-ghost"]
# Registered APIs whose request has no list (the sweep's coverage test checks they really have none):
# Heartbeat, InitProducerId, AddOffsetsToTxn, EndTxn, DescribeAcls, DescribeCluster and the SASL and
# ApiVersions requests. Their refusals are pinned in test_authorization_groups.py / test_acl_apis.py.
NO_RESOURCE_LIST = (12, 17, 18, 22, 25, 26, 29, 36, 60)


@dataclass
class Setup:
    node_id: int
    orders_id: uuid.UUID
    secret_id: uuid.UUID
    producer_id: int
    producer_epoch: int


@dataclass
class Case:
    id: str
    api_key: int
    version: int
    field: str  # the request's list of resources
    body: Callable[[Setup], dict[str, Any]]
    answers: Callable[[Msg], list[Any]]  # what the response names, with its codes
    expected: Callable[[Setup], list[Any]] = lambda s: []  # noqa: E731
    top: int | None = None  # the top-level error_code, where the response has one


def login(broker: MockBroker, user: str, password: str) -> RawClient:
    c = RawClient(broker.host, broker.port)
    assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == NONE
    assert c.request(36, 2, {"auth_bytes": f"\0{user}\0{password}".encode()}).error_code == NONE
    return c


def make_state(broker: MockBroker) -> Setup:
    """Topics with records and a config, committed offsets, a live KIP-848 group, an open transaction,
    all made by the admin over the wire (ACLs on everything), and nothing granted to mallory."""
    admin = f"User:{ADMIN[0]}"
    broker.add_acl(admin, "ALL", topic="*")
    broker.add_acl(admin, "ALL", group="*")
    broker.add_acl(admin, "ALL", transactional_id="*")
    broker.add_acl(admin, "ALL", cluster=True)
    broker.add_acl("User:someone-else", "READ", topic="orders")
    orders = broker.create_topic("orders", partitions=2)
    secret = broker.create_topic("secret", config={"retention.ms": "123456"})
    with login(broker, *ADMIN) as c:
        for name in ("orders", "secret"):
            resp = c.request(0, 9, produce_body(name))
            assert resp.responses[0].partition_responses[0].error_code == NONE
        committed = c.request(8, 8, {"group_id": "billing", "generation_id_or_member_epoch": -1, "member_id": "",
                                     "topics": [{"name": "orders", "partitions": [
                                         {"partition_index": 0, "committed_offset": 1}]}]})
        assert committed.topics[0].partitions[0].error_code == NONE
        joined = c.request(68, 0, {"group_id": "live", "member_id": "m1", "member_epoch": 0,
                                   "rebalance_timeout_ms": 10000, "subscribed_topic_names": ["orders"],
                                   "topic_partitions": []})
        assert joined.error_code == NONE
        init = c.request(22, 4, {"transactional_id": "tx-1", "transaction_timeout_ms": 60000})
        assert init.error_code == NONE
        added = c.request(24, 3, {"v3_and_below_transactional_id": "tx-1", "v3_and_below_producer_id":
                                  init.producer_id, "v3_and_below_producer_epoch": init.producer_epoch,
                                  "v3_and_below_topics": [{"name": "orders", "partitions": [1]}]})
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == NONE
    return Setup(broker.node_id, orders.topic_id, secret.topic_id, init.producer_id, init.producer_epoch)


def produce_body(name: str, *, topic_id: uuid.UUID | None = None, transactional_id: str | None = None,
                 ) -> dict[str, Any]:
    topic: dict[str, Any] = {"name": name, "partition_data": [
        {"index": 0, "records": build_batch([RecordInput(b"k", b"v")])}]}
    if topic_id is not None:
        topic["topic_id"] = topic_id
    return {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000, "topic_data": [topic]}


# -- reading answers ---------------------------------------------------------------------------------

_INDEX = ("partition_index", "index", "partition", "partition_id")
_CODE = ("error_code", "partition_error_code")


def _first(m: Msg, keys: tuple[str, ...]) -> Any:
    return next(m[k] for k in keys if k in m)


def per_partition(topics: str, name: str, partitions: str) -> Callable[[Msg], list[tuple[Any, ...]]]:
    """(topic, partition, code) for every partition of every topic of the response list `topics`."""
    def read(resp: Msg) -> list[tuple[Any, ...]]:
        return [(t[name], _first(p, _INDEX), _first(p, _CODE)) for t in resp[topics] for p in t[partitions]]
    return read


def share_key(topic_id: uuid.UUID) -> str:
    """A topic id as Kafka's Uuid.toString writes it (a share coordinator key's middle part)."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def per_entry(entries: str, name: str, *extra: str) -> Callable[[Msg], list[tuple[Any, ...]]]:
    """(name, [extra fields...], code) for every entry of the response list `entries`."""
    def read(resp: Msg) -> list[tuple[Any, ...]]:
        return [(e[name], *(e[x] for x in extra), e.error_code) for e in resp[entries]]
    return read


def parts(names: list[str], code: int) -> Callable[[Setup], list[tuple[Any, ...]]]:
    return lambda s: [(n, 0, code) for n in names]


def each(names: list[str], code: int) -> Callable[[Setup], list[tuple[Any, ...]]]:
    return lambda s: [(n, code) for n in names]



# -- the table ---------------------------------------------------------------------------------------

UNKNOWN_ID = uuid.UUID("00000000-0000-0000-0000-00000000abcd")
FETCH_PART = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20, "current_leader_epoch": -1,
              "log_start_offset": -1}
FETCH = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
         "session_id": 0, "session_epoch": -1, "rack_id": ""}
COMMIT_TOPICS = [{"name": n, "partitions": [{"partition_index": 0, "committed_offset": 0}]} for n in T]
DESCRIBE_CONFIGS = [(2, "orders", TOPIC), (2, "absent", TOPIC), (4, "", CLUSTER), (4, "{node}", CLUSTER),
                    (8, "{node}", CLUSTER), (16, "metrics", CLUSTER), (32, "billing", GROUP)]
ALTER_CONFIGS = [(2, "orders", "retention.ms", TOPIC), (2, "absent", "retention.ms", TOPIC),
                 (4, "", "log.retention.ms", CLUSTER), (4, "{node}", "log.retention.ms", CLUSTER)]
INCREMENTAL_CONFIGS = [*ALTER_CONFIGS, (8, "{node}", "kafka.server", CLUSTER),
                       (16, "metrics", "interval.ms", CLUSTER), (32, "billing", "consumer.session.timeout.ms", GROUP)]
SCRAM_256 = 1
JOIN = {"session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer",
        "group_instance_id": None, "reason": None, "protocols": [{"name": "range", "metadata": b""}]}


def _configs(rows: list[tuple[Any, ...]], s: Setup, with_values: bool = False, op: bool = False) -> list[Any]:
    out = []
    for rtype, name, *rest in rows:
        entry: dict[str, Any] = {"resource_type": rtype, "resource_name": name.format(node=s.node_id)}
        if with_values:
            entry["configs"] = [{"name": rest[0], "value": "1000", **({"config_operation": 0} if op else {})}]
        out.append(entry)
    return out


def _by_resource(entries: str) -> Callable[[Msg], list[tuple[Any, ...]]]:
    return lambda r: [(e.resource_type, e.resource_name, e.error_code) for e in r[entries]]


def _acl_creation(rtype: int, name: str) -> dict[str, Any]:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": 3, "principal": "User:mallory",
            "host": "*", "operation": 2, "permission_type": 3}


def _acl_filter(rtype: int, name: str | None) -> dict[str, Any]:
    return {"resource_type_filter": rtype, "resource_name_filter": name, "pattern_type_filter": 1,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}


def _txn_commit(transactional_id: str, group: str) -> Callable[[Setup], dict[str, Any]]:
    return lambda s: {"transactional_id": transactional_id, "group_id": group, "producer_id": s.producer_id,
                      "producer_epoch": s.producer_epoch, "generation_id": -1, "member_id": "",
                      "group_instance_id": None, "topics": COMMIT_TOPICS}


CASES: list[Case] = [
    # Produce: WRITE on each topic; a transactional id first needs WRITE on the id.
    Case("produce", 0, 9, "topic_data",
         lambda s: {**produce_body("orders"), "topic_data": [produce_body(n)["topic_data"][0] for n in T]},
         per_partition("responses", "name", "partition_responses"), parts(T, TOPIC)),
    Case("produce-transactional", 0, 9, "topic_data",
         lambda s: {**produce_body("orders", transactional_id="tx-1"),
                    "topic_data": [produce_body(n)["topic_data"][0] for n in T]},
         per_partition("responses", "name", "partition_responses"), parts(T, TXN)),
    Case("produce-by-id", 0, 13, "topic_data",
         lambda s: {**produce_body("orders"), "topic_data": [
             produce_body("", topic_id=i)["topic_data"][0] for i in (s.orders_id, s.secret_id, UNKNOWN_ID)]},
         per_partition("responses", "topic_id", "partition_responses"),
         lambda s: [(s.orders_id, 0, TOPIC), (s.secret_id, 0, TOPIC), (UNKNOWN_ID, 0, ErrorCode.UNKNOWN_TOPIC_ID)]),
    # Fetch: READ on each topic; forgotten topics of a sessionless fetch are ignored.
    Case("fetch", 1, 12, "topics",
         lambda s: {**FETCH, "topics": [{"topic": n, "partitions": [FETCH_PART]} for n in T],
                    "forgotten_topics_data": [{"topic": "secret", "partitions": [0]}]},
         per_partition("responses", "topic", "partitions"), parts(T, TOPIC), top=NONE),
    Case("fetch-forgotten", 1, 12, "forgotten_topics_data",
         lambda s: {**FETCH, "topics": [], "forgotten_topics_data": [{"topic": n, "partitions": [0]} for n in T]},
         per_partition("responses", "topic", "partitions"), top=NONE),
    Case("fetch-by-id", 1, 17, "topics",
         lambda s: {**FETCH, "topics": [{"topic_id": i, "partitions": [FETCH_PART]}
                                        for i in (s.orders_id, s.secret_id, UNKNOWN_ID)]},
         per_partition("responses", "topic_id", "partitions"),
         lambda s: [(s.orders_id, 0, TOPIC), (s.secret_id, 0, TOPIC), (UNKNOWN_ID, 0, ErrorCode.UNKNOWN_TOPIC_ID)],
         top=NONE),
    Case("list-offsets", 2, 7, "topics",
         lambda s: {"replica_id": -1, "isolation_level": 0, "topics": [
             {"name": n, "partitions": [{"partition_index": 0, "timestamp": -1}]} for n in T]},
         per_partition("topics", "name", "partitions"), parts(T, TOPIC)),
    # Metadata: named topics refused (and never auto-created); null and v0's [] mean every topic.
    Case("metadata-named", 3, 12, "topics",
         lambda s: {"topics": [{"name": n} for n in T], "allow_auto_topic_creation": True},
         per_entry("topics", "name"), each(T, TOPIC)),
    Case("metadata-null", 3, 12, "topics", lambda s: {"topics": None}, per_entry("topics", "name")),
    Case("metadata-empty", 3, 12, "topics", lambda s: {"topics": []}, per_entry("topics", "name")),
    Case("metadata-v0-empty-means-all", 3, 0, "topics", lambda s: {"topics": []}, per_entry("topics", "name")),
    Case("metadata-v0-named", 3, 0, "topics", lambda s: {"topics": [{"name": n} for n in T]},
         per_entry("topics", "name"), each(T, TOPIC)),
    # Offsets of groups: READ on the group first.
    Case("offset-commit", 8, 8, "topics",
         lambda s: {"group_id": "billing", "generation_id_or_member_epoch": -1, "member_id": "",
                    "topics": COMMIT_TOPICS}, per_partition("topics", "name", "partitions"), parts(T, GROUP)),
    Case("offset-commit-absent-group", 8, 8, "topics",
         lambda s: {"group_id": "ghost", "generation_id_or_member_epoch": -1, "member_id": "",
                    "topics": COMMIT_TOPICS}, per_partition("topics", "name", "partitions"), parts(T, GROUP)),
    Case("offset-fetch-v1", 9, 1, "topics",
         lambda s: {"group_id": "billing", "topics": [{"name": n, "partition_indexes": [0]} for n in T]},
         per_partition("topics", "name", "partitions"), parts(T, GROUP)),
    Case("offset-fetch-v7", 9, 7, "topics",
         lambda s: {"group_id": "billing", "topics": [{"name": n, "partition_indexes": [0]} for n in T]},
         per_partition("topics", "name", "partitions"), top=GROUP),
    Case("offset-fetch-v7-all-topics", 9, 7, "topics", lambda s: {"group_id": "billing", "topics": None},
         per_partition("topics", "name", "partitions"), top=GROUP),
    Case("offset-fetch-groups", 9, 8, "groups",
         lambda s: {"groups": [{"group_id": g, "topics": None} for g in G]},
         lambda r: [(g.group_id, g.error_code, len(g.topics)) for g in r.groups],
         lambda s: [(g, GROUP, 0) for g in G]),
    Case("find-coordinator-groups", 10, 4, "coordinator_keys",
         lambda s: {"key_type": 0, "coordinator_keys": G}, per_entry("coordinators", "key", "node_id"),
         lambda s: [(g, -1, GROUP) for g in G]),
    Case("find-coordinator-transactions", 10, 4, "coordinator_keys",
         lambda s: {"key_type": 1, "coordinator_keys": X}, per_entry("coordinators", "key", "node_id"),
         lambda s: [(x, -1, TXN) for x in X]),
    # Membership: the group is refused as a whole, nothing of it answered.
    Case("join-group", 11, 9, "protocols", lambda s: {"group_id": "billing", **JOIN},
         lambda r: [(r.member_id, r.leader, len(r.members))], lambda s: [("", "", 0)], top=GROUP),
    Case("leave-group", 13, 5, "members",
         lambda s: {"group_id": "live", "members": [{"member_id": "m1", "group_instance_id": None}]},
         lambda r: [m.member_id for m in r.members], top=GROUP),
    Case("sync-group", 14, 5, "assignments",
         lambda s: {"group_id": "billing", "generation_id": 1, "member_id": "m", "protocol_type": "consumer",
                    "protocol_name": "range", "assignments": [{"member_id": "m", "assignment": b"x"}]},
         lambda r: [bytes(r.assignment)], lambda s: [b""], top=GROUP),
    Case("describe-groups", 15, 5, "groups", lambda s: {"groups": G, "include_authorized_operations": True},
         lambda r: [(g.group_id, len(g.members), g.error_code) for g in r.groups],
         lambda s: [(g, 0, GROUP) for g in G]),
    Case("list-groups", 16, 5, "states_filter", lambda s: {"states_filter": [], "types_filter": []},
         per_entry("groups", "group_id"), top=NONE),
    Case("list-groups-filtered", 16, 5, "types_filter",
         lambda s: {"states_filter": ["Empty", "Stable"], "types_filter": ["classic", "consumer"]},
         per_entry("groups", "group_id"), top=NONE),
    # Topic administration: CREATE / DELETE / ALTER on each topic.
    Case("create-topics", 19, 7, "topics",
         lambda s: {"topics": [{"name": n, "num_partitions": 1, "replication_factor": 1} for n in T],
                    "timeout_ms": 1000}, per_entry("topics", "name", "error_message"),
         lambda s: [(n, "Authorization failed.", TOPIC) for n in T]),
    Case("delete-topics-v5", 20, 5, "topic_names", lambda s: {"topic_names": T, "timeout_ms": 1000},
         per_entry("responses", "name"), each(T, TOPIC)),
    Case("delete-topics-by-id", 20, 6, "topics",
         lambda s: {"topics": [{"name": None, "topic_id": i} for i in (s.orders_id, s.secret_id, UNKNOWN_ID)],
                    "timeout_ms": 1000}, per_entry("responses", "topic_id"),
         lambda s: [(s.orders_id, TOPIC), (s.secret_id, TOPIC), (UNKNOWN_ID, ErrorCode.UNKNOWN_TOPIC_ID)]),
    Case("delete-records", 21, 2, "topics",
         lambda s: {"topics": [{"name": n, "partitions": [{"partition_index": 0, "offset": 1}]} for n in T],
                    "timeout_ms": 1000}, per_partition("topics", "name", "partitions"), parts(T, TOPIC)),
    Case("offset-for-leader-epoch", 23, 4, "topics",
         lambda s: {"replica_id": -1, "topics": [{"topic": n, "partitions": [
             {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]} for n in T]},
         per_partition("topics", "topic", "partitions"), parts(T, TOPIC)),
    # Transactions: WRITE on the transactional id first.
    Case("add-partitions-to-txn-v3", 24, 3, "v3_and_below_topics",
         lambda s: {"v3_and_below_transactional_id": "tx-1", "v3_and_below_producer_id": s.producer_id,
                    "v3_and_below_producer_epoch": s.producer_epoch,
                    "v3_and_below_topics": [{"name": n, "partitions": [0]} for n in T]},
         per_partition("results_by_topic_v3_and_below", "name", "results_by_partition"), parts(T, TXN)),
    Case("add-partitions-to-txn-v4", 24, 4, "transactions",
         lambda s: {"transactions": [{"transactional_id": x, "producer_id": s.producer_id,
                                      "producer_epoch": s.producer_epoch, "verify_only": False,
                                      "topics": [{"name": n, "partitions": [0]} for n in T]} for x in X]},
         per_entry("results_by_transaction", "transactional_id"), top=CLUSTER),
    Case("txn-offset-commit", 28, 3, "topics", _txn_commit("tx-1", "billing"),
         per_partition("topics", "name", "partitions"), parts(T, TXN)),
    Case("txn-offset-commit-absent-id", 28, 3, "topics", _txn_commit("tx-ghost", "ghost"),
         per_partition("topics", "name", "partitions"), parts(T, TXN)),
    # ACLs: ALTER on the cluster.
    Case("create-acls", 30, 3, "creations",
         lambda s: {"creations": [_acl_creation(2, "secret"), _acl_creation(4, "kafka-cluster"),
                                  _acl_creation(3, "billing")]},
         lambda r: [x.error_code for x in r.results], lambda s: [CLUSTER] * 3),
    Case("delete-acls", 31, 3, "filters",
         lambda s: {"filters": [_acl_filter(1, None), _acl_filter(2, "orders")]},
         lambda r: [(x.error_code, len(x.matching_acls)) for x in r.filter_results],
         lambda s: [(CLUSTER, 0)] * 2),
    # Configs: DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic, the group, or the cluster for the rest.
    Case("describe-configs", 32, 4, "resources",
         lambda s: {"resources": _configs(DESCRIBE_CONFIGS, s), "include_synonyms": True,
                    "include_documentation": True},
         lambda r: [(x.resource_type, x.resource_name, len(x.configs), x.error_code) for x in r.results],
         lambda s: [(t, n.format(node=s.node_id), 0, c) for t, n, c in DESCRIBE_CONFIGS]),
    Case("alter-configs", 33, 2, "resources",
         lambda s: {"resources": _configs(ALTER_CONFIGS, s, with_values=True), "validate_only": False},
         _by_resource("responses"), lambda s: [(t, n.format(node=s.node_id), c) for t, n, _k, c in ALTER_CONFIGS]),
    Case("incremental-alter-configs", 44, 1, "resources",
         lambda s: {"resources": _configs(INCREMENTAL_CONFIGS, s, with_values=True, op=True),
                    "validate_only": False}, _by_resource("responses"),
         lambda s: [(t, n.format(node=s.node_id), c) for t, n, _k, c in INCREMENTAL_CONFIGS]),
    # Cluster-wide reads and changes: DESCRIBE / ALTER on the cluster; null lists mean "everything".
    Case("describe-log-dirs", 35, 4, "topics",
         lambda s: {"topics": [{"topic": n, "partitions": [0]} for n in T]}, per_entry("results", "log_dir"),
         top=CLUSTER),
    Case("describe-log-dirs-all", 35, 4, "topics", lambda s: {"topics": None}, per_entry("results", "log_dir"),
         top=CLUSTER),
    Case("create-partitions", 37, 3, "topics",
         lambda s: {"topics": [{"name": n, "count": 5, "assignments": None} for n in T], "timeout_ms": 1000,
                    "validate_only": False}, per_entry("results", "name"), each(T, TOPIC)),
    Case("delete-groups", 42, 2, "groups_names", lambda s: {"groups_names": G},
         per_entry("results", "group_id"), each(G, GROUP)),
    Case("elect-leaders", 43, 2, "topic_partitions",
         lambda s: {"election_type": 0, "topic_partitions": [{"topic": n, "partitions": [0]} for n in T],
                    "timeout_ms": 1000},
         per_partition("replica_election_results", "topic", "partition_result"), parts(T, CLUSTER), top=CLUSTER),
    Case("elect-leaders-all", 43, 2, "topic_partitions",
         lambda s: {"election_type": 0, "topic_partitions": None, "timeout_ms": 1000},
         per_partition("replica_election_results", "topic", "partition_result"), top=CLUSTER),
    Case("alter-partition-reassignments", 45, 0, "topics",
         lambda s: {"timeout_ms": 1000, "topics": [{"name": n, "partitions": [
             {"partition_index": 0, "replicas": [s.node_id]}]} for n in T]},
         per_partition("responses", "name", "partitions"), parts(T, CLUSTER), top=CLUSTER),
    Case("list-partition-reassignments", 46, 0, "topics",
         lambda s: {"timeout_ms": 1000, "topics": [{"name": n, "partition_indexes": [0]} for n in T]},
         lambda r: [(t.name, p.partition_index, len(p.replicas)) for t in r.topics for p in t.partitions],
         lambda s: [(n, 0, 0) for n in T], top=CLUSTER),
    Case("list-partition-reassignments-all", 46, 0, "topics", lambda s: {"timeout_ms": 1000, "topics": None},
         per_partition("topics", "name", "partitions"), top=CLUSTER),
    Case("offset-delete", 47, 0, "topics",
         lambda s: {"group_id": "billing", "topics": [{"name": n, "partitions": [{"partition_index": 0}]}
                                                      for n in T]},
         per_partition("topics", "name", "partitions"), top=GROUP),
    Case("describe-user-scram-credentials", 50, 0, "users",
         lambda s: {"users": [{"name": u} for u in ("admin", "mallory", "nobody")]},
         lambda r: [(x.user, len(x.credential_infos)) for x in r.results], top=CLUSTER),
    Case("describe-user-scram-credentials-all", 50, 0, "users", lambda s: {"users": None},
         lambda r: [(x.user, len(x.credential_infos)) for x in r.results], top=CLUSTER),
    Case("describe-client-quotas", 48, 1, "components",
         lambda s: {"components": [{"entity_type": "user", "match_type": 2, "match": None}], "strict": False},
         lambda r: [r.entries], lambda s: [None], top=CLUSTER),
    Case("alter-client-quotas", 49, 1, "entries",
         lambda s: {"entries": [{"entity": [{"entity_type": "user", "entity_name": n}],
                                 "ops": [{"key": "producer_byte_rate", "value": 1.0, "remove": False}]}
                                for n in ("mallory", None)], "validate_only": False},
         lambda r: [(tuple((x.entity_type, x.entity_name) for x in e.entity), e.error_code) for e in r.entries],
         lambda s: [((("user", n),), CLUSTER) for n in ("mallory", None)]),
    Case("alter-user-scram-credentials", 51, 0, "upsertions",
         lambda s: {"deletions": [{"name": "admin", "mechanism": SCRAM_256}],
                    "upsertions": [{"name": "mallory", "mechanism": SCRAM_256, "iterations": 8192,
                                    "salt": b"salt", "salted_password": b"x" * 32}]},
         per_entry("results", "user"), each(["admin", "mallory"], CLUSTER)),
    Case("alter-user-scram-credentials-deletions", 51, 0, "deletions",
         lambda s: {"deletions": [{"name": u, "mechanism": SCRAM_256} for u in ("admin", "nobody")],
                    "upsertions": []},
         per_entry("results", "user"), each(["admin", "nobody"], CLUSTER)),
    Case("describe-producers", 61, 0, "topics",
         lambda s: {"topics": [{"name": n, "partition_indexes": [0]} for n in T]},
         per_partition("topics", "name", "partitions"), parts(T, TOPIC)),
    Case("describe-transactions", 65, 0, "transactional_ids", lambda s: {"transactional_ids": X},
         lambda r: [(x.transactional_id, x.producer_id, x.error_code) for x in r.transaction_states],
         lambda s: [(x, -1, TXN) for x in X]),
    Case("list-transactions", 66, 1, "state_filters",
         lambda s: {"state_filters": [], "producer_id_filters": [], "duration_filter": -1},
         per_entry("transaction_states", "transactional_id"), top=NONE),
    Case("list-transactions-filtered", 66, 1, "producer_id_filters",
         lambda s: {"state_filters": ["Ongoing"], "producer_id_filters": [s.producer_id], "duration_filter": -1},
         per_entry("transaction_states", "transactional_id"), top=NONE),
    Case("consumer-group-heartbeat", 68, 0, "subscribed_topic_names",
         lambda s: {"group_id": "live", "member_id": "m2", "member_epoch": 0, "rebalance_timeout_ms": 10000,
                    "subscribed_topic_names": T, "topic_partitions": []},
         lambda r: [(r.member_id, r.assignment)], lambda s: [(None, None)], top=GROUP),
    Case("consumer-group-heartbeat-partitions", 68, 0, "topic_partitions",
         lambda s: {"group_id": "live", "member_id": "m1", "member_epoch": 1, "rebalance_timeout_ms": 10000,
                    "subscribed_topic_names": None, "topic_partitions": [
                        {"topic_id": s.orders_id, "partitions": [0, 1]}]},
         lambda r: [(r.member_id, r.assignment)], lambda s: [(None, None)], top=GROUP),
    Case("consumer-group-describe", 69, 0, "group_ids",
         lambda s: {"group_ids": G, "include_authorized_operations": True},
         lambda r: [(g.group_id, len(g.members), g.error_code) for g in r.groups],
         lambda s: [(g, 0, GROUP) for g in G]),
    # Share groups (KIP-932): READ on the group first (the top-level code), then the topics.
    Case("share-group-heartbeat", 76, 1, "subscribed_topic_names",
         lambda s: {"group_id": "queue", "member_id": "m1", "member_epoch": 0, "rack_id": None,
                    "subscribed_topic_names": T},
         lambda r: [(r.member_id, r.assignment)], lambda s: [(None, None)], top=GROUP),
    Case("share-group-describe", 77, 1, "group_ids",
         lambda s: {"group_ids": G, "include_authorized_operations": True},
         lambda r: [(g.group_id, len(g.members), g.error_code) for g in r.groups],
         lambda s: [(g, 0, GROUP) for g in G]),
    Case("share-fetch", 78, 1, "topics",
         lambda s: {"group_id": "queue", "member_id": "m1", "share_session_epoch": 0, "max_wait_ms": 0,
                    "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10,
                    "topics": [{"topic_id": s.orders_id, "partitions": [{"partition_index": 0,
                                                                          "acknowledgement_batches": []}]}],
                    "forgotten_topics_data": []},
         per_entry("responses", "topic_id"), top=GROUP),
    Case("share-fetch-forgotten", 78, 1, "forgotten_topics_data",
         lambda s: {"group_id": "queue", "member_id": "m1", "share_session_epoch": 1, "max_wait_ms": 0,
                    "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "topics": [],
                    "forgotten_topics_data": [{"topic_id": s.orders_id, "partitions": [0]}]},
         per_entry("responses", "topic_id"), top=GROUP),
    Case("share-acknowledge", 79, 1, "topics",
         lambda s: {"group_id": "queue", "member_id": "m1", "share_session_epoch": 1,
                    "topics": [{"topic_id": s.orders_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                        {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]},
         per_entry("responses", "topic_id"), top=GROUP),
    Case("describe-share-group-offsets", 90, 1, "groups",
         lambda s: {"groups": [{"group_id": g, "topics": None} for g in G]},
         lambda r: [(g.group_id, len(g.topics), g.error_code) for g in r.groups],
         lambda s: [(g, 0, GROUP) for g in G]),
    Case("alter-share-group-offsets", 91, 0, "topics",
         lambda s: {"group_id": "queue", "topics": [{"topic_name": n, "partitions": [
             {"partition_index": 0, "start_offset": 0}]} for n in T]},
         lambda r: [t.topic_name for t in r.responses], top=GROUP),
    Case("delete-share-group-offsets", 92, 0, "topics",
         lambda s: {"group_id": "queue", "topics": [{"topic_name": n} for n in T]},
         lambda r: [t.topic_name for t in r.responses], top=GROUP),
    # The share coordinator's APIs (broker-to-broker): CLUSTER_ACTION, every partition named refused.
    *[Case(f"share-state-{key}", key, version, "topics",
           lambda s, fields=fields: {"group_id": "queue", "topics": [{"topic_id": t, "partitions": [
               {"partition": 0, **fields}]} for t in (s.orders_id, s.secret_id)]},
           lambda r: [(t.topic_id, p.partition, p.error_code) for t in r.results for p in t.partitions],
           lambda s: [(s.orders_id, 0, CLUSTER), (s.secret_id, 0, CLUSTER)])
      for key, version, fields in (
          (83, 0, {"state_epoch": 0, "start_offset": 0}), (84, 0, {"leader_epoch": 0}),
          (85, 1, {"state_epoch": 0, "leader_epoch": 0, "start_offset": 0, "state_batches": []}),
          (86, 0, {}), (87, 1, {"leader_epoch": 0}))],
    Case("find-coordinator-share", 10, 6, "coordinator_keys",
         lambda s: {"key_type": 2, "coordinator_keys": [f"queue:{share_key(s.orders_id)}:0", "bad"]},
         per_entry("coordinators", "key", "node_id"),
         lambda s: [(f"queue:{share_key(s.orders_id)}:0", -1, CLUSTER), ("bad", -1, CLUSTER)]),
    Case("describe-topic-partitions", 75, 0, "topics",
         lambda s: {"topics": [{"name": n} for n in T], "response_partition_limit": 100, "cursor": None},
         lambda r: [(t.name, len(t.partitions), t.error_code) for t in r.topics],
         lambda s: [(n, 0, TOPIC) for n in T]),
    Case("describe-topic-partitions-all", 75, 0, "topics",
         lambda s: {"topics": [], "response_partition_limit": 100, "cursor": None},
         per_entry("topics", "name")),
]
