"""Seeded runs: the broker's one random source and the ids drawn from it.

Every choice Kafka leaves to the broker (the cluster id, topic ids, classic and KIP-848 member ids, where a
topic's replica placement starts, fault rules that fire with a probability) is drawn from one
`random.Random` the Cluster holds (`cluster.random`), made from `cluster.seed`. The same seed and the same
client calls, in the same order, give the same answers. Security material is NOT drawn from it: TLS keys
and serials, SCRAM salts and SASL nonces come from the operating system's source (os.urandom / secrets), so a
seed printed in a test log never lets anyone predict them.
"""

from __future__ import annotations

import base64
import random
import uuid

SEED_BITS = 32  # seeds are small numbers, easy to copy from a test log onto a command line


def new_seed() -> int:
    """A fresh seed, for a broker given none (it is recorded as broker.seed, so a run can be replayed)."""
    return random.SystemRandom().getrandbits(SEED_BITS)


def random_uuid(rng: random.Random) -> uuid.UUID:
    """A version-4 UUID drawn from rng (never the zero UUID)."""
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def random_base64_id(rng: random.Random) -> str:
    """An id as Kafka's Uuid.randomUuid().toString(): 22 characters of URL-safe base64, drawn from rng; like
    Kafka, never one starting with "-" (it would read as a command-line option)."""
    while True:
        text = base64.urlsafe_b64encode(random_uuid(rng).bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text
