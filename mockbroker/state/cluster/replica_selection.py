"""Follower fetching (KIP-392): which replica a consumer should read from, as Kafka's leader picks it.

With replica.selector.class = org.apache.kafka.common.replica.RackAwareReplicaSelector (Kafka's only
built-in selector besides the leader-only default) and a consumer that names its rack (client.rack,
FetchRequest v11+ rack_id), the leader answers a fetch with preferred_read_replica (ReplicaManager
.findPreferredReadReplica): among the followers that are in the ISR, running, and whose copy holds the
fetch offset, the ones in the consumer's rack; the most caught up of them (lowest id on a tie). None
(the leader serves) when the leader is in that rack, no such follower exists, or no rack is given.
Other selector class names are treated as no selector.
"""

from __future__ import annotations

from mockbroker.state.cluster.cluster import Cluster, Partition
from mockbroker.state.cluster.replicas import end_of

RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def preferred_read_replica(cluster: Cluster, partition: Partition, client_rack: str | None,
                           fetch_offset: int) -> int | None:
    """The follower a consumer in client_rack should fetch from next (None: the leader)."""
    if not client_rack or cluster.config.get("replica.selector.class") != RACK_AWARE_SELECTOR:
        return None
    leader = cluster.nodes.get(partition.leader_id)
    if leader is None or leader.rack == client_rack:
        return None
    candidates = [n for n in partition.replicas
                  if n != partition.leader_id and n in partition.isr and cluster.nodes[n].alive
                  and cluster.nodes[n].rack == client_rack
                  and partition.log.log_start_offset <= fetch_offset <= end_of(partition, n)]
    if not candidates:
        return None
    return max(candidates, key=lambda n: (end_of(partition, n), -n))
