"""The records of `__share_group_state`, as Kafka 4.x's share coordinator writes them (share-coordinator's
ShareSnapshotKey/Value and ShareUpdateKey/Value message definitions). Sans-IO: bytes in, dataclasses out.

A key is the record type (an int16, the definition's apiKey) and its fields, not flexible:
    0 ShareSnapshotKey    group id (string), topic id (uuid), partition (int32)
    1 ShareUpdateKey      the same fields
A value is an int16 version (0) and flexible fields (compact arrays, tagged fields after each struct):
    ShareSnapshotValue    SnapshotEpoch, StateEpoch, LeaderEpoch (int32), StartOffset, CreateTimestamp,
                          WriteTimestamp (int64), StateBatches
    ShareUpdateValue      SnapshotEpoch, LeaderEpoch (int32), StartOffset (int64, -1: not changed), StateBatches
A StateBatch is FirstOffset, LastOffset (int64), DeliveryState (int8: 0 available, 2 acknowledged,
4 archived), DeliveryCount (int16). A tombstone (value None) is written with a ShareSnapshotKey and removes
the share partition's state. Tagged fields not modelled here are skipped when read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from .errors import DecodeError
from .primitives import Reader, Writer

SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1
RECORD_TYPES = frozenset({SHARE_SNAPSHOT, SHARE_UPDATE})


@dataclass(frozen=True)
class ShareStateKey:
    """A ShareSnapshotKey (record_type 0) or ShareUpdateKey (1)."""

    record_type: int
    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class ShareSnapshotValue:
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: list[StateBatch] = field(default_factory=list)


@dataclass(frozen=True)
class ShareUpdateValue:
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: list[StateBatch] = field(default_factory=list)


def encode_key(key: ShareStateKey) -> bytes:
    w = Writer()
    w.int16(key.record_type)
    w.string(key.group_id)
    w.uuid(key.topic_id)
    w.int32(key.partition)
    return w.getvalue()


def decode_key(data: bytes | memoryview) -> ShareStateKey:
    r = Reader(data)
    record_type = r.int16()
    if record_type not in RECORD_TYPES:
        raise DecodeError(f"__share_group_state key type {record_type} is not a share state record")
    key = ShareStateKey(record_type, r.string(), r.uuid(), r.int32())
    if not r.at_end():
        raise DecodeError("__share_group_state key has trailing bytes")
    return key


def _write_batches(w: Writer, batches: list[StateBatch]) -> None:
    w.compact_array_length(len(batches))
    for b in batches:
        w.int64(b.first_offset)
        w.int64(b.last_offset)
        w.int8(b.delivery_state)
        w.int16(b.delivery_count)
        w.uvarint(0)


def _read_batches(r: Reader) -> list[StateBatch]:
    out = []
    for _ in range(max(r.compact_array_length(20), 0)):
        out.append(StateBatch(r.int64(), r.int64(), r.int8(), r.int16()))
        r.tagged_fields()
    return out


def encode_value(value: ShareSnapshotValue | ShareUpdateValue) -> bytes:
    w = Writer()
    w.int16(0)
    w.int32(value.snapshot_epoch)
    if isinstance(value, ShareSnapshotValue):
        w.int32(value.state_epoch)
        w.int32(value.leader_epoch)
        w.int64(value.start_offset)
        w.int64(value.create_timestamp)
        w.int64(value.write_timestamp)
    else:
        w.int32(value.leader_epoch)
        w.int64(value.start_offset)
    _write_batches(w, value.state_batches)
    w.uvarint(0)
    return w.getvalue()


def decode_value(record_type: int, data: bytes | memoryview) -> ShareSnapshotValue | ShareUpdateValue:
    r = Reader(data)
    version = r.int16()
    if version != 0:
        raise DecodeError(f"share state record type {record_type}: value version {version} not read here")
    out: ShareSnapshotValue | ShareUpdateValue
    if record_type == SHARE_SNAPSHOT:
        out = ShareSnapshotValue(r.int32(), r.int32(), r.int32(), r.int64(), r.int64(), r.int64(), _read_batches(r))
    elif record_type == SHARE_UPDATE:
        out = ShareUpdateValue(r.int32(), r.int32(), r.int64(), _read_batches(r))
    else:
        raise DecodeError(f"__share_group_state key type {record_type} is not a share state record")
    r.tagged_fields()
    return out
