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
  change alone does not (KRaft since 3.6). Parked fetches are woken so they see the change. The new
  leader's copy becomes the log (state/cluster/replicas.py): an unclean election, or a stalled ISR member
  elected, cuts the log back to where that replica's copy ended.
- ElectLeaders (`elect_leader`): preferred and unclean elections with Kafka's per-partition errors; an
  offline partition of a topic that turns unclean.leader.election.enable on elects a live replica at the
  next `elect_unclean_where_enabled` (the server runs it every unclean.leader.election.interval.ms).
- The controller is the lowest live node id.

No I/O: the server closes the node's listeners; this module changes the model only.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import replicas
from mockbroker.state.cluster.cluster import Cluster, Node, Partition

NO_LEADER = -1
# ElectLeaders' election types.
PREFERRED, UNCLEAN = 0, 1
_ERROR_MESSAGES: dict[int, str] = {
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}


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


def _set_leader(cluster: Cluster, partition: Partition, leader: int) -> None:
    """A leader change (or a re-election of the same node after it was offline): the epoch goes up, and the
    new leader's copy becomes the log (state/cluster/replicas.py: cut back to where it ends)."""
    partition.leader_id = leader
    partition.log.leader_epoch += 1
    if leader != NO_LEADER:
        replicas.become_leader(partition, leader, cluster.clock.now_ms())
    replicas.refresh_high_watermark(partition)
    partition.log.notify()


def _elect_unclean(cluster: Cluster, partition: Partition) -> bool:
    """The first live replica (replica order) leads and becomes the whole ISR; whatever the log holds beyond
    its copy is lost. False when no replica is live."""
    live = [n for n in partition.replicas if cluster.nodes[n].alive]
    if not live:
        return False
    partition.isr = [live[0]]
    _set_leader(cluster, partition, live[0])
    return True


def _elect(cluster: Cluster, partition: Partition) -> None:
    """Give the partition the first live ISR member (replica order) as leader; or, when the topic allows
    unclean election, the first live replica (which becomes the whole ISR); else none."""
    live_isr = [n for n in partition.replicas if n in partition.isr and cluster.nodes[n].alive]
    if live_isr:
        _set_leader(cluster, partition, live_isr[0])
        return
    if partition.topic.config.get("unclean.leader.election.enable") and _elect_unclean(cluster, partition):
        return
    if partition.leader_id != NO_LEADER:
        _set_leader(cluster, partition, NO_LEADER)


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
    node.stalled_since_ms = -1
    _update_controller(cluster)
    for p in _partitions(cluster):
        if node_id in p.replicas:
            replicas.fall_behind(p, node_id)
        if node_id in p.isr and len(p.isr) > 1:
            p.isr = [n for n in p.isr if n != node_id]
        if p.leader_id == node_id:
            _elect(cluster, p)
        replicas.refresh_high_watermark(p)


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
        if p.reassignment is not None and node_id in p.reassignment.adding:
            continue  # a replica being added joins the ISR when the reassignment says (state/cluster/reassignments.py)
        if node_id not in p.isr and p.leader_id != NO_LEADER:
            replicas.catch_up(p, node_id)
            p.isr = [n for n in p.replicas if n in p.isr or n == node_id]
        if p.leader_id == NO_LEADER and node_id in p.isr:
            # Back online: the live replicas that waited outside the ISR catch up with it and rejoin.
            _set_leader(cluster, p, node_id)
            rejoin = [n for n in p.replicas if cluster.nodes[n].alive and not replicas.is_stalled(cluster, n)
                      and (p.reassignment is None or n not in p.reassignment.adding)]
            for n in rejoin:
                replicas.catch_up(p, n)
            p.isr = [n for n in p.replicas if n in rejoin or n == node_id]
        replicas.refresh_high_watermark(p)


def move_leader(cluster: Cluster, partition: Partition, to_node: int) -> None:
    """Make `to_node` the leader (it must be a live ISR member), with an epoch bump; a no-op if it leads."""
    _node(cluster, to_node)
    if to_node not in partition.isr or not cluster.nodes[to_node].alive:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                         f"node {to_node} is not a live in-sync replica of {partition.topic.name}-{partition.index} "
                         f"(replicas {partition.replicas}, ISR {partition.isr})")
    if partition.leader_id != to_node:
        _set_leader(cluster, partition, to_node)


