"""The classic group protocol on the coordinator's state objects, without sockets, on a frozen clock."""

from __future__ import annotations

import pytest

from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.primitives import Writer
from mockbroker.state.groups.classic import ClassicGroup
from mockbroker.state.groups.classic_members import parse_subscription_topics
from mockbroker.state.groups.states import (
    CLASSIC_TRANSITIONS,
    ClassicEvent,
    ClassicState,
    can_rebalance,
    next_state,
)
from tests.state.groups_env import GroupEnv

E = ErrorCode


def state(env: GroupEnv, group: str) -> ClassicState:
    g = env.coordinator.groups[group]
    assert isinstance(g, ClassicGroup)
    return g.state


def subscription(*topics: str) -> bytes:
    w = Writer()
    w.int16(0)
    w.int32(len(topics))
    for t in topics:
        w.string(t)
    return bytes(w.getvalue())


# -- the table ----------------------------------------------------------------------------------------


def test_state_table_allows_kafkas_transitions_only() -> None:
    assert next_state(ClassicState.EMPTY, ClassicEvent.PREPARE_REBALANCE) == ClassicState.PREPARING_REBALANCE
    assert next_state(ClassicState.PREPARING_REBALANCE, ClassicEvent.JOIN_COMPLETE) == ClassicState.COMPLETING_REBALANCE
    assert next_state(ClassicState.PREPARING_REBALANCE, ClassicEvent.JOIN_COMPLETE_EMPTY) == ClassicState.EMPTY
    assert next_state(ClassicState.COMPLETING_REBALANCE, ClassicEvent.ASSIGNMENT_SET) == ClassicState.STABLE
    assert next_state(ClassicState.STABLE, ClassicEvent.PREPARE_REBALANCE) == ClassicState.PREPARING_REBALANCE
    for s in ClassicState:
        assert next_state(s, ClassicEvent.DELETE) == ClassicState.DEAD
    with pytest.raises(RuntimeError):
        next_state(ClassicState.EMPTY, ClassicEvent.ASSIGNMENT_SET)
    with pytest.raises(RuntimeError):
        next_state(ClassicState.DEAD, ClassicEvent.PREPARE_REBALANCE)


def test_only_empty_completing_and_stable_groups_can_start_a_rebalance() -> None:
    assert {s for s in ClassicState if can_rebalance(s)} == {
        ClassicState.EMPTY, ClassicState.COMPLETING_REBALANCE, ClassicState.STABLE}
    assert set(CLASSIC_TRANSITIONS) == set(ClassicState)


# -- JoinGroup ------------------------------------------------------------------------------------------


def test_join_without_member_id_from_v4_gets_member_id_required_with_an_id_to_use() -> None:
    env = GroupEnv()
    reply = env.join("g", client_id="app")
    assert reply.code == E.MEMBER_ID_REQUIRED
    assert reply.value is not None and reply.value.member_id.startswith("app-")
    assert state(env, "g") == ClassicState.EMPTY


def test_join_without_member_id_before_v4_joins_at_once() -> None:
    env = GroupEnv()
    reply = env.join("g", version=3)
    assert reply.value is None  # parked: the initial rebalance delay
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE
    env.settle()
    assert reply.code == 0 and reply.value is not None and reply.value.generation_id == 1


def test_first_rebalance_waits_for_the_initial_delay() -> None:
    env = GroupEnv()
    r = env.join("g", env.new_member("g"))
    env.advance(2999)
    assert r.value is None
    env.advance(1)
    assert r.code == 0


def test_first_rebalance_elects_the_first_member_leader() -> None:
    env = GroupEnv()
    a = env.new_member("g", client_id="a")
    b = env.new_member("g", client_id="b")
    ra, rb = env.join("g", a), env.join("g", b)
    env.advance(5999)  # b came during the delay: one more delay
    assert ra.value is None and rb.value is None
    env.advance(1)
    assert ra.value is not None and rb.value is not None
    assert (ra.value.generation_id, ra.value.leader, ra.value.protocol_name) == (1, a, "range")
    assert sorted(m.member_id for m in ra.value.members) == sorted([a, b])  # the leader gets the members
    assert rb.value.members == [] and rb.value.leader == a
    assert state(env, "g") == ClassicState.COMPLETING_REBALANCE


