"""Real clients on compacted and aged logs: the Java client (kafka-clients 4.3.0) and librdkafka
(confluent-kafka).

- Consumers read a compacted partition across offset gaps and empty batches: from the beginning, from an
  offset inside a removed range or an empty batch, and from a group's committed offset.
- Idempotent producers keep producing to a partition after all their earlier records were compacted
  away (their last batch stays, empty, with its sequences): no OUT_OF_ORDER_SEQUENCE_NUMBER, no duplicate.
- A read_committed consumer still reads a producer's committed transactions after its aborted
  transaction's records and markers were cleaned away.
- A consumer positioned below the log start offset after retention gets OFFSET_OUT_OF_RANGE and resets
  as auto.offset.reset says.
Bounded loops only; nothing here asserts timing.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.batch import Codec
from mockbroker.protocol.records.builder import RecordInput, build_batch
from tests.interop.clients import of_type, run_java
from tests.rawclient import RawClient

pytestmark = pytest.mark.interop

TIMEOUT = 20.0
PRODUCE = 0


def send(broker: MockBroker, topic: str, records: list[tuple[bytes | None, bytes | None]], *, pid: int = -1,
         seq: int = -1, codec: Codec = Codec.NONE, timestamp: int | None = None) -> int:
    """Append one batch through the wire (as a producer would); its base offset."""
    batch = build_batch([RecordInput(k, v, (), timestamp) for k, v in records], codec=codec, producer_id=pid,
                        producer_epoch=0 if pid >= 0 else -1, base_sequence=seq)
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": bytes(batch)}]}]}
    with RawClient(broker.host, broker.port) as c:
        [p] = c.request(PRODUCE, 9, body).responses[0].partition_responses
    assert p.error_code == ErrorCode.NONE, p
    return int(p.base_offset)


def compacted_topic(broker: MockBroker, topic: str) -> list[tuple[int, bytes, bytes]]:
    """A compacted partition with gaps (0, 3), an empty batch (1-2, producer 5001's last) and a batch
    appended after cleaning; the (offset, key, value) a consumer must read from the beginning."""
    broker.create_topic(topic, config={"cleanup.policy": "compact"})
    send(broker, topic, [(b"a", b"1")], pid=5001, seq=0)  # 0
    send(broker, topic, [(b"b", b"1"), (b"c", b"1")], pid=5001, seq=1)  # 1, 2
    send(broker, topic, [(b"a", b"2")])  # 3
    send(broker, topic, [(b"d", b"1")], pid=5002, seq=0)  # 4
    send(broker, topic, [(b"b", b"2"), (b"a", b"3")], codec=Codec.GZIP)  # 5, 6
    send(broker, topic, [(b"c", b"2")], codec=Codec.ZSTD)  # 7
    broker.compact(topic)
    send(broker, topic, [(b"e", b"1")])  # 8, in the new active segment
    batches = broker.batches(topic)
    assert [(b.base_offset, b.last_offset, b.record_count) for b in batches] == [
        (1, 2, 0), (4, 4, 1), (5, 6, 2), (7, 7, 1), (8, 8, 1)]
    assert [b.codec for b in batches[2:4]] == [Codec.GZIP, Codec.ZSTD]
    return [(4, b"d", b"1"), (5, b"b", b"2"), (6, b"a", b"3"), (7, b"c", b"2"), (8, b"e", b"1")]


def java_records(lines: list[dict[str, Any]]) -> list[tuple[int, bytes, bytes]]:
    return [(r["offset"], r["key"].encode(), r["value"].encode()) for r in of_type(lines, "record")]


def java_consume(broker: MockBroker, topic: str, **args: Any) -> list[dict[str, Any]]:
    config = args.pop("config", {})
    check = args.pop("check", True)
    return run_java("consume", {"bootstrap": broker.bootstrap_servers, "topic": topic, "until_end": True,
                                "timeout_ms": int(TIMEOUT * 1000), "config": config, **args}, timeout=60,
                    check=check)


# -- consumers across gaps and empty batches -----------------------------------------------------------


def test_java_consumer_reads_a_compacted_partition_across_gaps_and_empty_batches(mockbroker: MockBroker) -> None:
    expected = compacted_topic(mockbroker, "jc-gaps")
    lines = java_consume(mockbroker, "jc-gaps", seek="beginning")
    assert java_records(lines) == expected
    [done] = of_type(lines, "done")
    assert done["stopped"] == "end" and done["positions"][0]["offset"] == 9
    for start, first in [(1, 4), (2, 4), (3, 4), (6, 6)]:  # inside the empty batch, in a gap, on a record
        lines = java_consume(mockbroker, "jc-gaps", seek=start)
        assert java_records(lines) == [r for r in expected if r[0] >= first], start


def test_java_consumer_resumes_from_a_committed_offset_in_a_compacted_partition(mockbroker: MockBroker) -> None:
    expected = compacted_topic(mockbroker, "jc-commit")
    group = {"group.id": "jc-compaction"}
    first = java_consume(mockbroker, "jc-commit", seek="beginning", until_end=False, max_records=2, commit=True,
                         config=group)
    assert java_records(first) == expected[:2]
    assert of_type(first, "committed")[0]["offsets"][0]["offset"] == 6
    rest = java_consume(mockbroker, "jc-commit", seek="committed", config=group)
    assert java_records(rest) == expected[2:]


def confluent_consumer(broker: MockBroker, group: str = "ck-compaction", **config: Any) -> Any:
    from confluent_kafka import Consumer

    return Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest", **config})


def confluent_read(c: Any, count: int) -> list[tuple[int, bytes, bytes]]:
    from confluent_kafka import KafkaError

    out: list[tuple[int, bytes, bytes]] = []
    deadline = time.monotonic() + TIMEOUT
    while len(out) < count and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            continue
        out.append((m.offset(), m.key(), m.value()))
    return out


@pytest.mark.parametrize("start", [0, 1, 3, 6])
def test_confluent_consumer_reads_a_compacted_partition_across_gaps_and_empty_batches(
        mockbroker: MockBroker, start: int) -> None:
    from confluent_kafka import TopicPartition

    expected = [r for r in compacted_topic(mockbroker, "ck-gaps") if r[0] >= start]
    c = confluent_consumer(mockbroker)
    try:
        c.assign([TopicPartition("ck-gaps", 0, start)])
        assert confluent_read(c, len(expected)) == expected
        [position] = c.position([TopicPartition("ck-gaps", 0)])
        assert position.offset == 9
    finally:
        c.close()


def test_confluent_consumer_resumes_from_a_committed_offset_in_a_compacted_partition(
        mockbroker: MockBroker) -> None:
    from confluent_kafka import TopicPartition

    expected = compacted_topic(mockbroker, "ck-commit")
    c = confluent_consumer(mockbroker, "ck-commit-group")
    try:
        c.assign([TopicPartition("ck-commit", 0, 0)])
        assert confluent_read(c, 2) == expected[:2]
        c.commit(offsets=[TopicPartition("ck-commit", 0, 6)], asynchronous=False)
    finally:
        c.close()
    c = confluent_consumer(mockbroker, "ck-commit-group")
    try:
        c.assign([TopicPartition("ck-commit", 0)])  # no offset: the group's committed one
        assert confluent_read(c, 3) == expected[2:]
    finally:
        c.close()


# -- idempotent producers after compaction -------------------------------------------------------------


def compact_away_the_tombstone(broker: MockBroker, topic: str) -> None:
    """Two passes: the first gives the tombstone its delete horizon (delete.retention.ms 0), the second,
    a second later on the broker clock, removes it; the producer's batch stays, empty."""
    broker.compact(topic)
    broker.clock.advance(1)
    broker.compact(topic)


def test_java_idempotent_producer_keeps_producing_after_its_records_were_compacted_away(
        mockbroker: MockBroker) -> None:
    topic = "jp-idem"
    mockbroker.create_topic(topic, config={"cleanup.policy": "compact", "delete.retention.ms": "0"})
    # The answer to the producer's first request is held back while the test compacts the partition, so
    # the same producer (id, epoch, sequence) sends its next records after the compaction.
    # (no topic filter: the Java client names topics by id in Produce v13, which the filter does not see)
    mockbroker.inject(PRODUCE, delay=5.0, count=1)
    records = [{"key": "k", "value": None}, {"key": "k", "value": "v2"}, {"key": "m", "value": "v3"}]
    out: list[dict[str, Any]] = []
    runner = threading.Thread(target=lambda: out.extend(run_java("produce", {
        "bootstrap": mockbroker.bootstrap_servers, "topic": topic, "records": records, "sync": True,
        "config": {"enable.idempotence": "true", "acks": "all"}}, timeout=60)))
    runner.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while not mockbroker.batches(topic) and time.monotonic() < deadline:
            time.sleep(0.02)
        compact_away_the_tombstone(mockbroker, topic)
        held = mockbroker.batches(topic)
    finally:
        runner.join(60)
    assert len(held) == 1, f"the producer's first request was not held back: {held}"
    empty = held[0]
    assert (empty.base_offset, empty.record_count, empty.base_sequence, empty.last_sequence) == (0, 0, 0, 0)
    assert empty.producer_id >= 0
    assert [line["offset"] for line in of_type(out, "sent")] == [0, 1, 2]
    assert of_type(out, "send_error") == []
    batches = mockbroker.batches(topic)
    assert [(b.base_offset, b.record_count, b.producer_id, b.base_sequence) for b in batches] == [
        (0, 0, empty.producer_id, 0), (1, 1, empty.producer_id, 1), (2, 1, empty.producer_id, 2)]
    assert [(r.offset, r.key, r.value) for r in mockbroker.records(topic)] == [(1, b"k", b"v2"), (2, b"m", b"v3")]


def test_confluent_idempotent_producer_keeps_producing_after_its_records_were_compacted_away(
        mockbroker: MockBroker) -> None:
    from confluent_kafka import Producer

    topic = "ck-idem"
    mockbroker.create_topic(topic, config={"cleanup.policy": "compact", "delete.retention.ms": "0"})
    errors: list[Any] = []
    p = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True,
                  "linger.ms": 5})

    def report(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)

    p.produce(topic, None, b"k", on_delivery=report)
    p.produce(topic, b"v1", b"j", on_delivery=report)
    assert p.flush(TIMEOUT) == 0
    p.produce(topic, None, b"j", on_delivery=report)
    assert p.flush(TIMEOUT) == 0
    compact_away_the_tombstone(mockbroker, topic)
    before = mockbroker.batches(topic)
    assert mockbroker.records(topic) == []
    last = before[-1]
    assert last.record_count == 0 and last.producer_id >= 0
    for i in range(5):
        p.produce(topic, b"v%d" % i, b"k%d" % i, on_delivery=report)
    assert p.flush(TIMEOUT) == 0
    assert errors == []
    after = mockbroker.batches(topic)[len(before):]
    assert {b.producer_id for b in after} == {last.producer_id}
    assert after[0].base_sequence == last.last_sequence + 1
    values = [r.value for r in mockbroker.records(topic)]
    assert values == [b"v%d" % i for i in range(5)]  # each once


