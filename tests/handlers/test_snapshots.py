"""broker.snapshot() / restore(snap) / reset() (mockbroker/snapshots.py): a test changes every kind of state,
restores, and compares the whole state field by field (tests/state_walk.py); real clients keep working."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.snapshots import Snapshot, SnapshotError, take
from tests.state_walk import differences, state_of

PRODUCE = 0
# The rooms this test changes (coordinator_log changes with KIP-848 groups only; it is compared all the same).
ROOMS = ["cluster", "config", "txn", "groups", "credentials", "acls", "faults", "requests", "clock"]


@pytest.fixture
def broker() -> Iterator[MockBroker]:
    # A super user: the broker has an authorizer (so ACLs), and the PLAINTEXT clients may do everything.
    with MockBroker(super_users=["User:ANONYMOUS"]).run_in_thread() as b:
        yield b


def _producer(broker: MockBroker, **conf: Any) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "linger.ms": 0, **conf})


def _produce(producer: Producer, topic: str, *values: bytes) -> None:
    for value in values:
        producer.produce(topic, value, key=b"k")
    assert producer.flush(15) == 0


def _consume_and_commit(broker: MockBroker, group: str, topic: str, count: int) -> Consumer:
    """A live member of group that read count records of topic and committed (left open: a member with timers)."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = 0
    for _ in range(200):
        msg = consumer.poll(0.1)
        if msg is not None and msg.error() is None:
            got += 1
            if got == count:
                break
    assert got == count
    consumer.commit(asynchronous=False)
    return consumer


def _alter(admin: AdminClient, resource: ConfigResource) -> None:
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(15)


def _topic_config(name: str, key: str, value: str) -> ConfigResource:
    return ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])


def _broker_config(node_id: int, key: str, value: str) -> ConfigResource:
    return ConfigResource(ConfigResource.Type.BROKER, str(node_id), incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)])


def _snapshot_with_state(broker: MockBroker) -> tuple[Snapshot, dict[str, Any]]:
    """A snapshot and the walk of the state it was taken from, in one step on the broker's loop."""
    return broker._call(lambda: (take(broker), state_of(broker)))


def _restore_and_walk(broker: MockBroker, snap: Snapshot | None) -> dict[str, Any]:
    """Restore (None: reset), then walk the state, in one step on the broker's loop (no client request in between)."""
    def run() -> dict[str, Any]:
        if snap is None:
            broker.reset()
        else:
            broker.restore(snap)
        return state_of(broker)
    return broker._call(run)


def _quiet(*clients: Any) -> None:
    """Let go of clients whose broker state went away (no wait for what they still hold)."""
    for client in clients:
        if isinstance(client, Producer):
            with contextlib.suppress(KafkaException):
                client.purge()
            client.flush(0)
        elif isinstance(client, Consumer):
            client.close()


def test_restore_after_every_kind_of_change_gives_back_the_snapshot_field_by_field(broker: MockBroker) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    broker.create_topic("kept", 2)
    broker.create_topic("doomed")
    producer = _producer(broker)
    _produce(producer, "kept", b"a", b"b", b"c")
    txn_a = _producer(broker, **{"transactional.id": "txn-a"})
    txn_a.init_transactions(15)
    txn_a.begin_transaction()
    _produce(txn_a, "kept", b"in-txn")
    txn_a.commit_transaction(15)
    consumer = _consume_and_commit(broker, "g1", "kept", 4)
    _alter(admin, _topic_config("kept", "retention.ms", "3600000"))
    broker.add_acl("User:alice", "READ", topic="kept")
    broker.add_user("alice", "secret")
    broker.inject(PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="never-produced", count=3)
    broker.clock.advance(5)

    snap, before = _snapshot_with_state(broker)
    before_pid = broker._call(lambda: broker.cluster._next_producer_id)
    committed = broker.committed("g1")
    assert sum(committed.values()) >= 4

    # Change every kind of state.
    _produce(producer, "kept", b"d", b"e")
    broker.create_topic("new", 3)
    _produce(producer, "new", b"x")
    broker.delete_topic("doomed")
    _alter(admin, _topic_config("kept", "retention.ms", "60000"))
    _alter(admin, _broker_config(broker.node_id, "log.retention.ms", "120000"))
    txn_a.begin_transaction()
    _produce(txn_a, "kept", b"second")
    txn_a.commit_transaction(15)
    txn_b = _producer(broker, **{"transactional.id": "txn-b"})
    txn_b.init_transactions(15)
    txn_b.begin_transaction()
    _produce(txn_b, "new", b"open")  # left open
    other = _consume_and_commit(broker, "g2", "new", 1)
    broker.remove_acls("User:alice")
    broker.add_acl("User:bob", "WRITE", topic="new")
    broker.remove_user("alice")
    broker.add_user("bob", "pw")
    broker.clear_faults()
    broker.inject(PRODUCE, error=ErrorCode.NOT_ENOUGH_REPLICAS, topic="other")
    broker.clock.advance(60)

    changed = broker._call(state_of, broker)
    for room in ROOMS:  # the test did change every room, so it can fail
        assert differences(before.get(room), changed.get(room)), f"{room} did not change"

    after = _restore_and_walk(broker, snap)
    assert differences(before, after) == []
    assert sorted(broker.topics()) == ["__consumer_offsets", "__transaction_state", "doomed", "kept"]
    assert broker.committed("g1") == committed

    next_producer_id = broker._call(lambda: broker.cluster._next_producer_id)
    assert next_producer_id > before_pid  # never given twice: it does not go back

    # The snapshot can be restored again, after more changes (by a new producer: the first one wrote after the
    # snapshot, so its sequences are ahead of the restored partitions', as after a broker lost data).
    broker.create_topic("again")
    fresh = _producer(broker)
    _produce(fresh, "kept", b"f")
    assert differences(before, _restore_and_walk(broker, snap)) == []
    _quiet(producer, fresh, txn_a, txn_b, consumer, other)


