"""What the coordinators write to their internal topics, as Kafka's coordinators write it: every change of
a committed offset, of a classic group's metadata and of a transactional id's state becomes a record in
the key's partition of `__consumer_offsets` / `__transaction_state` (mockbroker/protocol/coordinator_records.py has
the bytes).

- OffsetCommitKey/OffsetCommitValue for each committed offset (OffsetCommit, and TxnOffsetCommit once its
  transaction commits), a tombstone when the offset goes (OffsetDelete, DeleteGroups, expiry, its topic
  deleted).
- GroupMetadataKey/GroupMetadataValue when a classic group reaches Stable (its assignment stored) or
  Empty, a tombstone when it is removed (Dead).
- TransactionLogKey/TransactionLogValue at each state change of a transactional id, a tombstone when the
  id expires.
- The ConsumerGroup* records of a KIP-848 group after each change of it (consumer_group_log.py), in one
  batch.
- ShareSnapshot / ShareUpdate records of the share coordinator into `__share_group_state`
  (`share_state_append`; state/share/persisted.py makes them), at the partition of "group:topicId:partition".
- The share groups' ShareGroup* records into `__consumer_offsets` (`share_group_append`; state/share/group_log.py).

In-memory coordinator state stays what requests are served from; these records are the log Kafka keeps
(replay.py rebuilds that state from them). Records go into the partition's log directly, as
the coordinator's own appends do in Kafka (never through Produce, which refuses internal topics), one
uncompressed batch per record. No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from mockbroker.protocol.coordinator_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    TransactionLogKey,
    TransactionLogValue,
    encode_group_metadata_value,
    encode_key,
    encode_offset_commit_value,
    encode_txn_log_value,
)
from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.builder import build_batch
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, SHARE_STATE_TOPIC, TXN_TOPIC, partition_of
from mockbroker.state.coordinators.consumer_group_log import ConsumerGroupLog
from mockbroker.state.groups.states import ClassicState
from mockbroker.state.txn.states import TxnState

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.state.cluster.cluster import Cluster
    from mockbroker.state.groups.classic_state import ClassicGroupState
    from mockbroker.state.groups.consumer import ConsumerGroup
    from mockbroker.state.groups.offsets import CommittedOffset
    from mockbroker.state.txn.metadata import TxnMetadata

# Kafka's TransactionState ids (TransactionState.fromId): the order of TxnState.
TXN_STATE_IDS: dict[TxnState, int] = {state: i for i, state in enumerate(TxnState)}


def offset_value(value: CommittedOffset) -> OffsetCommitValue:
    expire = value.expire_timestamp_ms if value.expire_timestamp_ms is not None else -1
    return OffsetCommitValue(value.offset, value.leader_epoch, value.metadata, value.commit_timestamp_ms, expire)


def group_value(group: ClassicGroupState) -> GroupMetadataValue:
    """Kafka's newGroupMetadataRecord: the agreed protocol, leader and each member's subscription (its
    metadata for that protocol) and assignment."""
    members = []
    for m in group.members.values():
        subscription = next((meta for name, meta in m.protocols if name == group.protocol_name), b"")
        members.append(MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                      m.rebalance_timeout_ms, m.session_timeout_ms, bytes(subscription),
                                      bytes(m.assignment)))
    return GroupMetadataValue(group.protocol_type or "", group.generation_id, group.protocol_name, group.leader_id,
                              group.state_timestamp_ms, members)


def txn_value(txn: TxnMetadata) -> TransactionLogValue:
    """Kafka's TransactionLog.valueToBytes: no partitions in the Empty state."""
    partitions: dict[str, list[int]] | None = None
    if txn.state != TxnState.EMPTY:
        partitions = {}
        for topic, index in sorted(txn.partitions):
            partitions.setdefault(topic, []).append(index)
    return TransactionLogValue(txn.producer_id, txn.producer_epoch, txn.timeout_ms, TXN_STATE_IDS[txn.state],
                               partitions, txn.last_update_ms, txn.start_ms, txn.prev_producer_id,
                               txn.next_producer_id, txn.client_transaction_version)


class CoordinatorLog:
    """Appends the coordinators' records to the internal topics (each made when first written)."""

    def __init__(self, cluster: Cluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self.consumer_groups = ConsumerGroupLog(lambda group_id, records: self._append_all(OFFSETS_TOPIC, group_id,
                                                                                           records))

    def _append(self, topic: str, key: str, record_key: bytes, record_value: bytes | None) -> None:
        self._append_all(topic, key, [(record_key, record_value)])

    def _append_all(self, topic: str, key: str, records: list[tuple[bytes, bytes | None]]) -> None:
        partition = partition_of(self.cluster, topic, key)
        now = self.clock.now_ms()
        data = build_batch(list(records), base_timestamp=now)
        partition.log.append(RecordBatch(data), now)

    def share_state_append(self, coordinator_key: str, records: list[tuple[bytes, bytes | None]]) -> tuple[int, int]:
        """The share coordinator's records of one share partition (coordinator_key "group:topicId:partition");
        the partition of __share_group_state they went to and the offset of the first."""
        partition = partition_of(self.cluster, SHARE_STATE_TOPIC, coordinator_key)
        offset = partition.log.log_end_offset
        self._append_all(SHARE_STATE_TOPIC, coordinator_key, records)
        return partition.index, offset

    def share_group_append(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> None:
        """A share group's records (state/share/group_log.py), into the group's partition of __consumer_offsets."""
        self._append_all(OFFSETS_TOPIC, group_id, records)

    def offset_changed(self, group_id: str, topic: str, partition: int, value: CommittedOffset | None) -> None:
        """A committed offset stored (value) or gone (None: a tombstone)."""
        self._append(OFFSETS_TOPIC, group_id, encode_key(OffsetCommitKey(group_id, topic, partition)),
                     None if value is None else encode_offset_commit_value(offset_value(value)))

    def group_changed(self, group: ClassicGroupState | ConsumerGroup) -> None:
        """A classic group reached a state Kafka writes: Stable or Empty (its metadata), Dead (a tombstone);
        a consumer group changed (its changed records)."""
        if group.group_type == "consumer":
            self.consumer_groups.changed(cast("ConsumerGroup", group))
            return
        group = cast("ClassicGroupState", group)
        if group.state == ClassicState.DEAD:
            value: bytes | None = None
        elif group.state in (ClassicState.STABLE, ClassicState.EMPTY):
            value = encode_group_metadata_value(group_value(group))
        else:
            return
        self._append(OFFSETS_TOPIC, group.group_id, encode_key(GroupMetadataKey(group.group_id)), value)

    def txn_changed(self, transactional_id: str, txn: TxnMetadata | None, transaction_version: int) -> None:
        """A transactional id's new state (txn), or its removal (None: a tombstone). The value is
        TransactionLogValue v1 from transaction.version 1, else v0."""
        value = None if txn is None else encode_txn_log_value(txn_value(txn), 1 if transaction_version >= 1 else 0)
        self._append(TXN_TOPIC, transactional_id, encode_key(TransactionLogKey(transactional_id)), value)
