"""One node of the cluster as this process runs it: Kafka's broker server, without the I/O.

The cluster-wide model stays shared (state/cluster/cluster.py: topics, partitions with their leader, epoch and
replicas, the nodes Metadata lists, every listener). What Kafka keeps per broker lives here:
- its id and rack (the rack is the cluster's record of the node, cluster.nodes[id]);
- its listeners (the cluster's listeners that belong to this node);
- its view of partition leadership (`leads`): it serves Produce and Fetch only for the partitions it
  leads;
- its coordinators: a node coordinates the groups and transactional ids whose __consumer_offsets /
  __transaction_state partition it leads (state/cluster/internal_topics.py), as in Kafka; requests for the
  others get NOT_COORDINATOR (`group_coordinator_error`, `txn_coordinator_error`);
- its fetch session cache (KIP-227 sessions belong to the broker that opened them) and its append path.

Every connection is bound to the node whose listener accepted it; handlers reach state through
`ctx.node` (mockbroker/context.py). Several nodes in one process are more BrokerNode objects over the
same Cluster, clock and scheduler; they share one group and one transaction coordinator object (the
state of every group and transactional id), and each node serves the keys of the internal partitions it
leads, so when such a partition's leader moves or its node stops, its coordinator moves with the state.
Every change of that state is written to the internal topics (state/coordinators/log.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockbroker.carried_on import CarriedOn
from mockbroker.errors import ErrorCode
from mockbroker.personas import FULL, Persona
from mockbroker.state.cluster.appender import Appender
from mockbroker.state.cluster.internal_topics import OFFSETS_TOPIC, TXN_TOPIC, coordinator_node
from mockbroker.state.fetch_sessions import FetchSessionCache
from mockbroker.state.groups.coordinator import GroupCoordinator
from mockbroker.state.quota_rates import QuotaSensors
from mockbroker.state.share.coordinator import ShareCoordinator
from mockbroker.state.txn.coordinator import TxnCoordinator

_log = logging.getLogger("mockbroker")

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.scheduler import Scheduler
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.cluster.cluster import Cluster, Listener, Partition
    from mockbroker.state.coordinators.log import CoordinatorLog


class BrokerNode:
    def __init__(self, node_id: int, cluster: Cluster, clock: Clock, scheduler: Scheduler, *,
                 security: BrokerSecurity, coordinators_of: BrokerNode | None = None,
                 persona: Persona = FULL) -> None:
        """coordinators_of: the node whose group and transaction coordinators this one shares (several
        nodes in one process keep one of each, which FindCoordinator places on the lowest live node);
        persona: the Kafka release it plays, which narrows the versions it serves (personas.py)."""
        self.node_id = node_id
        self.persona = persona
        self.cluster = cluster
        # Users and TLS material are the cluster's (Kafka keeps SCRAM credentials in its metadata log):
        # every node of this process shares one BrokerSecurity.
        self.security = security
        self.clock = clock
        self.scheduler = scheduler
        self.appender = Appender()
        self.appender.appended = cluster.changes.notify  # the waits look again (mockbroker/waits.py)
        self._coordinators_of = coordinators_of
        self._coordinator_log: CoordinatorLog | None = None  # made on first use (coordinator_log)
        if coordinators_of is not None:
            self.txn_coordinator: TxnCoordinator = coordinators_of.txn_coordinator
        else:
            self.txn_coordinator = TxnCoordinator(cluster, clock, scheduler, groups=lambda: self.group_coordinator)
            txn = self.txn_coordinator
            txn.listener = lambda tid, meta: self.coordinator_log.txn_changed(tid, meta, txn.transaction_version)
        self.appender.txn_check = self.txn_coordinator.check_produce
        self.quota_sensors = QuotaSensors(cluster.quotas)  # this broker's quota rates (Kafka's are per broker)
        self.fetch_sessions = FetchSessionCache(int(cluster.config.get("max.incremental.fetch.session.cache.slots")))
        self._group_coordinator: GroupCoordinator | None = None
        self._share_coordinator: ShareCoordinator | None = None
        # The rest of requests whose connection went away mid-way (handlers/support/request_steps.py); the
        # broker's stop waits for it.
        self.carried_on = CarriedOn()

    @property
    def coordinator_log(self) -> CoordinatorLog:
        """What writes the coordinators' state to the internal topics (state/coordinators/log.py): one for the
        nodes sharing coordinators, made (and its record formats imported) when a coordinator first writes."""
        if self._coordinators_of is not None:
            return self._coordinators_of.coordinator_log
        if self._coordinator_log is None:
            from mockbroker.state.coordinators.log import CoordinatorLog
            self._coordinator_log = CoordinatorLog(self.cluster, self.clock)
        return self._coordinator_log

    # -- identity --------------------------------------------------------------------------------
    @property
    def rack(self) -> str | None:
        return self.cluster.nodes[self.node_id].rack

    @rack.setter
    def rack(self, rack: str | None) -> None:
        self.cluster.nodes[self.node_id].rack = rack

    @property
    def listeners(self) -> list[Listener]:
        """This node's listeners, in the cluster's order."""
        return [lst for lst in self.cluster.listeners if lst.node_id == self.node_id]

    # -- leadership ------------------------------------------------------------------------------
    def leads(self, partition: Partition) -> bool:
        """Whether this node is the partition's leader (else NOT_LEADER_OR_FOLLOWER for Produce/Fetch)."""
        return partition.leader_id == self.node_id

    # -- coordinators ----------------------------------------------------------------------------
    def group_coordinator_id(self, group_id: str) -> int:
        """The node coordinating a group: the leader of its __consumer_offsets partition (-1: offline);
        the topic is created on first use, as Kafka's FindCoordinator does."""
        return coordinator_node(self.cluster, OFFSETS_TOPIC, group_id)

    def txn_coordinator_id(self, transactional_id: str) -> int:
        """The node coordinating a transactional id: the leader of its __transaction_state partition."""
        return coordinator_node(self.cluster, TXN_TOPIC, transactional_id)

    def group_coordinator_error(self, group_id: str | None) -> ErrorCode | None:
        """NOT_COORDINATOR when another node (or none, the partition offline) coordinates the group; None
        when this node does, or for an empty group id (which the request's own checks refuse)."""
        if not group_id or self.group_coordinator_id(group_id) == self.node_id:
            return None
        return ErrorCode.NOT_COORDINATOR

    def txn_coordinator_error(self, transactional_id: str | None) -> ErrorCode | None:
        """NOT_COORDINATOR when another node coordinates the transactional id (None for no id)."""
        if not transactional_id or self.txn_coordinator_id(transactional_id) == self.node_id:
            return None
        return ErrorCode.NOT_COORDINATOR

    @property
    def group_coordinator(self) -> GroupCoordinator:
        """Every group this node coordinates and their committed offsets (made on first use)."""
        if self._coordinators_of is not None:
            return self._coordinators_of.group_coordinator
        if self._group_coordinator is None:
            txn = self.txn_coordinator
            self._group_coordinator = GroupCoordinator(
                self.cluster, self.scheduler, self.clock,
                pending_transactional_offsets=lambda g, t, p: txn.has_pending_offsets(g, t, p))
            self._group_coordinator.offsets.listener = self.coordinator_log.offset_changed
            self._group_coordinator.group_listener = self.coordinator_log.group_changed
            self._group_coordinator.group_loaded = self.coordinator_log.consumer_groups.remember
        return self._group_coordinator

    @property
    def share_coordinator(self) -> ShareCoordinator:
        """Every share group and share partition (KIP-932), made on first use; the clock's advance expires
        acquisition locks and silent members."""
        if self._coordinators_of is not None:
            return self._coordinators_of.share_coordinator
        if self._share_coordinator is None:
            share = self._share_coordinator = ShareCoordinator(self.cluster)

            def expire() -> None:
                share.expire(self.clock.now_ms())

            def wake_at(due_ms: int) -> None:
                self.scheduler.call_at(due_ms, expire)

            share.wake_at = wake_at
            share.aborted_entries = self.txn_coordinator.aborted.entries
            share.now_ms = self.clock.now_ms
            from mockbroker.state.coordinators.share_state_load import load_share_state
            share.load(load_share_state(self.cluster, _log.warning))  # a data dir's __share_group_state
            share.store.append = self.coordinator_log.share_state_append
            share.group_log.append = self.coordinator_log.share_group_append
            self.clock.on_advance(expire)
        return self._share_coordinator

    @property
    def share_coordinator_started(self) -> bool:
        """Whether the share coordinator was made (looking must not make it)."""
        owner = self._coordinators_of if self._coordinators_of is not None else self
        return owner._share_coordinator is not None

    @property
    def group_coordinator_started(self) -> bool:
        """Whether any group was ever asked for here (looking must not make the coordinator)."""
        return self._group_coordinator is not None

    def aborted_transactions(self, partition: Partition, start: int, end: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of aborted transactions overlapping [start, end) (read_committed)."""
        return self.txn_coordinator.aborted.aborted_transactions(partition.log, start, end)
