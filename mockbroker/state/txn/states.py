"""The transaction state machine, as ONE table (the h11 `_state.py` habit): Kafka's TransactionState.

`next_state(state, event)` is the only way a transaction changes state (TxnMetadata.transition calls it;
nothing else assigns a state). A pair missing from the table is a bug of the coordinator, never a
client's error: the coordinator checks the request first and answers Kafka's error code, then moves.

States (their names are what DescribeTransactions and ListTransactions answer):
- Empty: no transaction in progress (after InitProducerId).
- Ongoing: partitions (or a group's offsets) were added; data may be written.
- PrepareCommit / PrepareAbort: EndTxn (or the coordinator) decided; markers are being written.
- CompleteCommit / CompleteAbort: every marker is written.
- PrepareEpochFence: an Ongoing transaction whose producer is being fenced (InitProducerId by a new
  instance, or the transaction timed out); it is aborted with the bumped epoch at once.
- Dead: the transactional id expired (transactional.id.expiration.ms) and is being removed.

Kafka keeps the table as "valid previous states" per target state; this is the same table keyed by
what happens. Transaction version 2 (KIP-890 part 2) adds one edge: an abort with nothing added to the
transaction (from Empty, CompleteCommit or CompleteAbort) goes to PrepareAbort.
"""

from __future__ import annotations

from enum import Enum


class TxnState(Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


class TxnEvent(Enum):
    INIT_PRODUCER_ID = "init_producer_id"  # InitProducerId: epoch bump or a new producer id
    ADD_PARTITIONS = "add_partitions"  # AddPartitionsToTxn, AddOffsetsToTxn, Produce v12+, TxnOffsetCommit v5
    FENCE_EPOCH = "fence_epoch"  # an Ongoing transaction's producer is fenced before the abort
    END_COMMIT = "end_commit"  # EndTxn(commit)
    END_ABORT = "end_abort"  # EndTxn(abort), or the coordinator's abort after a fence
    ABORT_EMPTY = "abort_empty"  # transaction version 2: EndTxn(abort) with nothing in the transaction
    MARKERS_WRITTEN = "markers_written"  # every partition of the transaction has its marker
    EXPIRE = "expire"  # transactional.id.expiration.ms passed since the last update


S, E = TxnState, TxnEvent

TRANSITIONS: dict[tuple[TxnState, TxnEvent], TxnState] = {
    (S.EMPTY, E.INIT_PRODUCER_ID): S.EMPTY,
    (S.COMPLETE_COMMIT, E.INIT_PRODUCER_ID): S.EMPTY,
    (S.COMPLETE_ABORT, E.INIT_PRODUCER_ID): S.EMPTY,

    (S.EMPTY, E.ADD_PARTITIONS): S.ONGOING,
    (S.ONGOING, E.ADD_PARTITIONS): S.ONGOING,
    (S.COMPLETE_COMMIT, E.ADD_PARTITIONS): S.ONGOING,
    (S.COMPLETE_ABORT, E.ADD_PARTITIONS): S.ONGOING,

    (S.ONGOING, E.FENCE_EPOCH): S.PREPARE_EPOCH_FENCE,

    (S.ONGOING, E.END_COMMIT): S.PREPARE_COMMIT,
    (S.ONGOING, E.END_ABORT): S.PREPARE_ABORT,
    (S.PREPARE_EPOCH_FENCE, E.END_ABORT): S.PREPARE_ABORT,
    (S.EMPTY, E.ABORT_EMPTY): S.PREPARE_ABORT,
    (S.COMPLETE_COMMIT, E.ABORT_EMPTY): S.PREPARE_ABORT,
    (S.COMPLETE_ABORT, E.ABORT_EMPTY): S.PREPARE_ABORT,

    (S.PREPARE_COMMIT, E.MARKERS_WRITTEN): S.COMPLETE_COMMIT,
    (S.PREPARE_ABORT, E.MARKERS_WRITTEN): S.COMPLETE_ABORT,

    (S.EMPTY, E.EXPIRE): S.DEAD,
    (S.COMPLETE_COMMIT, E.EXPIRE): S.DEAD,
    (S.COMPLETE_ABORT, E.EXPIRE): S.DEAD,
}

# States in which markers are pending: Kafka's "pending transition in progress" while it writes them.
PREPARING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT})
# States a transactional id may expire from (Kafka's isExpirationAllowed).
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})
_BY_NAME = {s.value: s for s in TxnState}

del S, E


class InvalidTransition(RuntimeError):
    """A transition the table does not hold: a coordinator bug (Kafka's IllegalStateException)."""


def next_state(state: TxnState, event: TxnEvent) -> TxnState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise InvalidTransition(f"no transition from {state.value} on {event.value}") from None


def state_by_name(name: str) -> TxnState | None:
    """The state with this name as the protocol spells it ("Ongoing"), or None."""
    return _BY_NAME.get(name)
