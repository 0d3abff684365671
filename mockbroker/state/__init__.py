"""The broker's model, without I/O or asyncio: driven by unit tests without sockets. Its sub-packages
import one way, each only from those before it: `copying.py` (fast copies for snapshots) <- `configs.py`,
`fetch_sessions.py` and `client_metrics.py` (settings, KIP-227 sessions, KIP-714 client telemetry) <- `log/`
(one partition's log) <- `cluster/` (nodes, topics, partitions, replicas,
leaders, the internal topics, appending) <- `groups/` (consumer groups and their offsets) <- `txn/`
(transactions) <- `coordinators/` (the coordinators' state written to and loaded from the internal
topics). tests/test_architecture.py keeps the order. Nothing is re-exported: import each module by its
full path."""
