"""Group state machines, each as one table: transitions happen here and nowhere else.

Classic groups (JoinGroup/SyncGroup) move between five states on events, as Kafka's ClassicGroupState
allows (the h11 `_state.py` habit: the table below is the whole machine; `ClassicGroup` asks
`next_state()` and never assigns a state itself):

    Empty ──PREPARE_REBALANCE──▶ PreparingRebalance ──JOIN_COMPLETE──▶ CompletingRebalance
      ▲                              │      ▲                               │
      └──────JOIN_COMPLETE_EMPTY─────┘      └──────PREPARE_REBALANCE────────┤
                                            ▲                               ASSIGNMENT_SET
                                            └──PREPARE_REBALANCE── Stable ◀─┘
    any state ──DELETE──▶ Dead (DeleteGroups, expired offsets of an empty group)

KIP-848 consumer groups have no event table in Kafka: their state is a function of the group epoch, the
target assignment epoch and whether every member has reconciled (ConsumerGroup.maybeUpdateGroupState).
`consumer_group_state()` is that function. Their members have their own three-state reconciliation
machine (CurrentAssignmentBuilder); `MemberState` names those states and `consumer_group_state` reads them.
"""

from __future__ import annotations

from enum import Enum

from mockbroker.errors import ErrorCode, KafkaError


class ClassicState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class ClassicEvent(Enum):
    PREPARE_REBALANCE = "prepare_rebalance"  # a member joins, leaves, changes metadata or fails
    JOIN_COMPLETE = "join_complete"  # every expected member joined (or the rebalance timeout passed)
    JOIN_COMPLETE_EMPTY = "join_complete_empty"  # ... and no member is left
    ASSIGNMENT_SET = "assignment_set"  # the leader's SyncGroup delivered the assignment
    DELETE = "delete"  # DeleteGroups, or the group expired with its offsets


E, P, C, S, D = (ClassicState.EMPTY, ClassicState.PREPARING_REBALANCE, ClassicState.COMPLETING_REBALANCE,
                 ClassicState.STABLE, ClassicState.DEAD)

CLASSIC_TRANSITIONS: dict[ClassicState, dict[ClassicEvent, ClassicState]] = {
    E: {ClassicEvent.PREPARE_REBALANCE: P, ClassicEvent.DELETE: D},
    P: {ClassicEvent.JOIN_COMPLETE: C, ClassicEvent.JOIN_COMPLETE_EMPTY: E, ClassicEvent.DELETE: D},
    C: {ClassicEvent.ASSIGNMENT_SET: S, ClassicEvent.PREPARE_REBALANCE: P, ClassicEvent.DELETE: D},
    S: {ClassicEvent.PREPARE_REBALANCE: P, ClassicEvent.DELETE: D},
    D: {ClassicEvent.DELETE: D},
}


def next_state(state: ClassicState, event: ClassicEvent) -> ClassicState:
    """The state a classic group moves to on `event`; an event the table does not allow is a bug of ours."""
    try:
        return CLASSIC_TRANSITIONS[state][event]
    except KeyError:
        raise RuntimeError(f"classic group: no transition from {state.value} on {event.value}") from None


def can_rebalance(state: ClassicState) -> bool:
    """Kafka's ClassicGroup.canRebalance: may a rebalance start from this state?"""
    return ClassicEvent.PREPARE_REBALANCE in CLASSIC_TRANSITIONS[state]


def classic_state_from_name(name: str) -> ClassicState:
    for s in ClassicState:
        if s.value.lower() == name.lower():
            return s
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown classic group state {name}")


# -- KIP-848 ----------------------------------------------------------------------------------------


class ConsumerState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(Enum):
    """A KIP-848 member's reconciliation state (Kafka's MemberState)."""

    STABLE = "stable"  # owns exactly its target assignment at the target epoch
    UNREVOKED_PARTITIONS = "unrevoked_partitions"  # must give partitions up before its epoch moves on
    UNRELEASED_PARTITIONS = "unreleased_partitions"  # waits for partitions another member still owns


def consumer_group_state(member_count: int, group_epoch: int, assignment_epoch: int,
                         all_reconciled: bool) -> ConsumerState:
    """Kafka's ConsumerGroup.maybeUpdateGroupState, as a function."""
    if member_count == 0:
        return ConsumerState.EMPTY
    if group_epoch > assignment_epoch:
        return ConsumerState.ASSIGNING
    if not all_reconciled:
        return ConsumerState.RECONCILING
    return ConsumerState.STABLE
