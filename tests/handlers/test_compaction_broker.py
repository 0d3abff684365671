"""Compaction and retention seen through the wire protocol: Produce, Fetch and ListOffsets on cleaned and
aged logs, and the broker's scheduler running the cleaner and the retention check on its clock."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import RECORD_BATCH_OVERHEAD, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.protocol.records.legacy import parse_message_set
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    batches_of,
    fetch,
    list_offsets,
    make_batch,
    produce,
    records_of,
)
from tests.rawclient import RawClient

INCREMENTAL_ALTER_CONFIGS = 44
TOPIC_RESOURCE = 2
EARLIEST, LATEST = -2, -1


def send(client: RawClient, topic: str, *records: tuple[bytes | None, bytes | None], pid: int = -1, seq: int = -1,
         timestamp: int | None = None) -> int:
    """Produce one batch; its base offset (fails on any error)."""
    batch = build_batch([RecordInput(k, v, (), timestamp) for k, v in records], producer_id=pid,
                        producer_epoch=0 if pid >= 0 else -1, base_sequence=seq)
    p = produce(client, topic, bytes(batch))
    assert p.error_code == ErrorCode.NONE, p
    return int(p.base_offset)


# -- produce ----------------------------------------------------------------------------------------


def test_keyless_record_on_a_compacted_topic_is_refused(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("ck", config={"cleanup.policy": "compact"})
    p = produce(client, "ck", bytes(make_batch(b"v", key=None)))
    assert p.error_code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in p.record_errors] == [0]
    assert mockbroker.batches("ck") == []


def test_an_idempotent_producer_goes_on_after_all_its_records_were_compacted_away(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("idem", config={"cleanup.policy": "compact", "delete.retention.ms": "0"})
    assert send(client, "idem", (b"k", b"v"), pid=4000, seq=0) == 0
    assert send(client, "idem", (b"k", None), pid=4000, seq=1) == 1
    mockbroker.compact("idem")  # the tombstone gets its delete horizon (now + 0)
    mockbroker.clock.advance(1)
    mockbroker.compact("idem")  # ... and goes: nothing of the producer is left but its last batch, empty
    [empty] = mockbroker.batches("idem")
    assert (empty.base_offset, empty.record_count, empty.producer_id, empty.base_sequence, empty.last_sequence) == (
        1, 0, 4000, 1, 1)
    assert mockbroker.records("idem") == []
    # next sequence: accepted; the same batch again: answered with its offset; a gap: refused
    assert send(client, "idem", (b"k", b"again"), pid=4000, seq=2) == 2
    retry = build_batch([RecordInput(b"k", b"again")], producer_id=4000, producer_epoch=0, base_sequence=2)
    assert produce(client, "idem", bytes(retry)).base_offset == 2
    gap = build_batch([RecordInput(b"k", b"x")], producer_id=4000, producer_epoch=0, base_sequence=9)
    assert produce(client, "idem", bytes(gap)).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert [r.value for r in mockbroker.records("idem")] == [b"again"]


# -- fetch ------------------------------------------------------------------------------------------


def compacted_with_gaps(broker: MockBroker, client: RawClient, topic: str) -> None:
    """Offsets 0..5, compacted to: empty batch 1 (producer 4001's last), 3 (a=3), 4..5 (b=2, c=1)."""
    broker.create_topic(topic, config={"cleanup.policy": "compact"})
    send(client, topic, (b"a", b"1"), pid=4001, seq=0)  # 0
    send(client, topic, (b"b", b"1"), pid=4001, seq=1)  # 1
    send(client, topic, (b"a", b"2"))  # 2
    send(client, topic, (b"a", b"3"))  # 3
    send(client, topic, (b"b", b"2"), (b"c", b"1"))  # 4, 5
    broker.compact(topic)


def test_fetch_from_the_start_returns_kept_batches_with_gaps_and_the_empty_batch(
        mockbroker: MockBroker, client: RawClient) -> None:
    compacted_with_gaps(mockbroker, client, "gaps")
    p = fetch(client, "gaps", 0)
    assert (p.error_code, p.high_watermark, p.log_start_offset) == (ErrorCode.NONE, 6, 0)
    got = batches_of(p.records)
    assert [(b.base_offset, b.last_offset, b.record_count) for b in got] == [(1, 1, 0), (3, 3, 1), (4, 5, 2)]
    assert got[0].size == RECORD_BATCH_OVERHEAD and got[0].producer_id == 4001
    for b in got:
        b.validate()
    assert [(r.offset, r.key, r.value) for r in records_of(p.records)] == [
        (3, b"a", b"3"), (4, b"b", b"2"), (5, b"c", b"1")]


def test_fetch_at_an_offset_that_was_compacted_away_returns_the_next_batch(
        mockbroker: MockBroker, client: RawClient) -> None:
    compacted_with_gaps(mockbroker, client, "gaps2")
    p = fetch(client, "gaps2", 2)
    assert p.error_code == ErrorCode.NONE
    assert [b.base_offset for b in batches_of(p.records)] == [3, 4]
    assert fetch(client, "gaps2", 6).records in (None, b"", [])  # at the end: nothing, no error
    earliest = list_offsets(client, "gaps2", EARLIEST)
    assert earliest.offset == 0  # compaction never moves the log start offset


def test_old_fetch_versions_read_a_compacted_log_without_its_empty_batches(
        mockbroker: MockBroker, client: RawClient) -> None:
    compacted_with_gaps(mockbroker, client, "gaps3")
    p = fetch(client, "gaps3", 0, version=3)
    assert p.error_code == ErrorCode.NONE
    assert [m.offset for m in parse_message_set(bytes(p.records))] == [3, 4, 5]


# -- tombstones on the broker clock -----------------------------------------------------------------


def test_a_tombstone_stays_until_delete_retention_ms_has_passed_on_the_broker_clock(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("tomb", config={"cleanup.policy": "compact", "delete.retention.ms": "60000"})
    send(client, "tomb", (b"a", b"1"))
    send(client, "tomb", (b"a", None))
    send(client, "tomb", (b"b", b"1"))
    mockbroker.compact("tomb")
    batches = mockbroker.batches("tomb")
    horizon = batches[0].delete_horizon_ms
    assert [b.base_offset for b in batches] == [1, 2] and horizon is not None
    assert batches[0].base_timestamp == horizon
    assert [(r.offset, r.value) for r in mockbroker.records("tomb")] == [(1, None), (2, b"1")]
    mockbroker.clock.advance(30)
    mockbroker.compact("tomb")
    assert [(r.offset, r.value) for r in mockbroker.records("tomb")] == [(1, None), (2, b"1")]
    mockbroker.clock.advance(31)
    mockbroker.compact("tomb")
    assert [(r.offset, r.value) for r in mockbroker.records("tomb")] == [(2, b"1")]
    assert [b.base_offset for b in mockbroker.batches("tomb")] == [2]


def test_compact_refuses_a_topic_that_is_not_compacted(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("plain")
    with pytest.raises(ValueError):
        mockbroker.compact("plain")
    with pytest.raises(KeyError):
        mockbroker.compact("no-such-topic")


# -- retention --------------------------------------------------------------------------------------


def test_retention_moves_the_log_start_offset_and_a_fetch_below_it_is_out_of_range(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("aged", config={"retention.ms": "20000", "segment.bytes": "1"})
    send(client, "aged", (b"k", b"0"), (b"k", b"1"))  # 0, 1: stamped with the wall clock
    send(client, "aged", (b"k", b"2"))  # 2
    mockbroker.clock.advance(21)  # past retention.ms, before the first scheduled check (30 s)
    now = mockbroker.clock.now_ms()
    send(client, "aged", (b"k", b"3"), timestamp=now)  # 3: new by the broker clock
    assert [s["base_offset"] for s in mockbroker.segments("aged")] == [0, 2, 3]
    assert mockbroker.enforce_retention("aged") == 2
    assert mockbroker.offsets("aged")["log_start_offset"] == 3
    assert [s["base_offset"] for s in mockbroker.segments("aged")] == [3]
    below = fetch(client, "aged", 1)
    assert below.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert list_offsets(client, "aged", EARLIEST).offset == 3
    assert list_offsets(client, "aged", LATEST).offset == 4
    assert [r.offset for r in records_of(fetch(client, "aged", 3).records)] == [3]


def test_retention_bytes_drops_the_oldest_segments(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("sized", config={"segment.bytes": "1"})
    for i in range(4):
        send(client, "sized", (b"k", b"%d" % i))
    sizes = [s["size"] for s in mockbroker.segments("sized")]
    incremental(client, "sized", [("retention.bytes", 0, str(sum(sizes[2:])))])
    assert mockbroker.enforce_retention() == 2
    assert mockbroker.offsets("sized")["log_start_offset"] == 2


# -- the scheduler ------------------------------------------------------------------------------------


def incremental(client: RawClient, topic: str, ops: list[tuple[str, int, str]]) -> None:
    body = {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": topic,
                           "configs": [{"name": n, "config_operation": o, "value": v} for n, o, v in ops]}],
            "validate_only": False}
    [r] = client.request(INCREMENTAL_ALTER_CONFIGS, 1, body).responses
    assert r.error_code == ErrorCode.NONE


def test_segment_configs_set_with_incremental_alter_configs_roll_segments(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("rolls")
    send(client, "rolls", (b"k", b"0"))
    send(client, "rolls", (b"k", b"1"))
    assert [s["base_offset"] for s in mockbroker.segments("rolls")] == [0]
    incremental(client, "rolls", [("segment.bytes", 0, "1")])
    send(client, "rolls", (b"k", b"2"))
    incremental(client, "rolls", [("segment.bytes", 1, ""), ("segment.ms", 0, "1000")])
    send(client, "rolls", (b"k", b"3"))  # segment.ms has not passed
    mockbroker.clock.advance(2)
    send(client, "rolls", (b"k", b"4"))
    assert [s["base_offset"] for s in mockbroker.segments("rolls")] == [0, 2, 4]


@pytest.mark.mockbroker(config={"log.retention.check.interval.ms": "1000"})
def test_the_retention_check_runs_when_the_broker_clock_reaches_it(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("sched", config={"retention.ms": "60000"})
    send(client, "sched", (b"k", b"0"))
    send(client, "sched", (b"k", b"1"))
    mockbroker.clock.advance(61)  # past retention.ms and the first check (30 s after start)
    offsets = mockbroker.offsets("sched")
    assert offsets["log_start_offset"] == offsets["high_watermark"] == 2
    assert mockbroker.batches("sched") == []
    send(client, "sched", (b"k", b"2"), timestamp=mockbroker.clock.now_ms())
    mockbroker.clock.advance(2)
    assert [b.base_offset for b in mockbroker.batches("sched")] == [2]


def test_the_cleaner_runs_on_the_broker_clock_once_the_log_is_dirty_enough(
        mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("auto", config={"cleanup.policy": "compact", "segment.ms": "1000"})
    for i in range(3):
        send(client, "auto", (b"k", b"%d" % i))
    mockbroker.clock.advance(2)
    send(client, "auto", (b"k", b"3"))  # rolls: segment.ms passed on the broker clock
    assert [s["base_offset"] for s in mockbroker.segments("auto")] == [0, 3]
    assert len(mockbroker.batches("auto")) == 4
    mockbroker.clock.advance(15)  # the cleaner's backoff (log.cleaner.backoff.ms)
    assert [(r.offset, r.value) for r in mockbroker.records("auto")] == [(2, b"2"), (3, b"3")]


@pytest.mark.mockbroker(config={"log.cleaner.enable": "false"})
def test_no_scheduled_cleaning_with_the_cleaner_disabled(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("off", config={"cleanup.policy": "compact", "segment.bytes": "1"})
    for i in range(3):
        send(client, "off", (b"k", b"%d" % i))
    mockbroker.clock.advance(60)
    assert len(mockbroker.records("off")) == 3
    mockbroker.compact("off")  # the test hook works regardless
    assert [r.offset for r in mockbroker.records("off")] == [2]


def test_cleaned_batches_are_valid_v2_batches(mockbroker: MockBroker, client: RawClient) -> None:
    # a cleaned batch fetched raw is a valid v2 batch for any reader
    compacted_with_gaps(mockbroker, client, "raw")
    for info in mockbroker.batches("raw"):
        RecordBatch(info.raw).validate()


def test_the_cleaner_applies_retention_to_compact_delete_topics(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("both", config={"cleanup.policy": "compact,delete", "retention.ms": "20000",
                                            "segment.bytes": "1"})
    send(client, "both", (b"a", b"1"))
    send(client, "both", (b"b", b"1"))
    send(client, "both", (b"c", b"1"), timestamp=mockbroker.clock.now_ms() + 60_000)
    # 21 s: the cleaner (every 15 s) has run, the retention check (first after 30 s) has not; Kafka's
    # cleaner thread is what deletes old segments of compact,delete topics
    mockbroker.clock.advance(21)
    assert mockbroker.offsets("both")["log_start_offset"] == 2
    assert [r.offset for r in mockbroker.records("both")] == [2]
