"""When compaction and retention run: Kafka's log retention task and cleaner thread, on the broker clock.

- Retention (LogManager.cleanupLogs): every log.retention.check.interval.ms (first run 30 s after start,
  Kafka's InitialTaskDelayMs), for the logs of topics that are not compacted: deleteOldSegments
  (mockbroker.state.log.retention), RETENTION_STEP_PARTITIONS partitions per loop pass.
- Cleaner (LogCleaner's thread): every log.cleaner.backoff.ms (Kafka's pause when no log needed cleaning),
  when log.cleaner.enable: every compacted log whose dirty ratio is above min.cleanable.dirty.ratio, or
  whose earliest dirty segment is overdue by max.compaction.lag.ms, is cleaned, filthiest first; then the
  logs with cleanup.policy compact,delete get deleteOldSegments (Kafka's cleaner does that for them).
  A pass goes in steps (issue #20's bound): each step cleans logs spanning at most
  mockbroker.max.records.per.batch offsets (one log always), the next step at the loop's next pass, so
  connections are served between logs; each step looks at the logs afresh (a deleted topic is skipped).
- Producer expiry: every producer.id.expiration.check.interval.ms (at most), producer state idle for
  producer.id.expiration.ms is dropped (Kafka's ProducerStateManager.removeExpiredProducers).
- Tests: MockBroker.compact(topic[, partition]) rolls the active segment and cleans now (no threshold);
  MockBroker.enforce_retention(topic=None) runs deleteOldSegments now; broker.clock.advance(seconds) runs
  whatever became due.
Callbacks run on the broker's loop (mockbroker.scheduler); this module holds no asyncio.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.state.log.cleaner import CleanerStats, clean, clean_now, log_to_clean, prune_aborted_index
from mockbroker.state.log.retention import delete_old_segments, has_delete_policy
from mockbroker.state.log.validation import MAX_RECORDS_PER_BATCH

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.scheduler import Scheduler, Timer
    from mockbroker.state.cluster.cluster import Cluster, Partition, Topic
    from mockbroker.state.log.partition_log import PartitionLog

log = logging.getLogger("mockbroker.maintenance")

INITIAL_TASK_DELAY_MS = 30_000  # Kafka's LogManager.InitialTaskDelayMs
PRODUCER_EXPIRATION_CHECK_MS = 600_000  # Kafka's producer.id.expiration.check.interval.ms
DEFAULT_CLEANER_BACKOFF_MS = 15_000
RETENTION_STEP_PARTITIONS = 500  # a scheduled retention pass looks at this many partitions per loop pass


class LogMaintenance:
    def __init__(self, cluster: Cluster, clock: Clock, scheduler: Scheduler,
                 txn_index: Callable[[], Any] | None = None) -> None:
        """txn_index: returns the partitions' aborted-transaction index (state/log/aborted_index.py, kept by
        the transaction coordinator), which each pass prunes as Kafka rebuilds the cleaned transaction
        index."""
        self.cluster = cluster
        self.clock = clock
        self.scheduler = scheduler
        # Logs a cleaning pass failed on (a batch it cannot decode): skipped by later passes, as Kafka's
        # LogCleanerManager.markPartitionUncleanable, so the failure is logged once, not every pass.
        self.uncleanable: weakref.WeakSet[PartitionLog] = weakref.WeakSet()
        self.txn_index = txn_index
        self._timers: list[Timer] = []
        self._generation = 0  # bumped at each start: a cleaner pass of an earlier start stops

    def start(self) -> None:
        """Schedule the retention check and the cleaner (called on the broker's loop at start)."""
        for timer in self._timers:  # a restarted broker
            timer.cancel()
        self._generation += 1
        self._timers = [
            self.scheduler.call_later(INITIAL_TASK_DELAY_MS, self._retention_task),
            self.scheduler.call_later(self._cleaner_backoff_ms(), self._cleaner_task),
            self.scheduler.call_later(PRODUCER_EXPIRATION_CHECK_MS, self._producer_expiry_task),
        ]

    # -- settings ----------------------------------------------------------------------------------
    def _broker_int(self, name: str, default: int) -> int:
        try:
            return int(self.cluster.config.get(name))
        except KeyError:
            return default

    def _cleaner_backoff_ms(self) -> int:
        return max(1, self._broker_int("log.cleaner.backoff.ms", DEFAULT_CLEANER_BACKOFF_MS))

    # -- scheduled work ----------------------------------------------------------------------------
    def _retention_task(self) -> None:
        self._retention_step(self._generation, self._partitions(), 0)

    def _retention_step(self, generation: int, parts: list[tuple[Topic, Partition]], start: int) -> None:
        """One step of a scheduled retention pass: deleteOldSegments for the next RETENTION_STEP_PARTITIONS
        partitions of the pass's list (issue #37: a pass over 10^4 partitions in one callback held the loop
        for tens of ms); the rest at the loop's next pass, skipping topics deleted meanwhile; at the end,
        the next pass after log.retention.check.interval.ms."""
        if generation != self._generation:
            return  # restarted meanwhile: the new start scheduled its own pass
        end = start + RETENTION_STEP_PARTITIONS
        try:
            now = self.clock.now_ms()
            for t, p in parts[start:end]:
                if not t.config.compacted and self.cluster.topics.get(t.name) is t:
                    delete_old_segments(p.log, t.config, now)
        finally:
            if end < len(parts):
                self.scheduler.call_soon(lambda: self._retention_step(generation, parts, end))
            else:
                interval = max(1, self._broker_int("log.retention.check.interval.ms", 300_000))
                self._timers[0] = self.scheduler.call_later(interval, self._retention_task)

    def _producer_expiry_task(self) -> None:
        """Drop producer state idle for producer.id.expiration.ms (broker clock), then check again."""
        expiration = self._broker_int("producer.id.expiration.ms", 86_400_000)
        now = self.clock.now_ms()
        for topic in self.cluster.topics.values():
            for p in topic.partitions:
                p.log.producers.expire(now, expiration)
        self._timers[2] = self.scheduler.call_later(min(expiration, PRODUCER_EXPIRATION_CHECK_MS),
                                                    self._producer_expiry_task)

    def _cleaner_task(self) -> None:
        if not self.cluster.config.get("log.cleaner.enable"):
            self._timers[1] = self.scheduler.call_later(self._cleaner_backoff_ms(), self._cleaner_task)
            return
        self._cleaner_step(self._generation, set())

    def _cleaner_step(self, generation: int, cleaned: set[int]) -> None:
        """One step of a cleaner pass: the filthiest logs not cleaned yet in this pass, as many as fit in
        one step's work (handlers/request_steps.py's bound, for the cleaner: logs spanning at most
        mockbroker.max.records.per.batch offsets, one log always). With logs left, the pass goes on at the
        loop's next pass, so connections are served between logs (Kafka's cleaner thread also cleans one
        log per iteration); at its end, the compact,delete logs' retention and the backoff."""
        if generation != self._generation:
            return  # restarted meanwhile: the new start scheduled its own pass
        more = False
        try:
            _, more = self._clean_filthiest(cleaned, self._broker_int(MAX_RECORDS_PER_BATCH, 200_000))
            if not more:
                self.delete_compacted_and_deleted()
        finally:
            if more:
                self.scheduler.call_soon(lambda: self._cleaner_step(generation, cleaned))
            else:
                self._timers[1] = self.scheduler.call_later(self._cleaner_backoff_ms(), self._cleaner_task)

    def _partitions(self, topic: str | None = None) -> list[tuple[Topic, Partition]]:
        if topic is not None:
            t = self.cluster.topic(topic)
            if t is None:
                raise KeyError(f"no topic {topic!r}")
            return [(t, p) for p in t.partitions]
        return [(t, p) for t in list(self.cluster.topics.values()) for p in t.partitions]

    def _compacted_partitions(self) -> list[tuple[Topic, Partition]]:
        """The partitions of compacted topics (a topic's policy looked at once, not per partition: a cleaner pass
        over 10^4 partitions of topics that are not compacted costs a look at each topic)."""
        return [(t, p) for t in list(self.cluster.topics.values()) if t.config.compacted for p in t.partitions]

    def cleanup_logs(self) -> int:
        """LogManager.cleanupLogs: deleteOldSegments for every log of a topic that is not compacted."""
        now = self.clock.now_ms()
        total = 0
        for t, p in self._partitions():
            if not t.config.compacted:
                total += delete_old_segments(p.log, t.config, now)
        return total

    def delete_compacted_and_deleted(self) -> int:
        """The cleaner's deleteOldSegments for logs with cleanup.policy compact,delete."""
        now = self.clock.now_ms()
        total = 0
        for t, p in self._compacted_partitions():
            if has_delete_policy(t.config):
                total += delete_old_segments(p.log, t.config, now)
        return total

    def clean_filthiest(self) -> list[CleanerStats]:
        """Clean every compacted log that needs it, filthiest first (all at once: a test's hook; the
        scheduled cleaner goes in steps)."""
        return self._clean_filthiest(set(), None)[0]

    def _clean_filthiest(self, cleaned: set[int], step_offsets: int | None) -> tuple[list[CleanerStats], bool]:
        """Clean the compacted logs that need it and are not in `cleaned` (ids of logs this pass did),
        filthiest first, looked at afresh (a topic deleted or a log cleaned meanwhile is not cleaned again);
        with `step_offsets`, stop once the logs cleaned span that many offsets. Whether logs are left."""
        now = self.clock.now_ms()
        candidates = []
        for t, p in self._compacted_partitions():
            if p.log not in self.uncleanable and id(p.log) not in cleaned:
                target = log_to_clean(p.log, t.config, now)
                if target.should_clean:
                    candidates.append(target)
        candidates.sort(key=lambda c: c.cleanable_ratio, reverse=True)
        out: list[CleanerStats] = []
        work = 0
        for c in candidates:
            span = c.first_uncleanable_offset - c.log.log_start_offset  # the records a clean of it reads, at most
            if step_offsets is not None and work and work + span > step_offsets:
                return out, True
            work += span
            cleaned.add(id(c.log))
            try:
                stats = clean(c.log, c.config, now, c.first_dirty_offset, c.first_uncleanable_offset)
            except Exception:  # a log the cleaner cannot read is left as it is, and marked uncleanable
                log.exception("cleaning %s-%d failed: the partition is marked uncleanable", c.log.topic,
                              c.log.partition)
                self.uncleanable.add(c.log)
                continue
            self._prune_aborted_index(c.log, stats)
            out.append(stats)
        return out, False

    def _prune_aborted_index(self, partition_log: PartitionLog, stats: CleanerStats) -> None:
        index = self.txn_index() if self.txn_index is not None else None
        if index is None:
            return
        current = index.entries(partition_log)
        pruned = prune_aborted_index(current, stats)
        if len(pruned) != len(current):
            index.replace(partition_log, pruned)

    # -- test hooks (MockBroker.compact / enforce_retention) ---------------------------------------
    def compact(self, topic: str, partition: int | None = None) -> list[CleanerStats]:
        """Roll the active segment of each partition (or one) of a compacted topic and clean it now."""
        parts = self._partitions(topic)
        t = parts[0][0]
        if not t.config.compacted:
            raise ValueError(f"topic {topic!r} has cleanup.policy={t.config.get('cleanup.policy')}: "
                             "only compacted topics are cleaned")
        if partition is not None:
            parts = [(tt, p) for tt, p in parts if p.index == partition]
            if not parts:
                raise KeyError(f"no partition {topic}-{partition}")
        now = self.clock.now_ms()
        out = []
        for tt, p in parts:
            stats = clean_now(p.log, tt.config, now)
            self._prune_aborted_index(p.log, stats)
            out.append(stats)
        return out

    def enforce_retention(self, topic: str | None = None) -> int:
        """deleteOldSegments now for every log (or a topic's): the number of segments deleted."""
        now = self.clock.now_ms()
        return sum(delete_old_segments(p.log, t.config, now) for t, p in self._partitions(topic))
