"""The coordinators' state in Kafka's internal topics: their changes written to `__consumer_offsets` and
`__transaction_state` as Kafka's records (`log.py`, and `consumer_group_log.py` for KIP-848 groups),
state rebuilt from those records (`replay.py`) and the coordinators loaded from them once at start on a
data dir (`load.py`, `consumer_group_load.py`). The top of the model: may import every other part of
`state/`, and nothing in `state/` imports it. Nothing is re-exported: import each module by its full
path."""
