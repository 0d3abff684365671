"""Partition reassignments (AlterPartitionReassignments / ListPartitionReassignments), as Kafka's controller
runs them (ReplicationControlManager, PartitionReassignmentReplicas):

- Starting one: the target replica list is checked like a manual assignment (INVALID_REPLICA_ASSIGNMENT:
  empty, unknown nodes, a node twice). The partition's replicas become the target followed by the
  replicas being removed; the new ones (adding) join when they have caught up, the removed ones
  (removing) stay until then. A new target replaces a reassignment in progress (computed against the
  original replicas).
- The new replicas catch up after mockbroker.reassignment.ms on the broker clock (0, the default: at once)
  if their node is running and not stalled (else when it is, see `complete_due`). Then the reassignment
  completes: the replicas are the target, the removed ones leave the ISR, and a leader that is leaving
  hands over to the first target replica in the ISR; the leader epoch goes up when replicas were removed
  (Kafka bumps it when the replica set loses a member).
- Cancelling (replicas null): NO_REASSIGNMENT_IN_PROGRESS when there is none; else the original replicas
  come back (the added ones leave, a leader among them hands over).
- Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION with Kafka's messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.cluster import leadership, replicas
from mockbroker.state.cluster.cluster import Cluster, Partition, Reassignment


@dataclass(frozen=True)
class OngoingReassignment:
    """What ListPartitionReassignments reports of one partition."""

    topic: str
    partition: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]


def _partition(cluster: Cluster, topic: str, index: int) -> Partition:
    t = cluster.topic(topic)
    if t is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}.")
    p = t.partition(index)
    if p is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{index}.")
    return p


def original_replicas(partition: Partition) -> list[int]:
    """The replicas before the reassignment in progress (all of them when none is)."""
    adding = partition.reassignment.adding if partition.reassignment is not None else []
    return [n for n in partition.replicas if n not in adding]


def alter(cluster: Cluster, topic: str, index: int, target: list[int] | None, now_ms: int) -> Partition:
    """Start (or replace, or with target None cancel) the reassignment of one partition; KafkaError with
    Kafka's code otherwise. The partition, so the caller can schedule its completion."""
    partition = _partition(cluster, topic, index)
    if target is None:
        _cancel(cluster, partition)
        return partition
    cluster.validate_manual_assignment(list(target))
    current = original_replicas(partition)
    _revert(cluster, partition, bump=False)
    removing = [n for n in sorted(set(current) - set(target))]
    adding = [n for n in sorted(set(target) - set(current))]
    partition.replicas = list(target) + removing
    if not adding and not removing:
        partition.reassignment = None
        return partition
    delay = int(cluster.config.get("mockbroker.reassignment.ms"))
    # Only new replicas have anything to catch up: a reassignment that only drops or reorders is done now.
    partition.reassignment = Reassignment(adding, removing, now_ms + max(delay, 0) if adding else now_ms)
    for n in adding:
        replicas.fall_behind(partition, n)
        partition.replica_ends[n] = partition.log.log_start_offset  # a new replica starts from nothing
    try_complete(cluster, partition, now_ms)
    return partition


def _revert(cluster: Cluster, partition: Partition, *, bump: bool) -> None:
    """Back to the original replicas: the ones being added leave (a leader among them hands over)."""
    r = partition.reassignment
    if r is None:
        return
    partition.reassignment = None
    partition.replicas = [n for n in partition.replicas if n not in r.adding]
    for n in r.adding:
        partition.replica_ends.pop(n, None)
    partition.isr = [n for n in partition.replicas if n in partition.isr]
    if partition.leader_id in r.adding or not partition.isr:
        leadership.set_isr_after_reassignment(cluster, partition)
    elif bump:
        replicas.refresh_high_watermark(partition)


def _cancel(cluster: Cluster, partition: Partition) -> None:
    if partition.reassignment is None:
        raise KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "No partition reassignment is in progress.")
    _revert(cluster, partition, bump=True)


def try_complete(cluster: Cluster, partition: Partition, now_ms: int) -> bool:
    """Complete the partition's reassignment if its new replicas have caught up (their time has come and
    their nodes run, not stalled); True when it completed."""
    r = partition.reassignment
    if r is None or now_ms < r.due_ms:
        return False
    for n in r.adding:
        if cluster.nodes[n].alive and not replicas.is_stalled(cluster, n) and partition.leader_id >= 0:
            replicas.catch_up(partition, n)
            if n not in partition.isr:
                partition.isr = [m for m in partition.replicas if m in partition.isr or m == n]
    target = [n for n in partition.replicas if n not in r.removing]
    new_isr = [n for n in partition.isr if n not in r.removing]
    if not new_isr or not all(n in new_isr for n in target):
        replicas.refresh_high_watermark(partition)
        return False
    partition.reassignment = None
    partition.replicas = target
    partition.isr = [n for n in target if n in new_isr]
    for n in r.removing:
        partition.replica_ends.pop(n, None)
    leadership.set_isr_after_reassignment(cluster, partition, bump=bool(r.removing))
    return True


def complete_due(cluster: Cluster, now_ms: int) -> list[Partition]:
    """Complete every reassignment that can complete now; the partitions that did."""
    return [p for t in cluster.topics.values() for p in t.partitions
            if p.reassignment is not None and try_complete(cluster, p, now_ms)]


def next_due_ms(cluster: Cluster) -> int | None:
    """When the earliest pending reassignment is due (None: none pending)."""
    dues = [p.reassignment.due_ms for t in cluster.topics.values() for p in t.partitions if p.reassignment is not None]
    return min(dues) if dues else None


def ongoing(cluster: Cluster, wanted: list[tuple[str, list[int]]] | None) -> list[OngoingReassignment]:
    """The reassignments in progress: of every topic (wanted None) or of the partitions named (unknown
    topics and partitions, and partitions without one, are left out, as Kafka does)."""
    out = []
    if wanted is None:
        wanted = [(name, [p.index for p in t.partitions]) for name, t in sorted(cluster.topics.items())]
    for name, indexes in wanted:
        t = cluster.topic(name)
        if t is None:
            continue
        for i in indexes:
            p = t.partition(i)
            if p is not None and p.reassignment is not None:
                out.append(OngoingReassignment(name, i, list(p.replicas), list(p.reassignment.adding),
                                               list(p.reassignment.removing)))
    return out
