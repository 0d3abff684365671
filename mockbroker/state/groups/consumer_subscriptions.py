"""What the members of a KIP-848 consumer group subscribe to, counted (Kafka's ConsumerGroup keeps
subscribedTopicNames as a count per name the same way): each topic name and each regex with the number of
members that subscribe to it, kept as members come, change and go. The topics the group subscribes to are
then found from the distinct names and regexes, at a cost that does not grow with the number of members.
A regex is Python `re` full-matched against the cluster's non-internal topic names (consumer.py says how
that differs from Kafka's RE2/J). No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster


class Subscriber(Protocol):
    """What a member says it subscribes to."""

    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None


def member_topics(cluster: Cluster, member: Subscriber) -> set[str]:
    """The topic names one member subscribes to: its names and the existing topics its regex matches."""
    names = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        names |= _matching(cluster, member.subscribed_topic_regex)
    return names


def _matching(cluster: Cluster, regex: str) -> set[str]:
    pattern = re.compile(regex)
    return {t for t, topic in cluster.topics.items() if not topic.internal and pattern.fullmatch(t)}


class SubscriptionCounts:
    """The members' subscriptions of one group: topic name -> members, regex -> members."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.regexes: dict[str, int] = {}

    def add(self, member: Subscriber, by: int = 1) -> None:
        """Count a member's subscription in (by=1) or out (by=-1)."""
        for name in set(member.subscribed_topic_names):
            _count(self.names, name, by)
        if member.subscribed_topic_regex:
            _count(self.regexes, member.subscribed_topic_regex, by)

    def topics(self, cluster: Cluster, without: Iterable[Subscriber] = (), with_: Subscriber | None = None) -> set[str]:
        """The topic names the group subscribes to; `without` / `with_`: as if those members were gone and that
        one were in (what a heartbeat is about to change), the counts themselves left as they are."""
        names, regexes = self.names, self.regexes
        changes = list(without)
        if changes or with_ is not None:
            counts = SubscriptionCounts()
            counts.names, counts.regexes = dict(names), dict(regexes)
            for m in changes:
                counts.add(m, -1)
            if with_ is not None:
                counts.add(with_)
            names, regexes = counts.names, counts.regexes
        out = set(names)
        for regex in regexes:
            out |= _matching(cluster, regex)
        return out


def _count(table: dict[str, int], key: str, by: int) -> None:
    n = table.get(key, 0) + by
    if n > 0:
        table[key] = n
    else:
        table.pop(key, None)
