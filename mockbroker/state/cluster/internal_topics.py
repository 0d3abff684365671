"""Kafka's internal topics: `__consumer_offsets` (the group coordinator's log), `__transaction_state`
(the transaction coordinator's) and `__share_group_state` (the share coordinator's, KIP-932), and which of their partitions, so which node, coordinates a key.

- Created when first needed, as Kafka's broker creates them (AutoTopicCreationManager): on the first
  FindCoordinator for a group / transactional id, on the first group or transaction request, or when a
  Metadata request names them. `__consumer_offsets` gets offsets.topic.num.partitions (50) partitions,
  `__transaction_state` transaction.state.log.num.partitions (50), with the topic configs Kafka gives them
  (GroupCoordinatorService.groupMetadataTopicConfigs, TransactionStateManager.transactionTopicConfigs):
  cleanup.policy=compact, compression.type (producer / uncompressed), segment.bytes, and for the
  transaction log unclean.leader.election.enable=false and min.insync.replicas (transaction.state.log.min.isr).
  `__share_group_state`: share.coordinator.state.topic.num.partitions (50), cleanup.policy=delete,
  retention.ms=-1, min.insync.replicas (share.coordinator.state.topic.min.isr), as
  ShareCoordinatorService.shareGroupStateTopicConfigs; its key is "group:topicId:partition".
- Replication factor: offsets.topic.replication.factor / transaction.state.log.replication.factor
  (Kafka's default 3), but at most the number of running nodes. Unlike Kafka, whose controller refuses
  the topic (and FindCoordinator answers COORDINATOR_NOT_AVAILABLE) until that many brokers run, so that a
  one-node mockbroker works with the defaults.
- The coordinator of a key is the leader of partition Utils.abs(key.hashCode) % partitions
  (Java's String.hashCode; Integer.MIN_VALUE maps to 0), -1 while that partition is offline.

No I/O.
"""

from __future__ import annotations

import functools

from mockbroker.state.cluster.cluster import Cluster, Partition, Topic

OFFSETS_TOPIC = "__consumer_offsets"
TXN_TOPIC = "__transaction_state"
SHARE_STATE_TOPIC = "__share_group_state"
NO_NODE = -1

# The broker settings of each internal topic: (partition count, replication factor, segment bytes).
_SETTINGS = {
    OFFSETS_TOPIC: ("offsets.topic.num.partitions", "offsets.topic.replication.factor", "offsets.topic.segment.bytes"),
    TXN_TOPIC: ("transaction.state.log.num.partitions", "transaction.state.log.replication.factor",
                "transaction.state.log.segment.bytes"),
    SHARE_STATE_TOPIC: ("share.coordinator.state.topic.num.partitions", "share.coordinator.state.topic.replication.factor",
                        "share.coordinator.state.topic.segment.bytes"),
}


def java_string_hash(s: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def offsets_partition_for(group_id: str, partitions: int) -> int:
    """The __consumer_offsets partition of a group (Kafka's Utils.abs(groupId.hashCode) % partitions)."""
    h = java_string_hash(group_id)
    return (0 if h == -(2**31) else abs(h)) % partitions


@functools.lru_cache(maxsize=4096)
def partition_for(key: str, partitions: int) -> int:
    """The internal partition of a group id or transactional id (Utils.abs(key.hashCode) % partitions)."""
    return offsets_partition_for(key, partitions)


def topic_configs(cluster: Cluster, name: str) -> dict[str, str]:
    """The configs Kafka creates the internal topic with."""
    segment_bytes = str(cluster.config.get(_SETTINGS[name][2]))
    if name == OFFSETS_TOPIC:
        return {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": segment_bytes}
    if name == SHARE_STATE_TOPIC:  # ShareCoordinatorService.shareGroupStateTopicConfigs
        return {"cleanup.policy": "delete", "compression.type": "producer", "segment.bytes": segment_bytes,
                "min.insync.replicas": str(cluster.config.get("share.coordinator.state.topic.min.isr")),
                "retention.ms": "-1"}
    return {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
            "cleanup.policy": "compact", "min.insync.replicas": str(cluster.config.get("transaction.state.log.min.isr")),
            "segment.bytes": segment_bytes}


def ensure_topic(cluster: Cluster, name: str) -> Topic:
    """The internal topic, created now if it does not exist yet."""
    topic = cluster.topic(name)
    if topic is not None:
        return topic
    partitions_key, rf_key, _ = _SETTINGS[name]
    live = max(len(cluster.live_node_ids()), 1)
    rf = min(int(cluster.config.get(rf_key)), live)
    created = cluster.create_topic(name, int(cluster.config.get(partitions_key)), rf, topic_configs(cluster, name))
    assert created is not None
    return created


def partition_of(cluster: Cluster, name: str, key: str) -> Partition:
    """The partition of the internal topic that holds `key`'s records (the topic made if needed)."""
    topic = ensure_topic(cluster, name)
    return topic.partitions[partition_for(key, len(topic.partitions))]


def coordinator_node(cluster: Cluster, name: str, key: str) -> int:
    """The node coordinating `key` (a group id over __consumer_offsets, a transactional id over
    __transaction_state): the leader of its partition, NO_NODE while the partition is offline."""
    return partition_of(cluster, name, key).leader_id
