"""Persistence with real clients and real processes (issue #17): a producer that goes on across a broker
restart on the same data dir, a retried batch from before the restart, and a broker killed with SIGKILL
in the middle of a produce run that loses no acknowledged record."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mockbroker import MockBroker
from mockbroker.testing.delivery import Acks, Read, check_delivery
from tests.handlers.conftest import idempotent_batch, produce
from tests.rawclient import RawClient

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_confluent_idempotent_producer_goes_on_across_a_restart_without_duplicates(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    port = free_port()
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": True, "linger.ms": 5,
                         "reconnect.backoff.max.ms": 200, "message.timeout.ms": 60000})
    errors: list[object] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    with MockBroker(port=port, data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("t")
        for i in range(50):
            producer.produce("t", b"v%d" % i, callback=delivered)
        assert producer.flush(30) == 0
        pid = b1.producers("t")[0]["producer_id"]
    with MockBroker(port=port, data_dir=tmp_path).run_in_thread() as b2:
        for i in range(50, 100):
            producer.produce("t", b"v%d" % i, callback=delivered)
        assert producer.flush(60) == 0
        assert errors == []
        assert [r.value for r in b2.records("t")] == [b"v%d" % i for i in range(100)]
        [state] = b2.producers("t")
        assert state["producer_id"] == pid and state["last_sequence"] == 99
        assert _consume_all(b2.bootstrap_servers, "t", 100) == [b"v%d" % i for i in range(100)]


def _consume_all(bootstrap: str, topic: str, count: int) -> list[bytes]:
    """Every record of partition 0 from the start, with librdkafka's consumer (Fetch serves what was loaded)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "persistence-test", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                out.append(msg.value() or b"")
        return out
    finally:
        consumer.close()


def test_a_retry_of_the_last_batch_from_before_a_restart_is_answered_as_a_duplicate(tmp_path: Path) -> None:
    with MockBroker(port=0, data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("t")
        with RawClient(b1.host, b1.port) as c:
            assert produce(c, "t", bytes(idempotent_batch(1000, 0, 0, b"x"))).base_offset == 0
            first = produce(c, "t", bytes(idempotent_batch(1000, 0, 1, b"a", b"b")))
            assert (first.error_code, first.base_offset) == (0, 1)
    batch = idempotent_batch(1000, 0, 1, b"a", b"b")  # the same batch again, as a producer retries it
    with MockBroker(port=0, data_dir=tmp_path).run_in_thread() as b2, RawClient(b2.host, b2.port) as c:
        retry = produce(c, "t", bytes(batch))
        assert (retry.error_code, retry.base_offset) == (0, 1)
        assert b2.offsets("t")["high_watermark"] == 3
        nxt = produce(c, "t", bytes(idempotent_batch(1000, 0, 3, b"c")))
        assert (nxt.error_code, nxt.base_offset) == (0, 3)
        gap = produce(c, "t", bytes(idempotent_batch(1000, 0, 9, b"d")))
        assert gap.error_code == 45  # OUT_OF_ORDER_SEQUENCE_NUMBER


def _start_cli(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with log.open("ab") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--no-env", "--data-dir",
                                 str(data_dir), "--topic", "t:1", "--config", "log.flush.interval.messages=1"],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout=60)
    line = proc.stdout.readline().decode().strip() if ready else ""
    if not line.startswith("mockbroker listening on "):
        proc.kill()
        proc.wait(10)
        pytest.fail(f"the mockbroker command did not start: {line!r}\n{log.read_text()}", pytrace=False)
    return proc, line.split()[3]


def test_kill_9_mid_produce_loses_no_acknowledged_record(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    data_dir = tmp_path / "data"
    log = tmp_path / "stderr.log"
    proc, address = _start_cli(data_dir, log)
    acks = Acks()  # thread-safe: the delivery reports come on the producer's poll
    producer = Producer({"bootstrap.servers": address, "acks": "all", "enable.idempotence": True, "linger.ms": 1,
                         "message.timeout.ms": 3000, "retries": 2})
    killed = False
    try:
        i = 0
        while i < 100_000:
            producer.produce("t", b"m%06d" % i, callback=acks)
            i += 1
            producer.poll(0)
            if i % 50 == 0:
                producer.poll(0.01)
            enough = len(acks.acked) >= 300
            if enough and not killed:
                os.kill(proc.pid, signal.SIGKILL)  # records are in flight right now
                killed = True
            if killed and i % 50 == 0:
                break
        producer.flush(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
    assert killed, f"only {len(acks.acked)} records were acknowledged before the time ran out"
    assert proc.returncode == -signal.SIGKILL
    restarted, _ = _start_cli(data_dir, log)
    try:
        restarted.send_signal(signal.SIGTERM)
        assert restarted.wait(30) == 0
    finally:
        if restarted.poll() is None:
            restarted.kill()
    with MockBroker(port=0, data_dir=data_dir).run_in_thread() as broker:
        stored = [Read.of(r) for r in broker.records("t")]
    # every acknowledged record kept at its offset, in order; no value stored twice (acknowledged or not)
    check_delivery(acks.acked, stored, distinct_values=True).assert_ok()
    assert len(acks.acked) >= 300
