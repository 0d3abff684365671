"""The KIP-848 records of __consumer_offsets (mockbroker/protocol/consumer_group_records.py), byte for byte against
Kafka's ConsumerGroup*Key/Value definitions (keys: int16 type, then non-flexible strings; values: int16
version 0, then flexible fields: compact strings and arrays (length + 1 as a uvarint), uuids as 16 bytes,
a tagged-field count after each struct), and round trips."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.protocol.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    ConsumerGroupKey,
    CurrentMemberAssignmentValue,
    GroupMetadataValue,
    MemberMetadataValue,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataValue,
    Value,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from mockbroker.protocol.errors import DecodeError

U = uuid.UUID(int=1)
U_BYTES = bytes(15) + b"\x01"
G1 = b"\x00\x02g1"
M = b"\x00\x01m"


@pytest.mark.parametrize(("key", "expected"), [
    (ConsumerGroupKey(GROUP_METADATA, "g1"), b"\x00\x03" + G1),
    (ConsumerGroupKey(MEMBER_METADATA, "g1", "m"), b"\x00\x05" + G1 + M),
    (ConsumerGroupKey(TARGET_ASSIGNMENT_METADATA, "g1"), b"\x00\x06" + G1),
    (ConsumerGroupKey(TARGET_ASSIGNMENT_MEMBER, "g1", "m"), b"\x00\x07" + G1 + M),
    (ConsumerGroupKey(CURRENT_MEMBER_ASSIGNMENT, "g1", "m"), b"\x00\x08" + G1 + M),
])
def test_keys(key: ConsumerGroupKey, expected: bytes) -> None:
    assert encode_key(key) == expected
    assert decode_key(expected) == key


def test_group_metadata_value() -> None:
    assert encode_value(GroupMetadataValue(5)) == b"\x00\x00" + b"\x00\x00\x00\x05" + b"\x00"
    # 4.1's MetadataHash: tagged field 0, 8 bytes
    with_hash = b"\x00\x00" + b"\x00\x00\x00\x05" + b"\x01" + b"\x00\x08" + b"\x00" * 7 + b"\x01"
    assert encode_value(GroupMetadataValue(5, metadata_hash=1)) == with_hash
    assert decode_value(GROUP_METADATA, with_hash) == GroupMetadataValue(5, 1)


def test_member_metadata_value() -> None:
    value = MemberMetadataValue(None, "r", "c", "/h", ["t"], None, 30000, "uniform")
    expected = (b"\x00\x00"
                b"\x00"                 # InstanceId: null
                b"\x02r"                # RackId
                b"\x02c"                # ClientId
                b"\x03/h"               # ClientHost
                b"\x02" b"\x02t"        # SubscribedTopicNames: one
                b"\x00"                 # SubscribedTopicRegex: null
                b"\x00\x00\x75\x30"     # RebalanceTimeoutMs 30000
                b"\x08uniform"          # ServerAssignor
                b"\x00")                # no tagged fields (ClassicMemberMetadata null)
    assert encode_value(value) == expected
    assert decode_value(MEMBER_METADATA, expected) == value


def test_current_member_assignment_value() -> None:
    value = CurrentMemberAssignmentValue(7, 6, 1, {U: [0, 2]}, {U: [1]})
    expected = (b"\x00\x00"
                b"\x00\x00\x00\x07"     # MemberEpoch
                b"\x00\x00\x00\x06"     # PreviousMemberEpoch
                b"\x01"                 # State: UNREVOKED_PARTITIONS
                b"\x02" + U_BYTES + b"\x03" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x02" + b"\x00"  # AssignedPartitions
                + b"\x02" + U_BYTES + b"\x02" + b"\x00\x00\x00\x01" + b"\x00"   # PartitionsPendingRevocation
                + b"\x00")
    assert encode_value(value) == expected
    assert decode_value(CURRENT_MEMBER_ASSIGNMENT, expected) == value


def test_a_tagged_field_not_modelled_is_skipped() -> None:
    """4.3's AssignmentEpochs (tag 0 of each TopicPartitions) is read past."""
    with_epochs = (b"\x00\x00" b"\x00\x00\x00\x07" b"\x00\x00\x00\x06" b"\x00"
                   + b"\x02" + U_BYTES + b"\x02" + b"\x00\x00\x00\x04"
                   + b"\x01" + b"\x00\x05" + b"\x02\x00\x00\x00\x07"  # tag 0: [7]
                   + b"\x01" + b"\x00")
    assert decode_value(CURRENT_MEMBER_ASSIGNMENT, with_epochs) == CurrentMemberAssignmentValue(7, 6, 0, {U: [4]}, {})


def test_target_assignment_values() -> None:
    member = b"\x00\x00" + b"\x02" + U_BYTES + b"\x02" + b"\x00\x00\x00\x03" + b"\x00" + b"\x00"
    assert encode_value(TargetAssignmentMemberValue({U: [3]})) == member
    assert decode_value(TARGET_ASSIGNMENT_MEMBER, member) == TargetAssignmentMemberValue({U: [3]})
    assert encode_value(TargetAssignmentMetadataValue(4)) == b"\x00\x00" + b"\x00\x00\x00\x04" + b"\x00"
    stamped = b"\x00\x00" + b"\x00\x00\x00\x04" + b"\x01" + b"\x00\x08" + b"\x00" * 6 + b"\x03\xe8"
    assert encode_value(TargetAssignmentMetadataValue(4, 1000)) == stamped
    assert decode_value(TARGET_ASSIGNMENT_METADATA, stamped) == TargetAssignmentMetadataValue(4, 1000)


def test_round_trips() -> None:
    u2 = uuid.uuid4()
    values: list[tuple[int, Value]] = [
        (GROUP_METADATA, GroupMetadataValue(2**31 - 1, -5)),
        (MEMBER_METADATA, MemberMetadataValue("i", None, "", "", [], "t.*", -1, None)),
        (MEMBER_METADATA, MemberMetadataValue(None, None, "client", "/10.0.0.1", ["a", "b", "ü"], None, 1, None)),
        (TARGET_ASSIGNMENT_MEMBER, TargetAssignmentMemberValue({})),
        (TARGET_ASSIGNMENT_MEMBER, TargetAssignmentMemberValue({U: [0, 1], u2: [5]})),
        (TARGET_ASSIGNMENT_METADATA, TargetAssignmentMetadataValue(0)),
        (CURRENT_MEMBER_ASSIGNMENT, CurrentMemberAssignmentValue(-2, 3, 2, {u2: [1]}, {})),
    ]
    for record_type, value in values:
        assert decode_value(record_type, encode_value(value)) == value


def test_partition_metadata_is_skipped_and_bad_input_raises() -> None:
    assert decode_value(PARTITION_METADATA, b"\x00\x00\x01\x00") is None
    with pytest.raises(DecodeError):
        decode_value(GROUP_METADATA, b"\x00\x01\x00\x00\x00\x05\x00")  # version 1 is not defined
    with pytest.raises(DecodeError):
        decode_value(MEMBER_METADATA, b"\x00\x00\x00\x02r")  # cut short
    with pytest.raises(DecodeError):
        decode_key(b"\x00\x02" + G1)  # GroupMetadataKey: a classic group's
