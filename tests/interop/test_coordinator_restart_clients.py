"""The coordinators' state across a broker restart on the same data dir, with real clients (issue #17):
a librdkafka consumer group resumes at its committed offsets without reading again; a transaction left
open by a librdkafka transactional producer is aborted after its timeout on the broker clock, and a
read_committed consumer then reads past it; the transactional id initialises again with a bumped epoch."""

from __future__ import annotations

import gc
import socket
import time
from pathlib import Path
from typing import Any

from mockbroker import MockBroker
from mockbroker.clock import Clock

FAST_GROUPS = {"group.initial.rebalance.delay.ms": "0"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def produce_plain(bootstrap: str, topic: str, values: list[bytes]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0


def consume(bootstrap: str, topic: str, group: str, count: int, *, committed_only: bool = False,
            extra_wait_s: float = 0.0, commit: bool = False) -> list[bytes]:
    """What a subscribed consumer of `group` reads, up to `count` records within 60 s, then `extra_wait_s`
    more (to see nothing else arrives); commits what it read when asked, then leaves the group."""
    from confluent_kafka import Consumer

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                            "enable.auto.commit": False,
                            "isolation.level": "read_committed" if committed_only else "read_uncommitted"}
    c = Consumer(conf)
    out: list[bytes] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(out) < count and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                out.append(m.value() or b"")
        until = time.monotonic() + extra_wait_s
        while time.monotonic() < until:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                out.append(m.value() or b"")
        if commit and out:
            c.commit(asynchronous=False)
    finally:
        c.close()
    return out


def wait_for(check: Any, what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_confluent_consumer_group_resumes_at_its_committed_offsets_after_a_restart(tmp_path: Path) -> None:
    port = free_port()
    with MockBroker(port=port, data_dir=tmp_path, config=FAST_GROUPS).run_in_thread() as b1:
        b1.create_topic("t", 1)
        produce_plain(b1.bootstrap_servers, "t", [b"v%d" % i for i in range(10)])
        assert consume(b1.bootstrap_servers, "t", "cg", 10, commit=True) == [b"v%d" % i for i in range(10)]
        before = b1.committed("cg")
        assert before == {("t", 0): 10}
    with MockBroker(port=port, data_dir=tmp_path, config=FAST_GROUPS).run_in_thread() as b2:
        assert b2.committed("cg") == before
        assert [(g.group_id, g.state, g.protocol_type) for g in b2.groups()] == [("cg", "Empty", "consumer")]
        produce_plain(b2.bootstrap_servers, "t", [b"w%d" % i for i in range(5)])
        # only what came after the commit: nothing from before the restart is read again
        assert consume(b2.bootstrap_servers, "t", "cg", 5, extra_wait_s=2, commit=True) == \
            [b"w%d" % i for i in range(5)]
        assert b2.committed("cg") == {("t", 0): 15}


def test_confluent_open_transaction_is_aborted_after_its_timeout_on_the_restarted_broker(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    with MockBroker(port=port, data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("t", 1)
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx", "linger.ms": 0,
                      "transaction.timeout.ms": 60_000})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce("t", b"committed", partition=0)
        p.commit_transaction(30)
        p.begin_transaction()
        p.produce("t", b"left-open", partition=0)
        assert p.flush(30) == 0
        [open_txn] = b1.transactions()
        assert open_txn.state == "Ongoing"
        # the producer goes away with its transaction open (a crashed application)
        del p
        gc.collect()
    clock = Clock()
    with MockBroker(port=port, data_dir=tmp_path, clock=clock, config=FAST_GROUPS).run_in_thread() as b2:
        [info] = b2.transactions()
        assert (info.state, info.producer_id, info.producer_epoch) == ("Ongoing", open_txn.producer_id,
                                                                       open_txn.producer_epoch)
        produce_plain(bootstrap, "t", [b"after"])
        assert b2.offsets("t")["last_stable_offset"] == 2  # held at the open transaction's first record
        # read_committed stops at the open transaction
        assert consume(bootstrap, "t", "rc1", 1, committed_only=True, extra_wait_s=1) == [b"committed"]
        clock.advance(61)  # past transaction.timeout.ms on the broker clock: fenced and aborted
        wait_for(lambda: b2.transactions()[0].state == "CompleteAbort", "the timed-out transaction's abort")
        assert b2.offsets("t")["last_stable_offset"] == b2.offsets("t")["high_watermark"]
        assert consume(bootstrap, "t", "rc2", 2, committed_only=True, extra_wait_s=1) == [b"committed", b"after"]
        # the transactional id starts again: a bumped epoch, and its transactions commit as before
        p2 = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx", "linger.ms": 0})
        p2.init_transactions(30)
        [again] = b2.transactions()
        assert again.producer_id == open_txn.producer_id and again.producer_epoch > info.producer_epoch + 1
        p2.begin_transaction()
        p2.produce("t", b"new", partition=0)
        p2.commit_transaction(30)
        assert consume(bootstrap, "t", "rc3", 3, committed_only=True, extra_wait_s=1) == \
            [b"committed", b"after", b"new"]


def test_confluent_producer_reinitialising_after_a_restart_fences_its_open_transaction(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    with MockBroker(port=port, data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("t", 1)
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx", "linger.ms": 0})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce("t", b"left-open", partition=0)
        assert p.flush(30) == 0
        [open_txn] = b1.transactions()
        del p
        gc.collect()
    with MockBroker(port=port, data_dir=tmp_path).run_in_thread() as b2:
        # a new instance of the application: InitProducerId fences and aborts the open transaction first
        p2 = Producer({"bootstrap.servers": bootstrap, "transactional.id": "tx", "linger.ms": 0})
        p2.init_transactions(30)
        [info] = b2.transactions()
        assert info.producer_id == open_txn.producer_id and info.producer_epoch > open_txn.producer_epoch
        p2.begin_transaction()
        p2.produce("t", b"new", partition=0)
        p2.commit_transaction(30)
        assert consume(bootstrap, "t", "rc", 1, committed_only=True, extra_wait_s=1) == [b"new"]
        assert b2.offsets("t")["last_stable_offset"] == b2.offsets("t")["high_watermark"]


def test_confluent_group_member_running_across_a_restart_keeps_its_generation_and_assignment(
        tmp_path: Path) -> None:
    from confluent_kafka import Consumer

    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "live", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 30_000, "heartbeat.interval.ms": 500,
                  "reconnect.backoff.max.ms": 200})
    got: list[bytes] = []

    def poll_until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value() or b"")
                c.commit(m, asynchronous=False)

    try:
        with MockBroker(port=port, data_dir=tmp_path, config=FAST_GROUPS).run_in_thread() as b1:
            b1.create_topic("t", 1)
            produce_plain(bootstrap, "t", [b"v%d" % i for i in range(5)])
            c.subscribe(["t"])
            poll_until(5)
            wait_for(lambda: b1.committed("live") == {("t", 0): 5}, "the commits")
            [before] = b1.groups()
            assert before.state == "Stable"
        with MockBroker(port=port, data_dir=tmp_path, config=FAST_GROUPS).run_in_thread() as b2:
            [loaded] = b2.groups()
            assert (loaded.state, loaded.generation_or_epoch, [m.member_id for m in loaded.members]) == \
                ("Stable", before.generation_or_epoch, [m.member_id for m in before.members])
            produce_plain(bootstrap, "t", [b"w%d" % i for i in range(5)])
            poll_until(10)
            assert got == [b"v%d" % i for i in range(5)] + [b"w%d" % i for i in range(5)]
            wait_for(lambda: b2.committed("live") == {("t", 0): 10}, "the commits after the restart")
            # the member heartbeated in its generation: no rebalance was needed
            [after] = b2.groups()
            assert (after.state, after.generation_or_epoch, after.members[0].member_id) == \
                ("Stable", before.generation_or_epoch, before.members[0].member_id)
    finally:
        c.close()
