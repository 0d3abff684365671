"""KIP-848 consumer groups on the coordinator's state: epochs, reconciliation, assignors, errors."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.consumer import ConsumerGroup, ConsumerMember, reconcile
from mockbroker.state.groups.consumer_assignors import AssignMember, range_assign, uniform_assign
from mockbroker.state.groups.states import ConsumerState, MemberState, consumer_group_state
from tests.state.groups_env import GroupEnv, owned, parts
from tests.state.test_groups_offsets import commit

E = ErrorCode


def group(env: GroupEnv, group_id: str = "g") -> ConsumerGroup:
    g = env.coordinator.groups[group_id]
    assert isinstance(g, ConsumerGroup)
    return g


def test_first_member_gets_every_partition_at_epoch_one() -> None:
    env = GroupEnv()
    env.topic("t", 4)
    r = env.cg("g", "m1", 0, topics=["t"])
    assert (r.error_code, r.member_id, r.member_epoch, r.heartbeat_interval_ms) == (0, "m1", 1, 5000)
    assert parts(r.assignment) == [0, 1, 2, 3]
    g = group(env)
    assert (g.group_epoch, g.assignment_epoch, g.state) == (1, 1, ConsumerState.STABLE)


def test_member_joining_a_new_group_with_nothing_subscribed_yet_gets_epoch_one() -> None:
    """Kafka 4 bumps a new group away from epoch 0 on its first heartbeat: a member whose pattern matches
    no topic yet (the Java client's subscribe(Pattern) sends SubscribedTopicNames=[]) is at epoch 1, and a
    matching topic created later reaches it through the next subscription change."""
    env = GroupEnv()
    r = env.cg("g", "m1", 0, topics=[])
    assert (r.error_code, r.member_epoch, parts(r.assignment)) == (0, 1, [])
    assert (group(env).group_epoch, group(env).state) == (1, ConsumerState.STABLE)
    env.topic("pattern-1", 2)
    r = env.cg("g", "m1", 1, topics=["pattern-1"], owned=[])
    assert (r.member_epoch, parts(r.assignment)) == (2, [0, 1])


def test_v0_join_without_a_member_id_gets_one_from_the_broker() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    r = env.cg("g", "", 0, topics=["t"], version=0)
    assert r.error_code == 0 and len(r.member_id) == 22


def test_a_partition_moves_only_after_its_previous_owner_released_it() -> None:
    env = GroupEnv()
    env.topic("t", 4)
    r1 = env.cg("g", "m1", 0, topics=["t"])
    r2 = env.cg("g", "m2", 0, topics=["t"])  # group epoch 2: a new target, half for each
    assert (r2.member_epoch, parts(r2.assignment)) == (2, [])  # its partitions are still m1's: unreleased
    assert group(env).state == ConsumerState.RECONCILING
    assert group(env).members["m2"].state == MemberState.UNRELEASED_PARTITIONS
    h1 = env.cg("g", "m1", 1, owned=owned(r1.assignment))
    keep = parts(h1.assignment)
    assert h1.member_epoch == 1 and len(keep) == 2  # revoke first, still at the old epoch
    assert group(env).members["m1"].state == MemberState.UNREVOKED_PARTITIONS
    assert parts(env.cg("g", "m2", 2, owned=[]).assignment) == []  # not yet: m1 has not let go
    h1 = env.cg("g", "m1", 1, owned=owned(h1.assignment))  # m1 now owns only what it keeps
    assert (h1.member_epoch, h1.assignment) == (2, None)  # an unchanged assignment is not sent again
    h2 = env.cg("g", "m2", 2, owned=[])
    assert h2.member_epoch == 2 and sorted(parts(h2.assignment) + keep) == [0, 1, 2, 3]
    assert group(env).state == ConsumerState.STABLE


def test_leaving_member_frees_its_partitions_for_the_others() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    r1 = env.cg("g", "m1", 0, topics=["t"])
    env.cg("g", "m2", 0, topics=["t"])
    h1 = env.cg("g", "m1", 1, owned=owned(r1.assignment))
    env.cg("g", "m1", 1, owned=owned(h1.assignment))
    h2 = env.cg("g", "m2", 2, owned=[])
    assert len(parts(h2.assignment)) == 1
    left = env.cg("g", "m2", -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "m2", -1)
    assert group(env).group_epoch == 3
    h1 = env.cg("g", "m1", 2, owned=[Msg(topic_id=env.cluster.topics["t"].topic_id, partitions=parts(h1.assignment))])
    assert (h1.member_epoch, parts(h1.assignment)) == (3, [0, 1])


def test_session_timeout_fences_a_silent_member() -> None:
    env = GroupEnv(**{"group.consumer.session.timeout.ms": 45000})
    env.topic("t", 2)
    r1 = env.cg("g", "m1", 0, topics=["t"])
    env.cg("g", "m2", 0, topics=["t"])
    for _ in range(3):
        env.advance(20000)
        env.cg("g", "m1", 1, owned=owned(r1.assignment))
    assert "m2" not in group(env).members
    assert env.cg("g", "m2", 2).error_code == E.UNKNOWN_MEMBER_ID


def test_rebalance_timeout_fences_a_member_that_does_not_revoke() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    env.cg("g", "m1", 0, topics=["t"], rebalance=10000)
    env.cg("g", "m2", 0, topics=["t"])
    h1 = env.cg("g", "m1", 1, owned=None)  # owned unknown: it keeps them, revocation pending
    assert group(env).members["m1"].state == MemberState.UNREVOKED_PARTITIONS
    env.advance(9999)
    assert "m1" in group(env).members
    env.advance(1)
    assert "m1" not in group(env).members
    assert h1.member_epoch == 1


def test_member_epoch_errors() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    r1 = env.cg("g", "m1", 0, topics=["t"])
    assert env.cg("g", "m1", 2).error_code == E.FENCED_MEMBER_EPOCH
    env.cg("g", "m2", 0, topics=["t"])
    h1 = env.cg("g", "m1", 1, owned=owned(r1.assignment))
    env.cg("g", "m1", 1, owned=owned(h1.assignment))  # m1 at epoch 2, previous 1
    late = env.cg("g", "m1", 1, owned=owned(h1.assignment))  # the previous epoch with a subset: our answer was lost
    assert (late.error_code, late.member_epoch) == (0, 2)
    assert env.cg("g", "m1", 1, owned=owned(r1.assignment)).error_code == E.FENCED_MEMBER_EPOCH  # not a subset
    fenced = env.cg("g", "m1", 0, topics=["t"])
    assert fenced.error_code == E.FENCED_MEMBER_EPOCH
    assert env.cg("g", "stranger", 1).error_code == E.UNKNOWN_MEMBER_ID
    assert env.cg("nope", "m1", 1).error_code == E.GROUP_ID_NOT_FOUND


def test_static_member_leaves_for_a_while_and_comes_back_with_its_assignment() -> None:
    env = GroupEnv()
    env.topic("t", 4)
    ra = env.cg("g", "a1", 0, topics=["t"], instance="i-a")
    env.cg("g", "b1", 0, topics=["t"], instance="i-b")
    ha = env.cg("g", "a1", 1, owned=owned(ra.assignment))
    ha = env.cg("g", "a1", 1, owned=owned(ha.assignment))
    hb = env.cg("g", "b1", 2, owned=[])
    epoch = group(env).group_epoch
    assert len(parts(hb.assignment)) == 2
    gone = env.cg("g", "b1", -2, instance="i-b")
    assert (gone.error_code, gone.member_epoch) == (0, -2)
    assert group(env).group_epoch == epoch  # no rebalance
    back = env.cg("g", "b1", 0, topics=["t"], instance="i-b")
    assert (back.error_code, back.member_epoch, parts(back.assignment)) == (0, epoch, parts(hb.assignment))
    # i-b is in use again: another process with that instance id may not join.
    assert env.cg("g", "b2", 0, topics=["t"], instance="i-b").error_code == E.UNRELEASED_INSTANCE_ID


def test_static_member_restarted_under_a_new_member_id_takes_over_its_assignment() -> None:
    env = GroupEnv()
    env.topic("t", 4)
    ra = env.cg("g", "a1", 0, topics=["t"], instance="i-a")
    env.cg("g", "b1", 0, topics=["t"], instance="i-b")
    ha = env.cg("g", "a1", 1, owned=owned(ra.assignment))
    env.cg("g", "a1", 1, owned=owned(ha.assignment))
    hb = env.cg("g", "b1", 2, owned=[])
    epoch = group(env).group_epoch
    env.cg("g", "b1", -2, instance="i-b")
    back = env.cg("g", "b2", 0, topics=["t"], instance="i-b")
    assert (back.error_code, back.member_epoch, parts(back.assignment)) == (0, epoch, parts(hb.assignment))
    assert group(env).group_epoch == epoch and "b1" not in group(env).members
    assert env.cg("g", "b1", 2, instance="i-b").error_code == E.FENCED_INSTANCE_ID
    assert env.cg("g", "x", 2, instance="i-unknown").error_code == E.UNKNOWN_MEMBER_ID


def test_static_member_that_never_comes_back_is_fenced_by_its_session() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    env.cg("g", "a1", 0, topics=["t"], instance="i-a")
    env.cg("g", "a1", -2, instance="i-a")
    env.advance(45000)
    assert group(env).members == {}
    assert group(env).state == ConsumerState.EMPTY


@pytest.mark.parametrize("req,code,message", [
    ({"member_id": ""}, E.INVALID_REQUEST, "MemberId can't be empty."),
    ({"group_id": ""}, E.INVALID_REQUEST, "GroupId can't be empty."),
    ({"instance_id": ""}, E.INVALID_REQUEST, "InstanceId can't be empty."),
    ({"rack_id": ""}, E.INVALID_REQUEST, "RackId can't be empty."),
    ({"rebalance_timeout_ms": -1}, E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."),
    ({"topic_partitions": None}, E.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
    ({"subscribed_topic_names": None}, E.INVALID_REQUEST,
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    ({"member_epoch": -3}, E.INVALID_REQUEST, "MemberEpoch is invalid."),
    ({"member_epoch": -2}, E.INVALID_REQUEST, "InstanceId can't be null."),
    ({"server_assignor": "sticky"}, E.UNSUPPORTED_ASSIGNOR,
     "ServerAssignor sticky is not supported. Supported assignors: uniform, range."),
    ({"subscribed_topic_regex": "("}, E.INVALID_REGULAR_EXPRESSION, None),
])
def test_invalid_heartbeats(req: dict[str, object], code: ErrorCode, message: str | None) -> None:
    env = GroupEnv()
    base = Msg(group_id="g", member_id="m", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=1000,
               subscribed_topic_names=["t"], subscribed_topic_regex=None, server_assignor=None, topic_partitions=[])
    base.update(req)
    r = env.coordinator.consumer_group_heartbeat(base, 1, "c", "/h")
    assert r.error_code == code
    if message is not None:
        assert r.error_message == message
    assert "g" not in env.coordinator.groups


def test_regex_subscription_follows_matching_topics() -> None:
    env = GroupEnv()
    env.topic("orders-eu", 1)
    env.topic("payments", 1)
    r = env.cg("g", "m1", 0, topics=None, regex="orders-.*")
    assert (r.member_epoch, len(parts(r.assignment))) == (1, 1)
    env.topic("orders-us", 2)
    h = env.cg("g", "m1", 1, owned=owned(r.assignment))
    assert h.member_epoch == 2 and len(parts(h.assignment)) == 3
    assert group(env).is_subscribed_to_topic("orders-us") and not group(env).is_subscribed_to_topic("payments")


def test_new_partitions_bump_the_group_epoch() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    r = env.cg("g", "m1", 0, topics=["t"])
    env.cluster.create_partitions("t", 3)
    h = env.cg("g", "m1", 1, owned=owned(r.assignment))
    assert (h.member_epoch, parts(h.assignment)) == (2, [0, 1, 2])


def test_range_assignor_chosen_by_the_members() -> None:
    env = GroupEnv()
    env.topic("t", 3)
    env.cg("g", "m1", 0, topics=["t"], assignor="range")
    assert group(env).preferred_assignor() == "range"
    [d] = env.coordinator.consumer_group_describe(["g"], False)
    assert d.assignor_name == "range"


def test_classic_and_consumer_groups_do_not_mix() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    env.stable_group("classic")
    r = env.cg("classic", "m1", 0, topics=["t"])
    assert (r.error_code, r.error_message) == (E.GROUP_ID_NOT_FOUND, "Group classic is not a consumer group.")
    env.cg("modern", "m1", 0, topics=["t"])
    assert env.join("modern").code == E.INCONSISTENT_GROUP_PROTOCOL


def test_empty_groups_change_protocol() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    env.new_member("g")  # an empty classic group
    assert env.cg("g", "m1", 0, topics=["t"]).error_code == 0
    env.cg("g", "m1", -1)
    assert env.join("g").code == E.MEMBER_ID_REQUIRED
    assert env.coordinator.groups["g"].group_type == "classic"


def test_offset_commit_and_fetch_of_consumer_group_members() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    env.cg("g", "m1", 0, topics=["t"])
    assert commit(env, "g", 1, "m1", version=9) == E.NONE
    assert commit(env, "g", 0, "m1", version=9) == E.STALE_MEMBER_EPOCH
    assert commit(env, "g", 1, "m1", version=8) == E.UNSUPPORTED_VERSION
    assert commit(env, "g", 1, "stranger", version=9) == E.UNKNOWN_MEMBER_ID
    assert commit(env, "g", -1, "", version=9) == E.UNKNOWN_MEMBER_ID  # simple commits only into an empty group
    assert env.coordinator.validate_offset_fetch("g", "m1", 1) is True
    assert env.coordinator.validate_offset_fetch("g", None, -1) is True
    for member, epoch, code in [("m1", 0, E.STALE_MEMBER_EPOCH), ("stranger", 1, E.UNKNOWN_MEMBER_ID)]:
        with pytest.raises(Exception) as exc:
            env.coordinator.validate_offset_fetch("g", member, epoch)
        assert exc.value.code == code  # type: ignore[attr-defined]


def test_offset_delete_of_a_consumer_group_refuses_subscribed_topics() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    env.topic("old", 1)
    commit(env, "g", topic="old")
    env.cg("g", "m1", 0, topics=["t"])
    assert env.coordinator.delete_offsets("g", [("t", 0), ("old", 0)]) == [E.GROUP_SUBSCRIBED_TO_TOPIC, E.NONE]
    assert env.coordinator.delete_groups(["g"]) == [("g", E.NON_EMPTY_GROUP)]


def test_describe_and_summary() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    env.cg("g", "m1", 0, topics=["t"], instance="i1")
    [d] = env.coordinator.consumer_group_describe(["g"], True)
    assert (d.group_state, d.group_epoch, d.assignment_epoch, d.assignor_name) == ("Stable", 1, 1, "uniform")
    [m] = d.members
    assert (m.member_id, m.instance_id, m.member_epoch, m.subscribed_topic_names, m.member_type) == (
        "m1", "i1", 1, ["t"], 1)
    assert [(tp.topic_name, tp.partitions) for tp in m.assignment.topic_partitions] == [("t", [0, 1])]
    assert [(tp.topic_name, tp.partitions) for tp in m.target_assignment.topic_partitions] == [("t", [0, 1])]
    [missing, classic_like] = env.coordinator.consumer_group_describe(["nope", ""], False)
    assert (missing.error_code, missing.error_message) == (E.GROUP_ID_NOT_FOUND, "Group nope not found.")
    assert classic_like.error_code == E.INVALID_GROUP_ID
    [s] = env.coordinator.summaries()
    assert (s.group_type, s.state, s.generation_or_epoch) == ("consumer", "Stable", 1)
    assert [(mm.member_id, mm.assignment, mm.member_epoch) for mm in s.members] == [("m1", {"t": [0, 1]}, 1)]
    listed = env.coordinator.list_groups([], ["consumer"])
    assert [(g.group_id, g.protocol_type, g.group_type) for g in listed] == [("g", "consumer", "consumer")]


# -- the pieces ------------------------------------------------------------------------------------------

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def test_group_state_function() -> None:
    assert consumer_group_state(0, 5, 5, True) == ConsumerState.EMPTY
    assert consumer_group_state(2, 6, 5, True) == ConsumerState.ASSIGNING
    assert consumer_group_state(2, 6, 6, False) == ConsumerState.RECONCILING
    assert consumer_group_state(2, 6, 6, True) == ConsumerState.STABLE


def test_uniform_assignor_balances_and_keeps_what_it_can() -> None:
    members = [AssignMember("a", None, {T1}), AssignMember("b", None, {T1}), AssignMember("c", None, {T1})]
    first = uniform_assign(members[:2], {T1: 6}, {})
    assert sorted(len(a[T1]) for a in first.values()) == [3, 3]
    second = uniform_assign(members, {T1: 6}, first)
    assert sorted(len(a.get(T1, ())) for a in second.values()) == [2, 2, 2]
    for m in ("a", "b"):
        assert second[m][T1] <= first[m][T1]  # sticky: the old members keep part of what they had
    assert set().union(*(a.get(T1, set()) for a in second.values())) == set(range(6))


def test_uniform_assignor_with_different_subscriptions() -> None:
    members = [AssignMember("a", None, {T1}), AssignMember("b", None, {T1, T2})]
    out = uniform_assign(members, {T1: 2, T2: 2}, {})
    assert out["b"].get(T2) == {0, 1} and len(out["a"][T1]) + len(out["b"].get(T1, set())) == 2
    sizes = [sum(len(p) for p in a.values()) for a in out.values()]
    assert max(sizes) - min(sizes) <= 1


def test_range_assignor_co_partitions() -> None:
    members = [AssignMember("m2", None, {T1, T2}), AssignMember("m1", None, {T1, T2})]
    out = range_assign(members, {T1: 3, T2: 3}, {})
    assert out["m1"] == {T1: {0, 1}, T2: {0, 1}} and out["m2"] == {T1: {2}, T2: {2}}
    static = range_assign([AssignMember("x", "i2", {T1}), AssignMember("y", "i1", {T1})], {T1: 2}, {})
    assert static == {"y": {T1: {0}}, "x": {T1: {1}}}


def test_reconcile_revokes_before_it_assigns() -> None:
    m = ConsumerMember("m", member_epoch=1, assigned={T1: {0, 1}})
    held = {(T1, 2): 7}
    step = reconcile(m, 2, {T1: {1, 2}}, [Msg(topic_id=T1, partitions=[0, 1])], lambda t, p: held.get((t, p), -1))
    assert (step.state, step.member_epoch, step.assigned, step.pending_revocation) == (
        MemberState.UNREVOKED_PARTITIONS, 1, {T1: {1}}, {T1: {0}})
    step = reconcile(step, 2, {T1: {1, 2}}, [Msg(topic_id=T1, partitions=[1])], lambda t, p: held.get((t, p), -1))
    assert (step.state, step.member_epoch, step.assigned) == (MemberState.UNRELEASED_PARTITIONS, 2, {T1: {1}})
    step = reconcile(step, 2, {T1: {1, 2}}, [Msg(topic_id=T1, partitions=[1])], lambda t, p: -1)
    assert (step.state, step.member_epoch, step.assigned) == (MemberState.STABLE, 2, {T1: {1, 2}})
