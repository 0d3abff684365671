"""Committed offsets on the coordinator's state: who may commit, what is kept, when it expires."""

from __future__ import annotations

import pytest

from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.state.groups.classic import ClassicGroup
from mockbroker.state.groups.offsets import CommittedOffset, OffsetStore
from tests.state.groups_env import GroupEnv
from tests.state.test_groups_classic import subscription

E = ErrorCode
MINUTE = 60_000


def commit(env: GroupEnv, group: str, generation: int = -1, member: str = "", topic: str = "t", partition: int = 0,
           offset: int = 1, metadata: str | None = None, version: int = 8, retention: int = -1) -> int:
    try:
        g = env.coordinator.validate_offset_commit(group, generation, member, None, version)
    except KafkaError as exc:
        return int(exc.code)
    code = env.coordinator.commit_offset(g, member, topic, partition, offset, -1, metadata, retention)
    env.coordinator.after_offset_commit(g, member)
    return int(code)


def test_simple_commit_creates_a_protocol_less_empty_group() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    assert commit(env, "spark", offset=42, metadata="meta") == E.NONE
    g = env.coordinator.groups["spark"]
    assert isinstance(g, ClassicGroup) and g.state_name == "Empty" and g.protocol_type is None
    assert env.coordinator.committed("spark") == {("t", 0): 42}
    value = env.coordinator.fetch_offset("spark", "t", 0)
    assert value is not None and (value.offset, value.metadata, value.leader_epoch) == (42, "meta", -1)
    assert env.coordinator.fetch_offset("spark", "t", 1) is None


@pytest.mark.parametrize("version,code", [(8, E.ILLEGAL_GENERATION), (9, E.GROUP_ID_NOT_FOUND)])
def test_commit_with_a_generation_to_an_unknown_group(version: int, code: ErrorCode) -> None:
    env = GroupEnv()
    env.topic("t", 1)
    assert commit(env, "nope", generation=1, member="m", version=version) == code
    assert "nope" not in env.coordinator.groups


def test_member_commit_checks_generation_and_member() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    (a,), gen = env.stable_group("g")
    assert commit(env, "g", gen, a) == E.NONE
    assert commit(env, "g", gen + 1, a) == E.ILLEGAL_GENERATION
    assert commit(env, "g", gen, "stranger") == E.UNKNOWN_MEMBER_ID
    assert commit(env, "g", -1, "") == E.UNKNOWN_MEMBER_ID  # a simple commit while the group has members


def test_commit_is_rebalance_in_progress_while_completing_and_accepted_while_preparing() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    (a, b), gen = env.stable_group("g", 2)
    env.join("g", a)  # PreparingRebalance: the current generation may still commit
    assert commit(env, "g", gen, b) == E.NONE
    env.join("g", b)  # both rejoined: CompletingRebalance of gen + 1
    assert commit(env, "g", gen + 1, b) == E.REBALANCE_IN_PROGRESS
    assert commit(env, "g", gen, b) == E.ILLEGAL_GENERATION


def test_metadata_over_the_limit_is_offset_metadata_too_large() -> None:
    env = GroupEnv(**{"offset.metadata.max.bytes": 10})
    env.topic("t", 1)
    assert commit(env, "g", metadata="x" * 10) == E.NONE
    assert commit(env, "g", metadata="x" * 11, offset=7) == E.OFFSET_METADATA_TOO_LARGE
    assert env.coordinator.committed("g") == {("t", 0): 1}


def test_offsets_of_an_empty_group_expire_after_the_retention_and_the_group_goes() -> None:
    env = GroupEnv(**{"offsets.retention.minutes": 10, "offsets.retention.check.interval.ms": MINUTE})
    env.topic("t", 1)
    (a,), gen = env.stable_group("g")
    assert commit(env, "g", gen, a) == E.NONE
    env.coordinator.leave_group("g", [(a, None)])
    assert env.coordinator.groups["g"].state_name == "Empty"
    for _ in range(9):
        env.advance(MINUTE)
    assert env.coordinator.committed("g") == {("t", 0): 1}
    env.advance(MINUTE)  # ten minutes since the group became empty
    env.advance(MINUTE)
    assert env.coordinator.committed("g") == {}
    assert "g" not in env.coordinator.groups


def test_offsets_of_a_group_with_members_do_not_expire() -> None:
    env = GroupEnv(**{"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": MINUTE})
    env.topic("t", 1)
    (a,), gen = env.stable_group("g")
    commit(env, "g", gen, a)
    for _ in range(3):
        env.advance(5000)
        env.heartbeat("g", a, gen)
    env.advance(5000)
    env.heartbeat("g", a, gen)
    for _ in range(12):
        env.advance(5000)
        assert env.heartbeat("g", a, gen) == E.NONE
    assert env.coordinator.committed("g") == {("t", 0): 1}


