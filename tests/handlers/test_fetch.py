"""Raw-protocol tests of Fetch (1), sessionless: the bytes served, size limits (KIP-74), offsets out of
range, the long poll, leader epochs, isolation and the down-conversion of Fetch v0-v3."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import Codec
from mockbroker.protocol.records.legacy import parse_message_set
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    DELETE_RECORDS,
    FETCH,
    batches_of,
    connect,
    fetch,
    fetch_body,
    fetch_partition,
    fetch_topic,
    make_batch,
    produce,
    values_of,
)
from tests.rawclient import RawClient

MODERN = [4, 11, 12, 13, 15, 18]


def _fill(broker: MockBroker, client: RawClient, topic: str, *batches: list[bytes], partition: int = 0) -> None:
    for values in batches:
        assert produce(client, topic, make_batch(*values), partition=partition).error_code == ErrorCode.NONE


def _stored(broker: MockBroker, topic: str, partition: int = 0) -> list[bytes]:
    return [b.raw for b in broker.batches(topic, partition)]


def _fetch_v(client: RawClient, broker: MockBroker, topic: str, offset: int, version: int, **kwargs: object):  # type: ignore[no-untyped-def]
    topic_id = broker.cluster.topic(topic).topic_id if version >= 13 else None
    return fetch(client, topic, offset, version=version, topic_id=topic_id, **kwargs)  # type: ignore[arg-type]


def _assert_error(p: object, code: ErrorCode) -> None:
    """An error partition as Kafka answers it: no offsets, no records."""
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (  # type: ignore[attr-defined]
        code, -1, -1, -1)
    assert not p.records  # type: ignore[attr-defined]


# -- what is served --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", MODERN)
def test_fetch_returns_the_stored_bytes_unchanged(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("served")
    _fill(mockbroker, client, "served", [b"a", b"b"], [b"c"], [b"d", b"e", b"f"])
    p = _fetch_v(client, mockbroker, "served", 0, version)
    assert p.error_code == ErrorCode.NONE
    assert bytes(p.records) == b"".join(_stored(mockbroker, "served"))
    assert (p.high_watermark, p.last_stable_offset) == (6, 6)
    if version >= 5:
        assert p.log_start_offset == 0
    if version >= 11:
        assert p.preferred_read_replica == -1


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_compressed_batches_are_served_as_sent(mockbroker: MockBroker, client: RawClient, codec: Codec) -> None:
    mockbroker.create_topic("compressed")
    assert produce(client, "compressed", make_batch(b"x" * 100, b"y" * 100, codec=codec)).error_code == 0
    p = fetch(client, "compressed", 0)
    assert bytes(p.records) == b"".join(_stored(mockbroker, "compressed"))
    assert values_of(p.records) == [b"x" * 100, b"y" * 100]


def test_v13_response_names_the_topic_by_id(mockbroker: MockBroker, client: RawClient) -> None:
    topic = mockbroker.create_topic("by-id")
    _fill(mockbroker, client, "by-id", [b"a"])
    resp = client.request(FETCH, 13, fetch_body([fetch_topic("", fetch_partition(0, 0), topic_id=topic.topic_id)]))
    [t] = resp.responses
    assert t.topic_id == topic.topic_id
    assert values_of(t.partitions[0].records) == [b"a"]


def test_fetch_inside_a_batch_returns_that_whole_batch(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("inside")
    _fill(mockbroker, client, "inside", [b"a", b"b", b"c"], [b"d", b"e"])
    stored = _stored(mockbroker, "inside")
    assert bytes(fetch(client, "inside", 1).records) == stored[0] + stored[1]
    assert bytes(fetch(client, "inside", 2).records) == stored[0] + stored[1]
    assert bytes(fetch(client, "inside", 4).records) == stored[1]


def test_empty_at_the_high_watermark(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("at-end")
    p = fetch(client, "at-end", 0)
    assert (p.error_code, p.high_watermark, bytes(p.records)) == (ErrorCode.NONE, 0, b"")
    _fill(mockbroker, client, "at-end", [b"a", b"b"])
    p = fetch(client, "at-end", 2)
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (ErrorCode.NONE, 2, 2, 0)
    assert bytes(p.records) == b""


# -- size limits -----------------------------------------------------------------------------------


def test_first_batch_is_returned_even_when_larger_than_the_limits(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    mockbroker.create_topic("kip74")
    _fill(mockbroker, client, "kip74", [b"x" * 500], [b"y" * 500])
    first = _stored(mockbroker, "kip74")[0]
    assert bytes(fetch(client, "kip74", 0, partition_max_bytes=10).records) == first
    assert bytes(fetch(client, "kip74", 0, max_bytes=10).records) == first


def test_later_batches_are_returned_only_while_they_fit(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("fit")
    _fill(mockbroker, client, "fit", *([b"z" * 100] for _ in range(5)))
    stored = _stored(mockbroker, "fit")
    size = len(stored[0])
    assert bytes(fetch(client, "fit", 0, partition_max_bytes=2 * size + size // 2).records) == stored[0] + stored[1]
    assert bytes(fetch(client, "fit", 0, partition_max_bytes=3 * size).records) == b"".join(stored[:3])
    assert bytes(fetch(client, "fit", 0, max_bytes=2 * size + 1).records) == b"".join(stored[:2])


def test_max_bytes_is_shared_by_the_partitions_of_a_response(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("shared", 3)
    for partition in range(3):
        _fill(mockbroker, client, "shared", [b"p" * 300], partition=partition)
    size = len(_stored(mockbroker, "shared", 0)[0])
    body = fetch_body([fetch_topic("shared", *(fetch_partition(i, 0) for i in range(3)))], max_bytes=2 * size)
    parts = client.request(FETCH, 12, body).responses[0].partitions
    assert [len(batches_of(p.records)) for p in parts] == [1, 1, 0]
    assert all(p.error_code == ErrorCode.NONE and p.high_watermark == 1 for p in parts)


def test_first_non_empty_partition_gets_its_first_batch_whatever_the_limit(mockbroker: MockBroker,
                                                                           client: RawClient) -> None:
    mockbroker.create_topic("first-non-empty", 2)
    _fill(mockbroker, client, "first-non-empty", [b"q" * 400], partition=1)
    body = fetch_body([fetch_topic("first-non-empty", fetch_partition(0, 0, partition_max_bytes=5),
                                   fetch_partition(1, 0, partition_max_bytes=5))], max_bytes=5)
    parts = client.request(FETCH, 12, body).responses[0].partitions
    assert [len(batches_of(p.records)) for p in parts] == [0, 1]


# -- offsets out of range --------------------------------------------------------------------------


@pytest.mark.parametrize("version", MODERN)
def test_offset_past_the_end_is_out_of_range(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("past-end")
    _fill(mockbroker, client, "past-end", [b"a", b"b"])
    _assert_error(_fetch_v(client, mockbroker, "past-end", 3, version), ErrorCode.OFFSET_OUT_OF_RANGE)


def test_offset_below_the_log_start_after_delete_records_is_out_of_range(mockbroker: MockBroker,
                                                                         client: RawClient) -> None:
    mockbroker.create_topic("deleted")
    _fill(mockbroker, client, "deleted", [b"a", b"b"], [b"c", b"d"])
    resp = client.request(DELETE_RECORDS, 2, {"topics": [{"name": "deleted", "partitions": [
        {"partition_index": 0, "offset": 3}]}], "timeout_ms": 5000})
    assert resp.topics[0].partitions[0].low_watermark == 3
    _assert_error(fetch(client, "deleted", 2), ErrorCode.OFFSET_OUT_OF_RANGE)
    # From the log start on, the batch holding it is served whole, with the new log start offset.
    p = fetch(client, "deleted", 3)
    assert (p.error_code, p.log_start_offset) == (ErrorCode.NONE, 3)
    assert bytes(p.records) == _stored(mockbroker, "deleted")[-1]


def test_offset_below_the_log_start_after_truncation_is_out_of_range(mockbroker: MockBroker,
                                                                     client: RawClient) -> None:
    mockbroker.create_topic("truncated")
    _fill(mockbroker, client, "truncated", [b"a"], [b"b"], [b"c"])
    mockbroker._call(lambda: mockbroker.cluster.partition("truncated", 0).log.truncate_before(2))
    _assert_error(fetch(client, "truncated", 0), ErrorCode.OFFSET_OUT_OF_RANGE)
    assert values_of(fetch(client, "truncated", 2).records) == [b"c"]


# -- unknown topics and partitions -----------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 11, 12])
def test_unknown_topic_is_unknown_topic_or_partition(client: RawClient, version: int) -> None:
    p = fetch(client, "no-such-topic", 0, version=version)
    assert (p.error_code, p.high_watermark) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)


def test_partition_out_of_range_is_unknown_topic_or_partition(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("one-part")
    p = fetch(client, "one-part", 0, partition=1)
    assert (p.partition_index, p.error_code, p.high_watermark) == (1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)


@pytest.mark.parametrize("version", [13, 15, 18])
def test_unknown_topic_id_is_unknown_topic_id(client: RawClient, version: int) -> None:
    missing = uuid.uuid4()
    resp = client.request(FETCH, version, fetch_body([fetch_topic("", fetch_partition(0, 0), topic_id=missing)]))
    [t] = resp.responses
    assert t.topic_id == missing
    assert (t.partitions[0].error_code, t.partitions[0].high_watermark) == (ErrorCode.UNKNOWN_TOPIC_ID, -1)


def test_errors_do_not_hide_the_other_partitions(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("good")
    _fill(mockbroker, client, "good", [b"g"])
    body = fetch_body([fetch_topic("good", fetch_partition(0, 0), fetch_partition(0 + 1, 0)),
                       fetch_topic("bad", fetch_partition(0, 0))])
    resp = client.request(FETCH, 12, body)
    got = {(t.topic, p.partition_index): p.error_code for t in resp.responses for p in t.partitions}
    assert got == {("good", 0): ErrorCode.NONE, ("good", 1): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                   ("bad", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert values_of(resp.responses[0].partitions[0].records) == [b"g"]


# -- leader epochs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("current", "code"), [(-1, ErrorCode.NONE), (0, ErrorCode.NONE),
                                               (1, ErrorCode.UNKNOWN_LEADER_EPOCH)])
def test_current_leader_epoch_against_epoch_0(mockbroker: MockBroker, client: RawClient, current: int,
                                              code: ErrorCode) -> None:
    mockbroker.create_topic("epoch0")
    _fill(mockbroker, client, "epoch0", [b"a"])
    p = fetch(client, "epoch0", 0, current_leader_epoch=current)
    if code == ErrorCode.NONE:
        assert (p.error_code, values_of(p.records)) == (code, [b"a"])
    else:
        _assert_error(p, code)


@pytest.mark.parametrize(("current", "code"), [(2, ErrorCode.FENCED_LEADER_EPOCH), (3, ErrorCode.NONE),
                                               (4, ErrorCode.UNKNOWN_LEADER_EPOCH)])
def test_current_leader_epoch_below_is_fenced_above_is_unknown(mockbroker: MockBroker, client: RawClient,
                                                               current: int, code: ErrorCode) -> None:
    mockbroker.create_topic("epoch3")
    mockbroker._call(lambda: setattr(mockbroker.cluster.partition("epoch3", 0).log, "leader_epoch", 3))
    p = fetch(client, "epoch3", 0, current_leader_epoch=current)
    if code == ErrorCode.NONE:
        assert p.error_code == code
    else:
        _assert_error(p, code)


def test_leader_epoch_is_not_checked_before_v9(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("old-epoch")
    assert fetch(client, "old-epoch", 0, version=8, current_leader_epoch=5).error_code == ErrorCode.NONE


# -- isolation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 12, 18])
def test_read_committed_lists_aborted_transactions_read_uncommitted_does_not(mockbroker: MockBroker,
                                                                             client: RawClient, version: int) -> None:
    mockbroker.create_topic("iso")
    _fill(mockbroker, client, "iso", [b"a"])
    committed = _fetch_v(client, mockbroker, "iso", 0, version, isolation_level=1)
    assert committed.aborted_transactions == []
    assert values_of(committed.records) == [b"a"]
    assert _fetch_v(client, mockbroker, "iso", 1, version, isolation_level=1).aborted_transactions == []
    assert _fetch_v(client, mockbroker, "iso", 0, version, isolation_level=0).aborted_transactions is None


# -- long poll -------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 12, 13])
def test_long_poll_is_answered_as_soon_as_another_connection_produces(mockbroker: MockBroker, client: RawClient,
                                                                       version: int) -> None:
    topic = mockbroker.create_topic("waiting")
    part = fetch_partition(0, 0)
    tid = topic.topic_id if version >= 13 else None
    client.send(FETCH, version, fetch_body([fetch_topic("waiting", part, topic_id=tid)], max_wait_ms=60_000,
                                           min_bytes=1))
    with connect(mockbroker) as producer:
        assert produce(producer, "waiting", make_batch(b"hello")).base_offset == 0
    # Answered with the records (a fetch answered at max_wait would time the socket out first).
    _, resp = client.recv(FETCH, version)
    p = resp.responses[0].partitions[0]
    assert (p.error_code, p.high_watermark, values_of(p.records)) == (ErrorCode.NONE, 1, [b"hello"])


def test_long_poll_woken_by_another_partition_of_the_request(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("two-waits", 2)
    client.send(FETCH, 12, fetch_body([fetch_topic("two-waits", fetch_partition(0, 0), fetch_partition(1, 0))],
                                      max_wait_ms=60_000))
    with connect(mockbroker) as producer:
        produce(producer, "two-waits", make_batch(b"p1"), partition=1)
    _, resp = client.recv(FETCH, 12)
    assert [values_of(p.records) for p in resp.responses[0].partitions] == [[], [b"p1"]]


def test_long_poll_with_no_data_answers_at_max_wait_with_empty_records(mockbroker: MockBroker,
                                                                       client: RawClient) -> None:
    mockbroker.create_topic("quiet")
    p = fetch(client, "quiet", 0, max_wait_ms=100, min_bytes=1)
    assert (p.error_code, p.high_watermark, bytes(p.records)) == (ErrorCode.NONE, 0, b"")


def test_long_poll_answers_what_there_is_when_min_bytes_is_not_reached(mockbroker: MockBroker,
                                                                        client: RawClient) -> None:
    mockbroker.create_topic("not-enough")
    _fill(mockbroker, client, "not-enough", [b"small"])
    p = fetch(client, "not-enough", 0, max_wait_ms=100, min_bytes=1_000_000)
    assert values_of(p.records) == [b"small"]


def test_min_bytes_0_is_answered_at_once(mockbroker: MockBroker, client: RawClient) -> None:
    # Kafka answers at once when the bytes available (none) reach min_bytes (0).
    mockbroker.create_topic("no-min")
    client.sock.settimeout(5)
    p = fetch(client, "no-min", 0, max_wait_ms=600_000, min_bytes=0)
    assert (p.error_code, bytes(p.records)) == (ErrorCode.NONE, b"")


def test_long_poll_holds_back_the_next_request_of_its_connection(mockbroker: MockBroker,
                                                                 client: RawClient) -> None:
    mockbroker.create_topic("ordering")
    first = client.send(FETCH, 12, fetch_body([fetch_topic("ordering", fetch_partition(0, 0))],
                                              max_wait_ms=60_000))
    second = client.send(FETCH, 12, fetch_body([fetch_topic("ordering", fetch_partition(0, 0))]))
    with connect(mockbroker) as producer:
        produce(producer, "ordering", make_batch(b"x"))
    assert client.recv(FETCH, 12)[0] == first
    assert client.recv(FETCH, 12)[0] == second


# -- Fetch v0-v3: down-conversion to magic 0 / 1 ---------------------------------------------------


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1)])
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_old_fetch_versions_get_down_converted_message_sets(mockbroker: MockBroker, client: RawClient,
                                                            version: int, magic: int, codec: Codec) -> None:
    mockbroker.create_topic("down")
    produce(client, "down", make_batch(b"a", b"b", timestamps=[1000, 2000], codec=codec))
    produce(client, "down", make_batch(b"c", timestamps=[3000], codec=codec))
    p = fetch(client, "down", 0, version=version)
    assert (p.error_code, p.high_watermark) == (ErrorCode.NONE, 3)
    messages = parse_message_set(bytes(p.records))
    assert [(m.offset, m.magic, m.key, m.value) for m in messages] == [
        (0, magic, b"k", b"a"), (1, magic, b"k", b"b"), (2, magic, b"k", b"c")]
    if magic == 1:
        assert [m.timestamp for m in messages] == [1000, 2000, 3000]


@pytest.mark.parametrize("version", [0, 3])
def test_down_conversion_leaves_out_records_before_the_fetch_offset(mockbroker: MockBroker, client: RawClient,
                                                                    version: int) -> None:
    # Kafka's down-conversion drops the records below the fetch offset of an uncompressed batch.
    mockbroker.create_topic("down-offset")
    produce(client, "down-offset", make_batch(b"a", b"b", b"c"))
    messages = parse_message_set(bytes(fetch(client, "down-offset", 1, version=version).records))
    assert [(m.offset, m.value) for m in messages] == [(1, b"b"), (2, b"c")]


def test_zstd_batch_cannot_be_down_converted(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("down-zstd")
    produce(client, "down-zstd", make_batch(b"z", codec=Codec.ZSTD))
    p = fetch(client, "down-zstd", 0, version=3)
    assert (p.error_code, p.high_watermark) == (ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, -1)
    # The connection is still usable and newer versions get the batch.
    assert values_of(fetch(client, "down-zstd", 0, version=12).records) == [b"z"]


def test_zstd_topic_cannot_be_fetched_before_v10(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("zstd-topic", config={"compression.type": "zstd"})
    produce(client, "zstd-topic", make_batch(b"z", codec=Codec.ZSTD))
    assert fetch(client, "zstd-topic", 0, version=9).error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert fetch(client, "zstd-topic", 0, version=10).error_code == ErrorCode.NONE


@pytest.mark.mockbroker(config={"mockbroker.max.records.per.batch": "10"})
@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
def test_down_conversion_converts_at_most_the_record_bound_per_fetch(mockbroker: MockBroker, client: RawClient,
                                                                     codec: Codec) -> None:
    # Three batches of 6 records: one fetch converts whole batches up to 10 records (the first always), the
    # client fetches the rest from where the answer ended.
    mockbroker.create_topic("down-bound")
    for start in range(0, 18, 6):
        produce(client, "down-bound", make_batch(*[b"%d" % i for i in range(start, start + 6)], codec=codec))
    offsets = []
    while len(offsets) < 18:
        messages = parse_message_set(bytes(fetch(client, "down-bound", len(offsets), version=2).records))
        assert len(messages) == 6
        offsets += [m.offset for m in messages]
    assert offsets == list(range(18))
