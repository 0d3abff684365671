"""The transaction coordinator (mockbroker/state/txn/coordinator.py) driven without sockets: every state transition,
the error codes Kafka's TransactionCoordinator answers, markers, the last stable offset, the aborted
transaction index, pending offsets, timeouts and expiration."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.records.batch import ControlType, RecordBatch
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.scheduler import Scheduler
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.cluster.cluster import Cluster, Partition
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, java_string_hash, offsets_partition_for
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.log.aborted_index import AbortedTxn
from mockbroker.state.txn.coordinator import TxnCoordinator
from mockbroker.state.txn.inspection import describe_transaction, list_transactions, transactions
from mockbroker.state.txn.metadata import EPOCH_MAX

T0 = 1_700_000_000_000
TIMEOUT = 60_000


class Env:
    """A cluster with topic "t" (3 partitions), a frozen clock, a scheduler run by hand, a coordinator and
    the produce append path with the coordinator's check, as MockBroker wires them."""

    def __init__(self, **config: Any) -> None:
        self.clock = Clock(T0, frozen=True)
        self.cluster = Cluster(config=BrokerConfig(config), clock=self.clock)
        self.cluster.create_topic("t", 3)
        self.scheduler = Scheduler(self.clock)
        self.coord = TxnCoordinator(self.cluster, self.clock, self.scheduler)
        self.appender = Appender()
        self.appender.txn_check = self.coord.check_produce
        self.seqs: dict[tuple[int, int, int], int] = {}

    def part(self, index: int = 0) -> Partition:
        p = self.cluster.partition("t", index)
        assert p is not None
        return p

    def init(self, txid: str = "tx", timeout: int = TIMEOUT, expected: tuple[int, int] | None = None) -> tuple[int, int]:
        return self.coord.init_producer_id(txid, timeout, expected)

    def produce(self, pid: int, epoch: int, *values: bytes, partition: int = 0, txid: str | None = "tx",
                version: int = 9) -> int:
        """Append a transactional batch through the produce path; its base offset."""
        key = (pid, epoch, partition)
        seq = self.seqs.get(key, 0)
        now = self.clock.now_ms()
        batch = build_batch([RecordInput(b"k", v, (), now) for v in values], producer_id=pid, producer_epoch=epoch,
                            base_sequence=seq, is_transactional=True)
        result = self.appender.append_records(self.part(partition), memoryview(batch), version,
                                              self.clock.now_ms(), txid)
        self.seqs[key] = seq + len(values)
        return result.base_offset

    def advance_ms(self, ms: int) -> None:
        self.clock.advance(ms / 1000)
        self.scheduler.run_due()

    def state(self, txid: str = "tx") -> str:
        return self.coord.txns[txid].state.value

    def markers(self, partition: int = 0) -> list[tuple[int, int, int, ControlType]]:
        """(offset, producer id, epoch, type) of the partition's control batches."""
        out = []
        for b in self.part(partition).log.batches:
            if b.is_control:
                out.append((b.base_offset, b.producer_id, b.producer_epoch, ControlType(b.view().control_record().type)))
        return out


def error_of(fn: Any, *args: Any, **kwargs: Any) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        fn(*args, **kwargs)
    return info.value.code


def begin(env: Env, txid: str = "tx", partitions: tuple[int, ...] = (0,)) -> tuple[int, int]:
    pid, epoch = env.init(txid)
    env.coord.add_partitions(txid, pid, epoch, [("t", p) for p in partitions])
    return pid, epoch


# -- InitProducerId ----------------------------------------------------------------------------------


def test_init_gives_a_producer_id_per_transactional_id_and_bumps_the_epoch() -> None:
    env = Env()
    pid, epoch = env.init("a")
    assert epoch == 0 and env.state("a") == "Empty"
    assert env.init("a") == (pid, 1)
    assert env.init("a") == (pid, 2)
    other, other_epoch = env.init("b")
    assert other != pid and other_epoch == 0


