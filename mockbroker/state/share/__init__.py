"""Share groups (KIP-932): `partition.py` (one share partition: its start and end offsets and in-flight
records, each with its state, delivery count and acquisition lock on the broker clock), `group.py` (a share
group's members, epochs and their assignment by Kafka's simple assignor) <- `coordinator.py` (every share
group and share partition, the share sessions of ShareFetch / ShareAcknowledge). Pure: no I/O, no asyncio;
time comes in as `now_ms`. Imports `state/cluster/` and `state/configs.py` only. Nothing is re-exported."""
