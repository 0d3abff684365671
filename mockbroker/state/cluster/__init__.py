"""The cluster-wide model: nodes, topics and partitions (`cluster.py`), where replicas go, how far each
replica's copy reaches, leaders, elections and the ISR, reassignments, the preferred read replica, Kafka's
internal topics (which partition, so which node, coordinates a group or transactional id) and appending a
client's records to a partition (`appender.py`). Imports `mockbroker.state.configs` and `state/log/`,
never groups, transactions or coordinators. One name is re-exported, for users: `Listener`, which
`MockBroker(listeners=[...])` takes and the README names as `mockbroker.state.cluster.Listener`; inside
mockbroker, import each module by its full path."""

from mockbroker.state.cluster.cluster import Listener

__all__ = ["Listener"]
