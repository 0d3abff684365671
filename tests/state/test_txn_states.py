"""The transaction state table (mockbroker/state/txn/states.py): Kafka's TransactionState, one table."""

from __future__ import annotations

import pytest

from mockbroker.state.txn.states import (
    EXPIRATION_ALLOWED,
    PREPARING,
    TRANSITIONS,
    InvalidTransition,
    TxnEvent,
    TxnState,
    next_state,
    state_by_name,
)

S = TxnState

# Kafka's TransactionState.validPreviousStates, target -> allowed sources.
KAFKA_VALID_PREVIOUS = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}


def test_state_names_are_the_ones_the_protocol_answers() -> None:
    assert [s.value for s in TxnState] == ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                                           "CompleteAbort", "Dead", "PrepareEpochFence"]
    assert state_by_name("Ongoing") is S.ONGOING
    assert state_by_name("ongoing") is None


def test_table_allows_exactly_kafkas_valid_previous_states() -> None:
    sources: dict[TxnState, set[TxnState]] = {s: set() for s in TxnState}
    for (source, _event), target in TRANSITIONS.items():
        sources[target].add(source)
    assert sources == KAFKA_VALID_PREVIOUS


@pytest.mark.parametrize("state", list(TxnState))
@pytest.mark.parametrize("event", list(TxnEvent))
def test_every_pair_outside_the_table_is_refused(state: TxnState, event: TxnEvent) -> None:
    if (state, event) in TRANSITIONS:
        assert next_state(state, event) is TRANSITIONS[(state, event)]
    else:
        with pytest.raises(InvalidTransition):
            next_state(state, event)


def test_only_an_ongoing_transaction_is_fenced_and_only_prepare_states_complete() -> None:
    assert next_state(S.ONGOING, TxnEvent.FENCE_EPOCH) is S.PREPARE_EPOCH_FENCE
    assert next_state(S.PREPARE_EPOCH_FENCE, TxnEvent.END_ABORT) is S.PREPARE_ABORT
    assert {s for (s, e) in TRANSITIONS if e is TxnEvent.MARKERS_WRITTEN} == PREPARING
    assert EXPIRATION_ALLOWED == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