def test_initial_delay_is_extended_while_members_keep_joining_up_to_the_rebalance_timeout() -> None:
    env = GroupEnv()
    a = env.join("g", version=3, rebalance=7000)
    env.advance(2000)
    env.join("g", version=3, rebalance=7000)
    env.advance(1000)  # 3000: a member came within the delay: wait min(3000, 4000) more
    assert a.value is None
    env.advance(2999)
    assert a.value is None
    env.advance(1)
    assert a.code == 0


@pytest.mark.parametrize("session", [5999, 1800001])
def test_session_timeout_outside_the_broker_bounds_is_invalid(session: int) -> None:
    env = GroupEnv()
    assert env.join("g", session=session).code == E.INVALID_SESSION_TIMEOUT


def test_session_timeout_bounds_come_from_the_broker_config() -> None:
    env = GroupEnv(**{"group.min.session.timeout.ms": 100})
    assert env.join("g", session=100).code == E.MEMBER_ID_REQUIRED


def test_empty_group_id_is_invalid() -> None:
    assert GroupEnv().join("").code == E.INVALID_GROUP_ID


def test_join_with_a_member_id_to_an_unknown_group_is_unknown_member_id() -> None:
    assert GroupEnv().join("nope", "someone").code == E.UNKNOWN_MEMBER_ID


def test_group_picks_the_protocol_all_members_support_with_the_most_votes() -> None:
    env = GroupEnv()
    members = [
        env.new_member("g", protocols=[("roundrobin", b"1"), ("range", b"1")]),
        env.new_member("g", protocols=[("range", b"2"), ("roundrobin", b"2")]),
        env.new_member("g", protocols=[("range", b"3"), ("roundrobin", b"3"), ("sticky", b"3")]),
    ]
    protos = [[("roundrobin", b"1"), ("range", b"1")], [("range", b"2"), ("roundrobin", b"2")],
              [("range", b"3"), ("roundrobin", b"3"), ("sticky", b"3")]]
    replies = [env.join("g", m, protocols=p) for m, p in zip(members, protos, strict=True)]
    env.settle()
    assert {r.value.protocol_name for r in replies if r.value} == {"range"}
    leader = next(r.value for r in replies if r.value and r.value.members)
    assert sorted(m.metadata for m in leader.members) == [b"1", b"2", b"3"]  # the chosen protocol's metadata


def test_member_without_a_common_protocol_is_inconsistent() -> None:
    env = GroupEnv()
    env.stable_group("g")
    assert env.join("g", protocols=[("roundrobin", b"")]).code == E.INCONSISTENT_GROUP_PROTOCOL
    assert env.join("g", protocol_type="connect").code == E.INCONSISTENT_GROUP_PROTOCOL


def test_join_with_no_protocols_to_an_empty_group_is_inconsistent() -> None:
    assert GroupEnv().join("g", protocols=[]).code == E.INCONSISTENT_GROUP_PROTOCOL


def test_new_member_triggers_a_rebalance_that_waits_for_the_known_members() -> None:
    env = GroupEnv()
    (a,), gen = env.stable_group("g")
    b = env.new_member("g", client_id="b")
    rb = env.join("g", b)
    assert rb.value is None and state(env, "g") == ClassicState.PREPARING_REBALANCE
    assert env.heartbeat("g", a, gen) == E.REBALANCE_IN_PROGRESS
    ra = env.join("g", a)
    assert ra.code == 0 and rb.code == 0
    assert ra.values[0].generation_id == rb.values[0].generation_id == gen + 1


def test_member_that_does_not_rejoin_within_the_rebalance_timeout_is_removed() -> None:
    env = GroupEnv()
    (a, b), gen = env.stable_group("g", 2)
    rejoin = env.join("g", a)  # a rejoins (the leader: a rebalance); b heartbeats but never rejoins
    for _ in range(5):
        env.advance(5000)
        assert env.heartbeat("g", b, gen) == E.REBALANCE_IN_PROGRESS
    assert rejoin.value is None
    env.advance(5000)  # 30 s: the group's rebalance timeout (the largest of its members')
    assert rejoin.code == 0 and rejoin.value is not None and rejoin.value.generation_id == gen + 1
    assert [m.member_id for m in rejoin.value.members] == [a]
    assert env.heartbeat("g", b, gen) == E.UNKNOWN_MEMBER_ID


