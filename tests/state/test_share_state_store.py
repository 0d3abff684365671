"""The share coordinator's state (state/share/persisted.py) and its records (protocol/share_state_records.py):
bytes as Kafka's share coordinator writes them, the overlay of state batches, what a replay rebuilds, and
the coordinator key of a share partition."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.share_state_records import (
    SHARE_SNAPSHOT,
    SHARE_UPDATE,
    ShareSnapshotValue,
    ShareStateKey,
    ShareUpdateValue,
    StateBatch,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from mockbroker.state.share.persisted import ShareStateStore, coordinator_key, overlay, parse_coordinator_key

TOPIC = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def test_record_bytes_as_kafka_writes_them() -> None:
    key = ShareStateKey(SHARE_UPDATE, "g", TOPIC, 3)
    # int16 type 1, string "g", the 16 bytes of the uuid, int32 3: ShareUpdateKey is not flexible.
    assert encode_key(key) == b"\x00\x01\x00\x01g" + TOPIC.bytes + b"\x00\x00\x00\x03"
    assert decode_key(encode_key(key)) == key
    update = ShareUpdateValue(2, 5, -1, [StateBatch(10, 12, 2, 1)])
    # int16 version 0, SnapshotEpoch, LeaderEpoch, StartOffset, compact array of one batch with its empty
    # tagged fields, then the value's empty tagged fields.
    assert encode_value(update) == (b"\x00\x00" + (2).to_bytes(4, "big") + (5).to_bytes(4, "big")
                                    + (-1).to_bytes(8, "big", signed=True) + b"\x02" + (10).to_bytes(8, "big")
                                    + (12).to_bytes(8, "big") + b"\x02" + (1).to_bytes(2, "big") + b"\x00" + b"\x00")
    assert decode_value(SHARE_UPDATE, encode_value(update)) == update
    snapshot = ShareSnapshotValue(0, 1, 2, 7, 1000, 1001, [StateBatch(7, 7, 4, 5)])
    assert decode_value(SHARE_SNAPSHOT, encode_value(snapshot)) == snapshot


def test_overlay_later_wins_and_nothing_below_the_start_stays() -> None:
    ranges = overlay([], [(0, 9, 2, 1)], 0)
    assert overlay(ranges, [(3, 4, 4, 2)], 0) == [(0, 2, 2, 1), (3, 4, 4, 2), (5, 9, 2, 1)]
    assert overlay(ranges, [(3, 4, 2, 1)], 0) == [(0, 9, 2, 1)]  # neighbours with the same state join
    assert overlay(ranges, [(12, 12, 0, 1)], 5) == [(5, 9, 2, 1), (12, 12, 0, 1)]


def test_write_then_replay_rebuilds_the_same_state() -> None:
    written: list[tuple[str, list[tuple[bytes, bytes | None]]]] = []
    store = ShareStateStore(lambda: 2)
    store.append = lambda key, records: written.append((key, records)) or None
    key = ("g", TOPIC, 0)
    store.initialize(key, 0, 0, 100)
    for start, batch in ((-1, (0, 1, 2, 1)), (2, (2, 3, 0, 1)), (-1, (3, 3, 4, 2)), (-1, (4, 4, 2, 1))):
        store.write(key, 0, 1, start, [batch], 200)
    types = [decode_key(k).record_type for _, records in written for k, _ in records]
    # Kafka's count: the first update after the state is made counts 0, a snapshot once the count reaches 2.
    assert types == [SHARE_SNAPSHOT, SHARE_UPDATE, SHARE_UPDATE, SHARE_UPDATE, SHARE_SNAPSHOT]
    assert {k for k, _ in written} == {coordinator_key(key)}
    replayed = ShareStateStore()
    for _, records in written:
        for k, v in records:
            dk = decode_key(k)
            replayed.replay(dk, None if v is None else decode_value(dk.record_type, v))
    assert replayed.states[key].batches == store.states[key].batches == [(2, 2, 0, 1), (3, 3, 4, 2), (4, 4, 2, 1)]
    assert replayed.states[key].start_offset == 2
    store.delete(key)
    k, v = written[-1][1][0]
    assert decode_key(k).record_type == SHARE_SNAPSHOT and v is None
    replayed.replay(decode_key(k), None)
    assert replayed.states == {}


def test_epochs_fence() -> None:
    store = ShareStateStore()
    key = ("g", TOPIC, 0)
    with pytest.raises(KafkaError) as e:
        store.read(key, 0)
    assert e.value.code == ErrorCode.INVALID_REQUEST
    store.initialize(key, 3, 0, 0)
    for call in (lambda: store.initialize(key, 2, 0, 0), lambda: store.write(key, 2, 0, 0, [], 0)):
        with pytest.raises(KafkaError) as e:
            call()
        assert e.value.code == ErrorCode.FENCED_STATE_EPOCH
    store.write(key, -1, 4, -1, [], 0)
    with pytest.raises(KafkaError) as e:
        store.read(key, 3)
    assert e.value.code == ErrorCode.FENCED_LEADER_EPOCH


def test_the_coordinator_key_as_kafka_writes_and_reads_it() -> None:
    text = coordinator_key(("g", TOPIC, 7))
    assert text == "g:Dx4tPEtaaXiHlqW0w9Lh8A:7"
    assert parse_coordinator_key(text) == ("g", TOPIC, 7)
    assert parse_coordinator_key(" g :Dx4tPEtaaXiHlqW0w9Lh8A:-1:") == ("g", TOPIC, -1)
    for bad in ("", "g:Dx4tPEtaaXiHlqW0w9Lh8A", "g:x:1", " :Dx4tPEtaaXiHlqW0w9Lh8A:1", "g:Dx4tPEtaaXiHlqW0w9Lh8A:1.0",
                "g:Dx4tPEtaaXiHlqW0w9Lh8A:99999999999", "g:AAAA:1", "a:b:Dx4tPEtaaXiHlqW0w9Lh8A:1"):
        with pytest.raises(ValueError):
            parse_coordinator_key(bad)
