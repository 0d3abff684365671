"""What a handler knows about a request: the node that serves it, the listener and the client.

A handler is a plain function `(ctx, header, request) -> response` (mockbroker/dispatch.py). It reaches
the broker's state through `ctx.node` (mockbroker/node.py: the node whose listener accepted the
connection, with its coordinators and fetch sessions) and the cluster-wide model through `ctx.cluster`.
This module sits below connection.py, dispatch.py and server.py, so handlers import none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker.node import BrokerNode
    from mockbroker.state.cluster.cluster import Cluster, Listener


@dataclass
class RequestContext:
    """Where a request came from: the node and listener that accepted the connection, and the client."""

    node: BrokerNode
    listener: Listener
    connection_id: int
    client_host: str
    client_port: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cluster(self) -> Cluster:
        return self.node.cluster

    @property
    def node_id(self) -> int:
        return self.node.node_id
