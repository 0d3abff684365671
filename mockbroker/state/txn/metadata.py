"""What the transaction coordinator keeps per transactional id (Kafka's TransactionMetadata), the
transaction settings with Kafka's defaults, and the mapping of
PRODUCER_FENCED / TRANSACTION_ABORTABLE to what older request versions know. No I/O; state changes go
through states.py's table (`TxnMetadata.transition`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.state.txn.states import PREPARING, TxnEvent, TxnState, next_state

if TYPE_CHECKING:
    from mockbroker.scheduler import Timer

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
EPOCH_MAX = 32767  # Short.MAX_VALUE
FEATURE_NAME = "transaction.version"
MAX_TRANSACTION_VERSION = 2
# Kafka 4.3's default for a new cluster: transaction.version 2 (TV_2 needs metadata.version 4.0-IV2, which a
# 4.3 cluster is formatted with), so Java clients 4.x use KIP-890 part 2. `transaction.version` in the
# broker config picks another level (0 or 1: clients keep AddPartitionsToTxn and EndTxn v4 and below).
DEFAULT_TRANSACTION_VERSION = 2
DEFAULTS: dict[str, int] = {
    "transaction.remove.expired.transaction.cleanup.interval.ms": 3_600_000,
    "transaction.partition.verification.enable": 1,
    "transaction.version": DEFAULT_TRANSACTION_VERSION,
    "offset.metadata.max.bytes": 4096,
}

TopicPartition = tuple[str, int]


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka keeps Short.MaxValue for fencing: an epoch at MAX - 1 takes a new producer id next."""
    return epoch >= EPOCH_MAX - 1


def fenced_for_version(code: ErrorCode, version: int, fenced_since: int) -> ErrorCode:
    """PRODUCER_FENCED as an API version older than `fenced_since` answers it: INVALID_PRODUCER_EPOCH
    (those versions predate the code; Kafka's responses downgrade it the same way)."""
    if code == ErrorCode.PRODUCER_FENCED and version < fenced_since:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


def produce_error(code: ErrorCode, version: int) -> ErrorCode:
    """A coordinator's verification answer as a Produce partition error (Kafka's AddPartitionsToTxnManager):
    PRODUCER_FENCED is INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE is INVALID_TXN_STATE before v11."""
    if code == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code == ErrorCode.TRANSACTION_ABORTABLE and version <= 10:
        return ErrorCode.INVALID_TXN_STATE
    return code


def txn_offset_commit_error(code: ErrorCode, version: int) -> ErrorCode:
    """The same mapping for TxnOffsetCommit: TRANSACTION_ABORTABLE from v4 on."""
    if code == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code == ErrorCode.TRANSACTION_ABORTABLE and version <= 3:
        return ErrorCode.INVALID_TXN_STATE
    return code


@dataclass(frozen=True, slots=True)
class PendingOffset:
    """An offset a transaction committed (TxnOffsetCommit), waiting for its COMMIT marker."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


@dataclass
class TxnMetadata:
    transactional_id: str
    producer_id: int
    timeout_ms: int
    last_update_ms: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    prev_producer_id: int = NO_PRODUCER_ID  # the producer id before the latest transition
    next_producer_id: int = NO_PRODUCER_ID  # TV2: the id to move to when this transaction completes
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    client_transaction_version: int = 0
    pending_offsets: dict[str, dict[TopicPartition, PendingOffset]] = field(default_factory=dict)
    timer: Timer | None = None

    def transition(self, event: TxnEvent) -> None:
        """Move through the state table (the only place a transaction's state changes)."""
        self.state = next_state(self.state, event)

    @property
    def markers_pending(self) -> bool:
        return self.state in PREPARING


@dataclass(frozen=True)
class TransactionInfo:
    """What `MockBroker.transactions()` reports of one transactional id."""

    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_ms: int  # -1 when no transaction was started
    last_update_ms: int
    partitions: list[TopicPartition]
    pending_offsets: dict[str, dict[TopicPartition, int]]


def valid_expected_producer(txn: TxnMetadata, producer_id: int, epoch: int) -> bool:
    """Kafka's isValidProducerId: metadata just created, the current id, or the previous id with an
    exhausted epoch (a retry after a producer id rotation whose answer was lost)."""
    return (txn.producer_epoch == NO_PRODUCER_EPOCH or producer_id == txn.producer_id
            or (producer_id == txn.prev_producer_id and is_epoch_exhausted(epoch)))


def incremented_epoch(txn: TxnMetadata, expected_epoch: int | None) -> tuple[int, int]:
    """(epoch, last epoch) after InitProducerId, as Kafka's prepareIncrementProducerEpoch."""
    bumped = txn.producer_epoch + 1
    if expected_epoch is None:
        return bumped, NO_PRODUCER_EPOCH
    if txn.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == txn.producer_epoch:
        return bumped, txn.producer_epoch
    if expected_epoch == txn.last_producer_epoch:
        return txn.producer_epoch, txn.last_producer_epoch  # a retry of a bump that succeeded
    raise KafkaError(ErrorCode.PRODUCER_FENCED, f"Expected producer epoch {expected_epoch} does not match "
                     f"current producer epoch {txn.producer_epoch} or previous producer epoch "
                     f"{txn.last_producer_epoch}")
