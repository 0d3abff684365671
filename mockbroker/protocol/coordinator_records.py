"""The records Kafka's coordinators keep in their internal topics: keys and values of __consumer_offsets
(group-coordinator's OffsetCommitKey/Value, GroupMetadataKey/Value) and __transaction_state
(transaction-coordinator's TransactionLogKey/Value), as version-prefixed bytes.

Every key and value starts with an int16 version. For the key it names the record type (OffsetCommitKey
0 and 1, GroupMetadataKey 2; the KIP-848 records use 3 and up); for the value it is the schema version.
A value of None is a tombstone (a deleted offset, a removed group or transactional id).

Written as a Kafka 4.x broker writes them: OffsetCommitKey v1 with OffsetCommitValue v3 (v1 when the
commit has an explicit expiry, OffsetCommit v2-v4's retention_time_ms), GroupMetadataKey v2 with
GroupMetadataValue v3, TransactionLogKey v0 with TransactionLogValue v0 (transaction.version 0) or v1
(flexible, with the tagged previous/next producer id and client transaction version, from
transaction.version 1). Decoding reads every non-flexible version of these schemas and the flexible
TransactionLogValue v1. Sans-IO: bytes in, dataclasses out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import DecodeError
from .primitives import Reader, Writer

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
TXN_LOG_KEY_VERSION = 0


@dataclass(frozen=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class OffsetCommitValue:
    offset: int
    leader_epoch: int  # -1: none
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1  # only OffsetCommitValue v1 carries one


@dataclass(frozen=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: list[MemberMetadata] = field(default_factory=list)


@dataclass(frozen=True)
class TransactionLogKey:
    transactional_id: str


@dataclass(frozen=True)
class TransactionLogValue:
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_status: int  # Kafka's TransactionState ids: 0 Empty ... 7 PrepareEpochFence
    partitions: dict[str, list[int]] | None  # None in the Empty state
    last_update_timestamp_ms: int
    start_timestamp_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0


# -- keys ---------------------------------------------------------------------------------------------

def encode_key(key: OffsetCommitKey | GroupMetadataKey | TransactionLogKey) -> bytes:
    w = Writer()
    if isinstance(key, OffsetCommitKey):
        w.int16(OFFSET_COMMIT_KEY_VERSION)
        w.string(key.group)
        w.string(key.topic)
        w.int32(key.partition)
    elif isinstance(key, GroupMetadataKey):
        w.int16(GROUP_METADATA_KEY_VERSION)
        w.string(key.group)
    else:
        w.int16(TXN_LOG_KEY_VERSION)
        w.string(key.transactional_id)
    return w.getvalue()


def decode_offsets_key(data: bytes | memoryview) -> OffsetCommitKey | GroupMetadataKey | int:
    """A __consumer_offsets key; the bare version (record type) for the types not modelled here (the
    KIP-848 and share-group records, 3 and up)."""
    r = Reader(data)
    version = r.int16()
    if version in (0, 1):
        return OffsetCommitKey(r.string(), r.string(), r.int32())
    if version == GROUP_METADATA_KEY_VERSION:
        return GroupMetadataKey(r.string())
    if version < 0:
        raise DecodeError(f"__consumer_offsets key version {version}")
    return version


def decode_txn_key(data: bytes | memoryview) -> TransactionLogKey:
    r = Reader(data)
    version = r.int16()
    if version != TXN_LOG_KEY_VERSION:
        raise DecodeError(f"unknown __transaction_state key version {version}")
    return TransactionLogKey(r.string())


# -- OffsetCommitValue --------------------------------------------------------------------------------

def encode_offset_commit_value(value: OffsetCommitValue) -> bytes:
    """v1 when the offset has an explicit expiry, else v3 (what MetadataVersion.offsetCommitValueVersion picks)."""
    w = Writer()
    if value.expire_timestamp >= 0:
        w.int16(1)
        w.int64(value.offset)
        w.string(value.metadata)
        w.int64(value.commit_timestamp)
        w.int64(value.expire_timestamp)
    else:
        w.int16(3)
        w.int64(value.offset)
        w.int32(value.leader_epoch)
        w.string(value.metadata)
        w.int64(value.commit_timestamp)
    return w.getvalue()


def decode_offset_commit_value(data: bytes | memoryview) -> OffsetCommitValue:
    r = Reader(data)
    version = r.int16()
    if not 0 <= version <= 3:
        raise DecodeError(f"OffsetCommitValue version {version} not read here")
    offset = r.int64()
    leader_epoch = r.int32() if version >= 3 else -1
    metadata = r.string()
    commit = r.int64()
    expire = r.int64() if version == 1 else -1
    return OffsetCommitValue(offset, leader_epoch, metadata, commit, expire)


# -- GroupMetadataValue -------------------------------------------------------------------------------

GROUP_METADATA_VALUE_VERSION = 3


def encode_group_metadata_value(value: GroupMetadataValue) -> bytes:
    w = Writer()
    w.int16(GROUP_METADATA_VALUE_VERSION)
    w.string(value.protocol_type)
    w.int32(value.generation)
    w.nullable_string(value.protocol)
    w.nullable_string(value.leader)
    w.int64(value.current_state_timestamp)
    w.array_length(len(value.members))
    for m in value.members:
        w.string(m.member_id)
        w.nullable_string(m.group_instance_id)
        w.string(m.client_id)
        w.string(m.client_host)
        w.int32(m.rebalance_timeout)
        w.int32(m.session_timeout)
        w.bytes_(m.subscription)
        w.bytes_(m.assignment)
    return w.getvalue()


def decode_group_metadata_value(data: bytes | memoryview) -> GroupMetadataValue:
    r = Reader(data)
    version = r.int16()
    if not 0 <= version <= 3:
        raise DecodeError(f"GroupMetadataValue version {version} not read here")
    protocol_type = r.string()
    generation = r.int32()
    protocol = r.nullable_string()
    leader = r.nullable_string()
    timestamp = r.int64() if version >= 2 else -1
    members = []
    for _ in range(max(r.array_length(), 0)):
        member_id = r.string()
        instance_id = r.nullable_string() if version >= 3 else None
        client_id = r.string()
        client_host = r.string()
        rebalance = r.int32() if version >= 1 else -1
        session = r.int32()
        members.append(MemberMetadata(member_id, instance_id, client_id, client_host, rebalance, session,
                                      bytes(r.bytes_()), bytes(r.bytes_())))
    return GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, members)


# -- TransactionLogValue ------------------------------------------------------------------------------

def encode_txn_log_value(value: TransactionLogValue, version: int) -> bytes:
    """Version 0, or the flexible 1 (Kafka writes 1 from transaction.version 1)."""
    w = Writer()
    w.int16(version)
    w.int64(value.producer_id)
    w.int16(value.producer_epoch)
    w.int32(value.transaction_timeout_ms)
    w.int8(value.transaction_status)
    parts = value.partitions
    flexible = version >= 1
    if parts is None:
        w.compact_array_length(-1) if flexible else w.array_length(-1)
    else:
        w.compact_array_length(len(parts)) if flexible else w.array_length(len(parts))
        for topic, ids in parts.items():
            if flexible:
                w.compact_string(topic)
                w.compact_array_length(len(ids))
            else:
                w.string(topic)
                w.array_length(len(ids))
            for i in ids:
                w.int32(i)
            if flexible:
                w.uvarint(0)  # no tagged fields
    w.int64(value.last_update_timestamp_ms)
    w.int64(value.start_timestamp_ms)
    if flexible:
        tagged: list[tuple[int, bytes]] = []
        if value.previous_producer_id != -1:
            tagged.append((0, value.previous_producer_id.to_bytes(8, "big", signed=True)))
        if value.next_producer_id != -1:
            tagged.append((1, value.next_producer_id.to_bytes(8, "big", signed=True)))
        if value.client_transaction_version != 0:
            tagged.append((2, value.client_transaction_version.to_bytes(2, "big", signed=True)))
        w.uvarint(len(tagged))
        for tag, raw in tagged:
            w.uvarint(tag)
            w.uvarint(len(raw))
            w.raw(raw)
    return w.getvalue()


def decode_txn_log_value(data: bytes | memoryview) -> TransactionLogValue:
    r = Reader(data)
    version = r.int16()
    if version not in (0, 1):
        raise DecodeError(f"TransactionLogValue version {version} not read here")
    flexible = version == 1
    producer_id = r.int64()
    epoch = r.int16()
    timeout = r.int32()
    status = r.int8()
    n = r.compact_array_length() if flexible else r.array_length()
    parts: dict[str, list[int]] | None = None if n < 0 else {}
    for _ in range(max(n, 0)):
        topic = r.compact_string() if flexible else r.string()
        count = r.compact_array_length(4) if flexible else r.array_length(4)
        ids = [r.int32() for _ in range(max(count, 0))]
        if flexible:
            r.tagged_fields()
        assert parts is not None
        parts[topic] = ids
    last_update = r.int64()
    start = r.int64()
    previous, next_id, client_version = -1, -1, 0
    if flexible:
        for tag, raw in r.tagged_fields():
            if tag == 0:
                previous = int.from_bytes(raw, "big", signed=True)
            elif tag == 1:
                next_id = int.from_bytes(raw, "big", signed=True)
            elif tag == 2:
                client_version = int.from_bytes(raw, "big", signed=True)
    return TransactionLogValue(producer_id, epoch, timeout, status, parts, last_update, start, previous, next_id,
                               client_version)
