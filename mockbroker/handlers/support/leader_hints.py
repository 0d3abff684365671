"""KIP-951 leader hints (no API key of its own): what Produce v10+ and Fetch v12+ answers carry when a
partition was sent to a node that does not lead it (NOT_LEADER_OR_FOLLOWER) or with a stale epoch
(FENCED_LEADER_EPOCH): the current leader's id and epoch per partition (current_leader) and, at the
top level, the endpoints of those leaders for the client's listener (node_endpoints; Fetch from v16),
so the client can go there without a Metadata round trip. As Kafka, the hints are left out when the
partition has no leader.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import Partition

HINTED_ERRORS = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


def current_leader(partition: Partition | None, code: int) -> Msg | None:
    """The current_leader field for a partition answered with `code` (None: left at its default)."""
    if partition is None or code not in HINTED_ERRORS or partition.leader_id < 0:
        return None
    return Msg(leader_id=partition.leader_id, leader_epoch=partition.leader_epoch)


def node_endpoints(ctx: RequestContext, leader_ids: set[int]) -> list[Msg]:
    """The endpoints of the given nodes for the client's listener (live nodes only), in id order."""
    out = []
    for node_id in sorted(leader_ids):
        node = ctx.cluster.nodes.get(node_id)
        if node is None or not node.alive:
            continue
        listener = next((lst for lst in ctx.cluster.listeners
                         if lst.node_id == node_id and lst.name == ctx.listener.name), None)
        if listener is not None:
            out.append(Msg(node_id=node_id, host=listener.public_host, port=listener.public_port, rack=node.rack))
    return out
