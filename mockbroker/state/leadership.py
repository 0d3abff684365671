"""Partition leadership and the ISR across the nodes of one cluster, as Kafka's controller changes them.

- A node stops: it leaves the ISR of every partition it is in (unless it is the last member: Kafka
  keeps the last one, so the partition can come back with it), and each partition it led elects the
  first live ISR member in replica order; with none, the partition is offline (leader -1,
  LEADER_NOT_AVAILABLE in Metadata) - unclean election (a live replica outside the ISR) happens only
  when the topic's unclean.leader.election.enable is true (off by default).
- A node starts: it rejoins the ISR of every partition it replicates that has a leader (one log per
  partition here, so it is caught up at once), and an offline partition whose ISR holds it elects it
  (then every live replica rejoins that ISR).
- Every leader change bumps the leader epoch (stamped into the batches appended from then on); an ISR
  change alone does not (KRaft since 3.6). Parked fetches are woken so they see the change.
- The controller is the lowest live node id.

No I/O: the server closes the node's listeners; this module changes the model only.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import Cluster, Node, Partition

NO_LEADER = -1


@dataclass(frozen=True)
class PartitionState:
    """What broker.partition_state() answers."""

    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]


def offline_replicas(cluster: Cluster, partition: Partition) -> list[int]:
    """The replicas on nodes that are not running."""
    return [n for n in partition.replicas if not cluster.nodes[n].alive]


def state_of(cluster: Cluster, partition: Partition) -> PartitionState:
    return PartitionState(partition.leader_id, partition.leader_epoch, list(partition.replicas),
                          list(partition.isr), offline_replicas(cluster, partition))


def _set_leader(partition: Partition, leader: int) -> None:
    """A leader change (or a re-election of the same node after it was offline): the epoch goes up."""
    partition.leader_id = leader
    partition.log.leader_epoch += 1
    partition.log.notify()


def _elect(cluster: Cluster, partition: Partition) -> None:
    """Give the partition the first live ISR member (replica order) as leader; or, when the topic allows
    unclean election, the first live replica (which becomes the whole ISR); else none."""
    live_isr = [n for n in partition.replicas if n in partition.isr and cluster.nodes[n].alive]
    if live_isr:
        _set_leader(partition, live_isr[0])
        return
    if partition.topic.config.get("unclean.leader.election.enable"):
        live = [n for n in partition.replicas if cluster.nodes[n].alive]
        if live:
            partition.isr = [live[0]]
            _set_leader(partition, live[0])
            return
    if partition.leader_id != NO_LEADER:
        _set_leader(partition, NO_LEADER)


def _partitions(cluster: Cluster) -> list[Partition]:
    return [p for t in cluster.topics.values() for p in t.partitions]


def _update_controller(cluster: Cluster) -> None:
    live = cluster.live_node_ids()
    cluster.controller_id = live[0] if live else -1


def stop_node(cluster: Cluster, node_id: int) -> None:
    """The node is gone: out of the ISRs (keeping each ISR non-empty), its partitions re-elected."""
    node = _node(cluster, node_id)
    if not node.alive:
        return
    node.alive = False
    _update_controller(cluster)
    for p in _partitions(cluster):
        if node_id in p.isr and len(p.isr) > 1:
            p.isr = [n for n in p.isr if n != node_id]
        if p.leader_id == node_id:
            _elect(cluster, p)


def start_node(cluster: Cluster, node_id: int) -> None:
    """The node is back: in the ISR of every partition it replicates; offline partitions it can lead elect it."""
    node = _node(cluster, node_id)
    if node.alive:
        return
    node.alive = True
    _update_controller(cluster)
    for p in _partitions(cluster):
        if node_id not in p.replicas:
            continue
        if node_id not in p.isr and p.leader_id != NO_LEADER:
            p.isr = [n for n in p.replicas if n in p.isr or n == node_id]
        if p.leader_id == NO_LEADER and node_id in p.isr:
            # Back online: the live replicas that waited outside the ISR catch up with it and rejoin.
            _set_leader(p, node_id)
            p.isr = [n for n in p.replicas if cluster.nodes[n].alive]


def move_leader(cluster: Cluster, partition: Partition, to_node: int) -> None:
    """Make `to_node` the leader (it must be a live ISR member), with an epoch bump; a no-op if it leads."""
    _node(cluster, to_node)
    if to_node not in partition.isr or not cluster.nodes[to_node].alive:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"node {to_node} is not a live in-sync replica of {partition.topic.name}-{partition.index} "
                         f"(replicas {partition.replicas}, ISR {partition.isr})")
    if partition.leader_id != to_node:
        _set_leader(partition, to_node)


def elect_preferred_leaders(cluster: Cluster) -> list[Partition]:
    """Every partition whose preferred replica (the first) is a live ISR member but not the leader gets
    it as leader (Kafka's preferred election); the partitions that changed."""
    changed = []
    for p in _partitions(cluster):
        preferred = p.replicas[0]
        if p.leader_id != preferred and preferred in p.isr and cluster.nodes[preferred].alive:
            _set_leader(p, preferred)
            changed.append(p)
    return changed


def set_isr(cluster: Cluster, partition: Partition, isr: list[int]) -> None:
    """Replace the ISR (a non-empty subset of the replicas, as the test wants it: a lagging follower,
    say). A leader left outside it loses leadership to the first live member; a dead member is refused."""
    if not isr or any(n not in partition.replicas for n in isr) or len(set(isr)) != len(isr):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"the ISR must be a non-empty subset of the replicas {partition.replicas}, got {isr}")
    dead = [n for n in isr if not cluster.nodes[n].alive]
    if dead:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"node(s) {dead} are stopped and cannot be in the ISR")
    partition.isr = [n for n in partition.replicas if n in isr]
    if partition.leader_id not in partition.isr:
        _elect(cluster, partition)


def check_min_insync(partition: Partition) -> None:
    """acks=all: NOT_ENOUGH_REPLICAS when the ISR is smaller than min.insync.replicas (before the append)."""
    min_isr = int(partition.topic.config.get("min.insync.replicas"))
    if len(partition.isr) < min_isr:
        raise KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS,
                         f"The size of the current ISR {partition.isr} is insufficient to satisfy the min.isr "
                         f"requirement of {min_isr} for partition {partition.topic.name}-{partition.index}")


def _node(cluster: Cluster, node_id: int) -> Node:
    node = cluster.nodes.get(node_id)
    if node is None:
        raise KeyError(f"no node {node_id} (nodes: {sorted(cluster.nodes)})")
    return node
