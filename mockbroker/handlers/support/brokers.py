"""The broker list Metadata and DescribeCluster answer: the nodes with their address on the client's listener
(a client on the "internal" listener learns internal addresses; one on "external", external ones)."""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.protocol.messages import Msg


def brokers_for(ctx: RequestContext, include_stopped: bool = False) -> list[Msg]:
    """The running nodes (and the stopped ones when asked) with their address on the client's listener."""
    out = []
    for node_id, node in sorted(ctx.cluster.nodes.items()):
        if not node.alive and not include_stopped:
            continue
        listener = next(
            (lst for lst in ctx.cluster.listeners if lst.node_id == node_id and lst.name == ctx.listener.name),
            None,
        )
        if listener is None:
            continue
        out.append(Msg(node_id=node_id, host=listener.public_host, port=listener.public_port, rack=node.rack))
    return out