def test_simple_group_offsets_expire_from_their_commit_time() -> None:
    env = GroupEnv(**{"offsets.retention.minutes": 2, "offsets.retention.check.interval.ms": MINUTE})
    env.topic("t", 2)
    commit(env, "simple", partition=0)
    env.advance(MINUTE)
    commit(env, "simple", partition=1)
    env.advance(MINUTE)  # partition 0 committed 2 minutes ago
    assert env.coordinator.committed("simple") == {("t", 1): 1}
    env.advance(MINUTE)
    assert env.coordinator.committed("simple") == {}
    assert "simple" not in env.coordinator.groups


def test_explicit_retention_time_of_an_old_commit_sets_the_expiry() -> None:
    env = GroupEnv(**{"offsets.retention.check.interval.ms": MINUTE})
    env.topic("t", 1)
    commit(env, "g", version=2, retention=MINUTE // 2)
    env.advance(MINUTE)
    assert env.coordinator.committed("g") == {}


def test_offsets_of_a_deleted_topic_are_gone_and_a_new_topic_of_that_name_starts_afresh() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    commit(env, "g", offset=5)
    env.cluster.delete_topic("t")
    env.topic("t", 1)
    assert env.coordinator.fetch_offset("g", "t", 0) is None
    assert env.coordinator.committed("g") == {}


def test_offset_delete() -> None:
    env = GroupEnv()
    env.topic("t", 2)
    env.topic("orders", 1)
    commit(env, "simple", partition=0)
    commit(env, "simple", partition=1)
    assert env.coordinator.delete_offsets("simple", [("t", 0)]) == [E.NONE]
    assert env.coordinator.committed("simple") == {("t", 1): 1}
    with pytest.raises(KafkaError) as exc:
        env.coordinator.delete_offsets("nope", [("t", 0)])
    assert exc.value.code == E.GROUP_ID_NOT_FOUND
    with pytest.raises(KafkaError) as exc:
        env.coordinator.delete_offsets("", [("t", 0)])
    assert exc.value.code == E.INVALID_GROUP_ID
    env.stable_group("busy")
    with pytest.raises(KafkaError) as exc:
        env.coordinator.delete_offsets("busy", [("t", 0)])
    assert exc.value.code == E.NON_EMPTY_GROUP


def test_offset_delete_of_an_emptied_classic_group_is_allowed_for_its_old_topics() -> None:
    # An empty group is subscribed to nothing: Kafka keeps "consumer" groups' subscriptions only with members.
    env = GroupEnv()
    env.topic("orders", 1)
    m = env.new_member("g", protocols=[("range", subscription("orders"))])
    r = env.join("g", m, protocols=[("range", subscription("orders"))])
    env.settle()
    gen = r.value.generation_id
    env.sync("g", m, gen, {m: b""})
    commit(env, "g", gen, m, topic="orders")
    env.coordinator.leave_group("g", [(m, None)])
    assert env.coordinator.delete_offsets("g", [("orders", 0)]) == [E.NONE]


def test_delete_group_deletes_its_offsets() -> None:
    env = GroupEnv()
    env.topic("t", 1)
    commit(env, "g")
    assert env.coordinator.delete_groups(["g"]) == [("g", E.NONE)]
    assert env.coordinator.committed("g") == {}


def test_offset_store_expiry_keeps_subscribed_topics() -> None:
    store = OffsetStore()
    store.commit("g", "a", 0, CommittedOffset(1, -1, "", 0))
    store.commit("g", "b", 0, CommittedOffset(1, -1, "", 0))
    assert store.expire("g", 10, 5, lambda o: o.commit_timestamp_ms, lambda t, p: t == "a") is False
    assert list(store.group_offsets("g")) == [("a", 0)]
    assert store.expire("g", 10, 5, lambda o: o.commit_timestamp_ms, lambda t, p: False) is True
    assert not store.has_offsets("g")


def test_offsets_pending_in_a_transaction_keep_their_group() -> None:
    env = GroupEnv(**{"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": MINUTE})
    env.topic("t", 2)
    commit(env, "g", partition=0)
    commit(env, "g", partition=1)
    in_txn = {("g", "t", 1)}
    env.coordinator.pending_transactional_offsets = lambda g, t, p: (g, t, p) in in_txn or (t is None and g == "g")
    env.advance(2 * MINUTE)
    assert env.coordinator.committed("g") == {("t", 1): 1}
    in_txn.clear()
    env.coordinator.pending_transactional_offsets = lambda g, t, p: False
    env.advance(MINUTE)
    assert env.coordinator.committed("g") == {} and "g" not in env.coordinator.groups
