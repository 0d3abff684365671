"""The share coordinator's two periodic jobs on `__share_group_state`, on the broker clock, as Kafka's
ShareCoordinatorService runs them (setupRecordPruning, setupSnapshotColdPartitions):

- every share.coordinator.cold.partition.snapshot.interval.ms (300000): a new ShareSnapshot of each share
  partition whose last snapshot is at least that old (ShareStateStore.snapshot_cold), so a quiet share
  partition does not keep the records before its old snapshot needed;
- every share.coordinator.state.topic.prune.interval.ms (300000): for each partition of the topic, the records
  before its last redundant offset (state/share/pruning.py) are deleted as DeleteRecords deletes them
  (Cluster.delete_records: the log start offset moves, segments wholly below it go, on disk too), once per
  offset (Kafka's lastPrunedOffsets); an offset the log refuses (above its high watermark) is tried again at
  the next run.

Each job runs again one interval after it ran (Kafka adds a new TimerTask when one completes). `start(now_ms)`
arms both, `run_due(now_ms)` runs what is due (called by ShareCoordinator.expire, which runs when the broker
clock moves and at the times `wake_at` asks for). Pure: no I/O; the deletes go through the cluster's model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.errors import KafkaError
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster
    from mockbroker.state.share.persisted import ShareStateStore

log = logging.getLogger("mockbroker.share")

PRUNE_INTERVAL = "share.coordinator.state.topic.prune.interval.ms"
COLD_SNAPSHOT_INTERVAL = "share.coordinator.cold.partition.snapshot.interval.ms"


class StateTopicJobs:
    def __init__(self, cluster: Cluster, store: ShareStateStore) -> None:
        self.cluster = cluster
        self.store = store
        self.next_prune_ms: int | None = None
        self.next_cold_snapshot_ms: int | None = None

    def _interval(self, name: str) -> int:
        return max(1, int(self.cluster.config.get(name)))

    def start(self, now_ms: int, wake_at: Callable[[int], None] | None) -> None:
        """Arm both jobs one interval from now."""
        self.next_prune_ms = now_ms + self._interval(PRUNE_INTERVAL)
        self.next_cold_snapshot_ms = now_ms + self._interval(COLD_SNAPSHOT_INTERVAL)
        if wake_at is not None:
            wake_at(self.next_prune_ms)
            wake_at(self.next_cold_snapshot_ms)

    def run_due(self, now_ms: int, wake_at: Callable[[int], None] | None) -> None:
        """Run the jobs whose time came (cold snapshots first, so a prune at the same time sees them)."""
        if self.next_cold_snapshot_ms is not None and now_ms >= self.next_cold_snapshot_ms:
            self.store.snapshot_cold(now_ms, self._interval(COLD_SNAPSHOT_INTERVAL))
            self.next_cold_snapshot_ms = now_ms + self._interval(COLD_SNAPSHOT_INTERVAL)
            if wake_at is not None:
                wake_at(self.next_cold_snapshot_ms)
        if self.next_prune_ms is not None and now_ms >= self.next_prune_ms:
            self.prune()
            self.next_prune_ms = now_ms + self._interval(PRUNE_INTERVAL)
            if wake_at is not None:
                wake_at(self.next_prune_ms)

    def prune(self) -> dict[int, int]:
        """Delete the redundant records of each partition of __share_group_state now; the new log start offset
        of each partition pruned."""
        topic = self.cluster.topic(SHARE_STATE_TOPIC)
        done: dict[int, int] = {}
        if topic is None:
            return done
        for index, offset in sorted(self.store.prune_points().items()):
            if not 0 <= index < len(topic.partitions):
                continue
            try:
                done[index] = self.cluster.delete_records(topic.partitions[index], offset)
            except KafkaError as exc:  # Kafka logs it and tries at the next run
                log.warning("%s-%d: pruning before offset %d failed: %s", SHARE_STATE_TOPIC, index, offset, exc)
                continue
            self.store.pruned_to(index, offset)
        return done
