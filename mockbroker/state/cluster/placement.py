"""Replica placement for new partitions, as Kafka's AdminUtils/ReplicaPlacement spreads them.

Rack-unaware: the brokers in id order; partition p's first replica (its preferred leader) is broker
(start + p) % n, and its followers follow at a shift 1 + (shift + j) % (n - 1) from it; the shift grows
by one every n partitions, so follower pairs vary too. `start` and `shift` are chosen once per topic
(at random, as Kafka does) and kept, so partitions added later continue the same stripe.

Rack-aware (every placeable broker has a rack): the brokers are first interleaved rack by rack (racks
sorted, brokers of each rack in id order: a1, b1, c1, a2, b2, ...), the leader stripes over that list,
and each follower is the next candidate whose rack has no replica yet (or every rack has one) and which
is not a replica yet (or every broker is one).

No I/O, no randomness here: the caller picks start and shift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Stripe:
    """Where a topic's stripe of replicas starts: Kafka's startIndex and nextReplicaShift (two numbers, never changed)."""

    start: int
    shift: int

    def __deepcopy__(self, memo: dict[int, Any]) -> Stripe:
        """A snapshot keeps the same one: it never changes (frozen, numbers only)."""
        return self


def _follower_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated(racks: dict[int, str]) -> list[int]:
    """Broker ids interleaved by rack (Kafka's getRackAlternatedBrokerList)."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in sorted(racks.items()):
        by_rack.setdefault(rack, []).append(broker)
    out: list[int] = []
    depth = 0
    while len(out) < len(racks):
        for rack in sorted(by_rack):
            if depth < len(by_rack[rack]):
                out.append(by_rack[rack][depth])
        depth += 1
    return out


def place(brokers: dict[int, str | None], count: int, replication_factor: int, stripe: Stripe,
          first_partition: int = 0) -> list[list[int]]:
    """Replica lists of partitions first_partition .. first_partition+count-1 over `brokers` (id -> rack).

    Rack-aware when every broker has a rack. The caller has checked 1 <= replication_factor <= len(brokers).
    """
    if all(rack is not None for rack in brokers.values()):
        return _place_rack_aware({b: r for b, r in brokers.items() if r is not None}, count,
                                 replication_factor, stripe, first_partition)
    ids = sorted(brokers)
    n = len(ids)
    out = []
    for p in range(first_partition, first_partition + count):
        shift = stripe.shift + p // n  # one further every n partitions
        first = (p + stripe.start) % n
        out.append([ids[first]] + [ids[_follower_index(first, shift, j, n)] for j in range(replication_factor - 1)])
    return out


def _place_rack_aware(racks: dict[int, str], count: int, replication_factor: int, stripe: Stripe,
                      first_partition: int) -> list[list[int]]:
    arranged = rack_alternated(racks)
    n = len(arranged)
    rack_count = len(set(racks.values()))
    out = []
    for p in range(first_partition, first_partition + count):
        shift = stripe.shift + p // n  # one further every n partitions
        first = (p + stripe.start) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        k = 0
        while len(replicas) < replication_factor:
            broker = arranged[_follower_index(first, shift * rack_count, k, n)] if n > 1 else leader
            k += 1
            rack = racks[broker]
            if ((rack not in racks_used or len(racks_used) == rack_count)
                    and (broker not in replicas or len(replicas) == n)):
                replicas.append(broker)
                racks_used.add(rack)
        out.append(replicas)
    return out
