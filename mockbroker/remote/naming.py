"""Per-test names on a shared cluster: the prefix a test's topics, groups and transactional ids get there.

A test says "orders"; the cluster holds "mb-<run>-<test>-orders". `Isolation` maps names both ways:
`real(name)` is the cluster's name (a name that already has the prefix is left as it is, so a name read
back from a client, `msg.topic()`, may be passed in again), `own(name)` whether a cluster's name is the
test's, `test_name(name)` the test's name for it (a name of someone else's is left as it is).

The prefix is `mb-<run>-<key>-<slug>-`: <run> six hex digits drawn once per pytest run (or per RemoteBroker
outside pytest), <key> six hex digits of a hash of the test's node id, <slug> the test's name cut to 40
characters of [A-Za-z0-9._-]. Both hex fields have a fixed width, so one test's prefix is never the
start of another's (no test lists or deletes a neighbour's topics), and the prefix stays well within
Kafka's 249 characters for a topic name.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

PREFIX_START = "mb-"
SLUG_CHARS = 40
_NOT_LEGAL = re.compile(r"[^A-Za-z0-9._-]+")


def new_run_id() -> str:
    """Six random hex digits naming one run."""
    return os.urandom(3).hex()


def prefix_for(run_id: str, test_id: str) -> str:
    """The prefix of one test of one run: mb-<run>-<hash of test_id>-<slug of test_id>-."""
    key = hashlib.sha256(test_id.encode()).hexdigest()[:6]
    name = test_id.rsplit("::", 1)[-1]
    slug = _NOT_LEGAL.sub("_", name).strip("_.-")[:SLUG_CHARS] or "test"
    return f"{PREFIX_START}{run_id}-{key}-{slug}-"


@dataclass(frozen=True)
class Isolation:
    """One test's prefix on the cluster, and the mapping of names it gives."""

    prefix: str

    def real(self, name: str) -> str:
        """The cluster's name of the test's `name`."""
        return name if name.startswith(self.prefix) else self.prefix + name

    def own(self, real_name: str) -> bool:
        """Whether a cluster's name is one of the test's."""
        return real_name.startswith(self.prefix)

    def test_name(self, real_name: str) -> str:
        """The test's name for a cluster's name (someone else's name is left as it is)."""
        return real_name[len(self.prefix):] if self.own(real_name) else real_name