# -- transactions: aborted records cleaned, read_committed still right ------------------------------------


def test_read_committed_java_consumer_after_aborted_transactions_were_cleaned(mockbroker: MockBroker) -> None:
    topic = "jt-clean"
    mockbroker.create_topic(topic, config={"cleanup.policy": "compact", "delete.retention.ms": "0"})
    lines = run_java("txn", {"bootstrap": mockbroker.bootstrap_servers, "topic": topic,
                             "transactional_id": "compaction-txn",
                             "transactions": [
                                 {"records": [{"key": "a", "value": "aborted"}], "end": "abort"},
                                 {"records": [{"key": "b", "value": "committed"}]},
                                 {"records": [{"key": "c", "value": "committed2"}]},
                             ]}, timeout=60)
    assert [line["type"] for line in lines if line["type"] in ("committed", "aborted")] == [
        "aborted", "committed", "committed"]
    assert [(b.base_offset, b.is_control) for b in mockbroker.batches(topic)] == [
        (0, False), (1, True), (2, False), (3, True), (4, False), (5, True)]
    mockbroker.compact(topic)  # the aborted batch goes; its marker stays (a batch of it was seen)
    assert [b.base_offset for b in mockbroker.batches(topic)] == [1, 2, 3, 4, 5]
    mockbroker.clock.advance(1)
    mockbroker.compact(topic)  # the ABORT marker gets its delete horizon
    mockbroker.clock.advance(1)
    mockbroker.compact(topic)  # and goes
    assert [b.base_offset for b in mockbroker.batches(topic)] == [2, 3, 4, 5]
    committed = java_consume(mockbroker, topic, seek="beginning",
                             config={"isolation.level": "read_committed"})
    assert [(r["key"], r["value"]) for r in of_type(committed, "record")] == [
        ("b", "committed"), ("c", "committed2")]


