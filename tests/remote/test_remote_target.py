"""The remote target (mockbroker/remote) against a MockBroker(brokers=3) reached only over the wire: every
answer of RemoteBroker comes from Kafka requests, and each is compared with the embedded broker's own
answer for the same state, after confluent-kafka produced, consumed, committed and ran a transaction."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.remote import EMBEDDED_ONLY, NotOnRemoteTarget, RemoteBroker
from mockbroker.waits import WaitTimeout

QUIET = {"log_level": 3}


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        yield broker


@pytest.fixture
def remote(cluster: MockBroker) -> Iterator[RemoteBroker]:
    with RemoteBroker(cluster.bootstrap_servers) as target:
        yield target


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(bootstrap: str, topic: str, count: int, spread: int = 0, **conf: object) -> None:
    """count records; spread > 0: record i to partition i % spread (else by key)."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                            **QUIET, **conf})
    for i in range(count):
        where = {"partition": i % spread} if spread else {}
        producer.produce(topic, key=b"k%d" % (i % 4), value=b"v%d" % i, headers=[("h", b"%d" % i)], **where)
    assert producer.flush(30) == 0


def consume_and_commit(bootstrap: str, topic: str, group: str, count: int) -> ck.Consumer:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                            "enable.auto.commit": False, **QUIET})
    consumer.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 60
    while got < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got += 1
    assert got == count
    consumer.commit(asynchronous=False)
    return consumer


def test_create_topic_and_topics_are_the_clusters(cluster: MockBroker, remote: RemoteBroker) -> None:
    name = unique("made")
    made = remote.create_topic(name, 3, {"cleanup.policy": "compact"})
    assert (made.name, made.partitions) == (name, 3)
    assert name in remote.topics()
    assert remote.topics() == cluster.topics()
    assert cluster.cluster.topic(name).config.get("cleanup.policy") == "compact"  # type: ignore[union-attr]
    with pytest.raises(KafkaError) as refused:
        remote.create_topic(name)
    assert refused.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
    remote.delete_topic(name)
    assert name not in cluster.topics()


def test_records_batches_offsets_and_producers_match_the_embedded_answers(cluster: MockBroker,
                                                                          remote: RemoteBroker) -> None:
    topic = unique("log")
    remote.create_topic(topic, 3)
    produce(remote.bootstrap_servers, topic, 40, **{"compression.type": "lz4"})
    remote.wait_for_records(topic, 40, timeout=30)
    assert len(remote.records(topic)) == 40
    assert remote.records(topic) == cluster.records(topic)
    for p in range(3):
        assert remote.records(topic, p) == cluster.records(topic, p)
        assert remote.batches(topic, p) == cluster.batches(topic, p)  # the raw bytes included
        assert remote.offsets(topic, p) == cluster.offsets(topic, p)
        embedded = [{k: v for k, v in e.items() if k != "batches"} for e in cluster.producers(topic, p)]
        assert remote.producers(topic, p) == embedded
    with pytest.raises(KeyError):
        remote.records(unique("absent"))