def test_follower_rejoining_with_the_same_metadata_gets_the_current_generation() -> None:
    env = GroupEnv()
    (a, b), gen = env.stable_group("g", 2)
    r = env.join("g", b)
    assert (r.code, r.value.generation_id, r.value.leader, r.value.members) == (0, gen, a, [])
    assert state(env, "g") == ClassicState.STABLE


def test_follower_rejoining_with_new_metadata_triggers_a_rebalance() -> None:
    env = GroupEnv()
    (_a, b), _gen = env.stable_group("g", 2)
    assert env.join("g", b, protocols=[("range", b"new")]).value is None
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE


def test_pending_member_that_never_comes_back_expires_with_its_session() -> None:
    env = GroupEnv()
    (a,), gen = env.stable_group("g")
    pending = env.new_member("g", session=6000)
    env.advance(6000)
    assert env.join("g", pending).code == E.UNKNOWN_MEMBER_ID
    assert env.heartbeat("g", a, gen) == E.NONE  # the pending member expiring does not disturb the group


# -- SyncGroup ------------------------------------------------------------------------------------------


def test_leader_sync_hands_every_member_its_assignment_and_the_group_becomes_stable() -> None:
    env = GroupEnv()
    a, b = env.new_member("g"), env.new_member("g")
    ra, _ = env.join("g", a), env.join("g", b)
    env.settle()
    gen = ra.value.generation_id
    follower = env.sync("g", b, gen)
    assert follower.value is None  # parked until the leader's assignment
    leader = env.sync("g", a, gen, {a: b"for-a", b: b"for-b"})
    assert (leader.code, leader.value.assignment) == (0, b"for-a")
    assert (follower.code, follower.values[0].assignment, follower.values[0].protocol_name) == (0, b"for-b", "range")
    assert state(env, "g") == ClassicState.STABLE
    again = env.sync("g", b, gen)
    assert (again.code, again.value.assignment) == (0, b"for-b")


def test_member_left_out_of_the_leaders_assignment_gets_an_empty_one() -> None:
    env = GroupEnv()
    a, b = env.new_member("g"), env.new_member("g")
    ra, _ = env.join("g", a), env.join("g", b)
    env.settle()
    gen = ra.value.generation_id
    follower = env.sync("g", b, gen)
    env.sync("g", a, gen, {a: b"x"})
    assert (follower.code, follower.value.assignment) == (0, b"")


def test_sync_errors() -> None:
    env = GroupEnv()
    (a, b), gen = env.stable_group("g", 2)
    assert env.sync("g", a, gen + 1).code == E.ILLEGAL_GENERATION
    assert env.sync("g", "stranger", gen).code == E.UNKNOWN_MEMBER_ID
    assert env.sync("nope", a, gen).code == E.UNKNOWN_MEMBER_ID
    assert env.sync("", a, gen).code == E.INVALID_GROUP_ID
    assert env.sync("g", a, gen, protocol_type="connect").code == E.INCONSISTENT_GROUP_PROTOCOL
    assert env.sync("g", a, gen, protocol_type="consumer", protocol_name="roundrobin").code == \
        E.INCONSISTENT_GROUP_PROTOCOL
    assert env.sync("g", a, gen, protocol_type="consumer", protocol_name="range").code == 0
    env.join("g", a)  # the leader rejoins: a rebalance
    assert env.sync("g", b, gen).code == E.REBALANCE_IN_PROGRESS


def test_parked_sync_is_told_rebalance_in_progress_when_a_new_member_joins() -> None:
    env = GroupEnv()
    a, b = env.new_member("g"), env.new_member("g")
    ra, _ = env.join("g", a), env.join("g", b)
    env.settle()
    gen = ra.value.generation_id
    follower = env.sync("g", b, gen)
    env.join("g", env.new_member("g"))
    assert follower.code == E.REBALANCE_IN_PROGRESS
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout() -> None:
    env = GroupEnv()
    a, b = env.new_member("g", rebalance=8000), env.new_member("g", rebalance=8000)
    ra, _ = env.join("g", a, rebalance=8000), env.join("g", b, rebalance=8000)
    env.settle()
    gen = ra.value.generation_id
    env.sync("g", a, gen, {a: b"x", b: b"y"})
    # b never syncs... the group is Stable, but b is still pending: removed after 8 s, and a rebalance.
    env.advance(7999)
    assert state(env, "g") == ClassicState.STABLE
    env.advance(1)
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE
    assert env.heartbeat("g", b, gen) == E.UNKNOWN_MEMBER_ID


