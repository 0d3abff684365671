"""Version personas: which Kafka release the broker plays (`MockBroker(kafka_version="2.8")`, the marker,
`--kafka-version`, MOCKBROKER_KAFKA_VERSION) and single API caps (`max_versions={api_key: version}`).

A Persona narrows what the registry serves (mockbroker/dispatch.py `served_range`): an API is advertised in
ApiVersions and accepted only at the versions both mockbroker and the release's broker speak (the release's
ranges: protocol/release_versions.py, generated from Kafka's schemas by tools/gen_personas.py), capped by
max_versions. A request outside that range is refused as any unserved version is (connection.py).

The behaviours clients notice that follow from a release:
- before 4.0 no KIP-848: ConsumerGroupHeartbeat and ConsumerGroupDescribe are not advertised (a 3.x broker
  advertises them only when the consumer rebalance protocol is switched on, which it is not by default), so
  clients use the classic protocol;
- before 4.0 transaction version 2 is absent: `transaction.version` defaults to 0 (settings.py; an explicit
  setting wins), and the release's EndTxn / AddPartitionsToTxn ranges stop below the TV2 versions;
- before 3.7 no KIP-951 leader hints in Fetch answers (`leader_hints`);
- before 4.2 no share groups (KIP-932): they were early access in 4.0 and preview in 4.1, off unless
  share.version was finalized at 1, so ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
  ShareAcknowledge and DescribeShareGroupOffsets are not advertised (`share_groups`), nor the share.version
  feature.
Releases: 2.8 and 3.0 to 4.3 (4.1's ranges come from its kafka-clients jar; 4.0's and 4.2's from franz-go's
broker version table, checked against Kafka's own schemas: tools/data/README.md). 4.0 is the first release
with KIP-848 and transaction version 2 on by default, 4.2 the first with share groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mockbroker.protocol.release_versions import RELEASE_VERSIONS

KAFKA_VERSIONS: tuple[str, ...] = tuple(RELEASE_VERSIONS)
KIP_848_APIS = (68, 69)  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
# ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge, Describe/Alter/DeleteShareGroupOffsets
SHARE_APIS = (76, 77, 78, 79, 90, 91, 92)


def release_of(kafka_version: str) -> tuple[int, int]:
    """ "3.7" or "3.7.1" -> (3, 7); ValueError for a release without a persona."""
    parts = kafka_version.strip().split(".")
    name = ".".join(parts[:2])
    if name not in RELEASE_VERSIONS or not all(p.isdigit() for p in parts) or len(parts) > 3:
        raise ValueError(f"kafka_version must be one of {', '.join(KAFKA_VERSIONS)}, got {kafka_version!r}")
    return int(parts[0]), int(parts[1])


@dataclass(frozen=True)
class Persona:
    """The Kafka release played (None: no release's limits, every version mockbroker serves) and the caps."""

    kafka_version: str | None = None  # "major.minor"
    max_versions: Mapping[int, int] = field(default_factory=dict)
    hidden: frozenset[int] = frozenset()  # APIs this broker does not serve whatever the release (telemetry off)

    @property
    def release(self) -> tuple[int, int] | None:
        return release_of(self.kafka_version) if self.kafka_version is not None else None

    @property
    def kip848(self) -> bool:
        """Whether the KIP-848 consumer group APIs are advertised."""
        return self.release is None or self.release >= (4, 0)

    @property
    def share_groups(self) -> bool:
        """Whether share groups are on (share.version 1, Kafka 4.2 on) and their APIs advertised."""
        return self.release is None or self.release >= (4, 2)

    @property
    def leader_hints(self) -> bool:
        """Whether Fetch answers carry KIP-951's current-leader hints (Kafka 3.7 on; Produce's come with v10,
        which older releases do not speak)."""
        return self.release is None or self.release >= (3, 7)

    @property
    def transaction_version(self) -> int | None:
        """The transaction.version this release finalizes by default (None: the setting's own default)."""
        return None if self.release is None or self.release >= (4, 0) else 0

    def narrow(self, api_key: int, lo: int, hi: int) -> tuple[int, int] | None:
        """The part of lo..hi (what mockbroker serves of api_key) this persona speaks; None: not at all."""
        if api_key in self.hidden:
            return None
        if self.kafka_version is not None:
            release = RELEASE_VERSIONS[self.kafka_version]
            if (api_key not in release or (api_key in KIP_848_APIS and not self.kip848)
                    or (api_key in SHARE_APIS and not self.share_groups)):
                return None
            lo, hi = max(lo, release[api_key][0]), min(hi, release[api_key][1])
        cap = self.max_versions.get(api_key)
        if cap is not None:
            hi = min(hi, cap)
        return (lo, hi) if lo <= hi else None


FULL = Persona()


def make_persona(kafka_version: str | None, max_versions: Mapping[int, int] | None) -> Persona:
    """The Persona of MockBroker's kafka_version= and max_versions= (ValueError naming a bad one)."""
    name = None
    if kafka_version is not None:
        major, minor = release_of(str(kafka_version))
        name = f"{major}.{minor}"
    caps: dict[int, int] = {}
    for key, version in (max_versions or {}).items():
        if isinstance(key, bool) or not isinstance(key, int) or isinstance(version, bool) or not isinstance(version, int):
            raise ValueError(f"max_versions maps API keys to versions (ints), got {key!r}: {version!r}")
        if version < 0:
            raise ValueError(f"max_versions[{key}] must be at least 0, got {version}")
        caps[int(key)] = int(version)
    return Persona(name, caps)
