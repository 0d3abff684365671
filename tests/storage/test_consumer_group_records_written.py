"""What a KIP-848 group writes to __consumer_offsets per change (state/coordinators/consumer_group_log.py): the
records of what changed only, as Kafka's GroupMetadataManager writes them, at a cost that does not grow with
the group; the log, replayed, holds exactly the group; a restart (and a compaction before it) brings it back.
Brokers without sockets, on a frozen clock."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
    encode_key,
)
from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC
from mockbroker.state.coordinators import consumer_group_log
from mockbroker.state.coordinators.consumer_group_load import replay_consumer_groups
from mockbroker.state.coordinators.replay import topic_records
from mockbroker.state.groups.consumer import ConsumerGroup
from tests.storage.helpers import T0
from tests.storage.test_consumer_group_restart import describe, hb, owned_of, record_types
from tests.storage.test_coordinator_restart import restart, start

JOIN = [(MEMBER_METADATA, False), (GROUP_METADATA, False), (TARGET_ASSIGNMENT_MEMBER, False),
        (TARGET_ASSIGNMENT_METADATA, False), (CURRENT_MEMBER_ASSIGNMENT, False)]
LEAVE = [(CURRENT_MEMBER_ASSIGNMENT, True), (TARGET_ASSIGNMENT_MEMBER, True), (MEMBER_METADATA, True),
         (GROUP_METADATA, False)]


class Client:
    """A KIP-848 consumer as the clients drive one: its epoch and the partitions it owns, sent back each time."""

    def __init__(self, broker: MockBroker, member_id: str, topics: list[str], instance: str | None = None) -> None:
        self.broker, self.member_id, self.topics, self.instance = broker, member_id, topics, instance
        self.epoch = 0
        self.owned: list[Msg] = []

    def beat(self, subscribe: bool = False) -> Msg:
        r = hb(self.broker, "g", self.member_id, self.epoch, topics=self.topics if subscribe or not self.epoch else None,
               owned=self.owned if self.epoch else None, instance=self.instance)
        self.epoch = r.member_epoch
        if r.assignment is not None:
            self.owned = owned_of(r)
        return r


def group_of(broker: MockBroker) -> ConsumerGroup:
    group = broker.node.group_coordinator.groups["g"]
    assert isinstance(group, ConsumerGroup)
    return group


def grown_group(broker: MockBroker, n: int) -> list[Client]:
    """n members of "g" on the 8 partitions of "t", each heartbeating until the group is Stable."""
    broker.create_topic("t", 8)
    clients = [Client(broker, f"member-{i}", ["t"]) for i in range(n)]
    for c in clients:
        c.beat()
    for _ in range(4):
        for c in clients:
            c.beat()
    assert describe(broker).group_state == "Stable"
    return clients


@pytest.mark.parametrize("n", [5, 50])
def test_a_join_writes_the_joining_members_records_whatever_the_groups_size(
        n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    broker = MockBroker(clock=Clock(start_ms=T0, frozen=True))
    clients = grown_group(broker, n)
    broker.create_topic("solo", 2)  # only the new member reads it: nobody else's target moves
    encoded = []
    real = consumer_group_log.encode_value
    monkeypatch.setattr(consumer_group_log, "encode_value", lambda v: encoded.append(v) or real(v))
    before = len(record_types(broker))
    joined = Client(broker, "newcomer", ["solo"])
    assert sorted(p for tp in joined.beat().assignment.topic_partitions for p in tp.partitions) == [0, 1]
    # Kafka's records for a join: its metadata, the group epoch, its target, the assignment epoch, its current
    # assignment; found by encoding its three records and the group's two, however many members there are.
    assert record_types(broker)[before:] == JOIN
    assert len(encoded) == 5
    # A heartbeat that changes nothing writes nothing; leaving writes its tombstones and the new epoch.
    encoded.clear()
    before = len(record_types(broker))
    joined.beat()
    assert record_types(broker)[before:] == []
    assert len(encoded) == 5
    hb(broker, "g", "newcomer", -1)
    assert record_types(broker)[before:] == LEAVE
    assert len(clients) == n


def logged(broker: MockBroker) -> dict[str, object]:
    topic = broker.cluster.topic(OFFSETS_TOPIC)
    assert topic is not None
    return dict(replay_consumer_groups(topic_records(topic)))


def held(group: ConsumerGroup) -> dict[str, object]:
    """What the group holds now, as its full set of records would say it."""
    records = [(encode_key(k), v) for k, v in consumer_group_log.group_records(group).items()]
    return dict(replay_consumer_groups(records))


def test_the_log_replayed_is_the_group_after_every_change() -> None:
    """Joins, heartbeats, subscription changes, static members away and back, leaves, new partitions: after
    each, the records written so far replay to exactly what the group holds."""
    broker = MockBroker(clock=Clock(start_ms=T0, frozen=True))
    broker.create_topic("t", 6)
    broker.create_topic("u", 3)
    rnd = random.Random(848)
    clients: list[Client] = []
    away: list[Client] = []
    for step in range(200):
        op = rnd.random()
        if op < 0.15 or not clients:
            static = rnd.random() < 0.3
            c = Client(broker, f"m{step}", rnd.choice([["t"], ["u"], ["t", "u"]]), f"i{step}" if static else None)
            c.beat()
            clients.append(c)
        elif op < 0.75:
            rnd.choice(clients).beat()
        elif op < 0.82:
            c = rnd.choice(clients)
            c.topics = rnd.choice([["t"], ["u"], ["t", "u"]])
            c.beat(subscribe=True)
        elif op < 0.9:
            c = clients.pop(rnd.randrange(len(clients)))
            if c.instance is not None:
                hb(broker, "g", c.member_id, -2, instance=c.instance)
                away.append(c)
            else:
                hb(broker, "g", c.member_id, -1)
        elif op < 0.97 and away:
            c = away.pop()
            c.member_id, c.epoch, c.owned = f"{c.member_id}+", 0, []
            c.beat()
            clients.append(c)
        elif step % 50 == 0:
            name = rnd.choice(["t", "u"])
            broker.cluster.create_partitions(name, len(broker.cluster.topics[name].partitions) + 1)
        assert logged(broker) == held(group_of(broker)), f"step {step}"
    assert len(group_of(broker).members) > 3


def test_a_big_group_comes_back_exactly_after_a_restart_and_a_compaction(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    clients = grown_group(b1, 20)
    for c in clients[:5]:
        hb(b1, "g", c.member_id, -1)
    for c in clients[5:]:
        c.beat()
    for c in clients[5:]:
        c.beat()
    before = describe(b1)
    b2 = restart(tmp_path, b1)
    assert describe(b2) == before
    b2.compact(OFFSETS_TOPIC)
    b3 = restart(tmp_path, b2)
    assert describe(b3) == before
    assert held(group_of(b3)) == logged(b3)
