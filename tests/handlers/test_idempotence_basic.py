"""Raw-protocol tests of idempotent producing: InitProducerId (22) without a transactional id, and the
per-partition producer state (state/log/producers.py) that Produce checks: duplicates, sequences, epochs."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    INIT_PRODUCER_ID,
    INT32_MAX,
    connect,
    idempotent_batch,
    make_batch,
    produce,
)
from tests.rawclient import RawClient

PID = 7000


def _init(client: RawClient, version: int = 4) -> tuple[int, int]:
    resp = client.request(INIT_PRODUCER_ID, version, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                      "producer_id": -1, "producer_epoch": -1})
    assert resp.error_code == ErrorCode.NONE
    return resp.producer_id, resp.producer_epoch


def _hw(broker: MockBroker, topic: str) -> int:
    return broker.offsets(topic)["high_watermark"]


@pytest.mark.parametrize("version", [0, 2, 3, 4, 5])
def test_init_producer_id_without_transactional_id_gives_an_id_and_epoch_0(client: RawClient, version: int) -> None:
    producer_id, epoch = _init(client, version)
    assert producer_id >= 0
    assert epoch == 0


def test_producer_ids_are_unique(mockbroker: MockBroker, client: RawClient) -> None:
    ids = [_init(client)[0] for _ in range(5)]
    with connect(mockbroker) as other:
        ids.append(_init(other)[0])
    assert len(set(ids)) == len(ids)


def test_init_producer_id_with_an_existing_id_gives_a_new_id(client: RawClient) -> None:
    producer_id, _ = _init(client)
    resp = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                "producer_id": producer_id, "producer_epoch": 0})
    assert resp.error_code == ErrorCode.NONE
    assert (resp.producer_epoch, resp.producer_id != producer_id) == (0, True)


def test_idempotent_batches_get_consecutive_offsets(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("idem")
    producer_id, epoch = _init(client)
    assert produce(client, "idem", idempotent_batch(producer_id, epoch, 0, b"a", b"b")).base_offset == 0
    assert produce(client, "idem", idempotent_batch(producer_id, epoch, 2, b"c")).base_offset == 2
    assert [r.sequence for r in mockbroker.records("idem")] == [0, 1, 2]


@pytest.mark.parametrize("which", [0, 2, 4])
def test_duplicate_of_one_of_the_last_five_batches_returns_the_original_offset(mockbroker: MockBroker,
                                                                               client: RawClient, which: int) -> None:
    mockbroker.create_topic("dups")
    sent = [idempotent_batch(PID, 0, 2 * i, b"x%d" % i, b"y%d" % i) for i in range(5)]
    offsets = [produce(client, "dups", b).base_offset for b in sent]
    assert offsets == [0, 2, 4, 6, 8]
    again = produce(client, "dups", idempotent_batch(PID, 0, 2 * which, b"x%d" % which, b"y%d" % which))
    assert (again.error_code, again.base_offset) == (ErrorCode.NONE, offsets[which])
    assert _hw(mockbroker, "dups") == 10
    assert len(mockbroker.batches("dups")) == 5


def test_duplicate_answers_the_original_batch_max_timestamp_as_log_append_time(mockbroker: MockBroker,
                                                                               client: RawClient) -> None:
    # UnifiedLog answers a duplicate with the stored batch's max timestamp, whatever the timestamp type.
    mockbroker.create_topic("dup-ts")
    batch = make_batch(b"a", b"b", timestamps=[1000, 5000], producer_id=PID, producer_epoch=0, base_sequence=0)
    assert produce(client, "dup-ts", batch).log_append_time_ms == -1
    again = produce(client, "dup-ts", batch)
    assert (again.base_offset, again.log_append_time_ms) == (0, 5000)


def test_duplicate_older_than_the_last_five_is_out_of_order(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("old-dup")
    for i in range(6):
        produce(client, "old-dup", idempotent_batch(PID, 0, i, b"v%d" % i))
    p = produce(client, "old-dup", idempotent_batch(PID, 0, 0, b"v0"))
    assert (p.error_code, p.base_offset) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert _hw(mockbroker, "old-dup") == 6


def test_sequence_gap_is_out_of_order_sequence_number(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("gap")
    produce(client, "gap", idempotent_batch(PID, 0, 0, b"a", b"b"))
    p = produce(client, "gap", idempotent_batch(PID, 0, 3, b"d"))
    assert (p.error_code, p.base_offset, p.log_start_offset) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, 0)
    assert _hw(mockbroker, "gap") == 2
    # The rejected batch left no trace: the next in-order batch is accepted.
    assert produce(client, "gap", idempotent_batch(PID, 0, 2, b"c")).base_offset == 2


def test_first_batch_of_an_unknown_producer_may_have_any_sequence(mockbroker: MockBroker,
                                                                  client: RawClient) -> None:
    mockbroker.create_topic("any-seq")
    assert produce(client, "any-seq", idempotent_batch(PID, 3, 42, b"a")).error_code == ErrorCode.NONE
    assert produce(client, "any-seq", idempotent_batch(PID, 3, 43, b"b")).base_offset == 1


def test_lower_epoch_is_invalid_producer_epoch(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("fenced")
    produce(client, "fenced", idempotent_batch(PID, 2, 0, b"a"))
    p = produce(client, "fenced", idempotent_batch(PID, 1, 1, b"b"))
    assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_PRODUCER_EPOCH, -1)
    assert _hw(mockbroker, "fenced") == 1


def test_higher_epoch_must_start_at_sequence_0(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("bump")
    produce(client, "bump", idempotent_batch(PID, 0, 0, b"a", b"b"))
    p = produce(client, "bump", idempotent_batch(PID, 1, 2, b"c"))
    assert (p.error_code, p.base_offset) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert produce(client, "bump", idempotent_batch(PID, 1, 0, b"c")).base_offset == 2
    # The bump fenced the old epoch, and sequence 0 of the new epoch is not a duplicate of the old one.
    assert produce(client, "bump", idempotent_batch(PID, 0, 2, b"d")).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert produce(client, "bump", idempotent_batch(PID, 1, 1, b"d")).base_offset == 3


def test_sequence_wraps_from_int32_max_to_0(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("wrap")
    # Sequences MAX-1, MAX, 0 in one batch, then 1.
    assert produce(client, "wrap", idempotent_batch(PID, 0, INT32_MAX - 1, b"a", b"b", b"c")).base_offset == 0
    assert produce(client, "wrap", idempotent_batch(PID, 0, 1, b"d")).base_offset == 3
    assert [r.sequence for r in mockbroker.records("wrap")] == [INT32_MAX - 1, INT32_MAX, 0, 1]
    # A batch ending at MAX is followed by one starting at 0.
    mockbroker.create_topic("wrap-edge")
    produce(client, "wrap-edge", idempotent_batch(PID, 0, INT32_MAX - 1, b"a", b"b"))
    assert produce(client, "wrap-edge", idempotent_batch(PID, 0, INT32_MAX, b"x")).error_code == \
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(client, "wrap-edge", idempotent_batch(PID, 0, 0, b"c")).base_offset == 2


def test_duplicate_across_the_wrap_is_detected(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("wrap-dup")
    batch = idempotent_batch(PID, 0, INT32_MAX, b"a", b"b")
    produce(client, "wrap-dup", batch)
    assert produce(client, "wrap-dup", batch).base_offset == 0
    assert _hw(mockbroker, "wrap-dup") == 2


def test_producer_state_is_per_partition(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("per-part", 2)
    assert produce(client, "per-part", idempotent_batch(PID, 0, 0, b"a"), partition=0).base_offset == 0
    assert produce(client, "per-part", idempotent_batch(PID, 0, 0, b"a"), partition=1).base_offset == 0
    assert produce(client, "per-part", idempotent_batch(PID, 0, 5, b"b"), partition=1).error_code == \
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert _hw(mockbroker, "per-part") == 1
