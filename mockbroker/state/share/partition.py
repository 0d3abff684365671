"""One share partition as Kafka's SharePartition keeps it (KIP-932): the records of one topic partition
that one share group consumes together.

- `start_offset` (SPSO): every record below it is acknowledged or archived; `end_offset` (SPEO): the first
  offset never acquired. Records in [start, end) are in flight, each with a state (AVAILABLE, ACQUIRED,
  ACKNOWLEDGED, ARCHIVED), a delivery count and, while acquired, the member holding it and its lock expiry.
- `acquire` hands a member the available in-flight records first, then new ones from `end_offset` up to the
  high watermark, at most `max_in_flight` records in flight (group.share.partition.max.record.locks), as
  ranges of offsets with one delivery count each (ShareFetch's AcquiredRecords).
- `acknowledge`: ACCEPT (1) -> ACKNOWLEDGED, RELEASE (2) -> AVAILABLE, REJECT (3) -> ARCHIVED, GAP (0) ->
  ARCHIVED (no record there). Only the member holding a record's lock may acknowledge it
  (INVALID_RECORD_STATE otherwise).
- A released or timed-out record whose delivery count reached the limit (group.share.delivery.count.limit)
  is archived instead of made available again. `expire(now_ms)` ends the locks that ran out.
- The start offset moves past the acknowledged and archived records at its head.
- read_committed (share.isolation.level): the caller bounds acquisition by the last stable offset and names
  the offsets of aborted transactions (`skip`): they are archived as the end moves past them, never
  acquired (delivery count 0), as Kafka's SharePartition archives aborted batches.
Simpler than Kafka: state is kept per record, not per batch (Kafka keeps whole batches until a batch is
split by acknowledgements); the records acquired are exactly those asked for (Kafka rounds to batches).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.copying import copy_attrs


class RecordState(IntEnum):
    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3


@dataclass
class InFlight:
    """One in-flight record: its state, how often it was delivered, who holds it and until when."""

    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None
    lock_expiry_ms: int | None = None


@dataclass(frozen=True)
class AcquiredRange:
    """ShareFetch's AcquiredRecords: offsets first..last (inclusive), all delivered delivery_count times."""

    first_offset: int
    last_offset: int
    delivery_count: int