# -- Heartbeat, sessions, LeaveGroup ---------------------------------------------------------------------


def test_heartbeat_codes() -> None:
    env = GroupEnv()
    (a,), gen = env.stable_group("g")
    assert env.heartbeat("g", a, gen) == E.NONE
    assert env.heartbeat("g", a, gen + 1) == E.ILLEGAL_GENERATION
    assert env.heartbeat("g", "stranger", gen) == E.UNKNOWN_MEMBER_ID
    assert env.heartbeat("nope", a, gen) == E.UNKNOWN_MEMBER_ID
    assert env.heartbeat("", a, gen) == E.INVALID_GROUP_ID
    assert env.heartbeat("g", a, gen, instance="not-static") == E.UNKNOWN_MEMBER_ID


def test_heartbeat_in_completing_rebalance_is_fine() -> None:
    env = GroupEnv()
    a = env.new_member("g")
    ra = env.join("g", a)
    env.settle()
    assert env.heartbeat("g", a, ra.value.generation_id) == E.NONE
    assert state(env, "g") == ClassicState.COMPLETING_REBALANCE


def test_member_without_heartbeats_expires_after_its_session_and_the_group_rebalances() -> None:
    env = GroupEnv()
    (a, b), gen = env.stable_group("g", 2)
    for _ in range(2):
        env.advance(4000)
        assert env.heartbeat("g", a, gen) == E.NONE  # a keeps its session alive, b does not
    env.advance(1999)
    assert state(env, "g") == ClassicState.STABLE
    env.advance(1)  # b's 10 s session is over
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE
    assert env.heartbeat("g", b, gen) == E.UNKNOWN_MEMBER_ID
    assert env.heartbeat("g", a, gen) == E.REBALANCE_IN_PROGRESS
    r = env.join("g", a)
    assert r.code == 0 and [m.member_id for m in r.value.members] == [a]


def test_offset_commit_keeps_a_session_alive() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    (a,), gen = env.stable_group("g")
    for _ in range(3):
        env.advance(6000)
        group = env.coordinator.validate_offset_commit("g", gen, a, None, 8)
        env.coordinator.commit_offset(group, a, "t", 0, 1, -1, None)
        env.coordinator.after_offset_commit(group, a)
    assert env.heartbeat("g", a, gen) == E.NONE


def test_last_member_leaving_empties_the_group() -> None:
    env = GroupEnv()
    (a, b), gen = env.stable_group("g", 2)
    assert env.coordinator.leave_group("g", [(b, None)]) == (E.NONE, [E.NONE])
    assert state(env, "g") == ClassicState.PREPARING_REBALANCE
    assert env.join("g", a).code == 0  # the rebalance completes with a alone
    assert env.coordinator.leave_group("g", [(a, None)]) == (E.NONE, [E.NONE])
    assert state(env, "g") == ClassicState.EMPTY
    assert env.coordinator.classic_group("g").generation_id == gen + 2  # type: ignore[union-attr]


def test_leave_errors() -> None:
    env = GroupEnv()
    (a,), _ = env.stable_group("g")
    assert env.coordinator.leave_group("g", [("stranger", None), (a, "not-its-instance")]) == (
        E.NONE, [E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID])
    assert env.coordinator.leave_group("nope", [(a, None)]) == (E.NONE, [E.UNKNOWN_MEMBER_ID])
    assert env.coordinator.leave_group("", [(a, None)]) == (E.INVALID_GROUP_ID, [])
    assert env.coordinator.leave_group("g", [("", "unknown-instance")]) == (E.NONE, [E.UNKNOWN_MEMBER_ID])


