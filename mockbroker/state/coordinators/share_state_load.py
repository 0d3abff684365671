"""The share coordinator's state read back from `__share_group_state` when a broker starts on a data dir
that holds it, as Kafka's share coordinator loads a partition of that topic when it takes it over
(ShareCoordinatorShard.replay): records in log order, a ShareSnapshot replaces a share partition's state, a
ShareUpdate overlays its batches and start offset, a tombstone removes it (state/share/persisted.py).

What comes back is what Kafka persists: each share partition's start offset, state and leader epochs, and
its acknowledged, archived and released records with their delivery counts. Records acquired when the
broker stopped were never written as acquired: they come back available (their locks belonged to the
broker that stopped). A record that does not decode is skipped and told to `warn`, and the rest loads.
Called by the node when it makes the share coordinator (mockbroker/node.py), before that coordinator
serves anything; nothing is written while the records are replayed. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.share_state_records import RECORD_TYPES, decode_key, decode_value
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC
from mockbroker.state.coordinators.replay import topic_records
from mockbroker.state.share.persisted import PersistedState, ShareStateStore, StateKey

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster


def load_share_state(cluster: Cluster, warn: Callable[[str], None] = lambda _message: None
                     ) -> dict[StateKey, PersistedState]:
    """Every share partition's persisted state in the cluster's __share_group_state (empty without it)."""
    topic = cluster.topic(SHARE_STATE_TOPIC)
    store = ShareStateStore()
    if topic is None:
        return store.states
    for key, value in topic_records(topic):
        if key is None or len(key) < 2 or int.from_bytes(key[:2], "big", signed=True) not in RECORD_TYPES:
            continue  # a record type of a later Kafka: skipped, as Kafka's loader skips unknown types
        try:
            k = decode_key(key)
            v = None if value is None else decode_value(k.record_type, value)
        except (DecodeError, ValueError) as exc:
            warn(f"{SHARE_STATE_TOPIC}: a record that does not decode is skipped at load ({exc!r})")
            continue
        store.replay(k, v)
    return store.states