def test_init_refuses_an_empty_id_and_timeouts_outside_the_broker_maximum() -> None:
    env = Env(**{"transaction.max.timeout.ms": 30_000})
    assert error_of(env.init, "") == ErrorCode.INVALID_REQUEST
    assert error_of(env.init, "a", 0) == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert error_of(env.init, "a", 30_001) == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert env.init("a", 30_000)[1] == 0


@pytest.mark.parametrize("level, marker_epoch, next_epoch", [(1, 1, 2), (2, 2, 3)])
def test_init_while_ongoing_fences_aborts_and_answers_concurrent_transactions(level: int, marker_epoch: int,
                                                                              next_epoch: int) -> None:
    env = Env(**{"transaction.version": level})
    pid, epoch = begin(env)
    env.produce(pid, epoch, b"zombie")
    assert error_of(env.init) == ErrorCode.CONCURRENT_TRANSACTIONS
    # The abort carries the fenced epoch (+1, and +1 again with transaction version 2 on the broker).
    assert env.state() == "CompleteAbort"
    assert env.markers() == [(1, pid, marker_epoch, ControlType.ABORT)]
    assert env.init() == (pid, next_epoch)
    # The zombie is fenced everywhere.
    assert error_of(env.coord.add_partitions, "tx", pid, epoch, [("t", 1)]) == ErrorCode.PRODUCER_FENCED
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True) == ErrorCode.PRODUCER_FENCED
    assert error_of(env.produce, pid, epoch, b"late") == ErrorCode.INVALID_PRODUCER_EPOCH


def test_init_while_markers_are_pending_answers_concurrent_transactions() -> None:
    env = Env()
    pid, epoch = begin(env)
    env.coord.hold_markers = True
    env.coord.end_txn("tx", pid, epoch, True)
    assert env.state() == "PrepareCommit"
    assert error_of(env.init) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert error_of(env.coord.add_partitions, "tx", pid, epoch, [("t", 1)]) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert env.coord.verify_partitions("tx", pid, epoch, [("t", 0)]) == {("t", 0): ErrorCode.CONCURRENT_TRANSACTIONS}
    env.coord.release_markers()
    assert env.state() == "CompleteCommit"
    assert env.init() == (pid, epoch + 1)


def test_kip360_expected_producer_id_and_epoch() -> None:
    env = Env()
    pid, _ = env.init()
    pid, epoch = env.init()  # epoch 1, last epoch -1
    assert env.init(expected=(pid, epoch)) == (pid, 2)  # the current epoch: bumped, last epoch 1
    assert env.init(expected=(pid, 1)) == (pid, 2)  # a retry of that bump: the same answer
    assert error_of(env.init, expected=(pid, 0)) == ErrorCode.PRODUCER_FENCED  # neither current nor last
    assert error_of(env.init, expected=(pid + 100, 2)) == ErrorCode.PRODUCER_FENCED  # another producer id
    fresh, _ = env.init("new", expected=(123, 4))  # metadata just created: any expected id is fine
    assert fresh != 123


def test_an_exhausted_epoch_takes_a_new_producer_id() -> None:
    env = Env()
    pid, _ = env.init()
    env.coord.txns["tx"].producer_epoch = EPOCH_MAX - 1
    new_pid, epoch = env.init(expected=(pid, EPOCH_MAX - 1))
    assert new_pid != pid and epoch == 0
    # A retry naming the old id and its exhausted epoch (the answer was lost) gets the same identity.
    assert env.init(expected=(pid, EPOCH_MAX - 1)) == (new_pid, 0)


# -- AddPartitionsToTxn and verification ---------------------------------------------------------------


def test_add_partitions_errors_and_start_time() -> None:
    env = Env()
    assert error_of(env.coord.add_partitions, "nope", 1, 0, [("t", 0)]) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert error_of(env.coord.add_partitions, "", 1, 0, [("t", 0)]) == ErrorCode.INVALID_REQUEST
    pid, epoch = env.init()
    assert error_of(env.coord.add_partitions, "tx", pid + 1, epoch, [("t", 0)]) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert error_of(env.coord.add_partitions, "tx", pid, epoch + 1, [("t", 0)]) == ErrorCode.PRODUCER_FENCED
    env.advance_ms(5)
    env.coord.add_partitions("tx", pid, epoch, [("t", 0)])
    txn = env.coord.txns["tx"]
    assert (txn.state.value, txn.start_ms, txn.partitions) == ("Ongoing", T0 + 5, {("t", 0)})
    env.advance_ms(5)
    env.coord.add_partitions("tx", pid, epoch, [("t", 1)])
    assert (txn.start_ms, txn.partitions) == (T0 + 5, {("t", 0), ("t", 1)})


