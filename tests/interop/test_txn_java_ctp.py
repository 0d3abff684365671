"""A real exactly-once consume-transform-produce loop in one JVM (the harness's `ctp` command): a
read_committed KafkaConsumer in a group and a transactional KafkaProducer that sends the consumed offsets
with the consumer's real group metadata (generation or member epoch, member id). Every other transaction
is aborted and the consumer rewound to the group's committed offsets, as an EOS application does, so the
aborted input is processed again. Then read_committed consumers of three clients (Java, librdkafka,
aiokafka) see exactly one transformed record per input record, in input order per partition; their
read_uncommitted twins also see the aborted copies.

A zombie: instance A of the loop pauses before committing its first transaction; instance B with the same
transactional id starts, which aborts A's transaction and fences A, takes over A's partitions (A's
consumer leaves the group when its poll interval runs out) and commits; A, resumed, is fenced, and only
B's output is committed.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockBroker
from mockbroker.protocol.records.batch import ControlType
from tests.interop.clients import of_type, run_java
from tests.interop.test_txn_clients import PollResult, read_aiokafka, read_confluent, read_java

pytestmark = [pytest.mark.interop, pytest.mark.java]

IN, OUT = "ctp-in", "ctp-out"
PARTITIONS = 3
N = 12  # input records, N // PARTITIONS per partition
BROKER = {"config": {"group.initial.rebalance.delay.ms": 0, "group.consumer.heartbeat.interval.ms": 500}}
# Short group timings for the Java consumer (the broker's minimum session timeout is Kafka's 6 s).
CLASSIC = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


def produce_input(broker: MockBroker) -> dict[int, list[bytes]]:
    """N keyed records, round-robin over the input partitions (librdkafka); {partition: values in order}."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    out: dict[int, list[bytes]] = defaultdict(list)
    for i in range(N):
        value = b"in-%02d" % i
        p.produce(IN, key=b"k%d" % i, value=value, partition=i % PARTITIONS)
        out[i % PARTITIONS].append(value)
    assert p.flush(30) == 0
    return dict(out)


def ctp(broker: MockBroker, **args: Any) -> dict[str, Any]:
    """The arguments of a `ctp` run on the test topics."""
    return {"bootstrap": broker.bootstrap_servers, "input_topic": IN, "output_topic": OUT, "timeout_ms": 15000,
            "idle_ms": 20000, "run_ms": 60000, **args}


def written(lines: list[dict[str, Any]], kind: str | None = None) -> PollResult:
    """The output records the loop reported, per output partition in offset order (of committed or aborted
    transactions only when kind is given)."""
    outs = [o for line in lines if line["type"] in ("committed", "aborted") and kind in (None, line["type"])
            for o in line["outputs"]]
    result: PollResult = defaultdict(list)
    for o in sorted(outs, key=lambda o: (o["partition"], o["offset"])):
        result[o["partition"]].append(o["value"].encode())
    return dict(result)


def input_ends(broker: MockBroker) -> dict[tuple[str, int], int]:
    return {(IN, p): broker.offsets(IN, p)["high_watermark"] for p in range(PARTITIONS)}


