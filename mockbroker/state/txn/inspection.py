"""What tests and the admin APIs read of the transaction coordinator: DescribeTransactions entries,
ListTransactions' filters (Kafka's listTransactionStates), and MockBroker.transactions()."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from mockbroker.errors import ErrorCode
from mockbroker.state.txn.metadata import TransactionInfo
from mockbroker.state.txn.states import TxnState, state_by_name

if TYPE_CHECKING:
    from mockbroker.state.txn.coordinator import TxnCoordinator


def describe_transaction(coordinator: TxnCoordinator, transactional_id: str) -> dict[str, Any]:
    """One DescribeTransactions entry (fields as the response names them)."""
    out: dict[str, Any] = {"transactional_id": transactional_id, "transaction_state": "",
                           "transaction_timeout_ms": 0, "transaction_start_time_ms": -1, "producer_id": -1,
                           "producer_epoch": -1, "topics": []}
    if transactional_id == "":
        return {**out, "error_code": ErrorCode.INVALID_REQUEST}
    txn = coordinator.txns.get(transactional_id)
    if txn is None or txn.state == TxnState.DEAD:
        return {**out, "error_code": ErrorCode.TRANSACTIONAL_ID_NOT_FOUND}
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(txn.partitions):
        by_topic.setdefault(topic, []).append(index)
    return {**out, "error_code": ErrorCode.NONE, "transaction_state": txn.state.value,
            "transaction_timeout_ms": txn.timeout_ms, "transaction_start_time_ms": txn.start_ms,
            "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]}


def list_transactions(coordinator: TxnCoordinator, state_filters: list[str], producer_id_filters: list[int],
                      duration_filter_ms: int = -1,
                      transactional_id_pattern: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """(unknown state filters, matching transactions) as Kafka's listTransactionStates. A duration filter
    >= 0 keeps transactions started more than that long ago; a pattern must match the whole id."""
    unknown = [name for name in state_filters if state_by_name(name) is None]
    wanted_states = {state_by_name(name) for name in state_filters} - {None}
    pattern = re.compile(transactional_id_pattern) if transactional_id_pattern else None
    now = coordinator.clock.now_ms()
    out = []
    for txid, txn in sorted(coordinator.txns.items()):
        if txn.state == TxnState.DEAD:
            continue
        if producer_id_filters and txn.producer_id not in producer_id_filters:
            continue
        if state_filters and txn.state not in wanted_states:
            continue
        if duration_filter_ms >= 0 and now - txn.start_ms <= duration_filter_ms:
            continue
        if pattern is not None and not pattern.fullmatch(txid):
            continue
        out.append({"transactional_id": txid, "producer_id": txn.producer_id,
                    "transaction_state": txn.state.value})
    return unknown, out


def transactions(coordinator: TxnCoordinator) -> list[TransactionInfo]:
    """What MockBroker.transactions() reports: every transactional id, its state and open transaction."""
    return [
        TransactionInfo(
            transactional_id=txid, state=txn.state.value, producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch, timeout_ms=txn.timeout_ms, start_ms=txn.start_ms,
            last_update_ms=txn.last_update_ms, partitions=sorted(txn.partitions),
            pending_offsets={g: {tp: o.offset for tp, o in sorted(offs.items())}
                             for g, offs in sorted(txn.pending_offsets.items())},
        )
        for txid, txn in sorted(coordinator.txns.items())
    ]