def test_verify_partitions_answers_transaction_abortable_for_a_partition_not_added() -> None:
    env = Env()
    pid, epoch = begin(env)
    got = env.coord.verify_partitions("tx", pid, epoch, [("t", 0), ("t", 1)])
    assert got == {("t", 0): ErrorCode.NONE, ("t", 1): ErrorCode.TRANSACTION_ABORTABLE}
    assert env.coord.verify_partitions("tx", pid, epoch + 1, [("t", 0)]) == {("t", 0): ErrorCode.PRODUCER_FENCED}
    assert env.coord.verify_partitions("zz", pid, epoch, [("t", 0)]) == {
        ("t", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


@pytest.mark.parametrize("version, code", [(3, ErrorCode.INVALID_TXN_STATE), (10, ErrorCode.INVALID_TXN_STATE),
                                           (11, ErrorCode.TRANSACTION_ABORTABLE)])
def test_transactional_produce_to_a_partition_not_added(version: int, code: ErrorCode) -> None:
    env = Env(**{"transaction.version": 1})
    pid, epoch = begin(env, partitions=(0,))
    assert error_of(env.produce, pid, epoch, b"x", partition=1, version=version) == code
    assert env.part(1).log.log_end_offset == 0


def test_produce_v12_adds_the_partition_to_the_transaction() -> None:
    env = Env()
    pid, epoch = env.init()
    assert env.produce(pid, epoch, b"x", partition=2, version=12) == 0
    txn = env.coord.txns["tx"]
    assert (txn.state.value, txn.partitions) == ("Ongoing", {("t", 2)})
    # Another epoch is refused as Kafka's produce path answers a fenced producer.
    assert error_of(env.produce, pid, epoch + 1, b"y", partition=1, version=12) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert error_of(env.produce, 999, 0, b"y", partition=1, txid="zz", version=12) == \
        ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_transactional_batch_without_transactional_id_is_refused() -> None:
    env = Env()
    pid, epoch = begin(env)
    assert error_of(env.produce, pid, epoch, b"x", txid=None) == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


# -- EndTxn ----------------------------------------------------------------------------------------------


def test_commit_writes_a_marker_to_every_partition_and_completes() -> None:
    env = Env()
    pid, epoch = begin(env, partitions=(0, 1, 2))
    env.produce(pid, epoch, b"a", partition=0)
    env.produce(pid, epoch, b"b", partition=1)
    assert env.coord.end_txn("tx", pid, epoch, True) == (-1, -1)
    assert env.state() == "CompleteCommit"
    assert env.markers(0) == [(1, pid, epoch, ControlType.COMMIT)]
    assert env.markers(1) == [(1, pid, epoch, ControlType.COMMIT)]
    assert env.markers(2) == [(0, pid, epoch, ControlType.COMMIT)]  # added, nothing written: still a marker
    assert env.coord.txns["tx"].partitions == set()
    assert env.part(0).log.producers.entries[pid].coordinator_epoch == 0


def test_end_txn_v1_errors() -> None:
    env = Env()
    pid, epoch = env.init()
    assert error_of(env.coord.end_txn, "nope", pid, epoch, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert error_of(env.coord.end_txn, "", pid, epoch, True) == ErrorCode.INVALID_REQUEST
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE  # Empty
    env.coord.add_partitions("tx", pid, epoch, [("t", 0)])
    assert error_of(env.coord.end_txn, "tx", pid + 1, epoch, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert error_of(env.coord.end_txn, "tx", pid, epoch + 1, True) == ErrorCode.PRODUCER_FENCED
    env.coord.end_txn("tx", pid, epoch, True)
    assert env.coord.end_txn("tx", pid, epoch, True) == (-1, -1)  # a retry of the commit
    assert error_of(env.coord.end_txn, "tx", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE
    env.coord.add_partitions("tx", pid, epoch, [("t", 0)])
    env.coord.end_txn("tx", pid, epoch, False)
    assert env.coord.end_txn("tx", pid, epoch, False) == (-1, -1)
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE


def test_end_txn_v2_bumps_the_epoch_and_marks_with_it() -> None:
    env = Env()
    pid, epoch = env.init()
    env.produce(pid, epoch, b"a", version=12)
    assert env.coord.end_txn("tx", pid, epoch, True, transaction_version=2) == (pid, epoch + 1)
    assert env.markers() == [(1, pid, epoch + 1, ControlType.COMMIT)]
    # The next transaction starts at sequence 0 with the bumped epoch.
    env.seqs.clear()
    assert env.produce(pid, epoch + 1, b"b", version=12) == 2


V2_TABLE = [
    # state reached, commit?, retry?, outcome ("EB" epoch bump, "NONE", or an error)
    ("Empty", False, True, ErrorCode.PRODUCER_FENCED),
    ("Empty", False, False, "EB"),
    ("Empty", True, True, ErrorCode.PRODUCER_FENCED),
    ("Empty", True, False, ErrorCode.INVALID_TXN_STATE),
    ("CompleteAbort", False, True, "NONE"),
    ("CompleteAbort", False, False, "EB"),
    ("CompleteAbort", True, True, ErrorCode.INVALID_TXN_STATE),
    ("CompleteAbort", True, False, ErrorCode.INVALID_TXN_STATE),
    ("CompleteCommit", False, True, ErrorCode.INVALID_TXN_STATE),
    ("CompleteCommit", False, False, "EB"),
    ("CompleteCommit", True, True, "NONE"),
    ("CompleteCommit", True, False, ErrorCode.INVALID_TXN_STATE),
]


@pytest.mark.parametrize("state, commit, retry, outcome", V2_TABLE)
def test_end_txn_v2_table_for_empty_and_complete_states(state: str, commit: bool, retry: bool,
                                                       outcome: ErrorCode | str) -> None:
    """Kafka's TransactionCoordinator table for transaction version 2: a retry names the epoch one below
    the current one."""
    env = Env()
    pid, epoch = env.init()
    env.init()
    pid, epoch = env.init()  # epoch 2, so a "retry" epoch of 1 exists
    if state != "Empty":
        env.coord.add_partitions("tx", pid, epoch, [("t", 0)])
        pid, epoch = env.coord.end_txn("tx", pid, epoch, state == "CompleteCommit", transaction_version=2)
    assert env.state() == state
    asked = epoch - 1 if retry else epoch
    if isinstance(outcome, ErrorCode):
        assert error_of(env.coord.end_txn, "tx", pid, asked, commit, transaction_version=2) == outcome
        assert env.state() == state
    elif outcome == "NONE":
        assert env.coord.end_txn("tx", pid, asked, commit, transaction_version=2) == (pid, epoch)
        assert env.state() == state
    else:
        assert env.coord.end_txn("tx", pid, asked, commit, transaction_version=2) == (pid, epoch + 1)
        assert env.state() == "CompleteAbort"


def test_end_txn_v2_epoch_overflow_rotates_the_producer_id() -> None:
    env = Env()
    pid, _ = env.init()
    env.coord.txns["tx"].producer_epoch = EPOCH_MAX - 1
    env.coord.add_partitions("tx", pid, EPOCH_MAX - 1, [("t", 0)])
    new_pid, new_epoch = env.coord.end_txn("tx", pid, EPOCH_MAX - 1, True, transaction_version=2)
    assert new_pid != pid and new_epoch == 0
    assert env.markers() == [(0, pid, EPOCH_MAX, ControlType.COMMIT)]
    # The client retries with the identity it had: answered with the new one, nothing written.
    assert env.coord.end_txn("tx", pid, EPOCH_MAX - 1, True, transaction_version=2) == (new_pid, 0)
    assert len(env.markers()) == 1


# -- the last stable offset and the aborted-transaction index ------------------------------------------


def test_last_stable_offset_with_interleaved_transactions_of_several_producers() -> None:
    env = Env()
    log = env.part(0).log
    ids = {}
    for txid in ("p1", "p2", "p3"):
        ids[txid] = begin(env, txid)
    env.produce(*ids["p1"], b"a", txid="p1")  # 0
    env.produce(*ids["p2"], b"b", txid="p2")  # 1
    env.produce(*ids["p1"], b"c", txid="p1")  # 2
    env.produce(*ids["p3"], b"d", txid="p3")  # 3
    assert (log.high_watermark, log.last_stable_offset) == (4, 0)
    env.coord.end_txn("p1", *ids["p1"], True)  # marker at 4
    assert (log.high_watermark, log.last_stable_offset) == (5, 1)
    env.coord.end_txn("p2", *ids["p2"], False)  # marker at 5
    assert log.last_stable_offset == 3
    env.produce(*ids["p3"], b"e", txid="p3")  # 6
    assert log.last_stable_offset == 3
    env.coord.end_txn("p3", *ids["p3"], True)  # marker at 7
    assert (log.high_watermark, log.last_stable_offset) == (8, 8)
    assert log.open_txn_first_offsets == {}


def test_aborted_index_and_fetch_boundaries() -> None:
    env = Env()
    log = env.part(0).log
    a, b = begin(env, "a"), begin(env, "b")
    env.produce(*a, b"a0", txid="a")  # 0
    env.produce(*b, b"b0", txid="b")  # 1
    env.produce(*a, b"a1", txid="a")  # 2
    env.coord.end_txn("a", *a, False)  # ABORT at 3
    env.coord.end_txn("b", *b, True)  # COMMIT at 4
    c = begin(env, "c")
    env.produce(*c, b"c0", txid="c")  # 5
    env.coord.end_txn("c", *c, False)  # ABORT at 6
    assert env.coord.aborted.entries(log) == [AbortedTxn(a[0], 0, 3), AbortedTxn(c[0], 5, 6)]
    got = env.coord.aborted.aborted_transactions
    assert got(log, 0, 7) == [(a[0], 0), (c[0], 5)]
    assert got(log, 0, 1) == [(a[0], 0)]  # only the first batch returned
    assert got(log, 3, 5) == [(a[0], 0)]  # starts at a's marker: a still overlaps
    assert got(log, 4, 5) == []  # after a's marker, before c's first offset
    assert got(log, 4, 6) == [(c[0], 5)]
    assert got(log, 7, 7) == []


def test_abort_of_a_partition_without_data_indexes_the_marker_alone() -> None:
    env = Env()
    pid, epoch = begin(env, partitions=(1,))
    env.coord.end_txn("tx", pid, epoch, False)
    assert env.coord.aborted.entries(env.part(1).log) == [AbortedTxn(pid, 0, 0)]


def test_control_batch_bytes_match_a_hand_built_marker() -> None:
    env = Env()
    pid, epoch = begin(env)
    env.produce(pid, epoch, b"v")
    env.advance_ms(7)
    env.coord.end_txn("tx", pid, epoch, True)
    stored = env.part(0).log.batches[-1]
    expected = hand_built_marker(offset=1, pid=pid, epoch=epoch, commit=True, coordinator_epoch=0,
                                 timestamp=T0 + 7, leader_epoch=0)
    assert bytes(stored.data) == expected


def hand_built_marker(*, offset: int, pid: int, epoch: int, commit: bool, coordinator_epoch: int, timestamp: int,
                      leader_epoch: int) -> bytes:
    """A v2 control batch laid out field by field (Kafka's documentation, section 5.3.1)."""
    key = struct.pack(">hh", 0, 1 if commit else 0)  # version 0, type (0 abort, 1 commit)
    value = struct.pack(">hi", 0, coordinator_epoch)  # version 0, coordinator epoch
    # Record: attributes, timestamp delta 0, offset delta 0, key length 4 (zigzag 8), key, value length 6
    # (zigzag 12), value, 0 headers; preceded by its length (16, zigzag 32).
    body = b"\x00" + b"\x00" + b"\x00" + b"\x08" + key + b"\x0c" + value + b"\x00"
    record = bytes([len(body) * 2]) + body
    attributes = 0x10 | 0x20  # transactional, control; no compression, CreateTime
    after_crc = struct.pack(">hiqqqhii", attributes, 0, timestamp, timestamp, pid, epoch, -1, 1) + record
    crc = crc32c_bitwise(after_crc)
    batch_length = 4 + 1 + 4 + len(after_crc)  # partition leader epoch, magic, crc, the rest
    return struct.pack(">qiibI", offset, batch_length, leader_epoch, 2, crc) + after_crc


def crc32c_bitwise(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one bit at a time."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


# -- timeouts and expiration ------------------------------------------------------------------------------


def test_a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() -> None:
    env = Env()
    pid, epoch = env.init(timeout=10_000)
    env.coord.add_partitions("tx", pid, epoch, [("t", 0)])
    env.produce(pid, epoch, b"late")
    env.advance_ms(10_000)  # start + timeout == now: not yet (Kafka aborts when start + timeout < now)
    assert env.state() == "Ongoing"
    env.advance_ms(1)
    assert env.state() == "CompleteAbort"
    assert env.markers() == [(1, pid, epoch + 2, ControlType.ABORT)]  # fenced (+1), TV2 abort bump (+1)
    assert env.part(0).log.last_stable_offset == 2
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True) == ErrorCode.PRODUCER_FENCED
    assert error_of(env.coord.end_txn, "tx", pid, epoch, True, transaction_version=2) == ErrorCode.PRODUCER_FENCED
    assert error_of(env.produce, pid, epoch, b"later") == ErrorCode.INVALID_PRODUCER_EPOCH


def test_a_completed_transaction_cancels_its_timeout() -> None:
    env = Env()
    pid, epoch = begin(env)
    env.coord.end_txn("tx", pid, epoch, True)
    env.advance_ms(TIMEOUT + 1)
    assert env.state() == "CompleteCommit"
    assert env.coord.txns["tx"].producer_epoch == epoch


def test_idle_transactional_ids_expire() -> None:
    env = Env(**{"transactional.id.expiration.ms": 100_000,
                 "transaction.remove.expired.transaction.cleanup.interval.ms": 10_000})
    pid, epoch = env.init("busy", timeout=900_000)
    env.coord.add_partitions("busy", pid, epoch, [("t", 0)])
    env.init("idle")
    env.advance_ms(100_000)
    assert "idle" not in env.coord.txns and env.coord.txns["busy"].state.value == "Ongoing"
    assert describe_transaction(env.coord, "idle")["error_code"] == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


# -- TxnOffsetCommit ---------------------------------------------------------------------------------------


def test_offsets_partition_is_kafkas_hash_of_the_group_id() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("group") == 98629247
    assert java_string_hash("polygenelubricants") == -2**31  # Utils.abs maps MIN_VALUE to 0
    assert offsets_partition_for("polygenelubricants", 50) == 0
    assert offsets_partition_for("group", 50) == 98629247 % 50


@pytest.mark.parametrize("commit", [True, False])
def test_txn_offsets_are_pending_until_the_commit(commit: bool) -> None:
    env = Env()
    pid, epoch = env.init()
    env.coord.add_offsets("tx", pid, epoch, "g")
    assert env.coord.txns["tx"].partitions == {(OFFSETS_TOPIC, offsets_partition_for("g", 50))}
    got = env.coord.txn_offset_commit("tx", "g", pid, epoch, -1, "", None, [("t", 0, 42, -1, "m")], 3)
    assert got == {("t", 0): ErrorCode.NONE}
    assert env.coord.has_pending_offsets("g", "t", 0) and not env.coord.has_pending_offsets("g", "t", 1)
    assert env.coord.committed_offsets == {}
    env.coord.end_txn("tx", pid, epoch, commit)
    assert not env.coord.has_pending_offsets("g")
    assert env.coord.committed_offsets == ({"g": {("t", 0): env.coord.committed_offsets["g"][("t", 0)]}}
                                           if commit else {})
    if commit:
        assert env.coord.committed_offsets["g"][("t", 0)].offset == 42


@pytest.mark.parametrize("version, code", [(3, ErrorCode.INVALID_TXN_STATE), (4, ErrorCode.TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_without_add_offsets_fails_verification(version: int, code: ErrorCode) -> None:
    env = Env()
    pid, epoch = begin(env)
    assert error_of(env.coord.txn_offset_commit, "tx", "g", pid, epoch, -1, "", None, [("t", 0, 1, -1, None)],
                    version) == code


def test_txn_offset_commit_v5_adds_the_groups_partition() -> None:
    env = Env()
    pid, epoch = env.init()
    env.coord.txn_offset_commit("tx", "g", pid, epoch, -1, "", None, [("t", 0, 1, -1, None)], 5)
    assert env.coord.txns["tx"].partitions == {(OFFSETS_TOPIC, offsets_partition_for("g", 50))}
    assert error_of(env.coord.txn_offset_commit, "tx", "g", pid, epoch + 1, -1, "", None,
                    [("t", 0, 1, -1, None)], 5) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert error_of(env.coord.txn_offset_commit, "tx", "", pid, epoch, -1, "", None,
                    [("t", 0, 1, -1, None)], 5) == ErrorCode.INVALID_GROUP_ID


# -- DescribeTransactions / ListTransactions ---------------------------------------------------------------


def test_describe_and_list() -> None:
    env = Env()
    a = begin(env, "a", partitions=(2, 0))
    env.init("b")
    d = describe_transaction(env.coord, "a")
    assert (d["error_code"], d["transaction_state"], d["producer_id"], d["producer_epoch"]) == (
        ErrorCode.NONE, "Ongoing", a[0], a[1])
    assert d["topics"] == [{"topic": "t", "partitions": [0, 2]}]
    assert (d["transaction_timeout_ms"], d["transaction_start_time_ms"]) == (TIMEOUT, T0)
    assert describe_transaction(env.coord, "b")["transaction_start_time_ms"] == -1
    assert describe_transaction(env.coord, "")["error_code"] == ErrorCode.INVALID_REQUEST
    names = lambda r: [t["transactional_id"] for t in r[1]]  # noqa: E731
    assert names(list_transactions(env.coord, [], [])) == ["a", "b"]
    assert list_transactions(env.coord, ["Ongoing", "Bogus"], []) == (
        ["Bogus"], [{"transactional_id": "a", "producer_id": a[0], "transaction_state": "Ongoing"}])
    assert names(list_transactions(env.coord, ["Bogus"], [])) == []
    assert names(list_transactions(env.coord, [], [a[0]])) == ["a"]
    env.advance_ms(1000)
    assert names(list_transactions(env.coord, [], [], 999)) == ["a", "b"]  # b never started: counts from -1
    assert names(list_transactions(env.coord, ["Ongoing"], [], 1000)) == []
    assert names(list_transactions(env.coord, [], [], -1, "b.*")) == ["b"]
    assert names(list_transactions(env.coord, [], [], -1, "b.")) == []  # the whole id must match


def test_transactions_inspection() -> None:
    env = Env()
    pid, epoch = begin(env, partitions=(1,))
    env.coord.add_offsets("tx", pid, epoch, "g")
    env.coord.txn_offset_commit("tx", "g", pid, epoch, -1, "", None, [("t", 0, 7, -1, None)], 3)
    [info] = transactions(env.coord)
    assert (info.transactional_id, info.state, info.producer_id, info.producer_epoch) == ("tx", "Ongoing", pid, epoch)
    assert info.partitions == sorted([("t", 1), (OFFSETS_TOPIC, offsets_partition_for("g", 50))])
    assert info.pending_offsets == {"g": {("t", 0): 7}}


def test_transaction_version_feature_in_api_versions() -> None:
    env = Env()
    v4 = env.coord.api_versions_features(4)
    assert v4["supported_features"] == [{"name": "transaction.version", "min_version": 0, "max_version": 2}]
    assert v4["finalized_features"] == [{"name": "transaction.version", "max_version_level": 2,
                                         "min_version_level": 2}]
    assert env.coord.api_versions_features(3)["supported_features"] == []  # a minimum of 0 is left out below v4
    assert env.coord.api_versions_features(2) == {}
    epoch = v4["finalized_features_epoch"]
    env.coord.set_transaction_version(0)
    v4 = env.coord.api_versions_features(4)
    assert v4["finalized_features"] == [] and v4["finalized_features_epoch"] == epoch + 1
    assert Env(**{"transaction.version": "1"}).coord.transaction_version == 1


def test_a_marker_for_a_deleted_topic_is_dropped() -> None:
    env = Env()
    pid, epoch = begin(env)
    env.cluster.delete_topic("t")
    env.coord.end_txn("tx", pid, epoch, True)
    assert env.state() == "CompleteCommit"


def test_log_truncation_keeps_the_open_transaction_in_the_last_stable_offset() -> None:
    env = Env()
    other = begin(env, "o")
    env.produce(*other, b"x", txid="o")  # 0
    env.coord.end_txn("o", *other, True)  # 1
    pid, epoch = begin(env)
    env.produce(pid, epoch, b"y")  # 2
    log = env.part(0).log
    log.truncate_before(2, T0)
    assert log.last_stable_offset == 2
    env.coord.end_txn("tx", pid, epoch, True)
    assert log.last_stable_offset == log.high_watermark == 4
    assert RecordBatch(log.batches[-1].data).control_record().type == ControlType.COMMIT


# -- the group coordinator ----------------------------------------------------------------------------------


def with_groups() -> tuple[Env, Any]:
    from mockbroker.state.groups.coordinator import GroupCoordinator

    env = Env()
    groups = GroupCoordinator(env.cluster, env.scheduler, env.clock)
    env.coord = TxnCoordinator(env.cluster, env.clock, env.scheduler, groups=lambda: groups)
    env.appender.txn_check = env.coord.check_produce
    return env, groups


def test_committed_txn_offsets_land_in_the_group_coordinator() -> None:
    env, groups = with_groups()
    pid, epoch = env.init()
    env.coord.add_offsets("tx", pid, epoch, "simple")
    env.coord.txn_offset_commit("tx", "simple", pid, epoch, -1, "", None, [("t", 1, 11, 3, "meta")], 3)
    assert groups.committed("simple") == {}
    env.coord.end_txn("tx", pid, epoch, True)
    assert groups.committed("simple") == {("t", 1): 11}
    stored = groups.fetch_offset("simple", "t", 1)
    assert (stored.leader_epoch, stored.metadata, stored.commit_timestamp_ms) == (3, "meta", T0)
    assert env.coord.committed_offsets == {}


def test_txn_offset_commit_group_checks() -> None:
    env, groups = with_groups()
    pid, epoch = env.init()
    env.coord.add_offsets("tx", pid, epoch, "g")
    offsets = [("t", 0, 1, -1, None)]
    # A group that does not exist, named with a generation: ILLEGAL_GENERATION (Kafka's transactional check).
    assert error_of(env.coord.txn_offset_commit, "tx", "g", pid, epoch, 4, "m", None, offsets, 3) == \
        ErrorCode.ILLEGAL_GENERATION
    # Without one it is a commit outside group management: the (simple) group is made.
    assert env.coord.txn_offset_commit("tx", "g", pid, epoch, -1, "", None, offsets, 3) == {("t", 0): ErrorCode.NONE}
    assert "g" in groups.groups
    assert error_of(env.coord.txn_offset_commit, "tx", "g", pid, epoch, 1, "someone", None, offsets, 3) == \
        ErrorCode.UNKNOWN_MEMBER_ID
    too_long = [("t", 0, 1, -1, "x" * 4097)]
    assert env.coord.txn_offset_commit("tx", "g", pid, epoch, -1, "", None, too_long, 3) == {
        ("t", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE}


def test_the_cleaner_can_replace_a_partitions_aborted_index() -> None:
    env = Env()
    pid, epoch = begin(env)
    env.coord.end_txn("tx", pid, epoch, False)
    log = env.part(0).log
    assert env.coord.aborted.entries(log) == [AbortedTxn(pid, 0, 0)]
    env.coord.aborted.replace(log, [])
    assert env.coord.aborted.entries(log) == [] and env.coord.aborted.aborted_transactions(log, 0, 10) == []
