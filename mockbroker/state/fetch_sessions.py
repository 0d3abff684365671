"""Fetch sessions (KIP-227): the broker remembers a consumer's partitions so fetches can be incremental.

Session id and epoch in a FetchRequest (v7+):
- epoch -1 (FINAL): close the session named (if any); this fetch is a full, sessionless one.
- epoch 0 (INITIAL): close the session named (if any) and open a new one holding the request's
  partitions; the response carries the new session id (0 when the cache is full: sessionless).
- epoch > 0: an incremental fetch of an open session. Unknown id -> FETCH_SESSION_ID_NOT_FOUND, wrong
  epoch -> INVALID_FETCH_SESSION_EPOCH. The request's partitions are added or updated, the forgotten
  ones removed; the response holds only the partitions with something new (records, a changed high
  watermark / last stable offset / log start offset, or an error).

The cache holds max.incremental.fetch.session.cache.slots sessions and evicts as Kafka's
FetchSessionCache.tryEvict does, on the broker clock, when a new session needs a slot:
1. the least recently used session, if idle for more than EVICTION_MS (Kafka's
   MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, 2 minutes);
2. else the smallest session (fewest partitions, then lowest id) among those older than EVICTION_MS when
   last used, if the new session has more partitions than it;
3. else no session: the fetch is answered sessionless (session id 0).
Sessions are all unprivileged (consumers; there are no follower fetches here). Kafka 3.6+ splits its
cache in shards; this is one shard holding every slot.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
EVICTION_MS = 120_000

PartitionKey = tuple[str, uuid.UUID, int]  # (topic name, topic id, partition)


@dataclass
class SessionPartition:
    topic: str
    topic_id: uuid.UUID
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    # What the last response told the client (to decide what an incremental response must carry).
    sent_high_watermark: int = -1
    sent_last_stable_offset: int = -1
    sent_log_start_offset: int = -1

    def needs_response(self, has_records: bool, error: int, hw: int, lso: int, log_start: int) -> bool:
        """Record what this response says; True if an incremental response must include it."""
        must = has_records
        if error != ErrorCode.NONE:
            self.sent_high_watermark = -1  # re-send once the error goes away
            return True
        if hw != self.sent_high_watermark:
            self.sent_high_watermark = hw
            must = True
        if lso != self.sent_last_stable_offset:
            self.sent_last_stable_offset = lso
            must = True
        if log_start != self.sent_log_start_offset:
            self.sent_log_start_offset = log_start
            must = True
        return must


@dataclass
class FetchSession:
    session_id: int
    epoch: int  # the epoch the next incremental request must carry
    partitions: dict[PartitionKey, SessionPartition] = field(default_factory=dict)
    uses_topic_ids: bool = False
    created_ms: int = 0
    last_used_ms: int = 0
    # Set when last used (Kafka's evictableByAll): older than EVICTION_MS then, so a bigger session
    # may take its slot; with the size it had then.
    evictable: bool = False
    cached_size: int = 0

    def update(self, requested: list[SessionPartition], forgotten: list[Any], by_id: bool) -> None:
        """As Kafka's FetchSession.update: the request's partitions are added or updated, then the
        forgotten ones (forgotten_topics_data entries: topic or topic_id, partitions) removed."""
        for want in requested:
            key = (want.topic, want.topic_id, want.partition)
            old = self.partitions.get(key)
            if old is not None:
                old.fetch_offset = want.fetch_offset
                old.partition_max_bytes = want.partition_max_bytes
                old.current_leader_epoch = want.current_leader_epoch
                old.last_fetched_epoch = want.last_fetched_epoch
            else:
                self.partitions[key] = want
        for ft in forgotten:
            gone = [k for k in self.partitions
                    if (k[1] == ft.topic_id if by_id else k[0] == ft.topic) and k[2] in ft.partitions]
            for key in gone:
                del self.partitions[key]

    def next_epoch(self) -> None:
        """The epoch the next incremental request must carry (wrapping to 1, as Kafka's nextEpoch)."""
        self.epoch = self.epoch + 1 if self.epoch < 0x7FFFFFFF else 1


class FetchSessionCache:
    def __init__(self, max_slots: int = 1000, eviction_ms: int = EVICTION_MS) -> None:
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        # Least recently used first: touch() moves a session to the end.
        self.sessions: dict[int, FetchSession] = {}
        self._ids = itertools.count(1)

    def open(self, uses_topic_ids: bool, now_ms: int = 0, size: int = 0) -> FetchSession | None:
        """A new session of `size` partitions, evicting one if the cache is full and Kafka's rules allow
        (see the module's header); None when no slot can be had."""
        if len(self.sessions) >= self.max_slots and not self._try_evict(size, now_ms):
            return None
        session_id = next(self._ids) & 0x7FFFFFFF or next(self._ids)
        session = FetchSession(session_id, 1, uses_topic_ids=uses_topic_ids, created_ms=now_ms)
        self.sessions[session_id] = session
        self.touch(session, now_ms, size)
        return session

    def _try_evict(self, size: int, now_ms: int) -> bool:
        if not self.sessions:
            return False
        oldest = next(iter(self.sessions.values()))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            del self.sessions[oldest.session_id]
            return True
        candidates = [s for s in self.sessions.values() if s.evictable]
        if not candidates:
            return False
        smallest = min(candidates, key=lambda s: (s.cached_size, s.session_id))
        # Kafka compares (privileged, size, id) with the new key's id 0: it must be strictly bigger.
        if size <= smallest.cached_size:
            return False
        del self.sessions[smallest.session_id]
        return True

    def touch(self, session: FetchSession, now_ms: int, size: int | None = None) -> None:
        """Mark a session used now (an incremental fetch), as Kafka's FetchSessionCache.touch."""
        self.sessions[session.session_id] = self.sessions.pop(session.session_id)
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions) if size is None else size
        session.evictable = now_ms - session.created_ms > self.eviction_ms

    def close(self, session_id: int) -> None:
        self.sessions.pop(session_id, None)

    def get(self, session_id: int, epoch: int) -> FetchSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise KafkaError(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            raise KafkaError(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        return session
