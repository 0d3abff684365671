"""One partition's log: stored batches, producer state, segments, the log and its indexes, the aborted
transactions index, validation of a batch before it is stored, retention and the cleaner, and the hooks a
data dir plugs in (`storage_hooks.py`). Imports only `mockbroker.state.configs` of the model (and the
protocol's record batches): it knows nothing of nodes, replicas, groups or the coordinators, which drive
it from above. Nothing is re-exported: import each module by its full path."""
