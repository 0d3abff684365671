"""Transactions: the state table (`states.py`), what is kept per transactional id (`metadata.py`), who
may commit offsets in a transaction (`offsets.py`), the transaction coordinator from InitProducerId to
EndTxn, markers and timeouts (`coordinator.py`) and its inspection (`inspection.py`: Describe/
ListTransactions, `broker.transactions()`). Imports `mockbroker.state.configs`, `state/log/`,
`state/cluster/` and `state/groups/`, never `state/coordinators/`. Nothing is re-exported: import each
module by its full path."""
