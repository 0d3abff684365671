"""How far each replica's copy of a partition goes, and the high watermark that follows from it.

One log serves every replica (state/log/partition_log.py), so a replica that keeps up with the leader needs nothing of
its own. A replica that stops copying keeps the offset its copy had reached, in partition.replica_ends:
- a stopped node: where the log ended when it stopped;
- a stalled node (`stall`): its replica fetchers stop, the node keeps answering clients; where the log
  ended when it stalled. After replica.lag.time.max.ms on the broker clock without being caught up it
  leaves the ISR of every partition it follows (`shrink_lagging`, Kafka's Partition.maybeShrinkIsr:
  a follower whose log end equals the leader's stays, however long it has not fetched);
- a replica taken out of the ISR by set_isr (a lagging follower) or added by a reassignment.
A replica catches up (its entry goes) when it rejoins the ISR.

The high watermark is the smallest log end among the ISR members (the log's replicated_end when an
in-sync follower is behind), so a stalled follower holds it back until it leaves the ISR, as in Kafka.
A replica that becomes leader brings its own log: the log is cut back to where its copy ended
(`become_leader`); that is how an unclean election, or a clean one of a stalled ISR member, loses the
records the new leader never had, and clients see a divergent epoch (KIP-320).

No I/O: the server schedules the ISR checks; this module changes the model only.
"""

from __future__ import annotations

from mockbroker.errors import ErrorCode
from mockbroker.state.cluster.cluster import Cluster, Partition


def end_of(partition: Partition, node_id: int) -> int:
    """Where node_id's copy of the partition ends (the log end offset when it is caught up)."""
    return partition.replica_ends.get(node_id, partition.log.log_end_offset)


def fall_behind(partition: Partition, node_id: int) -> None:
    """node_id stops copying: its copy ends where the log ends now (or where it already stopped)."""
    partition.replica_ends.setdefault(node_id, partition.log.log_end_offset)


def catch_up(partition: Partition, node_id: int) -> None:
    """node_id has everything the leader has again."""
    partition.replica_ends.pop(node_id, None)


def refresh_high_watermark(partition: Partition) -> None:
    """The high watermark stops at the smallest copy among the ISR members; parked requests are woken when
    it moves."""
    log = partition.log
    behind = [partition.replica_ends[n] for n in partition.isr if n in partition.replica_ends]
    replicated = min(behind) if behind else None
    if replicated != log.replicated_end:
        log.replicated_end = replicated
        log.notify()


def become_leader(partition: Partition, leader: int, now_ms: int) -> None:
    """The new leader's copy is the log from now on: what it never had is cut off (Kafka's followers then
    truncate to it), and every other copy ends no further than it."""
    end = end_of(partition, leader)
    partition.replica_ends.pop(leader, None)
    if end < partition.log.log_end_offset:
        partition.log.truncate_to(end, now_ms)
        partition.replica_ends = {n: min(e, partition.log.log_end_offset) for n, e in partition.replica_ends.items()}


def _followed(cluster: Cluster, node_id: int) -> list[Partition]:
    return [p for t in cluster.topics.values() for p in t.partitions if node_id in p.replicas and p.leader_id != node_id]


def stall(cluster: Cluster, node_id: int, now_ms: int) -> None:
    """node_id stops copying from the leaders (it stays up and answers clients)."""
    node = cluster.nodes[node_id]
    if node.stalled_since_ms >= 0:
        return
    node.stalled_since_ms = now_ms
    for p in _followed(cluster, node_id):
        fall_behind(p, node_id)
        refresh_high_watermark(p)


def resume(cluster: Cluster, node_id: int) -> None:
    """node_id copies again: it catches up at once and rejoins the ISR of every partition with a leader."""
    node = cluster.nodes[node_id]
    if node.stalled_since_ms < 0:
        return
    node.stalled_since_ms = -1
    if not node.alive:
        return
    for p in _followed(cluster, node_id):
        if p.leader_id < 0 or (p.reassignment is not None and node_id in p.reassignment.adding):
            continue
        catch_up(p, node_id)
        if node_id not in p.isr:
            p.isr = [n for n in p.replicas if n in p.isr or n == node_id]
        refresh_high_watermark(p)


def is_stalled(cluster: Cluster, node_id: int) -> bool:
    return cluster.nodes[node_id].stalled_since_ms >= 0


def shrink_lagging(cluster: Cluster, now_ms: int) -> list[Partition]:
    """Take every stalled follower out of the ISR where it is behind the leader and has not been caught up
    for more than replica.lag.time.max.ms (it was last caught up when it stalled); the partitions changed."""
    max_lag = int(cluster.config.get("replica.lag.time.max.ms"))
    changed = []
    for node_id, node in sorted(cluster.nodes.items()):
        if node.stalled_since_ms < 0 or now_ms - node.stalled_since_ms <= max_lag:
            continue
        for p in _followed(cluster, node_id):
            if node_id in p.isr and end_of(p, node_id) < p.log.log_end_offset and len(p.isr) > 1:
                p.isr = [n for n in p.isr if n != node_id]
                refresh_high_watermark(p)
                changed.append(p)
    return changed


def check_enough_replicas(partition: Partition, node_id: int, required_offset: int) -> tuple[bool, int]:
    """An acks=all append waiting for the ISR (Kafka's Partition.checkEnoughReplicasReachOffset): done once
    the high watermark reaches required_offset, with NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank
    below min.insync.replicas meanwhile; NOT_LEADER_OR_FOLLOWER once node_id no longer leads."""
    if partition.leader_id != node_id:
        return True, ErrorCode.NOT_LEADER_OR_FOLLOWER
    if partition.log.high_watermark < required_offset:
        return False, ErrorCode.NONE
    if len(partition.isr) < int(partition.topic.config.get("min.insync.replicas")):
        return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    return True, ErrorCode.NONE


def follower_high_watermark(partition: Partition, node_id: int) -> int:
    """What a follower serves consumers up to (KIP-392): the high watermark, no further than its copy."""
    return min(partition.log.high_watermark, end_of(partition, node_id))