def elect_preferred_leaders(cluster: Cluster) -> list[Partition]:
    """Every partition whose preferred replica (the first) is a live ISR member but not the leader gets
    it as leader (Kafka's preferred election); the partitions that changed."""
    changed = []
    for p in _partitions(cluster):
        preferred = p.replicas[0]
        if p.leader_id != preferred and preferred in p.isr and cluster.nodes[preferred].alive:
            _set_leader(cluster, p, preferred)
            changed.append(p)
    return changed


def elect_leader(cluster: Cluster, partition: Partition, election: int) -> tuple[int, str | None]:
    """ElectLeaders for one partition, as Kafka's controller (ReplicationControlManager.electLeader):
    PREFERRED: ELECTION_NOT_NEEDED when the first replica leads; else it leads if it is a live ISR member;
    else PREFERRED_LEADER_NOT_AVAILABLE (a leaderless partition takes another live ISR member if any).
    UNCLEAN: ELECTION_NOT_NEEDED when the partition has a leader; else a live ISR member, else the first
    live replica (whatever the topic's unclean.leader.election.enable); else ELIGIBLE_LEADERS_NOT_AVAILABLE.
    The error code and Kafka's message (None when elected)."""
    def error(code: int) -> tuple[int, str | None]:
        return code, _ERROR_MESSAGES[code]

    live_isr = [n for n in partition.replicas if n in partition.isr and cluster.nodes[n].alive]
    if election == PREFERRED:
        preferred = partition.replicas[0]
        if partition.leader_id == preferred:
            return error(ErrorCode.ELECTION_NOT_NEEDED)
        if preferred in live_isr:
            _set_leader(cluster, partition, preferred)
            return ErrorCode.NONE, None
        if partition.leader_id == NO_LEADER and live_isr:
            _set_leader(cluster, partition, live_isr[0])
            return ErrorCode.NONE, None
        return error(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)
    if partition.leader_id != NO_LEADER:
        return error(ErrorCode.ELECTION_NOT_NEEDED)
    if live_isr:
        _set_leader(cluster, partition, live_isr[0])
        return ErrorCode.NONE, None
    if _elect_unclean(cluster, partition):
        return ErrorCode.NONE, None
    return error(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)


def elect_unclean_where_enabled(cluster: Cluster) -> list[Partition]:
    """What Kafka's controller does every unclean.leader.election.interval.ms: each partition without a
    leader whose topic has unclean.leader.election.enable (now) elects a live replica; the ones elected."""
    elected = []
    for p in _partitions(cluster):
        if p.leader_id == NO_LEADER and p.topic.config.get("unclean.leader.election.enable"):
            if elect_leader(cluster, p, UNCLEAN)[0] == ErrorCode.NONE:
                elected.append(p)
    return elected


def set_isr(cluster: Cluster, partition: Partition, isr: list[int]) -> None:
    """Replace the ISR (a non-empty subset of the replicas, as the test wants it: a lagging follower,
    say). A leader left outside it loses leadership to the first live member; a dead member is refused."""
    if not isr or any(n not in partition.replicas for n in isr) or len(set(isr)) != len(isr):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"the ISR must be a non-empty subset of the replicas {partition.replicas}, got {isr}")
    dead = [n for n in isr if not cluster.nodes[n].alive]
    if dead:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"node(s) {dead} are stopped and cannot be in the ISR")
    for n in partition.replicas:
        if n in isr:
            replicas.catch_up(partition, n)
        else:
            replicas.fall_behind(partition, n)
    partition.isr = [n for n in partition.replicas if n in isr]
    if partition.leader_id not in partition.isr:
        _elect(cluster, partition)
    replicas.refresh_high_watermark(partition)


def set_isr_after_reassignment(cluster: Cluster, partition: Partition, *, bump: bool = False) -> None:
    """After a reassignment changed the replicas and ISR (state/cluster/reassignments.py): a leader that is no
    longer a live ISR member hands over (epoch + 1); with bump, a leader that stays gets an epoch bump too
    (Kafka bumps it when the replica set lost a member)."""
    if partition.leader_id not in partition.isr or not cluster.nodes[partition.leader_id].alive:
        _elect(cluster, partition)
    elif bump:
        _set_leader(cluster, partition, partition.leader_id)
    replicas.refresh_high_watermark(partition)


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