def test_committed_and_groups_match_the_embedded_answers(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic, group = unique("grp-topic"), unique("grp")
    remote.create_topic(topic, 2)
    produce(remote.bootstrap_servers, topic, 10, spread=2)
    consumer = consume_and_commit(remote.bootstrap_servers, topic, group, 10)
    try:
        remote.wait_for_group(group, "Stable", members=1, timeout=30)
        assert remote.committed(group) == cluster.committed(group)
        assert sum(remote.committed(group).values()) == 10
        [mine] = [g for g in remote.groups() if g.group_id == group]
        [theirs] = [g for g in cluster.groups() if g.group_id == group]
        # DescribeGroups carries no generation and no leader: the rest is the same
        assert (mine.generation_or_epoch, mine.leader) == (-1, None)
        assert mine.members == theirs.members
        assert (mine.group_type, mine.protocol_type, mine.state, mine.protocol) == (
            theirs.group_type, theirs.protocol_type, theirs.state, theirs.protocol)
    finally:
        consumer.close()
    remote.wait_for_group(group, "Empty", timeout=30)
    remote.wait_for_committed(group, topic=topic, timeout=30)


def test_transactions_and_the_last_stable_offset_match_the_embedded_answers(cluster: MockBroker,
                                                                            remote: RemoteBroker) -> None:
    topic, txid = unique("txn-topic"), unique("txn")
    remote.create_topic(topic, 1)
    producer = ck.Producer({"bootstrap.servers": remote.bootstrap_servers, "transactional.id": txid, **QUIET})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"open")
    assert producer.flush(30) == 0
    remote.wait_for_transaction(txid, "Ongoing", timeout=30)

    def comparable(infos: list) -> list:  # type: ignore[type-arg]
        # no Kafka answer has last_update_ms or the offsets a transaction holds for groups
        return [(t.transactional_id, t.state, t.producer_id, t.producer_epoch, t.timeout_ms, t.start_ms,
                 t.partitions) for t in infos if t.transactional_id == txid]

    assert comparable(remote.transactions()) == comparable(cluster.transactions()) != []
    assert remote.offsets(topic) == cluster.offsets(topic)
    assert remote.offsets(topic)["last_stable_offset"] < remote.offsets(topic)["high_watermark"]
    assert remote.producers(topic)[0]["current_txn_start_offset"] == 0
    producer.commit_transaction(30)
    remote.wait_for_transaction(txid, "CompleteCommit", timeout=30)
    assert comparable(remote.transactions()) == comparable(cluster.transactions())
    remote.wait_for_records(topic, 1)
    assert remote.batches(topic) == cluster.batches(topic)  # the COMMIT marker too
    assert remote.offsets(topic) == cluster.offsets(topic)


@pytest.mark.parametrize("call", sorted(EMBEDDED_ONLY))
def test_every_embedded_only_call_raises_not_on_remote_target(remote: RemoteBroker, call: str) -> None:
    with pytest.raises(NotOnRemoteTarget) as refused:
        getattr(remote, call)
    assert refused.value.call == call
    assert remote.bootstrap_servers in str(refused.value)


def test_a_wait_that_never_holds_says_what_the_cluster_held(remote: RemoteBroker) -> None:
    topic = unique("short")
    remote.create_topic(topic)
    with pytest.raises(WaitTimeout, match="0 records"):
        remote.wait_for_records(topic, 1, timeout=0.3)


def test_a_kip848_group_is_the_embedded_summary_exactly(cluster: MockBroker, remote: RemoteBroker) -> None:
    topic, group = unique("848-topic"), unique("848")
    remote.create_topic(topic, 3)
    produce(remote.bootstrap_servers, topic, 6, spread=3)
    consumer = ck.Consumer({"bootstrap.servers": remote.bootstrap_servers, "group.id": group,
                            "group.protocol": "consumer", "auto.offset.reset": "earliest", **QUIET})
    try:
        consumer.subscribe([topic])
        got, deadline = 0, time.monotonic() + 60
        while got < 6 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            got += msg is not None and not msg.error()
        assert got == 6
        remote.wait_for_group(group, "Stable", members=1, timeout=30)
        # ConsumerGroupDescribe carries the group epoch, the assignor and each member's epoch and assignment
        [mine] = [g for g in remote.groups() if g.group_id == group]
        [theirs] = [g for g in cluster.groups() if g.group_id == group]
        assert mine == theirs
        assert mine.group_type == "consumer" and mine.members[0].assignment == {topic: [0, 1, 2]}
    finally:
        consumer.close()


async def test_the_async_waits_poll_the_cluster_while_the_test_loop_runs(remote: RemoteBroker) -> None:
    topic = unique("async")
    remote.create_topic(topic)
    waiting = asyncio.ensure_future(remote.wait_for_records_async(topic, 3, timeout=30))
    await asyncio.to_thread(produce, remote.bootstrap_servers, topic, 3)
    await waiting
    assert [r.value for r in remote.records(topic)] == [b"v0", b"v1", b"v2"]
    with pytest.raises(WaitTimeout, match="no such group"):
        await remote.wait_for_group_async(unique("absent"), timeout=0.3)
