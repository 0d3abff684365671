"""A group coordinator without sockets, on a frozen clock, for the tests/state/test_groups*.py tests.

    env = GroupEnv()
    reply = env.join("g")            # a JoinGroup; reply.value is None while it is parked
    env.advance(3000)                # the broker clock moves 3 s and due timers run
"""

from __future__ import annotations

from typing import Any

from mockbroker.clock import Clock
from mockbroker.protocol.messages import Msg
from mockbroker.scheduler import Scheduler
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.configs import BrokerConfig
from mockbroker.state.groups.coordinator import GroupCoordinator

START_MS = 1_700_000_000_000
RANGE = [("range", b"range-meta")]


class Reply:
    """A parked request's answer, once the coordinator gives it."""

    def __init__(self) -> None:
        self.values: list[Msg] = []

    def __call__(self, response: Msg) -> None:
        self.values.append(response)

    @property
    def value(self) -> Any:
        """The answer (a Msg), None while parked."""
        assert len(self.values) <= 1, f"answered more than once: {self.values}"
        return self.values[0] if self.values else None

    @property
    def code(self) -> int:
        assert self.value is not None, "not answered (still parked)"
        return int(self.value.error_code)


class GroupEnv:
    def __init__(self, **config: Any) -> None:
        settings = {"group.initial.rebalance.delay.ms": 3000, **config}
        self.clock = Clock(start_ms=START_MS, frozen=True)
        self.scheduler = Scheduler(self.clock)
        self.cluster = Cluster(config=BrokerConfig(settings), clock=self.clock)
        self.coordinator = GroupCoordinator(self.cluster, self.scheduler, self.clock)

    def advance(self, ms: int) -> None:
        self.clock.advance(ms / 1000)
        self.scheduler.run_due()

    def settle(self) -> None:
        """Past the initial rebalance of members that all joined now (its delay, extended once)."""
        self.advance(6000)

    def topic(self, name: str, partitions: int) -> Any:
        return self.cluster.create_topic(name, partitions)

    # -- classic ---------------------------------------------------------------------------------
    def join(self, group: str, member_id: str = "", *, instance: str | None = None,
             protocols: list[tuple[str, bytes]] | None = None, protocol_type: str = "consumer",
             session: int = 10000, rebalance: int = 30000, version: int = 9, client_id: str = "c") -> Reply:
        reply = Reply()
        self.coordinator.join_group(group_id=group, member_id=member_id, group_instance_id=instance,
                                    session_timeout_ms=session, rebalance_timeout_ms=rebalance,
                                    protocol_type=protocol_type, protocols=list(RANGE if protocols is None else protocols),
                                    client_id=client_id, client_host="/127.0.0.1", api_version=version,
                                    respond=reply)
        return reply

    def new_member(self, group: str, **kwargs: Any) -> str:
        """A member id the coordinator handed out (JoinGroup v4+ without one: MEMBER_ID_REQUIRED)."""
        reply = self.join(group, **kwargs)
        assert reply.code == 79, reply.value
        assert reply.value is not None
        return str(reply.value.member_id)

    def sync(self, group: str, member_id: str, generation: int, assignments: dict[str, bytes] | None = None, *,
             instance: str | None = None, protocol_type: str | None = None, protocol_name: str | None = None) -> Reply:
        reply = Reply()
        self.coordinator.sync_group(group_id=group, generation_id=generation, member_id=member_id,
                                    group_instance_id=instance, protocol_type=protocol_type,
                                    protocol_name=protocol_name, assignments=assignments or {}, respond=reply)
        return reply

    def heartbeat(self, group: str, member_id: str, generation: int, instance: str | None = None) -> int:
        return int(self.coordinator.heartbeat(group, generation, member_id, instance))

    def stable_group(self, group: str, members: int = 1) -> tuple[list[str], int]:
        """A Stable classic group of `members` members (the first leads); their ids and the generation."""
        ids = [self.new_member(group, client_id=f"c{i}") for i in range(members)]
        replies = [self.join(group, mid) for mid in ids]
        self.advance(3000 * len(ids))  # each member joining during the initial delay extends it
        assert all(r.code == 0 for r in replies), [r.value for r in replies]
        generation = replies[0].value.generation_id  # type: ignore[union-attr]
        leader = replies[0].value.leader  # type: ignore[union-attr]
        syncs = [self.sync(group, mid, generation, {m: m.encode() for m in ids} if mid == leader else None)
                 for mid in ids]
        assert all(s.code == 0 for s in syncs)
        return ids, generation

    # -- KIP-848 ---------------------------------------------------------------------------------
    def cg(self, group: str, member_id: str, epoch: int, *, topics: list[str] | None = None,
           owned: list[Msg] | None = None, regex: str | None = None, instance: str | None = None,
           assignor: str | None = None, rebalance: int | None = None, version: int = 1) -> Msg:
        req = Msg(group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance, rack_id=None,
                  rebalance_timeout_ms=(rebalance if rebalance is not None else (30000 if epoch == 0 else -1)),
                  subscribed_topic_names=topics, subscribed_topic_regex=regex, server_assignor=assignor,
                  topic_partitions=owned if owned is not None else ([] if epoch == 0 else None))
        return self.coordinator.consumer_group_heartbeat(req, version, "client", "/127.0.0.1")


def owned(assignment: Msg | None) -> list[Msg]:
    """The owned-partitions list a member sends back, from the assignment it was given."""
    if assignment is None:
        return []
    return [Msg(topic_id=tp.topic_id, partitions=list(tp.partitions)) for tp in assignment.topic_partitions]


def parts(assignment: Msg | None) -> list[int]:
    if assignment is None:
        return []
    return sorted(p for tp in assignment.topic_partitions for p in tp.partitions)