@pytest.mark.mockbroker(**BROKER)
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_java_ctp_loop_aborts_every_other_transaction_and_reprocesses_its_input(mockbroker: MockBroker,
                                                                                protocol: str) -> None:
    mockbroker.create_topic(IN, PARTITIONS)
    mockbroker.create_topic(OUT, PARTITIONS)
    inputs = produce_input(mockbroker)
    group, txn_id = f"ctp-{protocol}", f"ctp-{protocol}-tx"
    consumer_config: dict[str, Any] = {"group.protocol": protocol, "max.poll.records": 2,
                                       "client.id": f"ctp-{protocol}"}
    if protocol == "classic":
        consumer_config.update(CLASSIC)
    lines = run_java("ctp", ctp(mockbroker, group_id=group, transactional_id=txn_id, abort_every=2,
                                max_records=N, consumer_config=consumer_config), timeout=90)

    [done] = of_type(lines, "done")
    assert done["stopped"] == "max_records", lines
    assert of_type(lines, "txn_error") == [] and of_type(lines, "fenced") == []
    committed_lines, aborted_lines = of_type(lines, "committed"), of_type(lines, "aborted")
    assert (done["committed_records"], done["committed_txns"], done["aborted_txns"]) == (
        N, len(committed_lines), len(aborted_lines))
    assert aborted_lines and len(of_type(lines, "rewound")) == len(aborted_lines)
    assert [line["txn"] for line in aborted_lines] == list(range(1, done["transactions"], 2))
    # the offsets went with the consumer's real group metadata
    assert all(line["generation"] >= 1 and line["member_id"] for line in committed_lines + aborted_lines)
    # every aborted transaction's input was processed again by a committed one
    reprocessed = {(o["input_partition"], o["input_offset"]) for line in committed_lines for o in line["outputs"]}
    assert {(o["input_partition"], o["input_offset"]) for line in aborted_lines for o in line["outputs"]} <= reprocessed
    assert reprocessed == {(p, o) for p in range(PARTITIONS) for o in range(N // PARTITIONS)}

    committed = {p: [v.upper() for v in values] for p, values in inputs.items()}
    assert written(lines, "committed") == committed
    everything = written(lines)
    assert sum(map(len, everything.values())) > N  # the aborted copies are in the log
    assert {p: [r.value for r in mockbroker.records(OUT, p)] for p in range(PARTITIONS)} == everything

    bootstrap = mockbroker.bootstrap_servers
    assert read_java(bootstrap, OUT, True) == committed
    assert read_confluent(bootstrap, OUT, PARTITIONS, True) == committed
    assert read_aiokafka(bootstrap, OUT, PARTITIONS, True) == committed
    assert read_java(bootstrap, OUT, False) == everything
    assert read_confluent(bootstrap, OUT, PARTITIONS, False) == everything
    assert read_aiokafka(bootstrap, OUT, PARTITIONS, False) == everything

    assert mockbroker.committed(group) == input_ends(mockbroker)
    [info] = [t for t in mockbroker.transactions() if t.transactional_id == txn_id]
    assert (info.state, info.partitions, info.pending_offsets) == ("CompleteCommit", [], {})
    # one marker per transaction in each output partition it wrote to, in transaction order
    for p in range(PARTITIONS):
        expected_markers = [ControlType.COMMIT if line["type"] == "committed" else ControlType.ABORT
                            for line in sorted(committed_lines + aborted_lines, key=lambda line: line["txn"])
                            if any(o["partition"] == p for o in line["outputs"])]
        assert [b.control_type for b in mockbroker.batches(OUT, p) if b.is_control] == expected_markers
    [summary] = [g for g in mockbroker.groups() if g.group_id == group]
    assert (summary.group_type, summary.state, summary.members) == (protocol, "Empty", [])


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


@pytest.mark.mockbroker(**BROKER)
def test_java_ctp_zombie_is_fenced_by_a_new_instance_with_the_same_transactional_id(mockbroker: MockBroker,
                                                                                      tmp_path: Path) -> None:
    mockbroker.create_topic(IN, PARTITIONS)
    mockbroker.create_topic(OUT, PARTITIONS)
    inputs = produce_input(mockbroker)
    resume = tmp_path / "resume-a"
    # A's consumer leaves the group once its poll interval runs out, so that B can take the partitions over.
    consumer_config = {**CLASSIC, "max.poll.interval.ms": 2000}
    args = ctp(mockbroker, group_id="ctp-zombie", transactional_id="ctp-zombie-tx", max_records=N)

    def open_transaction_of_a() -> Any:
        return [t for t in mockbroker.transactions()
                if t.state == "Ongoing" and t.pending_offsets.get("ctp-zombie")]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        a = pool.submit(run_java, "ctp", {**args, "tag": "A", "consumer_config": {**consumer_config, "client.id": "A"},
                                          "stall": {"txn": 0, "ms": 60000, "until_file": str(resume)}}, 90)
        try:
            # A sent its output and its offsets, then paused before committing.
            [before] = wait_until(open_transaction_of_a, 60, "A's transaction to hold its output and offsets")
            b_lines = pool.submit(run_java, "ctp", {**args, "tag": "B", "consumer_config": {
                **consumer_config, "client.id": "B"}}, 90).result(timeout=100)
        finally:
            resume.touch()  # A resumes and tries to commit
        a_lines = a.result(timeout=100)

    [a_done], [b_done] = of_type(a_lines, "done"), of_type(b_lines, "done")
    assert of_type(a_lines, "stalled") and of_type(a_lines, "resumed")
    [fenced] = of_type(a_lines, "fenced")
    assert (fenced["txn"], fenced["stage"], fenced["error"]) == (0, "commit", "ProducerFencedException"), fenced
    assert (a_done["stopped"], a_done["committed_records"]) == ("fenced", 0)
    assert (b_done["stopped"], b_done["committed_records"]) == ("max_records", N), b_lines
    assert of_type(b_lines, "fenced") == [] and of_type(b_lines, "txn_error") == []

    committed = {p: [v.upper() for v in values] for p, values in inputs.items()}
    assert written(b_lines, "committed") == committed
    assert read_java(mockbroker.bootstrap_servers, OUT, True) == committed
    assert read_confluent(mockbroker.bootstrap_servers, OUT, PARTITIONS, True) == committed
    # A's copies are in the log, aborted by the coordinator when B initialized; B's follow, committed.
    for p in range(PARTITIONS):
        records = mockbroker.records(OUT, p)
        tags = [dict(r.headers)["ctp"] for r in records]
        assert tags == [b"A"] * len(inputs[p]) + [b"B"] * len(inputs[p]), tags
        assert [r.value for r in records] == committed[p] * 2
        assert [b.control_type for b in mockbroker.batches(OUT, p) if b.is_control] == [
            ControlType.ABORT, ControlType.COMMIT]
    assert read_java(mockbroker.bootstrap_servers, OUT, False) == {p: v * 2 for p, v in committed.items()}

    assert mockbroker.committed("ctp-zombie") == input_ends(mockbroker)
    [after] = [t for t in mockbroker.transactions() if t.transactional_id == "ctp-zombie-tx"]
    assert (after.state, after.producer_id) == ("CompleteCommit", before.producer_id)
    assert after.producer_epoch > before.producer_epoch