def test_leaving_member_with_a_parked_join_is_answered_unknown_member_id() -> None:
    env = GroupEnv()
    (a, b), _ = env.stable_group("g", 2)
    parked = env.join("g", a)  # the leader rejoins and waits for b
    assert parked.value is None
    env.coordinator.leave_group("g", [(a, None)])
    assert parked.code == E.UNKNOWN_MEMBER_ID


# -- static membership -----------------------------------------------------------------------------------


def test_static_member_rejoining_with_the_same_protocols_keeps_its_assignment_without_a_rebalance() -> None:
    env = GroupEnv()
    ra, rb = env.join("g", instance="i-a", client_id="a"), env.join("g", instance="i-b", client_id="b")
    env.settle()
    a, b = ra.value.member_id, rb.value.member_id
    gen = ra.value.generation_id
    env.sync("g", a, gen, {a: b"A", b: b"B"}, instance="i-a")
    env.sync("g", b, gen, instance="i-b")
    again = env.join("g", instance="i-b", client_id="b")  # b restarted: no member id, same instance
    assert again.code == 0
    new_b = again.value.member_id
    assert new_b != b and again.value.generation_id == gen and again.value.members == []
    assert state(env, "g") == ClassicState.STABLE
    assert env.sync("g", new_b, gen, instance="i-b").value.assignment == b"B"
    assert env.heartbeat("g", b, gen, instance="i-b") == E.FENCED_INSTANCE_ID
    assert env.heartbeat("g", new_b, gen, instance="i-b") == E.NONE


def test_static_leader_rejoining_gets_the_members_and_skips_the_assignment_from_v9() -> None:
    env = GroupEnv()
    ra = env.join("g", instance="i-a")
    env.settle()
    a, gen = ra.value.member_id, ra.value.generation_id
    env.sync("g", a, gen, {a: b"A"}, instance="i-a")
    again = env.join("g", instance="i-a")
    assert again.value.skip_assignment is True and again.value.leader == again.value.member_id
    assert [m.group_instance_id for m in again.value.members] == ["i-a"]
    old = env.join("g", instance="i-a", version=8)
    assert old.value.skip_assignment is False and old.value.members == []


def test_static_member_rejoining_with_other_protocols_triggers_a_rebalance() -> None:
    env = GroupEnv()
    ra = env.join("g", instance="i-a")
    env.settle()
    a, gen = ra.value.member_id, ra.value.generation_id
    env.sync("g", a, gen, {a: b"A"}, instance="i-a")
    again = env.join("g", instance="i-a", protocols=[("roundrobin", b""), ("range", b"")])
    # Its first choice changes the group's protocol: a new generation (at once: it is the only member).
    assert again.code == 0
    assert (again.value.generation_id, again.value.protocol_name) == (gen + 1, "roundrobin")
    assert state(env, "g") == ClassicState.COMPLETING_REBALANCE


def test_static_member_with_a_stale_member_id_is_fenced() -> None:
    env = GroupEnv()
    ra = env.join("g", instance="i-a")
    env.settle()
    a, gen = ra.value.member_id, ra.value.generation_id
    env.join("g", instance="i-a")  # a second process with the same instance id replaces the first
    assert env.join("g", a, instance="i-a").code == E.FENCED_INSTANCE_ID
    assert env.sync("g", a, gen, instance="i-a").code == E.FENCED_INSTANCE_ID


def test_static_member_is_removed_by_instance_id_alone() -> None:
    env = GroupEnv()
    ra = env.join("g", instance="i-a")
    env.settle()
    assert env.coordinator.leave_group("g", [("", "i-a")]) == (E.NONE, [E.NONE])
    assert env.heartbeat("g", ra.value.member_id, ra.value.generation_id, "i-a") == E.UNKNOWN_MEMBER_ID


def test_static_member_that_does_not_rejoin_stays_in_the_group_through_a_rebalance() -> None:
    env = GroupEnv()
    ra, rb = env.join("g", instance="i-a", rebalance=5000), env.join("g", instance="i-b", rebalance=5000)
    env.settle()
    a = ra.value.member_id
    env.sync("g", a, ra.value.generation_id, {}, instance="i-a")
    rejoin = env.join("g", a, instance="i-a", rebalance=5000)
    env.advance(5000)
    assert rejoin.code == 0
    assert sorted(m.group_instance_id for m in rejoin.value.members) == ["i-a", "i-b"]
    assert rb.code == 0