# -- retention: below the log start offset -------------------------------------------------------------


def aged_topic(broker: MockBroker, topic: str) -> None:
    """Offsets 0-2 aged out by retention.ms on the broker clock; 3-4 kept."""
    broker.create_topic(topic, config={"retention.ms": "20000", "segment.bytes": "1"})
    for i in range(3):
        send(broker, topic, [(b"k", b"old%d" % i)])
    broker.clock.advance(21)
    now = broker.clock.now_ms()
    for i in range(2):
        send(broker, topic, [(b"k", b"new%d" % i)], timestamp=now)
    assert broker.enforce_retention(topic) == 3
    assert broker.offsets(topic)["log_start_offset"] == 3


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_java_consumer_below_the_log_start_offset_resets_as_configured(mockbroker: MockBroker, reset: str) -> None:
    aged_topic(mockbroker, f"jr-{reset}")
    lines = java_consume(mockbroker, f"jr-{reset}", seek=1, config={"auto.offset.reset": reset})
    [done] = of_type(lines, "done")
    if reset == "earliest":
        assert [(r["offset"], r["value"]) for r in of_type(lines, "record")] == [(3, "new0"), (4, "new1")]
    else:
        assert of_type(lines, "record") == []
    assert done["positions"][0]["offset"] == 5


def test_java_consumer_below_the_log_start_offset_without_reset_fails(mockbroker: MockBroker) -> None:
    aged_topic(mockbroker, "jr-none")
    lines = java_consume(mockbroker, "jr-none", seek=1, config={"auto.offset.reset": "none"}, check=False)
    text = " ".join(str(line) for line in lines)
    assert "OffsetOutOfRange" in text


def test_confluent_consumer_below_the_log_start_offset_resets_to_earliest(mockbroker: MockBroker) -> None:
    from confluent_kafka import TopicPartition

    aged_topic(mockbroker, "cr-earliest")
    c = confluent_consumer(mockbroker, "cr-group")
    try:
        c.assign([TopicPartition("cr-earliest", 0, 1)])
        assert confluent_read(c, 2) == [(3, b"k", b"new0"), (4, b"k", b"new1")]
    finally:
        c.close()