class SharePartition:
    def __init__(self, start_offset: int, *, lock_duration_ms: int = 30000, delivery_limit: int = 5,
                 max_in_flight: int = 2000) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.lock_duration_ms = lock_duration_ms
        self.delivery_limit = delivery_limit
        self.max_in_flight = max_in_flight
        self.records: dict[int, InFlight] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> SharePartition:
        """A copy for snapshots (mockbroker/snapshots.py), as deepcopy's, faster: each in-flight record copied one
        level (its fields are values: a state, a count, a member id, an expiry), the rest by state/copying.py."""
        new = copy_attrs(self, memo, shallow=("records",))
        new.records = {offset: _copied(rec) for offset, rec in self.records.items()}
        return new

    # -- acquisition -------------------------------------------------------------------------------
    def acquire(self, member_id: str, high_watermark: int, max_records: int, now_ms: int,
                skip: frozenset[int] = frozenset()) -> list[AcquiredRange]:
        """Acquire up to max_records records for member_id (locked until now + lock duration), new ones up to
        high_watermark (the last stable offset for read_committed); the offsets in `skip` are archived."""
        self.expire(now_ms)
        if high_watermark < self.start_offset:  # records deleted under us: nothing below the log is in flight
            return []
        taken: list[tuple[int, int]] = []
        for offset in sorted(self.records):
            if len(taken) >= max_records:
                break
            rec = self.records[offset]
            if rec.state == RecordState.AVAILABLE:
                self._lock(rec, member_id, now_ms)
                taken.append((offset, rec.delivery_count))
        while (len(taken) < max_records and self.end_offset < high_watermark
               and self.end_offset - self.start_offset < self.max_in_flight):
            rec = InFlight()
            self.records[self.end_offset] = rec
            if self.end_offset in skip:
                rec.state = RecordState.ARCHIVED
            else:
                self._lock(rec, member_id, now_ms)
                taken.append((self.end_offset, rec.delivery_count))
            self.end_offset += 1
        if skip:
            self._advance_start()
        return _ranges(taken)

    def _lock(self, rec: InFlight, member_id: str, now_ms: int) -> None:
        rec.state = RecordState.ACQUIRED
        rec.delivery_count += 1
        rec.member_id = member_id
        rec.lock_expiry_ms = now_ms + self.lock_duration_ms

    # -- acknowledgement ---------------------------------------------------------------------------
    def acknowledge(self, member_id: str, first: int, last: int, types: list[int], now_ms: int) -> None:
        """Apply one AcknowledgementBatch: one type for the whole range, or one per offset. Raises
        KafkaError(INVALID_RECORD_STATE) when a record is not acquired by member_id (nothing changed then),
        INVALID_REQUEST for a malformed batch."""
        self.expire(now_ms)
        if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid acknowledgement batch")
        if any(t not in (0, 1, 2, 3) for t in types):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid acknowledge type")
        for offset in range(first, last + 1):
            rec = self.records.get(offset)
            if rec is None or rec.state != RecordState.ACQUIRED or rec.member_id != member_id:
                raise KafkaError(ErrorCode.INVALID_RECORD_STATE)
        for i, offset in enumerate(range(first, last + 1)):
            kind = AckType(types[0] if len(types) == 1 else types[i])
            rec = self.records[offset]
            if kind == AckType.ACCEPT:
                self._settle(rec, RecordState.ACKNOWLEDGED)
            elif kind == AckType.RELEASE:
                self._release(rec)
            else:
                self._settle(rec, RecordState.ARCHIVED)
        self._advance_start()

    def release_member(self, member_id: str) -> int:
        """Hand back every record member_id holds (it left the group or its share session closed)."""
        released = 0
        for rec in self.records.values():
            if rec.state == RecordState.ACQUIRED and rec.member_id == member_id:
                self._release(rec)
                released += 1
        self._advance_start()
        return released

    def expire(self, now_ms: int) -> int:
        """End the acquisition locks that ran out by now_ms; how many did."""
        expired = 0
        for rec in self.records.values():
            if rec.state == RecordState.ACQUIRED and rec.lock_expiry_ms is not None and rec.lock_expiry_ms <= now_ms:
                self._release(rec)
                expired += 1
        if expired:
            self._advance_start()
        return expired

    def _release(self, rec: InFlight) -> None:
        self._settle(rec, RecordState.ARCHIVED if rec.delivery_count >= self.delivery_limit else RecordState.AVAILABLE)

    @staticmethod
    def _settle(rec: InFlight, state: RecordState) -> None:
        rec.state = state
        rec.member_id = None
        rec.lock_expiry_ms = None

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            rec = self.records.get(self.start_offset)
            if rec is not None and rec.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    # -- moving the window -------------------------------------------------------------------------
    def skip_to(self, offset: int) -> None:
        """Start again at offset (the log start moved above the start offset): everything below is gone."""
        if offset <= self.start_offset:
            return
        for o in [o for o in self.records if o < offset]:
            del self.records[o]
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)

    def next_lock_expiry(self) -> int | None:
        """The earliest lock expiry of an acquired record (None: nothing acquired)."""
        expiries = [r.lock_expiry_ms for r in self.records.values()
                    if r.state == RecordState.ACQUIRED and r.lock_expiry_ms is not None]
        return min(expiries) if expiries else None

    def describe(self) -> dict[str, object]:
        """For inspection: offsets and each in-flight record."""
        return {"start_offset": self.start_offset, "end_offset": self.end_offset,
                "records": [{"offset": o, "state": r.state.name, "delivery_count": r.delivery_count,
                             "member_id": r.member_id, "lock_expiry_ms": r.lock_expiry_ms}
                            for o, r in sorted(self.records.items())]}


def _copied(rec: InFlight) -> InFlight:
    new = object.__new__(InFlight)
    new.__dict__.update(rec.__dict__)
    return new


def _ranges(taken: list[tuple[int, int]]) -> list[AcquiredRange]:
    """(offset, delivery count) in offset order -> ranges of consecutive offsets with one delivery count."""
    out: list[AcquiredRange] = []
    for offset, count in taken:
        if out and out[-1].last_offset + 1 == offset and out[-1].delivery_count == count:
            out[-1] = AcquiredRange(out[-1].first_offset, offset, count)
        else:
            out.append(AcquiredRange(offset, offset, count))
    return out
