"""RemoteBroker: MockBroker's test API over Kafka's protocol, against any Kafka-compatible cluster.

Every answer comes from Kafka requests sent with this project's protocol package (mockbroker/remote/client.py):
topics through CreateTopics / DeleteTopics / Metadata, records and batches through a raw READ_UNCOMMITTED
Fetch from each partition's leader (the stored batches as the cluster keeps them, decoded by
mockbroker/protocol/records into inspection.py's RecordInfo and BatchInfo), offsets through ListOffsets,
producers through DescribeProducers; groups and transactions are in mockbroker/remote/coordinators.py.
What a cluster cannot do raises NotOnRemoteTarget (mockbroker/remote/refused.py). With a prefix, every call
takes and gives the test's names and the cluster holds them under the prefix (mockbroker/remote/naming.py).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.inspection import BatchInfo, RecordInfo, view_batch_info, view_record_info
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.records.batch import iter_batches
from mockbroker.remote import coordinators, teardown
from mockbroker.remote.access import RemoteAccess
from mockbroker.remote.client import DEFAULT_TIMEOUT_S, ClusterClient, check
from mockbroker.remote.naming import Isolation
from mockbroker.remote.proxy import KafkaProxy
from mockbroker.remote.refused import EMBEDDED_ONLY, refusing
from mockbroker.remote.security import client_security
from mockbroker.remote.waits import RemoteWaits
from mockbroker.security.acls import AclBinding
from mockbroker.state.groups.common import GroupSummary
from mockbroker.state.txn.metadata import TransactionInfo

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
EARLIEST = -2
LATEST = -1
FETCH_BYTES = 8 << 20


@dataclass(frozen=True)
class RemoteTopic:
    """What create_topic made on the remote target."""

    name: str  # the test's name
    topic_id: str
    partitions: int
    real_name: str  # the cluster's name (the test's prefix and name, on an isolated target)


class RemoteBroker(RemoteWaits):
    """MockBroker's inspection API answered by a real cluster at bootstrap_servers ("host:port,...").

    prefix: isolate a test on a shared cluster (mockbroker/remote/naming.py): its topics, groups and
    transactional ids are named prefix + the test's name there, every call maps names both ways and lists
    only the test's own, and cleanup() deletes them. "" (the default): names are the cluster's own.
    config: the connection's security in librdkafka's or Java's property names (security.protocol,
    ssl.ca.location, sasl.mechanism, sasl.username, sasl.password...: mockbroker/remote/security.py).
    """

    def __init__(self, bootstrap_servers: str, *, client_id: str = "mockbroker-remote",
                 timeout: float = DEFAULT_TIMEOUT_S, prefix: str = "", config: dict[str, str] | None = None,
                 proxy: bool = False) -> None:
        self._config = dict(config or {})
        self._client = ClusterClient(bootstrap_servers, client_id, timeout, client_security(self._config))
        self._timeout = timeout
        self._names = Isolation(prefix)
        # proxy=True: the fault proxy (remote/proxy.py) serves inject/clear_faults/received (refused.PROXIED)
        self.proxy: KafkaProxy | None = (KafkaProxy(bootstrap_servers, timeout=timeout, config=self._config).start()
                                         if proxy else None)  # TLS and SASL as the cluster's (remote/proxy_security.py)
        if self.proxy is not None:
            self.proxy.map_topic = self._names.real  # inject(topic="orders") means the test's topic
        # ACLs and SCRAM users (remote/access.py): add_acl, remove_acls, acls, add_user, remove_user
        self.access = RemoteAccess(self._client, self._names.real, self._names.test_name)

    @property
    def client_config(self) -> dict[str, str]:
        """bootstrap.servers and the settings the target was given (security...), for the test's own clients."""
        if self.proxy is not None:  # the proxy's CA in place of the cluster's, the same SASL settings
            return self.proxy.client_settings()
        return {"bootstrap.servers": self.bootstrap_servers, **self._config}

    @property
    def prefix(self) -> str:
        """The prefix of this test's names on the cluster ("" when the target does not isolate)."""
        return self._names.prefix

    def topic(self, name: str) -> str:
        """The cluster's name of the test's topic `name`, for the test's own clients (prefixed when isolated)."""
        return self._names.real(name)

    def group(self, name: str) -> str:
        """The cluster's name of the test's group id `name` (prefixed when isolated)."""
        return self._names.real(name)

    def transactional_id(self, name: str) -> str:
        """The cluster's name of the test's transactional id `name` (prefixed when isolated)."""
        return self._names.real(name)

    # -- ACLs and SCRAM users: remote/access.py (MockBroker's arguments) ----------------------------------
    def add_acl(self, principal: str, operation: str | list[str], **resource: Any) -> list[AclBinding]:
        """CreateAcls, as MockBroker.add_acl (RemoteAccess.add_acl)."""
        return self.access.add_acl(principal, operation, **resource)

    def remove_acls(self, principal: str | None = None, operation: str = "ANY", **resource: Any) -> list[AclBinding]:
        """DeleteAcls, as MockBroker.remove_acls (RemoteAccess.remove_acls)."""
        return self.access.remove_acls(principal, operation, **resource)

    def acls(self) -> list[AclBinding]:
        """DescribeAcls: every binding on the cluster (RemoteAccess.acls)."""
        return self.access.acls()

    def add_user(self, name: str, password: str, mechanism: str | list[str] | None = None,
                 iterations: int = 4096) -> None:
        """AlterUserScramCredentials, SCRAM only (RemoteAccess.add_user)."""
        self.access.add_user(name, password, mechanism, iterations)

    def remove_user(self, name: str) -> None:
        """AlterUserScramCredentials deleting the user's credentials (RemoteAccess.remove_user)."""
        self.access.remove_user(name)

    def cleanup(self) -> list[str]:
        """Delete the test's topics (DeleteTopics) and groups (DeleteGroups), and remove the ACLs and users it
        added, best effort; what could not be deleted, one line each. Nothing when the target does not isolate
        (every name would be the test's)."""
        if not self._names.prefix:
            return []
        return self.access.remove_created() + teardown.delete_own(self._client, self._names, self._timeout)

    @property
    def bootstrap_servers(self) -> str:
        """The bootstrap servers clients use: the fault proxy's when it runs, else those the target was given."""
        return self.proxy.bootstrap_servers if self.proxy is not None else self._client.bootstrap_servers

    def close(self) -> None:
        """Close every connection to the cluster (and stop the fault proxy)."""
        self._client.close()
        if self.proxy is not None:
            self.proxy.stop()

    def __enter__(self) -> RemoteBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteBroker({self.bootstrap_servers!r})"

    # -- topics ----------------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, config: dict[str, Any] | None = None,
                     replication_factor: int = -1, assignments: list[list[int]] | None = None) -> RemoteTopic:
        """CreateTopics to the controller (KafkaError if refused); returns once every partition has a leader."""
        test_name, name = self._names.test_name(name), self._names.real(name)
        self._client.metadata([])
        node = self._client.controller_id if self._client.controller_id >= 0 else None
        conn = self._client.node(node) if node is not None else self._client.any()
        topic = {"name": name, "num_partitions": -1 if assignments else partitions,
                 "replication_factor": -1 if assignments else replication_factor,
                 "assignments": [{"partition_index": i, "broker_ids": ids} for i, ids in enumerate(assignments or [])],
                 "configs": [{"name": k, "value": None if v is None else str(v)} for k, v in (config or {}).items()]}
        answer = conn.request(ApiKey.CREATE_TOPICS, {"topics": [topic], "timeout_ms": int(self._timeout * 1000),
                                                     "validate_only": False}, newest=7, oldest=2)
        made = answer.topics[0]
        check(made.error_code, made.get("error_message") or f"CreateTopics({name!r})")
        deadline = time.monotonic() + self._timeout  # Kafka spreads new metadata to the brokers a moment later
        while True:
            answers = [self._client.node(n).request(ApiKey.METADATA, {
                "topics": [{"name": name}], "allow_auto_topic_creation": False}, newest=12, oldest=1).topics[0]
                for n in sorted(self._client.nodes)]
            if all(found.error_code == ErrorCode.NONE and found.partitions and all(
                    p.leader_id >= 0 for p in found.partitions) for found in answers):
                return RemoteTopic(test_name, str(answers[0].topic_id), len(answers[0].partitions), name)
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name!r} was created but not every node knows its leaders "
                                   f"after {self._timeout} s")
            time.sleep(0.05)

    def delete_topic(self, name: str) -> None:
        """DeleteTopics to the controller (KafkaError if refused)."""
        name = self._names.real(name)
        self._client.metadata([])
        conn = self._client.node(self._client.controller_id) if self._client.controller_id >= 0 else self._client.any()
        answer = conn.request(ApiKey.DELETE_TOPICS, {"topics": [{"name": name}], "topic_names": [name],
                                                     "timeout_ms": int(self._timeout * 1000)}, newest=6, oldest=1)
        check(answer.responses[0].error_code, f"DeleteTopics({name!r})")

    def topics(self) -> list[str]:
        """Every topic's name (Metadata), internal ones included, sorted; on an isolated target the test's own
        topics only, by the test's names."""
        return sorted(self._names.test_name(t.name) for t in self._client.metadata(None).topics
                      if self._names.own(t.name))

    def _leaders(self, topic: str) -> dict[int, int]:
        """{partition: leader node} of a topic (its cluster's name; KeyError if the cluster has no such topic)."""
        found = self._client.metadata([topic]).topics[0]
        if found.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            raise KeyError(f"no topic {topic!r}")
        check(found.error_code, f"Metadata({topic!r})")
        return {p.partition_index: p.leader_id for p in sorted(found.partitions, key=lambda p: p.partition_index)}

    def _leader(self, topic: str, partition: int) -> int:
        leader = self._leaders(topic).get(partition)
        if leader is None:
            raise KeyError(f"no partition {topic}-{partition}")
        return leader

    # -- the log ---------------------------------------------------------------------------------
    def _fetch(self, topic: str, partition: int, leader: int, offset: int, isolation: int) -> Msg | None:
        """One partition's Fetch answer from `offset` (called below the high watermark, so data is there
        and min_bytes 1 does not wait); None when the answer leaves the partition out."""
        answer = self._client.node(leader).request(ApiKey.FETCH, {
            "replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": FETCH_BYTES,
            "isolation_level": isolation, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                        "partition_max_bytes": FETCH_BYTES}]}],
            "forgotten_topics_data": [], "rack_id": ""}, newest=12, oldest=4)
        check(answer.error_code, f"Fetch({topic}-{partition})")
        found = [p for t in answer.responses for p in t.partitions if p.partition_index == partition]
        if not found:
            return None
        check(found[0].error_code, f"Fetch({topic}-{partition}) at offset {offset}")
        return found[0]

    def _log(self, topic: str, partition: int, leader: int) -> tuple[int, list[BatchInfo]]:
        """(log start offset, every batch from it to the high watermark) of one partition, fetched."""
        start = self._list_offset(topic, partition, leader, EARLIEST, READ_UNCOMMITTED)
        end = self._list_offset(topic, partition, leader, LATEST, READ_UNCOMMITTED)
        out: list[BatchInfo] = []
        offset = start
        while offset < end:
            data = self._fetch(topic, partition, leader, offset, READ_UNCOMMITTED)
            if data is None:
                break
            got = [view_batch_info(b) for b in iter_batches(data.records or b"", allow_partial=True)]
            got = [b for b in got if b.last_offset >= offset]
            if not got:
                break
            out += got
            offset = got[-1].last_offset + 1
            end = max(end, data.high_watermark)
        return start, out

    def batches(self, topic: str, partition: int = 0) -> list[BatchInfo]:
        """What each batch of a partition holds, with its raw bytes, as a READ_UNCOMMITTED Fetch returns them."""
        topic = self._names.real(topic)
        return self._log(topic, partition, self._leader(topic, partition))[1]

    def records(self, topic: str, partition: int | None = None) -> list[RecordInfo]:
        """Decoded records of a topic (one partition, or all in partition order), control records left out."""
        topic, shown = self._names.real(topic), self._names.test_name(topic)
        leaders = self._leaders(topic)
        if partition is not None and partition not in leaders:
            raise KeyError(f"no partition {topic}-{partition}")
        out = []
        for index, leader in leaders.items():
            if partition is not None and index != partition:
                continue
            start, batches = self._log(topic, index, leader)
            for info in batches:
                if info.is_control:
                    continue
                view = next(iter_batches(info.raw))
                out += [view_record_info(shown, index, view, rec) for rec in view.iter_records() if rec.offset >= start]
        return out

    def _list_offset(self, topic: str, partition: int, leader: int, timestamp: int, isolation: int) -> int:
        answer = self._client.node(leader).request(ApiKey.LIST_OFFSETS, {
            "replica_id": -1, "isolation_level": isolation, "topics": [{"name": topic, "partitions": [
                {"partition_index": partition, "current_leader_epoch": -1, "timestamp": timestamp}]}]},
            newest=7, oldest=2)
        found = answer.topics[0].partitions[0]
        check(found.error_code, f"ListOffsets({topic}-{partition}, {timestamp})")
        return int(found.offset)

    def offsets(self, topic: str, partition: int = 0) -> dict[str, int]:
        """log_start_offset, high_watermark and last_stable_offset of a partition (ListOffsets earliest,
        latest, and latest with read_committed)."""
        topic = self._names.real(topic)
        leader = self._leader(topic, partition)
        return {
            "log_start_offset": self._list_offset(topic, partition, leader, EARLIEST, READ_UNCOMMITTED),
            "high_watermark": self._list_offset(topic, partition, leader, LATEST, READ_UNCOMMITTED),
            "last_stable_offset": self._list_offset(topic, partition, leader, LATEST, READ_COMMITTED),
        }

    def producers(self, topic: str, partition: int = 0) -> list[dict[str, Any]]:
        """The producer state a partition holds (DescribeProducers to its leader): id, epoch, last sequence,
        last timestamp, the first offset of the open transaction (-1 if none). The embedded answer's
        "batches" (the last five batches' ranges) has no field in DescribeProducers and is left out."""
        topic = self._names.real(topic)
        leader = self._leader(topic, partition)
        answer = self._client.node(leader).request(ApiKey.DESCRIBE_PRODUCERS, {
            "topics": [{"name": topic, "partition_indexes": [partition]}]}, newest=0)
        found = answer.topics[0].partitions[0]
        check(found.error_code, found.error_message or f"DescribeProducers({topic}-{partition})")
        return [{"producer_id": p.producer_id, "producer_epoch": p.producer_epoch, "last_sequence": p.last_sequence,
                 "last_timestamp": p.last_timestamp, "current_txn_start_offset": p.current_txn_start_offset}
                for p in sorted(found.active_producers, key=lambda p: p.producer_id)]

    # -- groups and transactions (mockbroker/remote/coordinators.py) -----------------------------------
    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """A group's committed offsets: {(topic, partition): offset} (FindCoordinator, OffsetFetch)."""
        names = self._names
        held = coordinators.committed(self._client, names.real(group))
        return {(names.test_name(topic), partition): offset for (topic, partition), offset in held.items()}

    def groups(self) -> list[GroupSummary]:
        """Every group (ListGroups to each node, DescribeGroups / ConsumerGroupDescribe to its coordinator).
        Kafka's answers carry no classic generation or leader: generation_or_epoch is -1 and leader None
        for classic groups; KIP-848 groups have their group epoch."""
        return [self._names_of_group(g) for g in coordinators.groups(self._client, self._names.own)]

    def transactions(self) -> list[TransactionInfo]:
        """Every live transactional id (ListTransactions to each node, DescribeTransactions to its
        coordinator). last_update_ms (-1) and pending_offsets ({}) have no field in Kafka's answers."""
        names = self._names
        return [dataclasses.replace(t, transactional_id=names.test_name(t.transactional_id),
                                    partitions=[(names.test_name(topic), p) for topic, p in t.partitions])
                for t in coordinators.transactions(self._client, names.own)]

    def _names_of_group(self, group: GroupSummary) -> GroupSummary:
        """A group summary in the test's names: its id and the topics of its members' assignments."""
        names = self._names
        members = [dataclasses.replace(m, assignment=None if m.assignment is None else {
            names.test_name(topic): parts for topic, parts in m.assignment.items()}) for m in group.members]
        return dataclasses.replace(group, group_id=names.test_name(group.group_id), members=members)


for _name, _why in EMBEDDED_ONLY.items():
    setattr(RemoteBroker, _name, refusing(_name, _why))

__all__ = ["KafkaError", "RemoteBroker", "RemoteTopic"]
