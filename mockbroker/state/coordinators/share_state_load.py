"""The share coordinator's state read back from `__share_group_state`, and the share groups' records from
`__consumer_offsets`, when a broker starts on a data dir that holds them, as Kafka's share coordinator loads a partition of that topic when it takes it over
(ShareCoordinatorShard.replay): records in log order, a ShareSnapshot replaces a share partition's state, a
ShareUpdate overlays its batches and start offset, a tombstone removes it (state/share/persisted.py).

What comes back is what Kafka persists: each share partition's start offset, state and leader epochs, and
its acknowledged, archived and released records with their delivery counts. Records acquired when the
broker stopped were never written as acquired: they come back available (their locks belonged to the
broker that stopped). A record that does not decode is skipped and told to `warn`, and the rest loads.
Each record is replayed with its partition and offset, so the store knows again, per partition of the topic,
each key's latest snapshot (state/share/pruning.py), and pruning goes on after a restart.
The share groups' records (ShareGroupMetadata, ShareGroupTargetAssignmentMetadata, ShareGroupStatePartitionMetadata;
state/share/group_log.py writes them) are kept per group, the last of each key, a tombstone removing it (a
group whose epoch record is gone was deleted: left out); the member record types are skipped, as are the
other groups' records. The share coordinator makes each group from them, empty, with its epochs.
Called by the node when it makes the share coordinator (mockbroker/node.py), before that coordinator
serves anything; nothing is written while the records are replayed. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.protocol import share_group_records as group_records
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.share_state_records import RECORD_TYPES, decode_key, decode_value
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, SHARE_STATE_TOPIC
from mockbroker.state.share.group_log import LoadedShareState
from mockbroker.state.share.persisted import ShareStateStore

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster


def load_share_state(cluster: Cluster, warn: Callable[[str], None] = lambda _message: None) -> LoadedShareState:
    """Every share partition's persisted state in the cluster's __share_group_state (empty without it), in a
    store that writes nothing (its `append` None), and the share groups' records of __consumer_offsets."""
    return LoadedShareState(_load_state(cluster, warn), _load_groups(cluster, warn))


def _load_state(cluster: Cluster, warn: Callable[[str], None]) -> ShareStateStore:
    topic = cluster.topic(SHARE_STATE_TOPIC)
    store = ShareStateStore(lambda: int(cluster.config.get("share.coordinator.snapshot.update.records.per.snapshot")))
    if topic is None:
        return store
    for partition in topic.partitions:
        for _, record in partition.log.records():
            key, value = record.key, record.value
            if key is None or len(key) < 2 or int.from_bytes(key[:2], "big", signed=True) not in RECORD_TYPES:
                continue  # a record type of a later Kafka: skipped, as Kafka's loader skips unknown types
            try:
                k = decode_key(key)
                v = None if value is None else decode_value(k.record_type, value)
            except (DecodeError, ValueError) as exc:
                warn(f"{SHARE_STATE_TOPIC}: a record that does not decode is skipped at load ({exc!r})")
                continue
            store.replay(k, v, (partition.index, record.offset))
    return store


def _load_groups(cluster: Cluster, warn: Callable[[str], None]) -> dict[str, dict[group_records.ShareGroupKey, bytes]]:
    topic = cluster.topic(OFFSETS_TOPIC)
    groups: dict[str, dict[group_records.ShareGroupKey, bytes]] = {}
    if topic is None:
        return groups
    for partition in topic.partitions:
        for _, record in partition.log.records():
            key, value = record.key, record.value
            if key is None or len(key) < 2 or (
                    int.from_bytes(key[:2], "big", signed=True) not in group_records.GROUP_RECORD_TYPES):
                continue  # offsets, other groups' records, share group members: not read here
            try:
                k = group_records.decode_key(key)
                if value is not None:
                    group_records.decode_value(k.record_type, value)
            except (DecodeError, ValueError) as exc:
                warn(f"{OFFSETS_TOPIC}: a share group record that does not decode is skipped at load ({exc!r})")
                continue
            if value is None:
                groups.get(k.group_id, {}).pop(k, None)
            else:
                groups.setdefault(k.group_id, {})[k] = bytes(value)
    return {gid: records for gid, records in groups.items()
            if group_records.ShareGroupKey(group_records.GROUP_METADATA, gid) in records
            or group_records.ShareGroupKey(group_records.STATE_PARTITION_METADATA, gid) in records}
