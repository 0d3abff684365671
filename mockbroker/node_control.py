"""The node calls of MockBroker beyond stop and start (`broker.node_control`; MockBroker's methods of the
same names call it): stalled nodes, per-node latency, leader and coordinator moves, the ISR, and the timers
that replication needs on the broker clock.

- `stall_node(id)` / `resume_node(id)`: the node's replica fetchers stop / start again (state/cluster/replicas.py).
  It keeps answering clients, but copies nothing: an in-sync follower that is behind holds the high
  watermark back (acks=all produces wait) until replica.lag.time.max.ms on the broker clock takes it out
  of the ISR; resumed, it catches up at once and rejoins the ISR.
- `set_latency(node, ms)`: every answer from that node goes out `ms` milliseconds late (real time, as a
  slow network or a busy broker would be); 0 removes it.
- Timers: while a node is stalled, the ISR check every replica.lag.time.max.ms / 2 (Kafka's
  isr-expiration task); always, the unclean election check every unclean.leader.election.interval.ms
  (Kafka's controller elects a live replica for a leaderless partition once its topic turns
  unclean.leader.election.enable on).
All calls are safe from a sync test thread (they run on the broker's loop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockbroker.state.cluster import leadership, reassignments, replicas
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, TXN_TOPIC, partition_of

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.loop_hop import LoopHop
    from mockbroker.scheduler import Scheduler, Timer
    from mockbroker.state.cluster.cluster import Cluster, Partition
    from mockbroker.state.cluster.leadership import PartitionState


@dataclass(frozen=True)
class NodeInfo:
    """What broker.nodes() tells of a node."""

    node_id: int
    rack: str | None
    alive: bool
    listeners: list[str]  # NAME://host:port as advertised
    stalled: bool = False  # its replication is stopped (stall_node)
    latency_ms: int = 0  # its answers are this late (set_latency)


class NodeControl:
    def __init__(self, cluster: Cluster, clock: Clock, scheduler: Scheduler, hop: LoopHop) -> None:
        self.cluster = cluster
        self.clock = clock
        self.scheduler = scheduler
        self._hop = hop  # runs each call on the broker's loop
        # Per-node latency of answers, ms (read by mockbroker/connection.py as broker.node_latency_ms); empty:
        # none.
        self.latency_ms: dict[int, int] = {}
        self._isr_check: Timer | None = None

    def _node_checked(self, node_id: int) -> None:
        if node_id not in self.cluster.nodes:
            raise KeyError(f"no node {node_id} (nodes: {sorted(self.cluster.nodes)})")

    def node_infos(self) -> list[NodeInfo]:
        """Every node (broker.nodes()): id, rack, running or stopped, addresses, stalled, latency."""
        return self._hop.call(lambda: [
            NodeInfo(n.node_id, n.rack, n.alive,
                     [f"{lst.name}://{lst.public_host}:{lst.public_port}" for lst in self.cluster.listeners
                      if lst.node_id == n.node_id], n.stalled_since_ms >= 0, self.latency_ms.get(n.node_id, 0))
            for _, n in sorted(self.cluster.nodes.items())])

    # -- stalled nodes ------------------------------------------------------------------------------
    def stall_node(self, node_id: int) -> None:
        """Stop node_id's replication (not the node): it falls behind every leader it follows, leaves their
        ISRs after replica.lag.time.max.ms on the broker clock, and holds back acks=all produces meanwhile."""
        self._node_checked(node_id)

        def stall() -> None:
            replicas.stall(self.cluster, node_id, self.clock.now_ms())
            self._arm_isr_check()
        self._hop.call(stall)

    def resume_node(self, node_id: int) -> None:
        """node_id replicates again: caught up at once, back in the ISRs; pending reassignments may complete."""
        self._node_checked(node_id)

        def resume() -> None:
            replicas.resume(self.cluster, node_id)
            reassignments.complete_due(self.cluster, self.clock.now_ms())
        self._hop.call(resume)

    def _arm_isr_check(self) -> None:
        if self._isr_check is not None:
            return
        interval = max(int(self.cluster.config.get("replica.lag.time.max.ms")) // 2, 1)

        def check() -> None:
            self._isr_check = None
            replicas.shrink_lagging(self.cluster, self.clock.now_ms())
            if any(n.stalled_since_ms >= 0 for n in self.cluster.nodes.values()):
                self._arm_isr_check()
        self._isr_check = self.scheduler.call_later(interval, check)

    # -- unclean elections ---------------------------------------------------------------------------
    def start_unclean_election_checks(self) -> None:
        """Kafka's controller task: every unclean.leader.election.interval.ms, leaderless partitions of topics
        with unclean.leader.election.enable elect a live replica."""
        interval = max(int(self.cluster.config.get("unclean.leader.election.interval.ms")), 1)

        def check() -> None:
            leadership.elect_unclean_where_enabled(self.cluster)
            self.scheduler.call_later(interval, check)
        self.scheduler.call_later(interval, check)

    # -- latency -------------------------------------------------------------------------------------
    def set_latency(self, node_id: int, ms: float) -> None:
        """Delay every answer from node_id by ms milliseconds (0: none)."""
        self._node_checked(node_id)
        if ms < 0:
            raise ValueError(f"latency must be >= 0 ms, got {ms}")

        def set_it() -> None:
            if ms:
                self.latency_ms[node_id] = int(ms)
            else:
                self.latency_ms.pop(node_id, None)
        self._hop.call(set_it)

    # -- leaders, coordinators and the ISR (state/cluster/leadership.py) ----------------------------------
    def _partition(self, topic: str, partition: int) -> Partition:
        p = self.cluster.partition(topic, partition)
        if p is None:
            raise KeyError(f"no partition {topic}-{partition}")
        return p

    def move_leader(self, topic: str, partition: int, to_node: int) -> None:
        """Make to_node (a live ISR member) lead the partition, with a leader epoch bump."""
        self._hop.call(lambda: leadership.move_leader(self.cluster, self._partition(topic, partition), to_node))

    def move_coordinator(self, to_node: int, *, group: str | None = None, transactional_id: str | None = None) -> None:
        """Make to_node coordinate a group or a transactional id: it takes the lead of the key's
        __consumer_offsets / __transaction_state partition (a live ISR member, epoch bumped); the state
        moves with it and clients find the new coordinator after NOT_COORDINATOR."""
        if (group is None) == (transactional_id is None):
            raise ValueError("name one of group= or transactional_id=")
        topic, key = (OFFSETS_TOPIC, group) if group is not None else (TXN_TOPIC, transactional_id)
        assert key is not None
        self._hop.call(lambda: leadership.move_leader(self.cluster, partition_of(self.cluster, topic, key), to_node))

    def elect_preferred_leaders(self) -> list[tuple[str, int]]:
        """Give every partition its preferred leader (first replica) where it is a live ISR member; the
        partitions that changed."""
        return self._hop.call(lambda: [(p.topic.name, p.index)
                                   for p in leadership.elect_preferred_leaders(self.cluster)])

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        """Leader, leader epoch, replicas, ISR and offline replicas of a partition."""
        return self._hop.call(lambda: leadership.state_of(self.cluster, self._partition(topic, partition)))

    def set_isr(self, topic: str, partition: int, isr: list[int]) -> None:
        """Set a partition's ISR (live replicas only); a leader outside it hands over to a member."""
        self._hop.call(lambda: leadership.set_isr(self.cluster, self._partition(topic, partition), list(isr)))
