"""The share group records of __consumer_offsets that this broker writes, as Kafka 4.x's group coordinator
writes them (group-coordinator's ShareGroup*Key/Value message definitions). Sans-IO: bytes in, dataclasses out.

A key is the record type (an int16, the definition's apiKey) and the group id (a string), not flexible:
    11 ShareGroupMetadataKey                  the group epoch and its metadata hash
    12 ShareGroupTargetAssignmentMetadataKey  the assignment epoch
    15 ShareGroupStatePartitionMetadataKey    the topic partitions whose share state is initialized
A value is an int16 version (0) and flexible fields (compact strings and arrays, a uuid as 16 bytes, tagged
fields after each struct); None is a tombstone:
    ShareGroupMetadataValue                Epoch (int32), MetadataHash (int64: 0 here, this broker does not
                                           compute Kafka's topic hash)
    ShareGroupTargetAssignmentMetadataValue AssignmentEpoch (int32)
    ShareGroupStatePartitionMetadataValue  InitializingTopics, InitializedTopics ([]TopicPartitionsInfo: topic
                                           id, topic name, partitions), DeletingTopics ([]TopicInfo: id, name)
The member records (10 ShareGroupMemberMetadata, 13 ShareGroupTargetAssignmentMember, 14
ShareGroupCurrentMemberAssignment) are not written here; their keys (group id, member id) are named so a
reader can tell them apart and skip them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from .errors import DecodeError
from .primitives import Reader, Writer

MEMBER_METADATA = 10
GROUP_METADATA = 11
TARGET_ASSIGNMENT_METADATA = 12
TARGET_ASSIGNMENT_MEMBER = 13
CURRENT_MEMBER_ASSIGNMENT = 14
STATE_PARTITION_METADATA = 15
GROUP_RECORD_TYPES = frozenset({GROUP_METADATA, TARGET_ASSIGNMENT_METADATA, STATE_PARTITION_METADATA})
MEMBER_RECORD_TYPES = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})
RECORD_TYPES = GROUP_RECORD_TYPES | MEMBER_RECORD_TYPES


@dataclass(frozen=True)
class ShareGroupKey:
    record_type: int
    group_id: str
    member_id: str | None = None  # the member record types only


@dataclass(frozen=True)
class ShareGroupMetadataValue:
    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True)
class ShareGroupTargetAssignmentMetadataValue:
    assignment_epoch: int


@dataclass(frozen=True)
class TopicPartitionsInfo:
    topic_id: uuid.UUID
    topic_name: str
    partitions: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class TopicInfo:
    topic_id: uuid.UUID
    topic_name: str


@dataclass(frozen=True)
class ShareGroupStatePartitionMetadataValue:
    initializing_topics: list[TopicPartitionsInfo] = field(default_factory=list)
    initialized_topics: list[TopicPartitionsInfo] = field(default_factory=list)
    deleting_topics: list[TopicInfo] = field(default_factory=list)


Value = ShareGroupMetadataValue | ShareGroupTargetAssignmentMetadataValue | ShareGroupStatePartitionMetadataValue


def encode_key(key: ShareGroupKey) -> bytes:
    w = Writer()
    w.int16(key.record_type)
    w.string(key.group_id)
    if key.record_type in MEMBER_RECORD_TYPES:
        w.string(key.member_id or "")
    return w.getvalue()


def decode_key(data: bytes | memoryview) -> ShareGroupKey:
    r = Reader(data)
    record_type = r.int16()
    if record_type not in RECORD_TYPES:
        raise DecodeError(f"__consumer_offsets key type {record_type} is not a share group record")
    group_id = r.string()
    member_id = r.string() if record_type in MEMBER_RECORD_TYPES else None
    if not r.at_end():
        raise DecodeError("share group record key has trailing bytes")
    return ShareGroupKey(record_type, group_id, member_id)


def _write_topics(w: Writer, topics: list[TopicPartitionsInfo]) -> None:
    w.compact_array_length(len(topics))
    for t in topics:
        w.uuid(t.topic_id)
        w.compact_string(t.topic_name)
        w.compact_array_length(len(t.partitions))
        for p in t.partitions:
            w.int32(p)
        w.uvarint(0)


def _read_topics(r: Reader) -> list[TopicPartitionsInfo]:
    out = []
    for _ in range(max(r.compact_array_length(), 0)):
        topic_id, name = r.uuid(), r.compact_string()
        partitions = [r.int32() for _ in range(max(r.compact_array_length(), 0))]
        r.tagged_fields()
        out.append(TopicPartitionsInfo(topic_id, name, partitions))
    return out


def encode_value(value: Value) -> bytes:
    w = Writer()
    w.int16(0)
    if isinstance(value, ShareGroupMetadataValue):
        w.int32(value.epoch)
        w.int64(value.metadata_hash)
    elif isinstance(value, ShareGroupTargetAssignmentMetadataValue):
        w.int32(value.assignment_epoch)
    else:
        _write_topics(w, value.initializing_topics)
        _write_topics(w, value.initialized_topics)
        w.compact_array_length(len(value.deleting_topics))
        for t in value.deleting_topics:
            w.uuid(t.topic_id)
            w.compact_string(t.topic_name)
            w.uvarint(0)
    w.uvarint(0)
    return w.getvalue()


def decode_value(record_type: int, data: bytes | memoryview) -> Value | None:
    """The value of a group-level record; None for the member record types (not modelled)."""
    r = Reader(data)
    version = r.int16()
    if version != 0:
        raise DecodeError(f"share group record type {record_type}: value version {version} not read here")
    out: Value
    if record_type == GROUP_METADATA:
        out = ShareGroupMetadataValue(r.int32(), r.int64())
    elif record_type == TARGET_ASSIGNMENT_METADATA:
        out = ShareGroupTargetAssignmentMetadataValue(r.int32())
    elif record_type == STATE_PARTITION_METADATA:
        initializing, initialized = _read_topics(r), _read_topics(r)
        deleting = []
        for _ in range(max(r.compact_array_length(), 0)):
            deleting.append(TopicInfo(r.uuid(), r.compact_string()))
            r.tagged_fields()
        out = ShareGroupStatePartitionMetadataValue(initializing, initialized, deleting)
    elif record_type in MEMBER_RECORD_TYPES:
        return None
    else:
        raise DecodeError(f"__consumer_offsets key type {record_type} is not a share group record")
    r.tagged_fields()
    return out
