"""What the group code shares: settings with Kafka's defaults, named timers on the broker clock, the
summaries tests and the console read, and `GroupHost`, what a group asks of the coordinator that owns it.

A leaf of the group modules: classic.py, consumer.py and coordinator.py import it, it
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker.clock import Clock
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.offsets import DEFAULT_METADATA_MAX_BYTES

if TYPE_CHECKING:
    from mockbroker.state.cluster.cluster import Cluster
    from mockbroker.state.groups.offsets import OffsetStore

Responder = Callable[[Msg], None]

CONSUMER_PROTOCOL_TYPE = "consumer"
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # Kafka's classicGroupNewMemberJoinTimeoutMs
INT32_MIN = -(2**31)
# AclOperation bits a group answers in DescribeGroups/ConsumerGroupDescribe: READ 3, DELETE 6, DESCRIBE 8.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)

# Broker settings the coordinator reads, with Kafka's defaults (ones the config registry does not know
# are read from the broker's unknown settings, so `config={"offsets.retention.check.interval.ms": ...}`
# works either way).
SETTINGS_DEFAULTS: dict[str, int | str] = {
    "group.initial.rebalance.delay.ms": 3000,
    "group.min.session.timeout.ms": 6000,
    "group.max.session.timeout.ms": 1800000,
    "offsets.retention.minutes": 10080,
    "offsets.retention.check.interval.ms": 600000,
    "offset.metadata.max.bytes": DEFAULT_METADATA_MAX_BYTES,
    "group.consumer.session.timeout.ms": 45000,
    "group.consumer.heartbeat.interval.ms": 5000,
    "group.consumer.assignors": "uniform,range",
}


class TimerLike(Protocol):
    def cancel(self) -> None: ...


class SchedulerLike(Protocol):
    def call_at(self, due_ms: int, callback: Callable[[], None]) -> Any: ...


class Timers:
    """Named one-shot timers on the scheduler: scheduling a name again replaces its timer."""

    def __init__(self, scheduler: SchedulerLike, clock: Clock) -> None:
        self.scheduler = scheduler
        self.clock = clock
        self._timers: dict[tuple[str, ...], TimerLike] = {}

    def schedule(self, key: tuple[str, ...], delay_ms: int, callback: Callable[[], None], *,
                 base_ms: int | None = None) -> int:
        """Run `callback` delay_ms after now (or after base_ms: a chain of timers keeps its own time even
        when a test moves the clock past several links at once). Returns the due time."""
        self.cancel(key)

        def fire() -> None:
            if self._timers.get(key) is timer:
                del self._timers[key]
                callback()

        due = (self.clock.now_ms() if base_ms is None else base_ms) + max(0, int(delay_ms))
        timer = self.scheduler.call_at(due, fire)
        self._timers[key] = timer
        return due

    def cancel(self, key: tuple[str, ...]) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def has(self, key: tuple[str, ...]) -> bool:
        return key in self._timers


@dataclass
class MemberSummary:
    member_id: str
    instance_id: str | None
    client_id: str
    assignment: dict[str, list[int]] | None  # topic -> partitions (classic: decoded consumer protocol)
    member_epoch: int | None  # KIP-848 members


@dataclass
class GroupSummary:
    group_id: str
    group_type: str  # "classic" or "consumer"
    protocol_type: str
    state: str
    generation_or_epoch: int  # classic generation id, KIP-848 group epoch
    protocol: str | None  # classic: the selected protocol; KIP-848: the assignor
    leader: str | None
    members: list[MemberSummary]


class GroupHost(Protocol):
    """What a group (classic or KIP-848) uses of its coordinator (group_coordinator.GroupCoordinator)."""

    cluster: Cluster
    clock: Clock
    timers: Timers
    groups: dict[str, Any]  # group id -> ClassicGroup | ConsumerGroup
    offsets: OffsetStore

    def setting(self, key: str) -> Any: ...

    def remove_group(self, group_id: str) -> None: ...

    def ensure_cleanup(self) -> None: ...

    def group_state_changed(self, group: Any) -> None:
        """A classic group moved in its state table (the coordinator's log records Stable, Empty, Dead), or
        a consumer group changed (its log writes the changed ConsumerGroup* records)."""
