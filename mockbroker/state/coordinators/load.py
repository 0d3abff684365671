"""Loading the coordinators from their internal topics when a broker starts on a data dir that holds them,
as Kafka's group and transaction coordinators load a partition of `__consumer_offsets` /
`__transaction_state` when they take it over (replay.py reads the records).

Called once by MockBroker after storage loaded the logs (mockbroker/storage), before anything is served.
What comes back, as in Kafka:
- Committed offsets with their commit and expiry times; a tombstone (OffsetDelete, DeleteGroups, expiry,
  topic deletion) keeps an offset gone. Offsets whose group has no metadata record (commits outside group
  management) get an Empty classic group without a protocol type: Kafka's "simple consumer group".
- Classic groups (GroupMetadataManager.replay / ClassicGroup.fromRecord, then onLoaded): a group with
  members comes back Stable in its generation, with its protocol, leader, members, subscriptions and
  assignments, and each member's session timer starts again: members that do not heartbeat within their
  session timeout are removed and the group rebalances (to Empty when none is left). A group stored Empty
  stays Empty with its offsets; its state time (what offset retention counts from) is the stored one.
- KIP-848 consumer groups (consumer_group_load.py): group and assignment epochs, members with their
  epochs, states and partitions, target assignments; each member's session timer starts again.
- Transactional ids (TransactionStateManager.loadTransactionsForTxnTopicPartition, then the coordinator's
  onElection): producer id, epoch, timeout, state and partitions. An Ongoing transaction goes on, and is
  fenced and aborted once its timeout passes on the broker clock; one left in PrepareCommit/PrepareAbort
  gets its markers now and completes; one left being fenced is aborted now. The markers carry the leader
  epoch the __transaction_state partition has now (storage bumps it on load), as Kafka's coordinator epoch.

Loading writes nothing back to the internal topics (the listeners are off while state is rebuilt); what
happens after it (timeouts, completions) is logged as usual. Record types this broker does not write
(share-group and streams-group records, ConsumerGroupPartitionMetadata) are skipped, as Kafka's loader
skips unknown record types; a record that does not decode (a log written by something else) is skipped
and told to `warn`, and the rest loads, so the broker starts and serves every other key. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from mockbroker.protocol.coordinator_records import GroupMetadataValue
from mockbroker.protocol.errors import DecodeError
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, TXN_TOPIC
from mockbroker.state.coordinators.consumer_group_load import (
    consumer_group_from_records,
    replay_consumer_groups,
    start_timers,
)
from mockbroker.state.coordinators.replay import (
    replay_group_metadata,
    replay_offsets,
    replay_transactions,
    topic_records,
)
from mockbroker.state.groups.classic import ClassicGroup
from mockbroker.state.groups.classic_members import ClassicMember
from mockbroker.state.groups.states import ClassicState

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster
    from mockbroker.state.groups.coordinator import GroupCoordinator
    from mockbroker.state.txn.coordinator import TxnCoordinator


Record = tuple[bytes | None, bytes | None]
Warn = Callable[[str], None]


def load_coordinators(cluster: Cluster, groups: Callable[[], GroupCoordinator], txns: TxnCoordinator,
                      warn: Warn = lambda _message: None) -> None:
    """Rebuild the group coordinator (made by `groups()` only when __consumer_offsets exists) and the
    transaction coordinator from the internal topics the cluster loaded; nothing when they are absent."""
    offsets_topic = cluster.topic(OFFSETS_TOPIC)
    if offsets_topic is not None:
        load_groups(groups(), readable(topic_records(offsets_topic), OFFSETS_TOPIC, _check_offsets_record, warn))
    txn_topic = cluster.topic(TXN_TOPIC)
    if txn_topic is not None:
        load_transactions(txns, readable(topic_records(txn_topic), TXN_TOPIC, _check_txn_record, warn))


def _check_offsets_record(record: Record) -> None:
    replay_offsets([record])
    replay_group_metadata([record])
    replay_consumer_groups([record])


def _check_txn_record(record: Record) -> None:
    replay_transactions([record])


def readable(records: Iterable[Record], topic: str, check: Callable[[Record], None], warn: Warn) -> list[Record]:
    """The records that decode; each other one is told to `warn` and left out."""
    out = []
    for record in records:
        try:
            check(record)
        except (DecodeError, KeyError, ValueError) as exc:
            warn(f"{topic}: a record that does not decode is skipped at load ({exc!r})")
            continue
        out.append(record)
    return out


def load_groups(coordinator: GroupCoordinator, records: list[Record]) -> None:
    """Committed offsets and classic groups from the records of __consumer_offsets."""
    loaded = replay_offsets(records, coordinator.cluster)
    listener, coordinator.offsets.listener = coordinator.offsets.listener, None
    group_listener, coordinator.group_listener = coordinator.group_listener, None
    try:
        for group_id in loaded.groups():
            for (topic, partition), offset in loaded.group_offsets(group_id).items():
                coordinator.offsets.commit(group_id, topic, partition, offset)
        metadata = replay_group_metadata(records)
        for group_id, value in metadata.items():
            coordinator.groups[group_id] = classic_group_from_record(coordinator, group_id, value)
        for group_id, stored in replay_consumer_groups(records).items():
            coordinator.groups[group_id] = consumer_group_from_records(coordinator, group_id, stored)
        for group_id in loaded.groups():
            if group_id not in coordinator.groups:
                coordinator.groups[group_id] = ClassicGroup(coordinator, group_id)  # a simple consumer group
    finally:
        coordinator.offsets.listener = listener
        coordinator.group_listener = group_listener
    for group in coordinator.groups.values():
        if isinstance(group, ClassicGroup):
            for member in group.members.values():
                group.reschedule_heartbeat(member)
        else:
            start_timers(group)
            if coordinator.group_loaded is not None:
                coordinator.group_loaded(group)
    if coordinator.groups:
        coordinator.ensure_cleanup()


def classic_group_from_record(coordinator: GroupCoordinator, group_id: str, value: GroupMetadataValue) -> ClassicGroup:
    """Kafka's ClassicGroup.fromRecord: Stable with the stored members, or Empty without any."""
    group = ClassicGroup(coordinator, group_id)
    group.state = ClassicState.STABLE if value.members else ClassicState.EMPTY
    group.generation_id = value.generation
    group.protocol_type = value.protocol_type or None
    group.protocol_name = value.protocol
    group.leader_id = value.leader
    if value.current_state_timestamp >= 0:
        group.state_timestamp_ms = value.current_state_timestamp
    for m in value.members:
        protocols = [(value.protocol, m.subscription)] if value.protocol is not None else []
        group.members[m.member_id] = ClassicMember(
            m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout, m.session_timeout,
            value.protocol_type, protocols, assignment=m.assignment)
        if m.group_instance_id is not None:
            group.static_members[m.group_instance_id] = m.member_id
    group.subscribed_topics = group.compute_subscribed_topics()
    return group


def load_transactions(coordinator: TxnCoordinator, records: list[Record]) -> None:
    """Every transactional id from the records of __transaction_state, then what Kafka's coordinator does
    on taking the partition over (TxnCoordinator.resume)."""
    loaded = replay_transactions(records)
    for txn in loaded.values():
        coordinator.txns[txn.transactional_id] = txn
    for txn in loaded.values():
        coordinator.resume(txn)
