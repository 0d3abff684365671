"""Raw-protocol tests of ListOffsets (2): the special timestamps, lookup by timestamp, leader epochs and
the per-partition errors, as Kafka's ReplicaManager / UnifiedLog answer them."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import DELETE_RECORDS, LIST_OFFSETS, list_offsets, make_batch, produce
from tests.rawclient import RawClient

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
VERSIONS = [0, 1, 4, 7, 8, 9, 11]


def _answer(p: object, version: int) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) of a partition answer, whatever the version."""
    if version == 0:
        offsets = p.old_style_offsets  # type: ignore[attr-defined]
        return (offsets[0] if offsets else -1), -1, -1
    return p.offset, p.timestamp, p.leader_epoch  # type: ignore[attr-defined]


def _set_epoch(broker: MockBroker, topic: str, epoch: int) -> None:
    broker._call(lambda: setattr(broker.cluster.partition(topic, 0).log, "leader_epoch", epoch))


@pytest.mark.parametrize("version", VERSIONS)
def test_latest_and_earliest_of_an_empty_partition_are_0(mockbroker: MockBroker, client: RawClient,
                                                         version: int) -> None:
    mockbroker.create_topic("empty")
    for ts in (LATEST, EARLIEST):
        p = list_offsets(client, "empty", ts, version=version)
        assert p.error_code == ErrorCode.NONE
        assert _answer(p, version) == (0, -1, 0 if version >= 4 else -1)


@pytest.mark.parametrize("version", VERSIONS)
def test_latest_is_the_high_watermark_earliest_the_log_start(mockbroker: MockBroker, client: RawClient,
                                                             version: int) -> None:
    mockbroker.create_topic("filled")
    produce(client, "filled", make_batch(b"a", b"b"))
    produce(client, "filled", make_batch(b"c"))
    epoch = 0 if version >= 4 else -1
    assert _answer(list_offsets(client, "filled", LATEST, version=version), version) == (3, -1, epoch)
    assert _answer(list_offsets(client, "filled", EARLIEST, version=version), version) == (0, -1, epoch)
    if version == 0:
        assert list_offsets(client, "filled", LATEST, version=0).old_style_offsets == [3]


def test_earliest_follows_delete_records(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("moved")
    produce(client, "moved", make_batch(b"a", b"b", b"c"))
    client.request(DELETE_RECORDS, 2, {"topics": [{"name": "moved", "partitions": [
        {"partition_index": 0, "offset": 2}]}], "timeout_ms": 1000})
    for ts in (EARLIEST, EARLIEST_LOCAL):
        p = list_offsets(client, "moved", ts, version=8)
        assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, 2, -1, 0)
    assert list_offsets(client, "moved", LATEST).offset == 3


@pytest.mark.parametrize("version", [7, 8, 9, 11])
def test_max_timestamp_answers_the_first_record_with_the_largest_timestamp(mockbroker: MockBroker,
                                                                          client: RawClient, version: int) -> None:
    mockbroker.create_topic("max-ts")
    p = list_offsets(client, "max-ts", MAX_TIMESTAMP, version=version)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, -1, -1, -1)
    produce(client, "max-ts", make_batch(b"a", b"b", b"c", timestamps=[100, 500, 300]))
    _set_epoch(mockbroker, "max-ts", 2)
    produce(client, "max-ts", make_batch(b"d", b"e", timestamps=[400, 500]))
    p = list_offsets(client, "max-ts", MAX_TIMESTAMP, version=version)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, 1, 500, 0)
    produce(client, "max-ts", make_batch(b"f", timestamps=[900]))
    p = list_offsets(client, "max-ts", MAX_TIMESTAMP, version=version)
    assert (p.offset, p.timestamp, p.leader_epoch) == (5, 900, 2)


@pytest.mark.parametrize("version", [8, 9, 11])
def test_earliest_local_is_the_log_start_offset(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("local")
    produce(client, "local", make_batch(b"a"))
    p = list_offsets(client, "local", EARLIEST_LOCAL, version=version)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, 0, -1, 0)


@pytest.mark.parametrize(("timestamp", "version"), [(LATEST_TIERED, 9), (LATEST_TIERED, 11),
                                                    (EARLIEST_PENDING_UPLOAD, 11)])
def test_tiered_storage_timestamps_answer_minus_one_without_tiered_storage(mockbroker: MockBroker,
                                                                           client: RawClient, timestamp: int,
                                                                           version: int) -> None:
    mockbroker.create_topic("tiered")
    produce(client, "tiered", make_batch(b"a"))
    p = list_offsets(client, "tiered", timestamp, version=version)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, -1, -1, -1)


@pytest.mark.parametrize(("timestamp", "version"), [
    (MAX_TIMESTAMP, 0), (MAX_TIMESTAMP, 6), (EARLIEST_LOCAL, 7), (LATEST_TIERED, 8),
    (EARLIEST_PENDING_UPLOAD, 10), (-7, 11), (-100, 4),
])
def test_special_timestamp_before_its_version_is_unsupported_version(mockbroker: MockBroker, client: RawClient,
                                                                     timestamp: int, version: int) -> None:
    mockbroker.create_topic("too-early")
    p = list_offsets(client, "too-early", timestamp, version=version)
    assert p.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert _answer(p, version) == (-1, -1, -1)


