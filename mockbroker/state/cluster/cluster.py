"""The cluster model: nodes, topics with ids, partitions with a leader, an epoch and a log.

A cluster of nodes from the start (one by default): every partition names its leader node and epoch,
every listener belongs to a node. No I/O here; the server binds listeners and handlers read this. With a
data dir, `storage` (state/storage_hooks.ClusterStore, None in memory) hears of new partitions, deleted
topics and metadata changes (topics, configs, the producer id block).
"""

from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.changes import Changes
from mockbroker.state.client_metrics import ClientMetrics
from mockbroker.state.cluster.placement import Stripe, place
from mockbroker.state.configs import TOPIC_CONFIGS, BrokerConfig, TopicConfig, apply_incremental
from mockbroker.state.copying import copy_attrs
from mockbroker.state.log.partition_log import PartitionLog
from mockbroker.state.log.retention import delete_segments, has_delete_policy
from mockbroker.state.quotas import ClientQuotas
from mockbroker.state.seeding import new_seed, random_base64_id, random_uuid

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
# Kafka's controller bounds the records of one request (QuorumController.MAX_RECORDS_PER_USER_OP) and
# refuses a CreateTopics that would create more partitions than that (ReplicationControlManager
# .validateTotalNumberOfPartitions): POLICY_VIOLATION for every topic of the request.
MAX_PARTITIONS_PER_REQUEST = 10_000
EXCESSIVE_PARTITIONS_MESSAGE = "Excessively large number of partitions per request."
# The broker-wide bound on the record bytes held (all partitions' logs); -1: none. See make_room.
MAX_LOG_BYTES = "mockbroker.max.log.bytes"
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# Producer ids are handed out in blocks (Kafka's ProducerIdsRecord): storage records the end of each block
# as it is entered, so a restarted broker never hands out an id it gave before.
PRODUCER_ID_BLOCK = 1000


class ClusterStore(Protocol):
    """The cluster's metadata (topics, ids, configs) and the partition directories."""

    def partition_created(self, partition: Partition) -> None:
        """A new partition: make its directory and attach its LogSink."""

    def topic_deleted(self, topic: Topic) -> None:
        """A deleted topic: its directories go."""

    def metadata_changed(self) -> None:
        """Topics, partitions, configs or the producer id block changed: store them."""


def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate: INVALID_TOPIC_EXCEPTION with Kafka's reasons."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters",
        )
    if not _LEGAL_TOPIC.fullmatch(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, "
            "'.', '_' and '-'",
        )


@dataclass
class Node:
    node_id: int
    rack: str | None = None
    alive: bool = True  # False while stopped (state/cluster/leadership.py): out of Metadata, the ISRs and placement
    # While stalled (state/cluster/replicas.py): since when (broker clock) it copies nothing from the leaders; -1: not.
    stalled_since_ms: int = -1


@dataclass
class Listener:
    """A named listener of a node: where it binds and what Metadata advertises for it."""

    name: str
    node_id: int
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None
    security_protocol: str = "PLAINTEXT"

    @property
    def public_host(self) -> str:
        if self.advertised_host:
            return self.advertised_host
        return self.host if self.host not in ("0.0.0.0", "::", "") else "localhost"

    @property
    def public_port(self) -> int:
        return self.advertised_port if self.advertised_port is not None else self.port


@dataclass
class Reassignment:
    """A partition reassignment in progress (state/cluster/reassignments.py): the replicas being added and removed,
    and when (broker clock) the added ones will have caught up."""

    adding: list[int]
    removing: list[int]
    due_ms: int


@dataclass
class Partition:
    topic: Topic
    index: int
    leader_id: int
    log: PartitionLog
    replicas: list[int] = field(default_factory=list)
    # The in-sync replicas (state/cluster/leadership.py keeps them); the replica list when not given.
    isr: list[int] = field(default_factory=list)
    # Where the log of each replica that is behind the leader ends (state/cluster/replicas.py); a replica not
    # named here has everything the leader has.
    replica_ends: dict[int, int] = field(default_factory=dict)
    reassignment: Reassignment | None = None

    def __post_init__(self) -> None:
        if not self.isr:
            self.isr = list(self.replicas)

    def __deepcopy__(self, memo: dict[int, Any]) -> Partition:
        """A copy for a snapshot (mockbroker/snapshots.py; state/copying.py)."""
        return copy_attrs(self, memo, shallow=("replicas", "isr", "replica_ends"))

    @property
    def leader_epoch(self) -> int:
        return self.log.leader_epoch


