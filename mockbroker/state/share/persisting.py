"""How a live share partition (partition.py, what the partition's leader holds) maps to the state the share
coordinator persists (persisted.py), both ways, as Kafka's SharePartition writes and reads it.

- Persisted: the start offset and, for each in-flight record, its delivery state and count, as ranges.
  Acknowledged and archived records are written as they are; an available record once delivered is written
  available with its count. An acquired record is written as what it was before this acquisition (available,
  one delivery fewer; nothing when never delivered before): its lock belongs to this broker, so after a
  restart, or once the state is read again, it is available again, as in Kafka.
- `changes`: what a write must carry to bring the persisted state to the live one: the ranges that differ
  (a ShareUpdate), or everything (a ShareSnapshot) when something persisted must go.
- `from_state`: a live share partition rebuilt from persisted state (Kafka's SharePartition.maybeInitialize):
  offsets in a range get its state and count, offsets between ranges are available and never delivered.
  At most max_in_flight offsets from the start offset come back (the model keeps a record per offset).
Pure: no I/O.
"""

from __future__ import annotations

from mockbroker.state.share.partition import InFlight, RecordState, SharePartition
from mockbroker.state.share.persisted import PersistedState, Range, lookup

AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def _persisted_value(rec: InFlight) -> tuple[int, int] | None:
    if rec.state == RecordState.ACQUIRED:
        return (AVAILABLE, rec.delivery_count - 1) if rec.delivery_count > 1 else None
    if rec.state == RecordState.AVAILABLE:
        return (AVAILABLE, rec.delivery_count) if rec.delivery_count > 0 else None
    return int(rec.state), rec.delivery_count


def _ranges(values: list[tuple[int, tuple[int, int]]]) -> list[Range]:
    out: list[Range] = []
    for offset, (state, count) in values:
        if out and out[-1][1] + 1 == offset and out[-1][2:] == (state, count):
            out[-1] = (out[-1][0], offset, state, count)
        else:
            out.append((offset, offset, state, count))
    return out


def view(sp: SharePartition) -> list[Range]:
    """The live partition's persisted ranges."""
    values = []
    for offset in sorted(sp.records):
        value = _persisted_value(sp.records[offset])
        if value is not None:
            values.append((offset, value))
    return _ranges(values)


def changes(sp: SharePartition, state: PersistedState) -> tuple[list[Range], bool] | None:
    """(ranges to write, replace) to bring `state` to the live partition; None when nothing changed."""
    live = {o: v for o, rec in sp.records.items() if (v := _persisted_value(rec)) is not None}
    for first, last, _, _ in state.batches:
        if last < sp.start_offset:
            continue
        if last >= sp.end_offset or any(o not in live for o in range(max(first, sp.start_offset), last + 1)):
            return view(sp), True
    changed = sorted((o, v) for o, v in live.items() if lookup(state.batches, o) != v)
    if not changed and state.start_offset == sp.start_offset:
        return None
    return _ranges(changed), False


def from_state(state: PersistedState, *, lock_duration_ms: int, delivery_limit: int,
               max_in_flight: int) -> SharePartition:
    sp = SharePartition(state.start_offset, lock_duration_ms=lock_duration_ms, delivery_limit=delivery_limit,
                        max_in_flight=max_in_flight)
    limit = state.start_offset + max_in_flight
    end = state.start_offset
    for first, last, delivery_state, count in state.batches:
        for offset in range(max(first, state.start_offset), min(last + 1, limit)):
            rec = InFlight(delivery_count=count)
            if delivery_state in (ACKNOWLEDGED, ARCHIVED):
                rec.state = RecordState(delivery_state)
            sp.records[offset] = rec
            end = max(end, offset + 1)
    for offset in range(state.start_offset, end):
        sp.records.setdefault(offset, InFlight())
    sp.end_offset = end
    while sp.start_offset < sp.end_offset and sp.records[sp.start_offset].state != RecordState.AVAILABLE:
        del sp.records[sp.start_offset]  # acknowledged or archived at the head: the start moves past them
        sp.start_offset += 1
    return sp
