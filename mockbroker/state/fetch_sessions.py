"""Fetch sessions (KIP-227): the broker remembers a consumer's partitions so fetches can be incremental.

Session id and epoch in a FetchRequest (v7+):
- epoch -1 (FINAL): close the session named (if any); this fetch is a full, sessionless one.
- epoch 0 (INITIAL): close the session named (if any) and open a new one holding the request's
  partitions; the response carries the new session id (0 when the cache is full: sessionless).
- epoch > 0: an incremental fetch of an open session. Unknown id -> FETCH_SESSION_ID_NOT_FOUND, wrong
  epoch -> INVALID_FETCH_SESSION_EPOCH. The request's partitions are added or updated, the forgotten
  ones removed; the response holds only the partitions with something new (records, a changed high
  watermark / last stable offset / log start offset, or an error).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError

INITIAL_EPOCH = 0
FINAL_EPOCH = -1

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
    def __init__(self, max_slots: int = 1000) -> None:
        self.max_slots = max_slots
        self.sessions: dict[int, FetchSession] = {}
        self._ids = itertools.count(1)

    def open(self, uses_topic_ids: bool) -> FetchSession | None:
        if len(self.sessions) >= self.max_slots:
            return None
        session = FetchSession(next(self._ids) & 0x7FFFFFFF or next(self._ids), 1, uses_topic_ids=uses_topic_ids)
        self.sessions[session.session_id] = session
        return session

    def close(self, session_id: int) -> None:
        self.sessions.pop(session_id, None)

    def get(self, session_id: int, epoch: int) -> FetchSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise KafkaError(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            raise KafkaError(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        return session
