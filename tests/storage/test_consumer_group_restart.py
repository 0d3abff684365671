"""KIP-848 consumer groups across a restart on the same data dir: the ConsumerGroup* records written to
__consumer_offsets (state/coordinators/consumer_group_log.py) are loaded back (state/coordinators/consumer_group_load.py) with the
group epoch, assignment epoch, members, their epochs and assignments. Brokers without sockets, on a
frozen clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mockbroker.errors import ErrorCode
from mockbroker.protocol.consumer_group_records import (
    CURRENT_MEMBER_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_ASSIGNMENT_MEMBER,
    TARGET_ASSIGNMENT_METADATA,
)
from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC
from tests.storage.test_coordinator_restart import advance, restart, start

SESSION_MS = 45_000  # group.consumer.session.timeout.ms's default


def hb(broker: MockBroker, group: str, member_id: str, epoch: int, *, topics: list[str] | None = None,
       owned: list[Msg] | None = None, instance: str | None = None) -> Msg:
    req = Msg(group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance, rack_id=None,
              rebalance_timeout_ms=30_000 if epoch == 0 else -1, subscribed_topic_names=topics,
              subscribed_topic_regex=None, server_assignor=None,
              topic_partitions=owned if owned is not None else ([] if epoch == 0 else None))
    response = broker.node.group_coordinator.consumer_group_heartbeat(req, 1, "client-1", "/127.0.0.1")
    assert response.error_code == ErrorCode.NONE, response
    return response


def owned_of(response: Msg) -> list[Msg]:
    return [Msg(topic_id=tp.topic_id, partitions=list(tp.partitions)) for tp in response.assignment.topic_partitions]


def record_types(broker: MockBroker) -> list[tuple[int, bool]]:
    """(key type, tombstone?) of every ConsumerGroup* record of __consumer_offsets, in log order."""
    out = []
    topic = broker.cluster.topic(OFFSETS_TOPIC)
    assert topic is not None
    for p in topic.partitions:
        for _, record in p.log.records():
            kind = int.from_bytes(bytes(record.key or b"")[:2], "big")
            if kind >= 3:
                out.append((kind, record.value is None))
    return out


def two_member_group(broker: MockBroker) -> tuple[str, str, int]:
    """A Stable group of two members sharing the 4 partitions of "t": their ids and the epoch."""
    broker.create_topic("t", 4)
    a = hb(broker, "g", "member-a", 0, topics=["t"])
    b = hb(broker, "g", "member-b", 0, topics=["t"])
    a = hb(broker, "g", "member-a", a.member_epoch, owned=owned_of(a))  # gives up what b gets
    a = hb(broker, "g", "member-a", a.member_epoch, owned=owned_of(a))
    b = hb(broker, "g", "member-b", b.member_epoch, owned=[])
    describe = broker.node.group_coordinator.consumer_group_describe(["g"], False)[0]
    assert describe.group_state == "Stable", describe
    return "member-a", "member-b", describe.group_epoch


def describe(broker: MockBroker) -> Any:
    return broker.node.group_coordinator.consumer_group_describe(["g"], False)[0]


def epoch_of(broker: MockBroker, member_id: str) -> int:
    return int(next(m.member_epoch for m in describe(broker).members if m.member_id == member_id))


def commit9(broker: MockBroker, member_id: str, partition: int, offset: int) -> None:
    """An OffsetCommit v9 of a member in its epoch."""
    gc = broker.node.group_coordinator
    g = gc.validate_offset_commit("g", epoch_of(broker, member_id), member_id, None, 9)
    assert gc.commit_offset(g, member_id, "t", partition, offset, -1, "", -1) == ErrorCode.NONE


def test_a_consumer_group_comes_back_with_its_epochs_members_and_assignments(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    a, b, epoch = two_member_group(b1)
    before = describe(b1)
    kinds = {k for k, _ in record_types(b1)}
    assert kinds == {GROUP_METADATA, MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, TARGET_ASSIGNMENT_METADATA,
                     CURRENT_MEMBER_ASSIGNMENT}
    b2 = restart(tmp_path, b1)
    after = describe(b2)
    assert after == before
    assert (after.group_state, after.group_epoch, after.assignment_epoch) == ("Stable", epoch, epoch)
    members = {m.member_id: m for m in after.members}
    assert set(members) == {a, b}
    assigned = sorted(p for m in after.members for tp in m.assignment.topic_partitions for p in tp.partitions)
    assert assigned == [0, 1, 2, 3]
    assert members[a].client_id == "client-1" and members[a].subscribed_topic_names == ["t"]
    # Loading wrote nothing; the members go on heartbeating in their epochs, and a no-op heartbeat writes nothing.
    written = record_types(b2)
    assert hb(b2, "g", a, members[a].member_epoch).member_epoch == members[a].member_epoch
    assert record_types(b2) == written
    # A member may commit in its epoch, as before.
    commit9(b2, a, 0, 7)
    assert b2.committed("g") == {("t", 0): 7}


def test_members_that_do_not_heartbeat_after_the_restart_are_fenced(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    a, b, epoch = two_member_group(b1)
    b2 = restart(tmp_path, b1)
    # a keeps heartbeating, b is silent: after its session timeout, b is fenced and a gets every partition
    for _ in range(3):
        advance(b2, 20_000)
        response = hb(b2, "g", a, epoch_of(b2, a))
    after = describe(b2)
    assert [m.member_id for m in after.members] == [a]
    assert after.group_epoch == epoch + 1
    assert response.member_epoch in (epoch, epoch + 1)
    # the group's records say so after another restart: b's records were tombstoned
    b3 = restart(tmp_path, b2)
    assert [m.member_id for m in describe(b3).members] == [a]
    assert describe(b3).group_epoch == epoch + 1


def test_every_member_silent_leaves_an_empty_group_with_its_offsets(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    a, _, epoch = two_member_group(b1)
    commit9(b1, a, 1, 3)
    b2 = restart(tmp_path, b1)
    advance(b2, SESSION_MS + 1)
    after = describe(b2)
    assert (after.group_state, after.members, after.group_epoch) == ("Empty", [], epoch + 2)
    assert b2.committed("g") == {("t", 1): 3}
    b3 = restart(tmp_path, b2)
    assert (describe(b3).group_state, describe(b3).group_epoch) == ("Empty", epoch + 2)


def test_a_member_that_left_and_a_deleted_group_stay_gone(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    a, b, epoch = two_member_group(b1)
    hb(b1, "g", b, -1)
    b2 = restart(tmp_path, b1)
    assert [m.member_id for m in describe(b2).members] == [a]
    hb(b2, "g", a, -1)
    assert b2.node.group_coordinator.delete_groups(["g"]) == [("g", ErrorCode.NONE)]
    # a's leaving: its three tombstones (current assignment, target, metadata), then the new epoch
    assert record_types(b2)[-6:-2] == [(CURRENT_MEMBER_ASSIGNMENT, True), (TARGET_ASSIGNMENT_MEMBER, True),
                                       (MEMBER_METADATA, True), (GROUP_METADATA, False)]
    # the deletion: the group's own records, the epoch record last
    assert record_types(b2)[-2:] == [(TARGET_ASSIGNMENT_METADATA, True), (GROUP_METADATA, True)]
    b3 = restart(tmp_path, b2)
    assert b3.groups() == []
    assert describe(b3).error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_a_static_member_away_keeps_its_assignment_across_the_restart(tmp_path: Path) -> None:
    b1 = start(tmp_path)
    b1.create_topic("t", 2)
    joined = hb(b1, "g", "m1", 0, topics=["t"], instance="i1")
    hb(b1, "g", "m1", -2, instance="i1")
    b2 = restart(tmp_path, b1)
    [member] = describe(b2).members
    assert (member.member_id, member.instance_id, member.member_epoch) == ("m1", "i1", -2)
    back = hb(b2, "g", "m1-again", 0, topics=["t"], instance="i1")
    assert back.member_epoch == joined.member_epoch
    assert sorted(p for tp in back.assignment.topic_partitions for p in tp.partitions) == [0, 1]