# -- describe, list, delete ------------------------------------------------------------------------------


def test_describe_shows_protocol_and_metadata_only_when_stable() -> None:
    env = GroupEnv()
    (a,), gen = env.stable_group("g")
    [d] = env.coordinator.describe_groups(["g"], 5, False)
    assert (d.group_state, d.protocol_type, d.protocol_data) == ("Stable", "consumer", "range")
    assert [(m.member_id, m.member_metadata, m.member_assignment, m.client_host) for m in d.members] == [
        (a, b"range-meta", a.encode(), "/127.0.0.1")]
    env.join("g", a)
    env.join("g", env.new_member("g"))
    [d] = env.coordinator.describe_groups(["g"], 5, False)
    assert (d.group_state, d.protocol_data) == ("PreparingRebalance", "")
    assert all(m.member_metadata == b"" for m in d.members)


def test_describe_unknown_group_is_dead_and_from_v6_group_id_not_found() -> None:
    env = GroupEnv()
    [old] = env.coordinator.describe_groups(["nope"], 5, False)
    assert (old.error_code, old.group_state, old.error_message) == (0, "Dead", None)
    [new] = env.coordinator.describe_groups(["nope"], 6, False)
    assert (new.error_code, new.group_state, new.error_message) == (E.GROUP_ID_NOT_FOUND, "Dead",
                                                                    "Group nope not found.")


def test_list_groups_filters_by_state_and_type() -> None:
    env = GroupEnv()
    env.stable_group("stable")
    env.new_member("empty")
    listed = {g.group_id: (g.group_state, g.group_type, g.protocol_type) for g in env.coordinator.list_groups([], [])}
    assert listed == {"stable": ("Stable", "classic", "consumer"), "empty": ("Empty", "classic", "")}
    assert [g.group_id for g in env.coordinator.list_groups(["STABLE"], [])] == ["stable"]
    assert [g.group_id for g in env.coordinator.list_groups([], ["Classic"])] == ["stable", "empty"]
    assert env.coordinator.list_groups([], ["consumer"]) == []
    assert env.coordinator.list_groups([], ["bogus"]) == []


def test_delete_groups() -> None:
    env = GroupEnv()
    env.stable_group("busy")
    env.new_member("idle")
    assert env.coordinator.delete_groups(["busy", "idle", "nope", "idle"]) == [
        ("busy", E.NON_EMPTY_GROUP), ("idle", E.NONE), ("nope", E.GROUP_ID_NOT_FOUND)]
    assert "idle" not in env.coordinator.groups


def test_subscribed_topics_come_from_the_consumer_protocol_metadata() -> None:
    assert parse_subscription_topics(subscription("a", "b")) == ["a", "b"]
    env = GroupEnv()
    m = env.new_member("g", protocols=[("range", subscription("orders"))])
    env.join("g", m, protocols=[("range", subscription("orders"))])
    env.settle()
    g = env.coordinator.groups["g"]
    assert g.is_subscribed_to_topic("orders") and not g.is_subscribed_to_topic("other")


def test_summary_decodes_consumer_protocol_assignments() -> None:
    env = GroupEnv()
    m = env.new_member("g")
    r = env.join("g", m)
    env.settle()
    w = Writer()
    w.int16(0)
    w.int32(1)
    w.string("orders")
    w.int32(2)
    w.int32(3)
    w.int32(1)
    w.bytes_(b"")
    env.sync("g", m, r.value.generation_id, {m: bytes(w.getvalue())})
    [summary] = env.coordinator.summaries()
    assert (summary.state, summary.generation_or_epoch, summary.leader) == ("Stable", 1, m)
    assert summary.members[0].assignment == {"orders": [1, 3]}


def test_validate_member_errors_are_kafka_errors() -> None:
    env = GroupEnv()
    (a,), _ = env.stable_group("g")
    g = env.coordinator.groups["g"]
    assert isinstance(g, ClassicGroup)
    with pytest.raises(KafkaError) as exc:
        g.validate_member("x", None)
    assert exc.value.code == E.UNKNOWN_MEMBER_ID
