"""The subscriptions of a KIP-848 group, counted (state/groups/consumer_subscriptions.py): the topics the group
subscribes to are always its members' topics, as members join, change their names or regex, leave, and
topics come; a heartbeat finds them without going over every member."""

from __future__ import annotations

import random

from mockbroker.state.groups.consumer import ConsumerGroup, ConsumerMember
from mockbroker.state.groups.consumer_subscriptions import SubscriptionCounts, member_topics
from tests.state.groups_env import GroupEnv, owned

TOPICS = ["a", "b", "c", "d", "e"]
REGEXES = [None, None, None, "orders-.*", "orders-(eu|us)", "[cd]"]


def choice(rnd: random.Random) -> tuple[list[str], str | None]:
    """A subscription: a few names (maybe twice the same) and maybe a regex."""
    return [rnd.choice(TOPICS) for _ in range(rnd.randrange(3))], rnd.choice(REGEXES)


def test_counts_follow_members_in_and_out() -> None:
    env = GroupEnv()
    for name in ("orders-eu", "orders-us", "other"):
        env.topic(name, 1)
    counts = SubscriptionCounts()
    a = ConsumerMember("a", subscribed_topic_names=["x", "x", "y"])
    b = ConsumerMember("b", subscribed_topic_names=["y"], subscribed_topic_regex="orders-.*")
    counts.add(a)
    counts.add(b)
    assert counts.names == {"x": 1, "y": 2} and counts.regexes == {"orders-.*": 1}
    assert counts.topics(env.cluster) == {"x", "y", "orders-eu", "orders-us"}
    # as if b were gone and c in, the counts left as they are
    c = ConsumerMember("c", subscribed_topic_names=["z"])
    assert counts.topics(env.cluster, [b], c) == {"x", "y", "z"}
    assert counts.names == {"x": 1, "y": 2}
    counts.add(b, -1)
    counts.add(a, -1)
    assert (counts.names, counts.regexes, counts.topics(env.cluster)) == ({}, {}, set())
    assert member_topics(env.cluster, b) == {"y", "orders-eu", "orders-us"}


def test_the_groups_topics_are_its_members_topics_after_every_change() -> None:
    env = GroupEnv()
    for name in TOPICS:
        env.topic(name, 2)
    rnd = random.Random(7)
    epochs: dict[str, tuple[int, list]] = {}  # type: ignore[type-arg]
    for step in range(300):
        op = rnd.random()
        if op < 0.25 or not epochs:
            names, regex = choice(rnd)
            r = env.cg("g", f"m{step}", 0, topics=names, regex=regex)
            assert r.error_code == 0, r
            epochs[r.member_id] = (r.member_epoch, owned(r.assignment))
        elif op < 0.5:
            member_id = rnd.choice(sorted(epochs))
            epoch, have = epochs[member_id]
            r = env.cg("g", member_id, epoch, owned=have)
            assert r.error_code == 0, r
            epochs[member_id] = (r.member_epoch, owned(r.assignment) if r.assignment is not None else have)
        elif op < 0.72:
            member_id = rnd.choice(sorted(epochs))
            epoch, have = epochs[member_id]
            names, regex = choice(rnd)
            r = env.cg("g", member_id, epoch, owned=have, topics=names, regex=regex)
            assert r.error_code == 0, r
            epochs[member_id] = (r.member_epoch, owned(r.assignment) if r.assignment is not None else have)
        elif op < 0.95:
            member_id = rnd.choice(sorted(epochs))
            assert env.cg("g", member_id, -1).error_code == 0
            del epochs[member_id]
        else:
            name = f"orders-{rnd.choice(['eu', 'us', 'asia'])}"
            if name not in env.cluster.topics:
                env.topic(name, 1)  # the group's metadata follows at the next heartbeat
            continue
        group = env.coordinator.groups["g"]
        assert isinstance(group, ConsumerGroup)
        expected: set[str] = set()
        for m in group.members.values():
            expected |= member_topics(env.cluster, m)
        assert group.subscribed_topic_names() == expected, f"step {step}"
        assert set(group.subscription_metadata) == {t for t in expected if t in env.cluster.topics}, f"step {step}"
