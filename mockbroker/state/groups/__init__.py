"""Consumer groups: the shared pieces (`common.py`, the state tables of `states.py`, committed offsets of
`offsets.py`), classic groups (`classic_members.py` <- `classic_state.py` <- `classic.py`), KIP-848
consumer groups (`consumer_assignors.py` <- `consumer.py`) and the group coordinator routing each request
to its group (`coordinator.py`). Imports `mockbroker.state.configs` and `state/cluster/`, never
transactions or the coordinators' logs (they call in through hooks set on the coordinator). Nothing is
re-exported: import each module by its full path."""