class Topic:
    def __init__(self, name: str, topic_id: uuid.UUID, config: TopicConfig, internal: bool = False) -> None:
        self.name = name
        self.topic_id = topic_id
        self.config = config
        self.internal = internal
        self.partitions: list[Partition] = []
        self.stripe: Stripe | None = None  # where its replica placement started (state/cluster/placement.py)

    def __deepcopy__(self, memo: dict[int, Any]) -> Topic:
        """A copy for a snapshot (mockbroker/snapshots.py; state/copying.py)."""
        return copy_attrs(self, memo)

    def partition(self, index: int) -> Partition | None:
        if 0 <= index < len(self.partitions):
            return self.partitions[index]
        return None


class Cluster:
    storage: ClusterStore | None = None  # the data dir (mockbroker/storage), None in memory mode

    def __init__(
        self,
        *,
        node_ids: list[int] | None = None,
        cluster_id: str | None = None,
        config: BrokerConfig | None = None,
        clock: Clock | None = None,
        seed: int | None = None,
    ) -> None:
        self.nodes = {n: Node(n) for n in (node_ids or [1])}
        # Every random choice of the broker comes from this one source (state/seeding.py); None: a fresh seed.
        self.seed = new_seed() if seed is None else seed
        self.random = random.Random(self.seed)
        self.changes = Changes()  # told of appends, group and transaction changes (the waits listen)
        self.cluster_id = cluster_id or random_base64_id(self.random)
        self.controller_id = min(self.nodes)
        self.config = config or BrokerConfig()
        self.clock = clock or Clock()
        self.listeners: list[Listener] = []
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self._next_producer_id = 1000
        self.client_metrics = ClientMetrics()  # client telemetry (KIP-714): subscriptions, instances, pushes
        self.quotas = ClientQuotas()  # client quota configs (state/quotas.py), cluster-wide as Kafka's metadata

    def live_node_ids(self) -> list[int]:
        """The nodes that are running, in id order."""
        return [n for n, node in sorted(self.nodes.items()) if node.alive]

    def allocate_producer_id(self) -> int:
        """A producer id unique across the cluster for the broker's lifetime."""
        pid = self._next_producer_id
        self._next_producer_id += 1
        if self.storage is not None and pid % PRODUCER_ID_BLOCK == 0:
            self.storage.metadata_changed()  # a new block: its end is stored
        return pid

    def skip_producer_ids_below(self, next_id: int) -> None:
        """Hand out ids from `next_id` on (a restarted broker: past every id it gave before)."""
        self._next_producer_id = max(self._next_producer_id, next_id)

    @property
    def producer_id_block_end(self) -> int:
        """The end of the block the next producer id falls in (what a restart starts from)."""
        return (self._next_producer_id // PRODUCER_ID_BLOCK + 1) * PRODUCER_ID_BLOCK

    # -- topics ----------------------------------------------------------------------------------
    def new_partition_count(self, partitions: int, assignment_count: int = 0) -> int:
        """How many partitions a CreatableTopic asks for, as Kafka's controller counts them against the
        per-request bound: its manual assignments if any, else num_partitions (-1: num.partitions; an
        invalid count adds nothing, it fails on its own)."""
        if assignment_count:
            return assignment_count
        if partitions == -1:
            return int(self.config.get("num.partitions"))
        return max(partitions, 0)

    @staticmethod
    def check_partitions_per_request(total: int) -> None:
        """POLICY_VIOLATION when one request would create more than MAX_PARTITIONS_PER_REQUEST partitions.
        Checked before anything is allocated, so a huge count costs nothing."""
        if total > MAX_PARTITIONS_PER_REQUEST:
            raise KafkaError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE)

    def topic(self, name: str) -> Topic | None:
        return self.topics.get(name)

    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        return t.partition(index) if t else None

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, Any] | None = None,
        *,
        validate_only: bool = False,
        topic_id: uuid.UUID | None = None,
        assignments: list[tuple[int, list[int]]] | None = None,
    ) -> Topic | None:
        """Create a topic (KafkaError with Kafka's code when it cannot be). None when validate_only.

        Checks in the order of Kafka's controller, with its messages: the name, existence, the configs,
        then either the manual assignments ((partition index, broker ids) pairs; partitions and
        replication_factor must then be -1) or the partition count and replication factor (-1: the
        broker's num.partitions / default.replication.factor). More than MAX_PARTITIONS_PER_REQUEST
        partitions: POLICY_VIOLATION before any other check, as Kafka's controller orders them."""
        self.check_partitions_per_request(self.new_partition_count(partitions, len(assignments or ())))
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        collision = name.replace(".", "_")
        for other in self.topics:
            if other.replace(".", "_") == collision:
                raise KafkaError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {other}",
                )
        nulls = [k for k, v in (configs or {}).items() if v is None]
        if nulls:
            raise KafkaError(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(nulls))
        overrides = TopicConfig.validate(configs or {})
        replica_lists: list[list[int]] | None = None
        if assignments:
            if replication_factor != -1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                 "replication factor was not set to -1.")
            if partitions != -1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                 "numPartitions was not set to -1.")
            by_index: dict[int, list[int]] = {}
            rf: int | None = None
            for index, broker_ids in assignments:
                if index in by_index:
                    raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"Found multiple manual partition assignments for partition {index}")
                self.validate_manual_assignment(broker_ids, rf)
                rf = len(broker_ids)
                by_index[index] = list(broker_ids)
            if sorted(by_index) != list(range(len(by_index))):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions should be a consecutive 0-based integer sequence")
            replica_lists = [by_index[i] for i in range(len(by_index))]
            self._check_assignment_alive(replica_lists, 0)
        else:
            if replication_factor < -1 or replication_factor == 0:
                raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                 "Replication factor must be larger than 0, or -1 to use the default value.")
            if partitions < -1 or partitions == 0:
                raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                                 "Number of partitions was set to an invalid non-positive value.")
            if partitions == -1:
                partitions = int(self.config.get("num.partitions"))
            if replication_factor == -1:
                replication_factor = int(self.config.get("default.replication.factor"))
            self._check_replication_factor(replication_factor)
        config = TopicConfig(self.config, overrides)
        if validate_only:
            return None
        topic = Topic(name, topic_id or random_uuid(self.random), config, internal=name in INTERNAL_TOPICS)
        self.topics[name] = topic
        self.topics_by_id[topic.topic_id] = topic
        if replica_lists is not None:
            self._add_assigned_partitions(topic, replica_lists)
        else:
            self._add_partitions(topic, partitions, replication_factor)
        if self.storage is not None:
            self.storage.metadata_changed()
        return topic

    def validate_manual_assignment(self, broker_ids: list[int], replication_factor: int | None = None) -> None:
        """One partition's manual replica list, checked as Kafka's controller does
        (INVALID_REPLICA_ASSIGNMENT): not empty, known nodes only, no node twice, and as many replicas
        as the other partitions (replication_factor, when known)."""
        if not broker_ids:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "The manual partition assignment includes an empty replica list.")
        prev: int | None = None
        for broker_id in sorted(broker_ids):
            if broker_id not in self.nodes:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes broker {broker_id}, but no such "
                                 "broker is registered.")
            if broker_id == prev:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes the broker {prev} more than once.")
            prev = broker_id
        if replication_factor is not None and len(broker_ids) != replication_factor:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment includes a partition with {len(broker_ids)} "
                             "replica(s), but this is not consistent with previous partitions, which have "
                             f"{replication_factor} replica(s).")

    def _check_replication_factor(self, replication_factor: int) -> None:
        live = len(self.live_node_ids())
        if replication_factor > live:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): The target replication "
                f"factor of {replication_factor} cannot be reached because only {live} broker(s) "
                "are registered.",
            )

    def _add_assigned_partitions(self, topic: Topic, replica_lists: list[list[int]]) -> None:
        for replicas in replica_lists:
            index = len(topic.partitions)
            # The ISR: the replicas that are running; the leader: the first of them.
            isr = [n for n in replicas if self.nodes[n].alive]
            partition = Partition(topic, index, isr[0], _new_log(topic, index), list(replicas), isr)
            topic.partitions.append(partition)
            if self.storage is not None:
                self.storage.partition_created(partition)

    def _check_assignment_alive(self, replica_lists: list[list[int]], first_index: int) -> None:
        for i, replicas in enumerate(replica_lists):
            if not any(self.nodes[n].alive for n in replicas):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"All brokers specified in the manual partition assignment for partition "
                                 f"{first_index + i} are fenced or in controlled shutdown.")

    def _add_partitions(self, topic: Topic, count: int, replication_factor: int | None = None) -> None:
        """Place `count` new partitions over the running nodes (state/cluster/placement.py), the topic's stripe
        chosen at random on its first partitions and continued after."""
        live = self.live_node_ids()
        rf = replication_factor or (len(topic.partitions[0].replicas) if topic.partitions else 1)
        if topic.stripe is None:
            topic.stripe = Stripe(self.random.randrange(len(live)), self.random.randrange(len(live)))
        lists = place({n: self.nodes[n].rack for n in live}, count, rf, topic.stripe, len(topic.partitions))
        self._add_assigned_partitions(topic, lists)

    def create_partitions(
        self, name: str, total: int, *, validate_only: bool = False, assignments: list[list[int]] | None = None,
        added_before: int = 0,
    ) -> int:
        """Grow a topic to `total` partitions, as Kafka's controller does (its errors and messages);
        `assignments`: the replica list of each new partition (None: placed by the broker). More than
        MAX_PARTITIONS_PER_REQUEST new partitions in one request (`added_before`: those the request's
        earlier topics added): POLICY_VIOLATION (see check_partitions_per_request). Returns how many
        partitions it adds (or would add, validate_only)."""
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        current = len(topic.partitions)
        if total == current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
        if total < current:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"The topic {name} currently has {current} partition(s); {total} would not be an increase.",
            )
        additional = total - current
        self.check_partitions_per_request(added_before + additional)
        if assignments is not None:
            if len(assignments) != additional:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Attempted to add {additional} additional partition(s), but only "
                                 f"{len(assignments)} assignment(s) were specified.")
            rf = len(topic.partitions[0].replicas) if topic.partitions else None
            for broker_ids in assignments:
                self.validate_manual_assignment(broker_ids, rf)
            self._check_assignment_alive(assignments, current)
        elif topic.partitions:
            self._check_replication_factor(len(topic.partitions[0].replicas))
        if validate_only:
            return additional
        if assignments is not None:
            self._add_assigned_partitions(topic, assignments)
        else:
            self._add_partitions(topic, additional)
        if self.storage is not None:
            self.storage.metadata_changed()
        return additional

    # -- the broker-wide bound on record bytes (mockbroker.max.log.bytes) -------------------------
    def log_bytes_held(self) -> int:
        """The record bytes every partition's log holds now."""
        return sum(p.log.size_bytes for t in self.topics.values() for p in t.partitions)

    def make_room(self, incoming: int, now_ms: int) -> None:
        """Room for `incoming` more record bytes under mockbroker.max.log.bytes (when set, >= 0).

        Past the bound, retention deletes whole segments, the oldest first (by the broker time of their
        first append) across every topic whose cleanup.policy includes delete, until the new bytes fit.
        When that cannot free enough (compacted topics only, or a batch bigger than the bound),
        KAFKA_STORAGE_ERROR, what Kafka answers when its log directory cannot take a write (retriable:
        producers retry, and may get through once retention or DeleteRecords freed room). Costs a pass
        over the partitions per call, only when the bound is set."""
        limit = int(self.config.get(MAX_LOG_BYTES))
        if limit < 0:
            return
        held = self.log_bytes_held()
        if held + incoming <= limit:
            return
        logs = [p.log for t in self.topics.values() if has_delete_policy(t.config) for p in t.partitions]
        while held + incoming > limit:
            oldest: PartitionLog | None = None
            for log in logs:
                if log.size_bytes and (oldest is None or _first_append_ms(log) < _first_append_ms(oldest)):
                    oldest = log
            if oldest is None:
                break
            before = oldest.size_bytes
            delete_segments(oldest, 1, now_ms)
            if oldest.size_bytes >= before:  # nothing could go (cannot happen: guards an endless loop)
                logs.remove(oldest)
            held -= before - oldest.size_bytes
        if held + incoming > limit:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                             f"{MAX_LOG_BYTES} ({limit}) reached: {held} bytes held, {incoming} more refused")

    # -- topic configs (AlterConfigs / IncrementalAlterConfigs) ----------------------------------
    def _config_target(self, name: str) -> Topic | None:
        if not name:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
        validate_topic_name(name)
        return self.topics.get(name)

    def alter_topic_config(
        self, name: str, ops: list[tuple[str, int, str | None]], *, validate_only: bool = False
    ) -> None:
        """IncrementalAlterConfigs on a topic: all operations or none, checked in Kafka's order (the name,
        the operations, the resulting configs, then that the topic exists)."""
        topic = self._config_target(name)
        current = topic.config.overrides() if topic is not None else {}
        new = apply_incremental(current, ops, TOPIC_CONFIGS, broker=False)
        parsed = TopicConfig.validate(new)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        if not validate_only:
            topic.config.values = parsed
            if self.storage is not None:
                self.storage.metadata_changed()

    def replace_topic_config(self, name: str, configs: dict[str, str | None], *, validate_only: bool = False) -> None:
        """Legacy AlterConfigs on a topic: `configs` become the topic's whole set of overrides."""
        nulls = [k for k, v in configs.items() if v is None]
        if nulls:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
        topic = self._config_target(name)
        parsed = TopicConfig.validate(configs)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        if not validate_only:
            topic.config.values = parsed
            if self.storage is not None:
                self.storage.metadata_changed()

    # -- DeleteRecords ---------------------------------------------------------------------------
    @staticmethod
    def delete_records(partition: Partition, offset: int) -> int:
        """Move the partition's log start offset up to `offset` (-1: the high watermark), as Kafka's
        deleteRecordsOnLeader does; returns the new low watermark. POLICY_VIOLATION on a topic whose
        cleanup.policy lacks delete, OFFSET_OUT_OF_RANGE below 0 or above the high watermark."""
        log = partition.log
        label = f"{partition.topic.name}-{partition.index}"
        if "delete" not in str(partition.topic.config.get("cleanup.policy")).split(","):
            raise KafkaError(ErrorCode.POLICY_VIOLATION,
                             f"Records of partition {label} can not be deleted due to the configured policy")
        target = log.high_watermark if offset == -1 else offset
        if target < 0:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, f"The offset {target} for partition {label} is not valid")
        if target > log.high_watermark:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                             f"Cannot increment the log start offset to {target} of partition {label} since it "
                             f"is larger than the high watermark {log.high_watermark}")
        if target > log.log_start_offset:
            log.truncate_before(target)
        return log.log_start_offset

    def delete_topic(self, name: str) -> Topic:
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        del self.topics[name]
        del self.topics_by_id[topic.topic_id]
        for p in topic.partitions:
            p.log.notify()  # parked fetches re-check and see the topic gone
        if self.storage is not None:
            self.storage.topic_deleted(topic)
        return topic

    def maybe_auto_create(self, name: str) -> Topic | None:
        """Auto topic creation as Metadata does it (when enabled); None if not created."""
        if not self.config.get("auto.create.topics.enable"):
            return None
        return self.create_topic(name)


def _first_append_ms(log: PartitionLog) -> int:
    """When the log's oldest segment got its first batch (broker clock)."""
    first = log.segments.segments[0]
    return first.created_ms if first.created_ms >= 0 else first.last_modified_ms


def _new_log(topic: Topic, index: int) -> PartitionLog:
    """A partition's log; its segments roll by the topic's segment.bytes / segment.ms (state/log/segments.py)."""
    log = PartitionLog(topic.name, index)
    log.segments.config = topic.config
    return log

