"""Server-side assignors of KIP-848 consumer groups (group.consumer.assignors): Kafka's uniform
assignor (balanced and sticky) and range assignor, over topic ids and partition counts."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

Assignment = dict[uuid.UUID, set[int]]


@dataclass
class AssignMember:
    member_id: str
    instance_id: str | None
    topics: set[uuid.UUID]  # the subscribed topics that exist


def _homogeneous(members: list[AssignMember]) -> bool:
    return all(m.topics == members[0].topics for m in members)


def uniform_assign(members: list[AssignMember], topics: dict[uuid.UUID, int],
                   current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Kafka's uniform assignor: balanced (sizes differ by at most one) first, sticky second."""
    if not members:
        return {}
    if _homogeneous(members):
        return _uniform_homogeneous(members, topics, current)
    return _uniform_heterogeneous(members, topics, current)


def _uniform_homogeneous(members: list[AssignMember], topics: dict[uuid.UUID, int],
                         current: dict[str, Assignment]) -> dict[str, Assignment]:
    subscribed = [t for t in topics if t in members[0].topics]
    if not subscribed:
        return {m.member_id: {} for m in members}
    taken = {(t, p) for m in members for t, ps in current.get(m.member_id, {}).items() for p in ps}
    unassigned = [(t, p) for t in subscribed for p in range(topics[t]) if (t, p) not in taken]
    total = sum(topics[t] for t in subscribed)
    min_quota, extra = divmod(total, len(members))
    out: dict[str, Assignment] = {}
    unfilled: list[tuple[str, int]] = []
    for m in members:
        quota = min_quota + (1 if extra > 0 else 0)
        extra -= 1 if extra > 0 else 0
        kept: Assignment = {}
        for t, ps in sorted(current.get(m.member_id, {}).items(), key=lambda kv: str(kv[0])):
            if t not in members[0].topics or t not in topics:
                continue
            for p in sorted(ps):
                if p >= topics[t]:
                    continue
                if quota > 0:
                    kept.setdefault(t, set()).add(p)
                    quota -= 1
                else:
                    unassigned.append((t, p))
        out[m.member_id] = kept
        if quota > 0:
            unfilled.append((m.member_id, quota))
    i = 0
    for member_id, quota in unfilled:
        for _ in range(quota):
            if i >= len(unassigned):
                break
            t, p = unassigned[i]
            i += 1
            out[member_id].setdefault(t, set()).add(p)
    return out


def _uniform_heterogeneous(members: list[AssignMember], topics: dict[uuid.UUID, int],
                           current: dict[str, Assignment]) -> dict[str, Assignment]:
    order = {m.member_id: i for i, m in enumerate(members)}
    subs = {m.member_id: m.topics for m in members}
    counts = {m.member_id: 0 for m in members}
    owner: dict[tuple[uuid.UUID, int], str] = {}
    all_parts = [(t, p) for t in topics if any(t in m.topics for m in members) for p in range(topics[t])]
    for m in members:
        for t, ps in current.get(m.member_id, {}).items():
            if t not in m.topics or t not in topics:
                continue
            for p in sorted(ps):
                if p < topics[t] and (t, p) not in owner:
                    owner[(t, p)] = m.member_id
                    counts[m.member_id] += 1

    def least_loaded(topic_id: uuid.UUID) -> str:
        return min((mid for mid in counts if topic_id in subs[mid]), key=lambda mid: (counts[mid], order[mid]))

    for tp in all_parts:
        if tp not in owner:
            mid = least_loaded(tp[0])
            owner[tp] = mid
            counts[mid] += 1
    for _ in range(len(all_parts) + 1):  # move partitions off overloaded members, bounded
        moved = False
        for tp in all_parts:
            cur = owner[tp]
            best = least_loaded(tp[0])
            if counts[cur] - counts[best] > 1:
                owner[tp] = best
                counts[cur] -= 1
                counts[best] += 1
                moved = True
        if not moved:
            break
    out: dict[str, Assignment] = {m.member_id: {} for m in members}
    for (t, p), mid in owner.items():
        out[mid].setdefault(t, set()).add(p)
    return out


def range_assign(members: list[AssignMember], topics: dict[uuid.UUID, int],
                 current: dict[str, Assignment]) -> dict[str, Assignment]:
    """Kafka's server-side range assignor: per topic, contiguous ranges over the members sorted by
    instance id (static members first) then member id; co-partitioned when every member subscribes to
    the same topics of equal sizes."""
    if not members:
        return {}
    ordered = sorted(members, key=lambda m: (0, m.instance_id, "") if m.instance_id is not None
                     else (1, "", m.member_id))
    next_range: dict[uuid.UUID, int] = {}
    quotas: dict[uuid.UUID, list[int]] = {}  # topic -> [min quota, extra partitions left]
    for t in topics:
        n = sum(1 for m in members if t in m.topics)
        if n:
            quotas[t] = list(divmod(topics[t], n))
            next_range[t] = 0
    out: dict[str, Assignment] = {}
    for m in ordered:
        assignment: Assignment = {}
        for t in topics:
            if t not in m.topics:
                continue
            quota = quotas[t][0]
            if quotas[t][1] > 0:
                quota += 1
                quotas[t][1] -= 1
            start = next_range[t]
            end = min(start + quota, topics[t])
            next_range[t] = end
            if start < end:
                assignment[t] = set(range(start, end))
        out[m.member_id] = assignment
    return out


ASSIGNORS: dict[str, Callable[[list[AssignMember], dict[uuid.UUID, int], dict[str, Assignment]],
                              dict[str, Assignment]]] = {"uniform": uniform_assign, "range": range_assign}
