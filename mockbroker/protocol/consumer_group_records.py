"""The KIP-848 consumer group records of __consumer_offsets, as Kafka 4.x's group coordinator writes them
(group-coordinator's ConsumerGroup*Key/Value message definitions). Sans-IO: bytes in, dataclasses out.

A key is the record type (an int16, the definition's apiKey) followed by its fields, not flexible:
    3 ConsumerGroupMetadataKey                   group id
    5 ConsumerGroupMemberMetadataKey             group id, member id
    6 ConsumerGroupTargetAssignmentMetadataKey   group id
    7 ConsumerGroupTargetAssignmentMemberKey     group id, member id
    8 ConsumerGroupCurrentMemberAssignmentKey    group id, member id
A value is an int16 version (0 for all of these) and flexible fields: compact strings and arrays, a uuid as
16 bytes, and tagged fields after each struct. A value of None is a tombstone.

Written: ConsumerGroupMetadataValue (Epoch; the tagged MetadataHash of 4.1 is left at its default 0, so
not written: this broker does not compute Kafka's topic hash), ConsumerGroupMemberMetadataValue (no
ClassicMemberMetadata: classic members are not served in these groups), ConsumerGroupTargetAssignment-
MemberValue, ConsumerGroupTargetAssignmentMetadataValue (with 4.3's tagged AssignmentTimestamp) and
ConsumerGroupCurrentMemberAssignmentValue (without 4.3's tagged AssignmentEpochs). Type 4,
ConsumerGroupPartitionMetadata, is what Kafka wrote before 4.1 (the metadata hash replaced it): not
written, and skipped when read. Tagged fields read here and not modelled are skipped.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from .errors import DecodeError
from .primitives import Reader, Writer

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
RECORD_TYPES = frozenset({GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA,
                          TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})
MEMBER_RECORD_TYPES = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})

TopicPartitions = dict[uuid.UUID, list[int]]


@dataclass(frozen=True)
class ConsumerGroupKey:
    """One of the keys above; member_id is None for the group-level types (3, 4, 6)."""

    record_type: int
    group_id: str
    member_id: str | None = None


@dataclass(frozen=True)
class GroupMetadataValue:
    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True)
class MemberMetadataValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None


@dataclass(frozen=True)
class TargetAssignmentMemberValue:
    partitions: TopicPartitions = field(default_factory=dict)


@dataclass(frozen=True)
class TargetAssignmentMetadataValue:
    assignment_epoch: int
    assignment_timestamp_ms: int = 0


@dataclass(frozen=True)
class CurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int  # Kafka's MemberState: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS, 127 UNKNOWN
    assigned: TopicPartitions = field(default_factory=dict)
    pending_revocation: TopicPartitions = field(default_factory=dict)


Value = (GroupMetadataValue | MemberMetadataValue | TargetAssignmentMemberValue | TargetAssignmentMetadataValue
         | CurrentMemberAssignmentValue)


# -- keys ---------------------------------------------------------------------------------------------

def encode_key(key: ConsumerGroupKey) -> bytes:
    w = Writer()
    w.int16(key.record_type)
    w.string(key.group_id)
    if key.record_type in MEMBER_RECORD_TYPES:
        w.string(key.member_id or "")
    return w.getvalue()


def decode_key(data: bytes | memoryview) -> ConsumerGroupKey:
    r = Reader(data)
    record_type = r.int16()
    if record_type not in RECORD_TYPES:
        raise DecodeError(f"__consumer_offsets key type {record_type} is not a consumer group record")
    group_id = r.string()
    member_id = r.string() if record_type in MEMBER_RECORD_TYPES else None
    return ConsumerGroupKey(record_type, group_id, member_id)


# -- values -------------------------------------------------------------------------------------------

def _tags(w: Writer, tagged: list[tuple[int, bytes]]) -> None:
    w.uvarint(len(tagged))
    for tag, raw in tagged:
        w.uvarint(tag)
        w.uvarint(len(raw))
        w.raw(raw)


def _write_topic_partitions(w: Writer, partitions: TopicPartitions) -> None:
    """[]TopicPartitions: topic id, partitions, tagged fields; sorted by topic id for stable bytes."""
    items = sorted(partitions.items(), key=lambda kv: kv[0].bytes)
    w.compact_array_length(len(items))
    for topic_id, ids in items:
        w.uuid(topic_id)
        w.compact_array_length(len(ids))
        for i in ids:
            w.int32(i)
        w.uvarint(0)


def _read_topic_partitions(r: Reader) -> TopicPartitions:
    out: TopicPartitions = {}
    for _ in range(max(r.compact_array_length(17), 0)):
        topic_id = r.uuid()
        out[topic_id] = [r.int32() for _ in range(max(r.compact_array_length(4), 0))]
        r.tagged_fields()
    return out


def encode_value(value: Value) -> bytes:
    w = Writer()
    w.int16(0)
    tagged: list[tuple[int, bytes]] = []
    if isinstance(value, GroupMetadataValue):
        w.int32(value.epoch)
        if value.metadata_hash:
            tagged.append((0, value.metadata_hash.to_bytes(8, "big", signed=True)))
    elif isinstance(value, MemberMetadataValue):
        w.compact_nullable_string(value.instance_id)
        w.compact_nullable_string(value.rack_id)
        w.compact_string(value.client_id)
        w.compact_string(value.client_host)
        w.compact_array_length(len(value.subscribed_topic_names))
        for name in value.subscribed_topic_names:
            w.compact_string(name)
        w.compact_nullable_string(value.subscribed_topic_regex)
        w.int32(value.rebalance_timeout_ms)
        w.compact_nullable_string(value.server_assignor)
    elif isinstance(value, TargetAssignmentMemberValue):
        _write_topic_partitions(w, value.partitions)
    elif isinstance(value, TargetAssignmentMetadataValue):
        w.int32(value.assignment_epoch)
        if value.assignment_timestamp_ms:
            tagged.append((0, value.assignment_timestamp_ms.to_bytes(8, "big", signed=True)))
    else:
        w.int32(value.member_epoch)
        w.int32(value.previous_member_epoch)
        w.int8(value.state)
        _write_topic_partitions(w, value.assigned)
        _write_topic_partitions(w, value.pending_revocation)
    _tags(w, tagged)
    return w.getvalue()


def decode_value(record_type: int, data: bytes | memoryview) -> Value | None:
    """The value of a record of `record_type`; None for type 4 (PartitionMetadata: not modelled)."""
    r = Reader(data)
    version = r.int16()
    if version != 0:
        raise DecodeError(f"consumer group record type {record_type}: value version {version} not read here")
    out: Value | None
    if record_type == GROUP_METADATA:
        epoch = r.int32()
        tags = dict(r.tagged_fields())
        metadata_hash = int.from_bytes(tags[0], "big", signed=True) if 0 in tags else 0
        return GroupMetadataValue(epoch, metadata_hash)
    if record_type == PARTITION_METADATA:
        return None
    if record_type == MEMBER_METADATA:
        instance_id = r.compact_nullable_string()
        rack_id = r.compact_nullable_string()
        client_id = r.compact_string()
        client_host = r.compact_string()
        names = [r.compact_string() for _ in range(max(r.compact_array_length(), 0))]
        out = MemberMetadataValue(instance_id, rack_id, client_id, client_host, names, r.compact_nullable_string(),
                                  r.int32(), r.compact_nullable_string())
    elif record_type == TARGET_ASSIGNMENT_MEMBER:
        out = TargetAssignmentMemberValue(_read_topic_partitions(r))
    elif record_type == TARGET_ASSIGNMENT_METADATA:
        epoch = r.int32()
        tags = dict(r.tagged_fields())
        timestamp = int.from_bytes(tags[0], "big", signed=True) if 0 in tags else 0
        return TargetAssignmentMetadataValue(epoch, timestamp)
    elif record_type == CURRENT_MEMBER_ASSIGNMENT:
        out = CurrentMemberAssignmentValue(r.int32(), r.int32(), r.int8(), _read_topic_partitions(r),
                                           _read_topic_partitions(r))
    else:
        raise DecodeError(f"__consumer_offsets key type {record_type} is not a consumer group record")
    r.tagged_fields()
    return out
