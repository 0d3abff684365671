"""Rebuilding coordinator state from the records of the internal topics (what Kafka's coordinators do when
they load a partition of __consumer_offsets or __transaction_state): the reverse of log.py.

Records are read in log order; the last record of a key wins and a tombstone removes the key, as Kafka's
loaders (and compaction) treat them. What comes back:
- `replay_offsets`: the committed offsets (an OffsetStore);
- `replay_group_metadata`: each classic group's last GroupMetadataValue (protocol, generation, leader,
  members with their subscriptions and assignments);
- `replay_transactions`: a TxnMetadata per transactional id (producer id and epoch, state, partitions,
  timeout and timestamps).
The KIP-848 records (key types 3 to 8) are replayed by consumer_group_load.py; other types (share groups)
are skipped here. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from mockbroker.protocol.coordinator_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    decode_group_metadata_value,
    decode_offset_commit_value,
    decode_offsets_key,
    decode_txn_key,
    decode_txn_log_value,
)
from mockbroker.state.coordinators.log import TXN_STATE_IDS
from mockbroker.state.groups.offsets import CommittedOffset, OffsetStore
from mockbroker.state.txn.metadata import TxnMetadata

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster, Topic

Records = Iterable[tuple[bytes | None, bytes | None]]
_STATES = {i: state for state, i in TXN_STATE_IDS.items()}


def topic_records(topic: Topic) -> Iterator[tuple[bytes | None, bytes | None]]:
    """(key, value) of every data record of an internal topic, partition by partition, in log order."""
    for partition in topic.partitions:
        for _, record in partition.log.records():
            yield record.key, record.value


def replay_offsets(records: Records, cluster: Cluster | None = None) -> OffsetStore:
    """The committed offsets; with a cluster, each offset is tied to its topic's current id (the records
    hold no topic id: Kafka tombstones the offsets of a topic when it is deleted)."""
    store = OffsetStore()
    for key, value in records:
        if key is None:
            continue
        k = decode_offsets_key(key)
        if not isinstance(k, OffsetCommitKey):
            continue
        if value is None:
            store.delete(k.group, k.topic, k.partition)
            continue
        v = decode_offset_commit_value(value)
        topic = cluster.topic(k.topic) if cluster is not None else None
        store.commit(k.group, k.topic, k.partition, CommittedOffset(
            v.offset, v.leader_epoch, v.metadata, v.commit_timestamp,
            v.expire_timestamp if v.expire_timestamp >= 0 else None, topic.topic_id if topic is not None else None))
    return store


def replay_group_metadata(records: Records) -> dict[str, GroupMetadataValue]:
    groups: dict[str, GroupMetadataValue] = {}
    for key, value in records:
        if key is None:
            continue
        k = decode_offsets_key(key)
        if not isinstance(k, GroupMetadataKey):
            continue
        if value is None:
            groups.pop(k.group, None)
        else:
            groups[k.group] = decode_group_metadata_value(value)
    return groups


def replay_transactions(records: Records) -> dict[str, TxnMetadata]:
    txns: dict[str, TxnMetadata] = {}
    for key, value in records:
        if key is None:
            continue
        transactional_id = decode_txn_key(key).transactional_id
        if value is None:
            txns.pop(transactional_id, None)
            continue
        v = decode_txn_log_value(value)
        txn = TxnMetadata(transactional_id, v.producer_id, v.transaction_timeout_ms, v.last_update_timestamp_ms,
                          producer_epoch=v.producer_epoch, prev_producer_id=v.previous_producer_id,
                          next_producer_id=v.next_producer_id, state=_STATES[v.transaction_status],
                          partitions={(t, i) for t, ids in (v.partitions or {}).items() for i in ids},
                          start_ms=v.start_timestamp_ms, client_transaction_version=v.client_transaction_version)
        txns[transactional_id] = txn
    return txns