def test_reset_goes_back_to_the_state_right_after_start(broker: MockBroker) -> None:
    at_start = broker._call(state_of, broker)
    broker.create_topic("t", 4)
    producer = _producer(broker)
    _produce(producer, "t", b"1", b"2")
    consumer = _consume_and_commit(broker, "g", "t", 2)
    broker.add_acl("User:carol", "ALL", topic="t")
    broker.add_user("carol", "pw")
    broker.inject(PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="t")
    broker.clock.advance(30)
    after = _restore_and_walk(broker, None)  # reset, and the walk before clients reconnect
    assert differences(at_start, after) == []
    assert broker.topics() == [] and broker.groups() == [] and broker.acls() == []
    _quiet(producer, consumer)


def test_a_producer_keeps_working_after_reset_on_the_recreated_topic(broker: MockBroker) -> None:
    broker.create_topic("orders", 1)
    producer = _producer(broker, **{"message.timeout.ms": 20000})
    _produce(producer, "orders", b"before-1", b"before-2")
    broker.reset()
    assert broker.topics() == []
    broker.create_topic("orders", 1)
    _produce(producer, "orders", b"after")  # reconnects (its connection was closed), new topic id
    assert [r.value for r in broker.records("orders")] == [b"after"]
    consumer = _consume_and_commit(broker, "readers", "orders", 1)
    assert broker.committed("readers") == {("orders", 0): 1}
    _quiet(producer, consumer)


def test_restore_closes_client_connections(broker: MockBroker) -> None:
    from tests.rawclient import RawClient
    snap = broker.snapshot()
    with RawClient(broker.host, broker.port) as client:
        client.request(3, 12, {"topics": None})
        broker.restore(snap)
        assert client.is_closed_by_peer()


def test_a_topic_made_after_the_snapshot_is_unknown_after_restore(broker: MockBroker) -> None:
    from tests.rawclient import RawClient
    snap = broker.snapshot()
    broker.create_topic("later")
    broker.restore(snap)
    with RawClient(broker.host, broker.port) as client:
        resp = client.request(3, 12, {"topics": [{"name": "later", "topic_id": None}],
                                      "allow_auto_topic_creation": False})
    assert resp.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_snapshots_refuse_a_broker_with_a_data_dir(tmp_path: Path) -> None:
    with MockBroker(data_dir=str(tmp_path)).run_in_thread() as broker:
        with pytest.raises(SnapshotError, match="memory mode"):
            broker.snapshot()
        with pytest.raises(SnapshotError, match="memory mode"):
            broker.reset()


def test_restore_refuses_when_a_node_was_stopped_since_the_snapshot() -> None:
    with MockBroker(brokers=2).run_in_thread() as broker:
        snap = broker.snapshot()
        broker.stop_node(broker.node_id + 1)
        with pytest.raises(SnapshotError, match="start or stop them first"):
            broker.restore(snap)
        broker.start_node(broker.node_id + 1)
        broker.restore(snap)


def test_a_transactional_producer_made_after_the_snapshot_hears_invalid_producer_id_mapping(broker: MockBroker) -> None:
    broker.create_topic("t")
    snap = broker.snapshot()
    producer = _producer(broker, **{"transactional.id": "late", "message.timeout.ms": 10000})
    producer.init_transactions(15)
    broker.restore(snap)
    producer.begin_transaction()
    producer.produce("t", b"v")
    with pytest.raises(KafkaException) as caught:
        producer.commit_transaction(15)
    assert caught.value.args[0].code() == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert broker.records("t") == []
    _quiet(producer)


def test_a_consumer_that_joined_after_the_snapshot_joins_again_and_keeps_reading(broker: MockBroker) -> None:
    broker.create_topic("t")
    producer = _producer(broker)
    _produce(producer, "t", b"before")
    snap = broker.snapshot()
    consumer = _consume_and_commit(broker, "late-group", "t", 1)
    broker.restore(snap)
    assert broker.groups() == []  # its member is unknown now (UNKNOWN_MEMBER_ID to its next heartbeat)
    fresh = _producer(broker)
    _produce(fresh, "t", b"after")
    seen = []
    for _ in range(300):  # until it read the new record and joined again (its heartbeat heard UNKNOWN_MEMBER_ID)
        msg = consumer.poll(0.1)
        if msg is not None and msg.error() is None:
            seen.append(msg.value())
        if b"after" in seen and broker.groups() and broker.groups()[0].members:
            break
    assert b"after" in seen
    [group] = broker.groups()
    assert group.group_id == "late-group" and len(group.members) == 1
    _quiet(producer, fresh, consumer)