@pytest.mark.parametrize("version", [1, 4, 7, 11])
def test_lookup_by_timestamp_answers_the_first_record_at_or_after_it(mockbroker: MockBroker, client: RawClient,
                                                                     version: int) -> None:
    mockbroker.create_topic("by-ts")
    produce(client, "by-ts", make_batch(b"a", b"b", b"c", timestamps=[1000, 2000, 3000]))
    _set_epoch(mockbroker, "by-ts", 1)
    produce(client, "by-ts", make_batch(b"d", b"e", timestamps=[4000, 5000]))
    first, second = (0, 1) if version >= 4 else (-1, -1)  # the epoch of the batch holding the record
    for target, expected in [(0, (0, 1000, first)), (1000, (0, 1000, first)), (1001, (1, 2000, first)),
                             (2500, (2, 3000, first)), (3001, (3, 4000, second)), (5000, (4, 5000, second))]:
        p = list_offsets(client, "by-ts", target, version=version)
        assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, *expected), target
    p = list_offsets(client, "by-ts", 5001, version=version)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (ErrorCode.NONE, -1, -1, -1)


def test_lookup_by_timestamp_follows_offset_order_not_timestamp_order(mockbroker: MockBroker,
                                                                      client: RawClient) -> None:
    mockbroker.create_topic("unordered")
    produce(client, "unordered", make_batch(b"a", b"b", timestamps=[5000, 1000]))
    produce(client, "unordered", make_batch(b"c", timestamps=[3000]))
    p = list_offsets(client, "unordered", 2000)
    assert (p.offset, p.timestamp) == (0, 5000)
    p = list_offsets(client, "unordered", 5001)
    assert (p.offset, p.timestamp) == (-1, -1)


def test_lookup_by_timestamp_skips_records_below_the_log_start(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("ts-deleted")
    produce(client, "ts-deleted", make_batch(b"a", b"b", b"c", timestamps=[1000, 2000, 3000]))
    client.request(DELETE_RECORDS, 2, {"topics": [{"name": "ts-deleted", "partitions": [
        {"partition_index": 0, "offset": 2}]}], "timeout_ms": 1000})
    p = list_offsets(client, "ts-deleted", 0)
    assert (p.offset, p.timestamp) == (2, 3000)


@pytest.mark.parametrize(("current", "code"), [(-1, ErrorCode.NONE), (2, ErrorCode.NONE),
                                               (1, ErrorCode.FENCED_LEADER_EPOCH),
                                               (3, ErrorCode.UNKNOWN_LEADER_EPOCH)])
def test_current_leader_epoch_is_checked_from_v4(mockbroker: MockBroker, client: RawClient, current: int,
                                                  code: ErrorCode) -> None:
    mockbroker.create_topic("epochs")
    _set_epoch(mockbroker, "epochs", 2)
    produce(client, "epochs", make_batch(b"a"))
    p = list_offsets(client, "epochs", LATEST, version=4, current_leader_epoch=current)
    assert p.error_code == code
    if code == ErrorCode.NONE:
        assert (p.offset, p.leader_epoch) == (1, 2)
    else:
        assert (p.offset, p.timestamp, p.leader_epoch) == (-1, -1, -1)
    # Before v4 the request has no current leader epoch.
    assert list_offsets(client, "epochs", LATEST, version=1).error_code == ErrorCode.NONE


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_topic_or_partition(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("known")
    for topic, partition in (("unknown", 0), ("known", 1), ("known", -1)):
        p = list_offsets(client, topic, LATEST, partition=partition, version=version)
        assert (p.partition_index, p.error_code) == (partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        assert _answer(p, version) == (-1, -1, -1)


def test_partition_named_twice_is_answered_once_with_invalid_request(mockbroker: MockBroker,
                                                                      client: RawClient) -> None:
    mockbroker.create_topic("dup", 2)
    part = {"timestamp": LATEST, "current_leader_epoch": -1}
    resp = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "dup", "partitions": [{"partition_index": 0, **part}, {"partition_index": 1, **part},
                                       {"partition_index": 0, **part}]}]})
    got = sorted((p.partition_index, p.error_code) for t in resp.topics for p in t.partitions)
    assert got == [(0, ErrorCode.INVALID_REQUEST), (1, ErrorCode.NONE)]


def test_read_committed_latest_is_the_last_stable_offset(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("lso")
    produce(client, "lso", make_batch(b"a", b"b"))
    p = list_offsets(client, "lso", LATEST, isolation_level=1)
    assert (p.error_code, p.offset) == (ErrorCode.NONE, 2)


@pytest.mark.parametrize(("version", "timestamp"), [(1, 0), (7, 0), (7, MAX_TIMESTAMP)])
def test_a_stored_batch_whose_records_do_not_decode_answers_corrupt_message(
        mockbroker: MockBroker, client: RawClient, version: int, timestamp: int) -> None:
    """A stored batch whose first record does not decode (its key runs past the record; right CRC; Produce
    refuses it, a log written before may hold it): looking in it by timestamp answers CORRUPT_MESSAGE, as
    Kafka's CorruptRecordException, and the connection keeps serving."""
    from tests.handlers.conftest import store_unvalidated
    from tests.protocol.test_records_batch import raw_batch

    key_past_the_record = bytes.fromhex("10 00 00 00 28 6b 02 76 00")
    mockbroker.create_topic("garbled")
    assert produce(client, "garbled", raw_batch(key_past_the_record, 1)).error_code == ErrorCode.INVALID_RECORD
    store_unvalidated(mockbroker, "garbled", raw_batch(key_past_the_record, 1))
    p = list_offsets(client, "garbled", timestamp, version=version)
    assert p.error_code == ErrorCode.CORRUPT_MESSAGE
    assert list_offsets(client, "garbled", LATEST, version=version).error_code == ErrorCode.NONE  # still open
