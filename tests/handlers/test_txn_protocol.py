"""Raw-protocol tests of transactions: FindCoordinator (key type 1), InitProducerId (22) with a transactional id,
AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26), TxnOffsetCommit (28), DescribeTransactions (65),
ListTransactions (66), the transaction.version feature in ApiVersions (18), and what transactions do to
Produce, Fetch (read_committed) and ListOffsets: every state transition and error code on the wire."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.records.batch import ControlType
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.server import MockBroker
from tests.handlers.conftest import (
    API_VERSIONS,
    INIT_PRODUCER_ID,
    PRODUCE,
    batches_of,
    fetch,
    list_offsets,
    make_batch,
    produce,
    produce_body,
    values_of,
)
from tests.rawclient import RawClient
from tests.state.test_txn_coordinator import hand_built_marker

OFFSET_FETCH, FIND_COORDINATOR, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 9, 10, 24, 25, 26, 28
DESCRIBE_TXNS, LIST_TXNS = 65, 66
LATEST = -1
READ_COMMITTED = 1


# -- helpers -----------------------------------------------------------------------------------------------


def init(client: RawClient, txid: str = "tx", *, version: int = 4, timeout: int = 60_000, pid: int = -1,
         epoch: int = -1) -> Msg:
    return client.request(INIT_PRODUCER_ID, version, {"transactional_id": txid, "transaction_timeout_ms": timeout,
                                                      "producer_id": pid, "producer_epoch": epoch})


def init_ok(client: RawClient, txid: str = "tx", **kwargs: Any) -> tuple[int, int]:
    resp = init(client, txid, **kwargs)
    assert resp.error_code == ErrorCode.NONE
    return resp.producer_id, resp.producer_epoch


def add_partitions(client: RawClient, pid: int, epoch: int, *partitions: tuple[str, int], txid: str = "tx",
                   version: int = 3) -> dict[tuple[str, int], int]:
    topics: dict[str, list[int]] = {}
    for topic, index in partitions:
        topics.setdefault(topic, []).append(index)
    resp = client.request(ADD_PARTITIONS, version, {
        "v3_and_below_transactional_id": txid, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    return {(t.name, p.partition_index): p.partition_error_code
            for t in resp.results_by_topic_v3_and_below for p in t.results_by_partition}


def end_txn(client: RawClient, pid: int, epoch: int, commit: bool, *, txid: str = "tx", version: int = 3) -> Msg:
    return client.request(END_TXN, version, {"transactional_id": txid, "producer_id": pid, "producer_epoch": epoch,
                                             "committed": commit})


def txn_batch(pid: int, epoch: int, seq: int, *values: bytes) -> bytearray:
    return build_batch([RecordInput(b"k", v) for v in values], producer_id=pid, producer_epoch=epoch,
                       base_sequence=seq, is_transactional=True)


def produce_txn(client: RawClient, topic: str, pid: int, epoch: int, seq: int, *values: bytes, partition: int = 0,
                txid: str | None = "tx", version: int = 9) -> Msg:
    resp = client.request(PRODUCE, version, produce_body(topic, txn_batch(pid, epoch, seq, *values),
                                                         partition=partition, transactional_id=txid))
    [t] = resp.responses
    [p] = t.partition_responses
    return p


def data_values(records: Any) -> list[bytes | None]:
    """The values of the data records served (control records left out)."""
    return [r.value for b in batches_of(records) if not b.is_control for r in b.records()]


def control_types(broker: MockBroker, topic: str, partition: int = 0) -> list[tuple[int, ControlType | None]]:
    return [(b.base_offset, b.control_type) for b in broker.batches(topic, partition) if b.is_control]


# -- FindCoordinator and ApiVersions -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 3])
def test_find_coordinator_for_a_transactional_id_is_this_node(mockbroker: MockBroker, client: RawClient,
                                                               version: int) -> None:
    resp = client.request(FIND_COORDINATOR, version, {"key": "tx", "key_type": 1})
    assert (resp.error_code, resp.node_id, resp.host, resp.port) == (ErrorCode.NONE, mockbroker.node_id,
                                                                       mockbroker.host, mockbroker.port)


def test_find_coordinator_v4_batches_transactional_ids(mockbroker: MockBroker, client: RawClient) -> None:
    resp = client.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": ["a", "b"]})
    assert [(c.key, c.error_code, c.node_id, c.port) for c in resp.coordinators] == [
        ("a", ErrorCode.NONE, mockbroker.node_id, mockbroker.port),
        ("b", ErrorCode.NONE, mockbroker.node_id, mockbroker.port)]


def _api_versions(client: RawClient, version: int) -> Msg:
    return client.request(API_VERSIONS, version, {"client_software_name": "raw", "client_software_version": "1"})


def test_api_versions_v4_reports_transaction_version_2(client: RawClient) -> None:
    resp = _api_versions(client, 4)
    assert [(f.name, f.min_version, f.max_version) for f in resp.supported_features] == [
        ("transaction.version", 0, 2), ("share.version", 0, 1)]
    assert [(f.name, f.min_version_level, f.max_version_level) for f in resp.finalized_features] == [
        ("transaction.version", 2, 2), ("share.version", 1, 1)]
    assert resp.finalized_features_epoch >= 0
    served = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert {k: served[k] for k in (22, 24, 25, 26, 28, 65, 66)} == {
        22: (0, 5), 24: (0, 5), 25: (0, 4), 26: (0, 5), 28: (0, 5), 65: (0, 0), 66: (0, 2)}


def test_api_versions_v3_leaves_out_features_with_minimum_0(client: RawClient) -> None:
    resp = _api_versions(client, 3)
    assert resp.supported_features == []
    assert [f.name for f in resp.finalized_features] == ["transaction.version", "share.version"]


@pytest.mark.mockbroker(config={"transaction.version": 1})
def test_api_versions_reports_the_configured_transaction_version(client: RawClient) -> None:
    resp = _api_versions(client, 4)
    assert [(f.name, f.max_version_level) for f in resp.finalized_features] == [
        ("transaction.version", 1), ("share.version", 1)]


# -- InitProducerId ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_init_producer_id_bumps_the_epoch_per_init(client: RawClient, version: int) -> None:
    pid, epoch = init_ok(client, version=version)
    assert epoch == 0
    assert init_ok(client, version=version) == (pid, 1)


def test_init_producer_id_errors(mockbroker: MockBroker, client: RawClient) -> None:
    assert init(client, "").error_code == ErrorCode.INVALID_REQUEST
    assert init(client, "t", timeout=0).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert init(client, "t", timeout=900_001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    bad = init(client, "t", pid=5, epoch=-1)
    assert (bad.error_code, bad.producer_id, bad.producer_epoch) == (ErrorCode.INVALID_REQUEST, -1, -1)
    pid, epoch = init_ok(client, "t")
    assert init(client, "t", pid=pid + 1, epoch=epoch, version=4).error_code == ErrorCode.PRODUCER_FENCED
    assert init(client, "t", pid=pid + 1, epoch=epoch, version=3).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert init_ok(client, "t", pid=pid, epoch=epoch) == (pid, epoch + 1)


@pytest.mark.mockbroker(config={"transaction.max.timeout.ms": 5000})
def test_init_producer_id_timeout_is_checked_against_the_broker_maximum(client: RawClient) -> None:
    assert init(client, timeout=5001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert init(client, timeout=5000).error_code == ErrorCode.NONE


def test_init_while_a_transaction_is_open_aborts_it_and_fences_its_producer(mockbroker: MockBroker,
                                                                           client: RawClient) -> None:
    mockbroker.create_topic("zombie")
    pid, epoch = init_ok(client)
    assert add_partitions(client, pid, epoch, ("zombie", 0)) == {("zombie", 0): ErrorCode.NONE}
    assert produce_txn(client, "zombie", pid, epoch, 0, b"z").error_code == ErrorCode.NONE
    assert init(client).error_code == ErrorCode.CONCURRENT_TRANSACTIONS
    assert [t.state for t in mockbroker.transactions()] == ["CompleteAbort"]
    assert control_types(mockbroker, "zombie") == [(1, ControlType.ABORT)]
    new_pid, new_epoch = init_ok(client)
    assert (new_pid, new_epoch) == (pid, epoch + 3)  # +1 fenced, +1 abort (transaction version 2), +1 init
    # The zombie's requests fail.
    assert end_txn(client, pid, epoch, True).error_code == ErrorCode.PRODUCER_FENCED
    assert end_txn(client, pid, epoch, True, version=1).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert add_partitions(client, pid, epoch, ("zombie", 0)) == {("zombie", 0): ErrorCode.PRODUCER_FENCED}
    assert add_partitions(client, pid, epoch, ("zombie", 0), version=1) == {
        ("zombie", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    late = produce_txn(client, "zombie", pid, epoch, 1, b"late")
    assert (late.error_code, late.log_start_offset) == (ErrorCode.INVALID_PRODUCER_EPOCH, -1)


def test_concurrent_transactions_while_markers_are_written(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("slow")
    pid, epoch = init_ok(client)
    add_partitions(client, pid, epoch, ("slow", 0))
    mockbroker._call(setattr, mockbroker.txn_coordinator, "hold_markers", True)
    assert end_txn(client, pid, epoch, True).error_code == ErrorCode.NONE
    assert [t.state for t in mockbroker.transactions()] == ["PrepareCommit"]
    assert init(client).error_code == ErrorCode.CONCURRENT_TRANSACTIONS
    assert add_partitions(client, pid, epoch, ("slow", 0)) == {("slow", 0): ErrorCode.CONCURRENT_TRANSACTIONS}
    assert end_txn(client, pid, epoch, True).error_code == ErrorCode.CONCURRENT_TRANSACTIONS
    mockbroker._call(mockbroker.txn_coordinator.release_markers)
    assert [t.state for t in mockbroker.transactions()] == ["CompleteCommit"]
    assert control_types(mockbroker, "slow") == [(0, ControlType.COMMIT)]
    assert init_ok(client) == (pid, epoch + 1)


# -- AddPartitionsToTxn and AddOffsetsToTxn ---------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_add_partitions_v0_to_v3(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("ap", 2)
    pid, epoch = init_ok(client)
    assert add_partitions(client, pid, epoch, ("ap", 0), ("ap", 1), version=version) == {
        ("ap", 0): ErrorCode.NONE, ("ap", 1): ErrorCode.NONE}
    [info] = mockbroker.transactions()
    assert (info.state, info.partitions) == ("Ongoing", [("ap", 0), ("ap", 1)])
    fenced = ErrorCode.PRODUCER_FENCED if version >= 2 else ErrorCode.INVALID_PRODUCER_EPOCH
    assert add_partitions(client, pid, epoch + 1, ("ap", 0), version=version) == {("ap", 0): fenced}
    assert add_partitions(client, pid + 9, epoch, ("ap", 0), version=version) == {
        ("ap", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert add_partitions(client, pid, epoch, ("ap", 0), txid="unknown", version=version) == {
        ("ap", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


def test_add_partitions_of_an_unknown_partition_fails_the_transaction(mockbroker: MockBroker,
                                                                      client: RawClient) -> None:
    mockbroker.create_topic("known")
    pid, epoch = init_ok(client)
    assert add_partitions(client, pid, epoch, ("known", 0), ("known", 5), ("nope", 0)) == {
        ("known", 0): ErrorCode.OPERATION_NOT_ATTEMPTED, ("known", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert mockbroker.transactions()[0].state == "Empty"


@pytest.mark.parametrize("version", [4, 5])
def test_add_partitions_v4_batches_transactions_with_verify_only(mockbroker: MockBroker, client: RawClient,
                                                                 version: int) -> None:
    mockbroker.create_topic("bt", 2)
    a_pid, a_epoch = init_ok(client, "a")
    b_pid, b_epoch = init_ok(client, "b")
    add_partitions(client, a_pid, a_epoch, ("bt", 0), txid="a")
    resp = client.request(ADD_PARTITIONS, version, {"transactions": [
        {"transactional_id": "a", "producer_id": a_pid, "producer_epoch": a_epoch, "verify_only": True,
         "topics": [{"name": "bt", "partitions": [0, 1]}]},
        {"transactional_id": "b", "producer_id": b_pid, "producer_epoch": b_epoch, "verify_only": False,
         "topics": [{"name": "bt", "partitions": [1]}]},
        {"transactional_id": "c", "producer_id": 1, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "bt", "partitions": [0]}]},
    ]})
    assert resp.error_code == ErrorCode.NONE
    got = {r.transactional_id: {(t.name, p.partition_index): p.partition_error_code for t in r.topic_results
                                for p in t.results_by_partition} for r in resp.results_by_transaction}
    assert got == {"a": {("bt", 0): ErrorCode.NONE, ("bt", 1): ErrorCode.TRANSACTION_ABORTABLE},
                   "b": {("bt", 1): ErrorCode.NONE},
                   "c": {("bt", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}}
    states = {t.transactional_id: (t.state, t.partitions) for t in mockbroker.transactions()}
    assert states == {"a": ("Ongoing", [("bt", 0)]), "b": ("Ongoing", [("bt", 1)])}


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_add_offsets_to_txn(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    pid, epoch = init_ok(client)
    body = {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch, "group_id": "group"}
    assert client.request(ADD_OFFSETS, version, body).error_code == ErrorCode.NONE
    # Kafka's partitionFor: abs("group".hashCode) % 50 = 98629247 % 50.
    assert mockbroker.transactions()[0].partitions == [("__consumer_offsets", 47)]
    fenced = ErrorCode.PRODUCER_FENCED if version >= 2 else ErrorCode.INVALID_PRODUCER_EPOCH
    assert client.request(ADD_OFFSETS, version, {**body, "producer_epoch": epoch + 1}).error_code == fenced


# -- EndTxn --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_end_txn_v0_to_v4_commit_and_abort(mockbroker: MockBroker, client: RawClient, version: int) -> None:
    mockbroker.create_topic("et")
    pid, epoch = init_ok(client)
    assert end_txn(client, pid, epoch, True, version=version).error_code == ErrorCode.INVALID_TXN_STATE  # Empty
    add_partitions(client, pid, epoch, ("et", 0))
    assert produce_txn(client, "et", pid, epoch, 0, b"c").error_code == ErrorCode.NONE
    resp = end_txn(client, pid, epoch, True, version=version)
    assert resp.error_code == ErrorCode.NONE
    assert end_txn(client, pid, epoch, True, version=version).error_code == ErrorCode.NONE  # a retry
    assert end_txn(client, pid, epoch, False, version=version).error_code == ErrorCode.INVALID_TXN_STATE
    add_partitions(client, pid, epoch, ("et", 0))
    assert produce_txn(client, "et", pid, epoch, 1, b"a").error_code == ErrorCode.NONE
    assert end_txn(client, pid, epoch, False, version=version).error_code == ErrorCode.NONE
    assert control_types(mockbroker, "et") == [(1, ControlType.COMMIT), (3, ControlType.ABORT)]
    batches = mockbroker.batches("et")
    assert [b.producer_epoch for b in batches] == [epoch] * 4  # version 1: no epoch bump
    fenced = ErrorCode.PRODUCER_FENCED if version >= 2 else ErrorCode.INVALID_PRODUCER_EPOCH
    assert end_txn(client, pid, epoch + 1, False, version=version).error_code == fenced


def test_end_txn_v5_bumps_the_epoch_and_answers_it(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("e5")
    pid, epoch = init_ok(client)
    assert produce_txn(client, "e5", pid, epoch, 0, b"x", version=12).error_code == ErrorCode.NONE
    resp = end_txn(client, pid, epoch, True, version=5)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (ErrorCode.NONE, pid, epoch + 1)
    # A retry (the previous epoch) is answered the same way, without another marker.
    resp = end_txn(client, pid, epoch, True, version=5)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (ErrorCode.NONE, pid, epoch + 1)
    assert [(b.producer_epoch, b.control_type) for b in mockbroker.batches("e5")] == [
        (epoch, None), (epoch + 1, ControlType.COMMIT)]
    # The next transaction: the bumped epoch, sequence 0; an abort with nothing added is allowed.
    assert produce_txn(client, "e5", pid, epoch + 1, 0, b"y", version=12).error_code == ErrorCode.NONE
    resp = end_txn(client, pid, epoch + 1, False, version=5)
    assert (resp.error_code, resp.producer_epoch) == (ErrorCode.NONE, epoch + 2)
    resp = end_txn(client, pid, epoch + 2, False, version=5)
    assert (resp.error_code, resp.producer_epoch) == (ErrorCode.NONE, epoch + 3)
    resp = end_txn(client, pid, epoch + 3, True, version=5)
    assert (resp.error_code, resp.producer_id, resp.producer_epoch) == (ErrorCode.INVALID_TXN_STATE, -1, -1)


# -- Produce -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version, code", [(3, ErrorCode.INVALID_TXN_STATE), (9, ErrorCode.INVALID_TXN_STATE),
                                           (10, ErrorCode.INVALID_TXN_STATE), (11, ErrorCode.TRANSACTION_ABORTABLE)])
def test_transactional_produce_to_a_partition_not_added(mockbroker: MockBroker, client: RawClient, version: int,
                                                        code: ErrorCode) -> None:
    mockbroker.create_topic("na", 2)
    pid, epoch = init_ok(client)
    add_partitions(client, pid, epoch, ("na", 0))
    p = produce_txn(client, "na", pid, epoch, 0, b"x", partition=1, version=version)
    assert p.error_code == code
    if version >= 5:
        assert p.log_start_offset == -1
    assert mockbroker.batches("na", 1) == []
    assert produce_txn(client, "na", pid, epoch, 0, b"x", partition=0, version=version).error_code == ErrorCode.NONE


@pytest.mark.parametrize("version", [12, 13])
def test_transactional_produce_v12_adds_the_partition(mockbroker: MockBroker, client: RawClient,
                                                      version: int) -> None:
    topic = mockbroker.create_topic("implicit")
    pid, epoch = init_ok(client)
    body = produce_body("implicit" if version < 13 else "", txn_batch(pid, epoch, 0, b"x"), transactional_id="tx",
                        topic_id=topic.topic_id if version >= 13 else None)
    resp = client.request(PRODUCE, version, body)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    assert mockbroker.transactions()[0].partitions == [("implicit", 0)]
    fenced = produce_txn(client, "implicit", pid, epoch + 1, 0, b"y", version=12)
    assert fenced.error_code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_transactional_batch_without_transactional_id(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("noid")
    pid, epoch = init_ok(client)
    add_partitions(client, pid, epoch, ("noid", 0))
    p = produce_txn(client, "noid", pid, epoch, 0, b"x", txid=None)
    assert p.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


# -- read_committed ------------------------------------------------------------------------------------------


def test_read_committed_stops_at_the_last_stable_offset(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("lso")
    pid, epoch = init_ok(client)
    assert produce(client, "lso", make_batch(b"plain")).base_offset == 0
    add_partitions(client, pid, epoch, ("lso", 0))
    produce_txn(client, "lso", pid, epoch, 0, b"t1")
    produce_txn(client, "lso", pid, epoch, 1, b"t2")
    assert mockbroker.offsets("lso") == {"log_start_offset": 0, "high_watermark": 3, "last_stable_offset": 1}
    rc = fetch(client, "lso", 0, isolation_level=READ_COMMITTED)
    assert (rc.high_watermark, rc.last_stable_offset, values_of(rc.records)) == (3, 1, [b"plain"])
    assert rc.aborted_transactions == []
    assert values_of(fetch(client, "lso", 1, isolation_level=READ_COMMITTED).records) == []
    ru = fetch(client, "lso", 0)
    assert (ru.last_stable_offset, values_of(ru.records), ru.aborted_transactions) == (
        1, [b"plain", b"t1", b"t2"], None)
    assert list_offsets(client, "lso", LATEST, isolation_level=READ_COMMITTED).offset == 1
    assert list_offsets(client, "lso", LATEST).offset == 3
    end_txn(client, pid, epoch, True)
    rc = fetch(client, "lso", 0, isolation_level=READ_COMMITTED)
    assert (rc.last_stable_offset, data_values(rc.records)) == (4, [b"plain", b"t1", b"t2"])
    assert [b.is_control for b in batches_of(rc.records)] == [False, False, False, True]
    assert list_offsets(client, "lso", LATEST, isolation_level=READ_COMMITTED).offset == 4


def test_last_stable_offset_with_interleaved_transactions_of_several_producers(mockbroker: MockBroker,
                                                                              client: RawClient) -> None:
    mockbroker.create_topic("mix")
    ids = {txid: init_ok(client, txid) for txid in ("p1", "p2", "p3")}
    seqs = dict.fromkeys(ids, 0)
    for txid, (pid, epoch) in ids.items():
        add_partitions(client, pid, epoch, ("mix", 0), txid=txid)

    def write(txid: str, value: bytes) -> int:
        pid, epoch = ids[txid]
        p = produce_txn(client, "mix", pid, epoch, seqs[txid], value, txid=txid)
        seqs[txid] += 1
        return int(p.base_offset)

    def lso() -> tuple[int, int, int]:
        f = fetch(client, "mix", 0, isolation_level=READ_COMMITTED)
        listed = list_offsets(client, "mix", LATEST, isolation_level=READ_COMMITTED).offset
        return f.high_watermark, f.last_stable_offset, listed

    assert [write("p1", b"a"), write("p2", b"b"), write("p1", b"c"), write("p3", b"d")] == [0, 1, 2, 3]
    assert lso() == (4, 0, 0)
    end_txn(client, *ids["p1"], True, txid="p1")  # marker at 4: p2 (first offset 1) is the earliest open one
    assert lso() == (5, 1, 1)
    end_txn(client, *ids["p2"], False, txid="p2")  # marker at 5: p3 from 3
    assert lso() == (6, 3, 3)
    assert write("p3", b"e") == 6
    assert lso() == (7, 3, 3)
    end_txn(client, *ids["p3"], True, txid="p3")  # marker at 7
    assert lso() == (8, 8, 8)
    rc = fetch(client, "mix", 0, isolation_level=READ_COMMITTED)
    assert [(t.producer_id, t.first_offset) for t in rc.aborted_transactions] == [(ids["p2"][0], 1)]
    assert data_values(rc.records) == [b"a", b"b", b"c", b"d", b"e"]  # the client drops p2's b


def test_read_committed_lists_the_aborted_transactions_of_the_range_returned(mockbroker: MockBroker,
                                                                             client: RawClient) -> None:
    mockbroker.create_topic("ab")
    a_pid, a_epoch = init_ok(client, "a")
    b_pid, b_epoch = init_ok(client, "b")
    add_partitions(client, a_pid, a_epoch, ("ab", 0), txid="a")
    add_partitions(client, b_pid, b_epoch, ("ab", 0), txid="b")
    produce_txn(client, "ab", a_pid, a_epoch, 0, b"a0", txid="a")  # 0
    produce_txn(client, "ab", b_pid, b_epoch, 0, b"b0", txid="b")  # 1
    produce_txn(client, "ab", a_pid, a_epoch, 1, b"a1", txid="a")  # 2
    end_txn(client, a_pid, a_epoch, False, txid="a")  # ABORT at 3
    end_txn(client, b_pid, b_epoch, True, txid="b")  # COMMIT at 4
    add_partitions(client, a_pid, a_epoch, ("ab", 0), txid="a")
    produce_txn(client, "ab", a_pid, a_epoch, 2, b"a2", txid="a")  # 5
    end_txn(client, a_pid, a_epoch, False, txid="a")  # ABORT at 6

    def aborted(offset: int, max_bytes: int = 1 << 20) -> tuple[list[tuple[int, int]], list[int]]:
        p = fetch(client, "ab", offset, isolation_level=READ_COMMITTED, partition_max_bytes=max_bytes)
        return ([(t.producer_id, t.first_offset) for t in p.aborted_transactions],
                [b.base_offset for b in batches_of(p.records)])

    assert aborted(0) == ([(a_pid, 0), (a_pid, 5)], [0, 1, 2, 3, 4, 5, 6])
    assert aborted(0, 1) == ([(a_pid, 0)], [0])  # one batch returned: only the transaction it belongs to
    assert aborted(3, 1) == ([(a_pid, 0)], [3])  # a's marker: a is listed again
    assert aborted(4, 1) == ([], [4])
    assert aborted(4) == ([(a_pid, 5)], [4, 5, 6])
    assert aborted(7) == ([], [])
    # read_uncommitted gets everything, aborted records included, and no list.
    p = fetch(client, "ab", 0)
    assert (data_values(p.records), p.aborted_transactions) == ([b"a0", b"b0", b"a1", b"a2"], None)


def test_stored_marker_bytes_are_kafkas_control_batch(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("bytes")
    pid, epoch = init_ok(client)
    add_partitions(client, pid, epoch, ("bytes", 0))
    produce_txn(client, "bytes", pid, epoch, 0, b"v")
    end_txn(client, pid, epoch, False)
    [marker] = [b for b in mockbroker.batches("bytes") if b.is_control]
    assert (marker.control_type, marker.is_transactional, marker.producer_id, marker.producer_epoch,
            marker.base_sequence, marker.record_count) == (ControlType.ABORT, True, pid, epoch, -1, 1)
    expected = hand_built_marker(offset=1, pid=pid, epoch=epoch, commit=False, coordinator_epoch=0,
                                 timestamp=marker.base_timestamp, leader_epoch=0)
    assert marker.raw == expected
    served = fetch(client, "bytes", 1, isolation_level=READ_COMMITTED).records
    assert bytes(served) == expected


# -- TxnOffsetCommit -----------------------------------------------------------------------------------------


def _txn_offset_commit(client: RawClient, pid: int, epoch: int, offsets: list[tuple[str, int, int]], *,
                       version: int = 3, group: str = "g") -> dict[tuple[str, int], int]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, index, offset in offsets:
        topics.setdefault(topic, []).append({"partition_index": index, "committed_offset": offset,
                                             "committed_leader_epoch": -1, "committed_metadata": "m"})
    resp = client.request(TXN_OFFSET_COMMIT, version, {
        "transactional_id": "tx", "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})
    return {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}


@pytest.mark.parametrize("commit", [True, False])
def test_txn_offsets_reach_the_group_only_with_the_commit(mockbroker: MockBroker, client: RawClient,
                                                         commit: bool) -> None:
    mockbroker.create_topic("src", 2)
    pid, epoch = init_ok(client)
    assert client.request(ADD_OFFSETS, 3, {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
                                           "group_id": "g"}).error_code == ErrorCode.NONE
    assert _txn_offset_commit(client, pid, epoch, [("src", 0, 5), ("src", 1, 9), ("gone", 0, 1)]) == {
        ("src", 0): ErrorCode.NONE, ("src", 1): ErrorCode.NONE, ("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert mockbroker.committed("g") == {}
    assert _offset_fetch(client, "g") == {("src", 0): -1, ("src", 1): -1}
    assert mockbroker.transactions()[0].pending_offsets == {"g": {("src", 0): 5, ("src", 1): 9}}
    assert end_txn(client, pid, epoch, commit).error_code == ErrorCode.NONE
    assert mockbroker.committed("g") == ({("src", 0): 5, ("src", 1): 9} if commit else {})
    assert _offset_fetch(client, "g") == ({("src", 0): 5, ("src", 1): 9} if commit else
                                          {("src", 0): -1, ("src", 1): -1})


def _offset_fetch(client: RawClient, group: str) -> dict[tuple[str, int], int]:
    resp = client.request(OFFSET_FETCH, 7, {"group_id": group, "require_stable": False,
                                            "topics": [{"name": "src", "partition_indexes": [0, 1]}]})
    assert resp.error_code == ErrorCode.NONE
    return {(t.name, p.partition_index): p.committed_offset for t in resp.topics for p in t.partitions}


@pytest.mark.parametrize("version, code", [(0, ErrorCode.INVALID_TXN_STATE), (3, ErrorCode.INVALID_TXN_STATE),
                                           (4, ErrorCode.TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_needs_add_offsets_before_v5(mockbroker: MockBroker, client: RawClient, version: int,
                                                       code: ErrorCode) -> None:
    mockbroker.create_topic("src")
    pid, epoch = init_ok(client)
    assert _txn_offset_commit(client, pid, epoch, [("src", 0, 1)], version=version) == {("src", 0): code}


def test_txn_offset_commit_v5_adds_the_group_to_the_transaction(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("src")
    pid, epoch = init_ok(client)
    assert _txn_offset_commit(client, pid, epoch, [("src", 0, 3)], version=5) == {("src", 0): ErrorCode.NONE}
    assert mockbroker.transactions()[0].partitions == [("__consumer_offsets", 3)]  # "g".hashCode = 103; 103 % 50
    resp = end_txn(client, pid, epoch, True, version=5)
    assert resp.error_code == ErrorCode.NONE
    assert mockbroker.committed("g") == {("src", 0): 3}
    assert _txn_offset_commit(client, pid, epoch, [("src", 0, 4)], version=5) == {
        ("src", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert _txn_offset_commit(client, pid, epoch + 1, [("src", 0, 4)], version=5, group="") == {
        ("src", 0): ErrorCode.INVALID_GROUP_ID}


# -- DescribeTransactions and ListTransactions ---------------------------------------------------------------


def test_describe_transactions(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("d", 3)
    pid, epoch = init_ok(client, "open")
    add_partitions(client, pid, epoch, ("d", 2), ("d", 0), txid="open")
    init_ok(client, "idle")
    resp = client.request(DESCRIBE_TXNS, 0, {"transactional_ids": ["open", "idle", "missing", ""]})
    got = [(s.transactional_id, s.error_code, s.transaction_state, s.producer_id,
            [(t.topic, t.partitions) for t in s.topics]) for s in resp.transaction_states]
    idle_pid = mockbroker.transactions()[0].producer_id
    assert got == [("open", ErrorCode.NONE, "Ongoing", pid, [("d", [0, 2])]),
                   ("idle", ErrorCode.NONE, "Empty", idle_pid, []),
                   ("missing", ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, "", -1, []),
                   ("", ErrorCode.INVALID_REQUEST, "", -1, [])]
    opened = resp.transaction_states[0]
    assert opened.transaction_timeout_ms == 60_000 and opened.transaction_start_time_ms > 0
    assert resp.transaction_states[1].transaction_start_time_ms == -1


def test_list_transactions_filters(mockbroker: MockBroker, client: RawClient) -> None:
    mockbroker.create_topic("l")
    a_pid, a_epoch = init_ok(client, "app-a")
    add_partitions(client, a_pid, a_epoch, ("l", 0), txid="app-a")
    b_pid, _ = init_ok(client, "other-b")

    def listed(version: int, **filters: Any) -> tuple[list[str], list[tuple[str, int, str]]]:
        body = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                "transactional_id_pattern": None, **filters}
        resp = client.request(LIST_TXNS, version, body)
        assert resp.error_code == ErrorCode.NONE
        return list(resp.unknown_state_filters), [(t.transactional_id, t.producer_id, t.transaction_state)
                                                  for t in resp.transaction_states]

    everything = [("app-a", a_pid, "Ongoing"), ("other-b", b_pid, "Empty")]
    assert listed(0) == ([], everything)
    assert listed(0, state_filters=["Ongoing", "Weird"]) == (["Weird"], [("app-a", a_pid, "Ongoing")])
    assert listed(0, producer_id_filters=[b_pid]) == ([], [("other-b", b_pid, "Empty")])
    assert listed(1, state_filters=["Ongoing"], duration_filter=3_600_000) == ([], [])
    assert listed(2, transactional_id_pattern="app-.*") == ([], [("app-a", a_pid, "Ongoing")])
    assert listed(2, transactional_id_pattern="") == ([], everything)
    resp = client.request(LIST_TXNS, 2, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                         "transactional_id_pattern": "(unclosed"})
    assert resp.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


# -- timeouts ------------------------------------------------------------------------------------------------


def test_a_transaction_left_open_past_its_timeout_is_aborted_on_the_broker_clock(mockbroker: MockBroker,
                                                                                client: RawClient) -> None:
    mockbroker.create_topic("late")
    pid, epoch = init_ok(client, timeout=10_000)
    add_partitions(client, pid, epoch, ("late", 0))
    produce_txn(client, "late", pid, epoch, 0, b"never")
    assert mockbroker.offsets("late")["last_stable_offset"] == 0
    mockbroker.clock.advance(11)
    [info] = mockbroker.transactions()
    assert (info.state, info.producer_epoch) == ("CompleteAbort", epoch + 2)
    assert mockbroker.offsets("late") == {"log_start_offset": 0, "high_watermark": 2, "last_stable_offset": 2}
    rc = fetch(client, "late", 0, isolation_level=READ_COMMITTED)
    assert [(t.producer_id, t.first_offset) for t in rc.aborted_transactions] == [(pid, 0)]
    assert end_txn(client, pid, epoch, True).error_code == ErrorCode.PRODUCER_FENCED
    assert produce_txn(client, "late", pid, epoch, 1, b"again").error_code == ErrorCode.INVALID_PRODUCER_EPOCH
