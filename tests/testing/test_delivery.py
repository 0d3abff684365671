"""mockbroker.testing.delivery on records built by hand: each kind of defect is found and named in the
message, a clean run passes, and the adapters read each client's shapes (without the clients)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import pytest

from mockbroker.testing.delivery import Acked, Acks, DeliveryError, Read, check_delivery


def acks(*offsets: int, partition: int = 0) -> list[Acked]:
    return [Acked("t", partition, o, None, b"v%d" % o) for o in offsets]


def reads(*offsets: int, partition: int = 0) -> list[Read]:
    return [Read("t", partition, o, None, b"v%d" % o) for o in offsets]


def test_a_clean_run_is_ok() -> None:
    report = check_delivery(acks(0, 1, 2), reads(0, 1, 2), committed={("t", 0): 3})
    assert report.ok
    report.assert_ok()
    assert str(report).startswith("delivery ok: 0 lost, 0 duplicated, 0 reordered, 0 aborted read, "
                                  "0 committed ahead (3 acknowledged, 3 read)")


def test_lost_records_are_listed_with_where_and_what() -> None:
    report = check_delivery(acks(*range(15)), reads(0, 1, 2))
    assert [a.offset for a in report.lost] == list(range(3, 15))
    with pytest.raises(DeliveryError) as info:
        report.assert_ok()
    text = str(info.value)
    assert text.splitlines()[0] == ("delivery check failed: 12 lost, 0 duplicated, 0 reordered, 0 aborted read, "
                                    "0 committed ahead (15 acknowledged, 3 read)")
    assert "lost: acknowledged, never read (12):" in text
    assert "  t[0]@3 key=None value=b'v3'" in text
    assert "  t[0]@12 key=None value=b'v12'" in text and "@13" not in text  # the first 10 only
    assert "  ... and 2 more" in text
    assert info.value.report is report


def test_an_ack_whose_offset_holds_other_content_is_lost() -> None:
    report = check_delivery([Acked("t", 0, 0, None, b"mine")], [Read("t", 0, 0, None, b"other")])
    assert report.lost == [Acked("t", 0, 0, None, b"mine")]
    # an ack that carries no content (a Java "sent" line alone) is matched by its offset only
    assert check_delivery([Acked("t", 0, 0, has_content=False)], [Read("t", 0, 0, None, b"other")]).ok


def test_acks_without_offsets_are_matched_by_content_once_each() -> None:
    sent = [Acked("t", 0, -1, b"k", b"v"), Acked("t", 0, -1, b"k", b"v")]
    assert check_delivery(sent, [Read("t", 0, 4, b"k", b"v"), Read("t", 0, 5, b"k", b"v")]).ok
    report = check_delivery(sent, [Read("t", 0, 4, b"k", b"v")])
    assert len(report.lost) == 1


def test_a_record_read_twice_is_duplicated() -> None:
    report = check_delivery(acks(0, 1, 2), reads(0, 1, 1, 1, 2))
    [dup] = report.duplicated
    assert (dup.how, dup.offsets, dup.count) == ("read", [(0, 1)], 3)
    assert "  t[0]@1 key=None value=b'v1' read 3 times" in report.describe()


def test_a_record_stored_twice_is_duplicated() -> None:
    stored = [Read("t", 0, 0, b"k", b"once"), Read("t", 0, 1, b"k", b"once"), Read("t", 0, 2, b"k", b"twice"),
              Read("t", 0, 3, b"k", b"twice")]
    sent = [Acked("t", 0, 0, b"k", b"once"), Acked("t", 0, 2, b"k", b"twice"), Acked("t", 0, 3, b"k", b"twice")]
    report = check_delivery(sent, stored)
    [dup] = report.duplicated
    assert (dup.how, dup.value, dup.offsets, dup.acked) == ("stored", b"once", [(0, 0), (0, 1)], 1)
    assert "t key=b'k' value=b'once' stored at [0]@0, [0]@1 (2 times, acknowledged 1)" in report.describe()
    # content nobody acknowledged is only judged with distinct_values=True
    extra = [Read("t", 0, 4, None, b"x"), Read("t", 0, 5, None, b"x")]
    assert check_delivery(sent[1:], stored[2:] + extra[:1]).ok
    assert not check_delivery([], extra).duplicated
    assert [d.offsets for d in check_delivery([], extra, distinct_values=True).duplicated] == [[(0, 4), (0, 5)]]


def test_acks_out_of_send_order_are_reordered() -> None:
    report = check_delivery(acks(0, 2, 1, 3), reads(0, 1, 2, 3))
    [r] = report.reordered
    assert (r.how, r.offset, r.after) == ("sent", 1, 2)
    assert "sent: t[0]@1 key=None value=b'v1' acknowledged after @2" in report.describe()


def test_a_consumer_reading_an_older_offset_later_is_reordered() -> None:
    report = check_delivery(acks(0, 1, 2, 3), reads(0, 2, 3, 1))
    assert [(r.how, r.offset, r.after) for r in report.reordered] == [("read", 1, 3)]
    assert "read: t[0]@1 key=None value=b'v1' read after @3" in str(report)
    # a re-read of an offset already seen is a duplicate, not a reorder
    again = check_delivery(acks(0, 1), reads(0, 1, 0, 1))
    assert again.reordered == [] and len(again.duplicated) == 2


def test_a_key_read_across_partitions_out_of_send_order_is_reordered() -> None:
    sent = [Acked("t", 0, 0, b"k", b"first"), Acked("t", 1, 0, b"k", b"second")]
    got = [Read("t", 1, 0, b"k", b"second"), Read("t", 0, 0, b"k", b"first")]
    report = check_delivery(sent, got)
    assert [(r.how, r.partition, r.after_partition) for r in report.reordered] == [("key", 0, 1)]
    assert "key: t[0]@0 key=b'k' value=b'first' read after [1]@0, which was sent later" in str(report)
    assert check_delivery(sent, got[::-1]).ok


def test_sequences_against_offsets_in_the_log_are_checked() -> None:
    log = [Read("t", 0, 0, None, b"a", 7, 0, 0), Read("t", 0, 1, None, b"b", 7, 0, 2),
           Read("t", 0, 2, None, b"c", 7, 0, 1), Read("t", 0, 3, None, b"d", 7, 1, 0)]  # epoch 1 starts at 0
    report = check_delivery([], log)
    assert [(r.how, r.offset, r.after) for r in report.reordered] == [("sequence", 2, 1)]
    assert "sequence: t[0]@2 key=None value=b'c' has a sequence not above that of @1" in str(report)


def test_aborted_ranges_given_by_hand() -> None:
    report = check_delivery(acks(0, 1, 2, 3), reads(0, 1, 2, 3), aborted={("t", 0): [(1, 2)]})
    assert [r.offset for r in report.aborted_read] == [1, 2]
    assert "aborted read: records of aborted or open transactions read (2):\n  t[0]@1 key=None value=b'v1'" in \
        str(report)
    assert check_delivery(acks(0, 1), reads(0, 1), aborted={("t", 0): [(1, 2)]}, isolation="read_uncommitted").ok


def test_committed_past_what_was_processed() -> None:
    report = check_delivery(acks(*range(6)), reads(0, 1), committed={("t", 0): 5}, processed=reads(0, 1))
    [ahead] = report.committed_ahead
    assert (ahead.committed, ahead.processed_up_to, ahead.unprocessed) == (5, 1, [2, 3, 4])
    assert "committed ahead: committed past unprocessed records (1):\n  t[0] committed 5, processed up to 1, " \
           "3 never processed: 2, 3, 4" in str(report)
    assert check_delivery(acks(*range(6)), reads(*range(6)), committed={("t", 0): 6}).ok
    # without acks or a broker nothing says where records are: everything past the last processed counts
    bare = check_delivery([], reads(0, 1), committed={("t", 0): 4, ("t", 1): 0})
    assert [(c.partition, c.unprocessed) for c in bare.committed_ahead] == [(0, [2, 3])]


def test_a_group_needs_the_broker() -> None:
    with pytest.raises(ValueError, match="broker"):
        check_delivery([], [], group="g")


def test_unacknowledged_reads_are_a_defect_only_when_asked() -> None:
    assert check_delivery(acks(0), reads(0, 1)).ok
    report = check_delivery(acks(0), reads(0, 1), only_acked=True)
    assert [r.offset for r in report.unacknowledged] == [1] and not report.ok
    assert "1 unacknowledged" in str(report) and "unacknowledged: read, never acknowledged (1):" in str(report)


# -- adapters -------------------------------------------------------------------------------------------------


class FakeMessage:
    """The confluent-kafka Message interface (methods, not attributes)."""

    def __init__(self, offset: int, error: object = None) -> None:
        self._offset, self._error = offset, error

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes:
        return b"k"

    def value(self) -> bytes:
        return b"v"

    def error(self) -> object:
        return self._error


@dataclass
class FakeMetadata:  # aiokafka and kafka-python RecordMetadata: attributes
    topic: str
    partition: int
    offset: int


@dataclass
class FakeConsumerRecord:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def test_adapters_read_each_clients_shape() -> None:
    assert Acked.of(FakeMessage(5)) == Acked("t", 2, 5, b"k", b"v")
    assert Read.of(FakeMessage(5)) == Read("t", 2, 5, b"k", b"v")
    with pytest.raises(ValueError, match="error"):
        Read.of(FakeMessage(5, error="_PARTITION_EOF"))
    assert Acked.from_metadata(FakeMetadata("t", 1, 9), "k", b"v") == Acked("t", 1, 9, b"k", b"v")
    with pytest.raises(TypeError, match="from_metadata"):
        Acked.of(FakeMetadata("t", 1, 9))
    assert Read.of(FakeConsumerRecord("t", 1, 3, None, b"v")) == Read("t", 1, 3, None, b"v")
    assert Read.of(("t", 0, 4)) == Read("t", 0, 4)
    assert Read.of(("t", 0, 4, "k", "v")) == Read("t", 0, 4, b"k", b"v")
    sent = {"type": "sent", "topic": "t", "partition": 1, "offset": 7, "timestamp": 1, "index": 0}
    assert Acked.of(sent) == Acked("t", 1, 7, has_content=False)
    assert Acked.from_java(json.dumps(sent), value=b"v") == Acked("t", 1, 7, None, b"v")
    assert Acked.from_java({**sent, "offset": None}).offset == -1
    record = {"type": "record", "topic": "t", "partition": 0, "offset": 3, "key": None, "key_b64": None,
              "value_b64": base64.b64encode(b"\xff\x00").decode()}
    assert Read.of(record) == Read("t", 0, 3, None, b"\xff\x00")
    assert Read.of(json.dumps({**record, "value_b64": None, "value": "text"})).value == b"text"


def test_acks_collects_delivery_reports() -> None:
    collected = Acks()
    collected(None, FakeMessage(0))
    collected("boom", FakeMessage(-1))
    assert collected.acked == [Acked("t", 2, 0, b"k", b"v")] and [e for e, _ in collected.failed] == ["boom"]
