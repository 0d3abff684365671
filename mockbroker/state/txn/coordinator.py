"""The transaction coordinator, as Kafka's TransactionCoordinator and TransactionStateManager behave.

No I/O and no asyncio. One object serves every transactional id of the cluster; which node serves an id
(the leader of its __transaction_state partition) is mockbroker/node.py's business, so a coordinator move
needs no loading. The TxnMetadata kept here is what requests are served from; each state change is also
told to `listener`, which writes it to __transaction_state (state/coordinators/log.py). State changes go through the table in
states.py (`TxnMetadata.transition`), and nowhere else.

What it does:
- InitProducerId with a transactional id: a producer id per transactional id and an epoch bumped on
  every init, which fences the previous instance. An Ongoing transaction is fenced first (epoch + 1)
  and aborted, and the caller gets CONCURRENT_TRANSACTIONS (it retries and gets the next epoch). A
  transaction whose markers are still pending: CONCURRENT_TRANSACTIONS. KIP-360 checks of the expected
  producer id and epoch, and a new producer id when the epoch is exhausted (32766).
- AddPartitionsToTxn / AddOffsetsToTxn (the group's __consumer_offsets partition) / KIP-890 part 1
  verification of a transactional Produce or TxnOffsetCommit, and part 2 (transaction version 2): the
  partition is added by the Produce v12+ or TxnOffsetCommit v5 itself.
- EndTxn: the decision (PrepareCommit / PrepareAbort), then a control batch per partition of the
  transaction, appended through the partition's log so its producer state and last stable offset move,
  then CompleteCommit / CompleteAbort. An ABORT marker also goes into the partition's aborted-transaction
  index (producer id, first offset, last offset), which read_committed fetches list. With transaction
  version 2 (EndTxn v5) every EndTxn bumps the epoch and the markers carry the bumped epoch.
- TxnOffsetCommit: offsets wait in the transaction and reach the group's committed offsets with the
  COMMIT marker (an abort drops them).
- Timeouts: an Ongoing transaction older than its transaction.timeout.ms is fenced and aborted on the
  broker clock, so its producer's next request fails. Kafka looks for those every
  transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s); here a timer per transaction fires
  right after its deadline, so a test that advances the clock past the timeout sees the abort at once.
- Transactional ids idle in Empty/CompleteCommit/CompleteAbort for transactional.id.expiration.ms are
  removed (checked every transaction.remove.expired.transaction.cleanup.interval.ms, 1 h).

transaction.version (KIP-890's feature): ApiVersions v3+ reports it supported 0-2 and finalized at 2,
the level a Kafka 4.3 cluster is formatted with (TV_2 needs metadata.version 4.0-IV2, below 4.3's default),
so Java clients 4.x use transaction version 2; the broker config `transaction.version` picks 0 or 1.

Markers are written synchronously, so PrepareCommit/PrepareAbort last only inside a call, as long as
`hold_markers` is False; a test sets it to keep transactions there (to see CONCURRENT_TRANSACTIONS) and
calls `release_markers()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.records.batch import ControlType, RecordBatch
from mockbroker.protocol.records.builder import build_control_batch
from mockbroker.state.cluster.internal_topics import (
    OFFSETS_TOPIC,
    TXN_TOPIC,
    offsets_partition_for,
    partition_of,
)
from mockbroker.state.log.aborted_index import AbortedIndex, AbortedTxn
from mockbroker.state.log.validation import RejectedBeforeAppend
from mockbroker.state.txn.metadata import (
    DEFAULTS,
    EPOCH_MAX,
    FEATURE_NAME,
    MAX_TRANSACTION_VERSION,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    PendingOffset,
    TopicPartition,
    TxnMetadata,
    incremented_epoch,
    is_epoch_exhausted,
    produce_error,
    txn_offset_commit_error,
    valid_expected_producer,
)
from mockbroker.state.txn.offsets import validate_transactional_commit
from mockbroker.state.txn.states import (
    EXPIRATION_ALLOWED,
    PREPARING,
    TxnEvent,
    TxnState,
)

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.scheduler import Scheduler, Timer
    from mockbroker.state.cluster.cluster import Cluster, Partition
    from mockbroker.state.log.partition_log import PartitionLog

class TxnCoordinator:
    def __init__(self, cluster: Cluster, clock: Clock, scheduler: Scheduler | None = None,
                 groups: Callable[[], Any] | None = None) -> None:
        """groups: returns the group coordinator (mockbroker.state.groups.coordinator.GroupCoordinator) when groups are
        served, else None; TxnOffsetCommit validates the group with it and committed offsets land in it."""
        self.cluster = cluster
        self.clock = clock
        self.scheduler = scheduler
        self._groups = groups or (lambda: None)
        self.txns: dict[str, TxnMetadata] = {}
        # The coordinator epoch Kafka puts in markers: the leader epoch of the transactional id's
        # __transaction_state partition, taken as each transaction's markers are written.
        self.coordinator_epoch = 0
        self.transaction_version = min(int(self._setting("transaction.version")), MAX_TRANSACTION_VERSION)
        self.features_epoch = 1
        self.hold_markers = False
        self._held: list[tuple[str, bool]] = []
        self.aborted = AbortedIndex()  # every partition's aborted-transaction index (read_committed)
        # Offsets committed by transactions while no group coordinator is served: group -> tp -> offset.
        self.committed_offsets: dict[str, dict[TopicPartition, PendingOffset]] = {}
        self._expiry_timer: Timer | None = None
        # Told of each state change of a transactional id, None when it is removed: the coordinator's log
        # (state/coordinators/log.py) writes it to __transaction_state.
        self.listener: Callable[[str, TxnMetadata | None], None] | None = None

    def _changed(self, txn: TxnMetadata) -> None:
        self.cluster.changes.notify()  # the waits (mockbroker/waits.py) look again
        if self.listener is not None:
            self.listener(txn.transactional_id, txn)

    # -- settings --------------------------------------------------------------------------------
    def _setting(self, key: str) -> int:
        from mockbroker.state.configs import BROKER_CONFIGS

        config = self.cluster.config
        if key in BROKER_CONFIGS:
            return int(config.get(key))
        raw = config.unknown.get(key)
        if raw is None:
            return DEFAULTS[key]
        if raw.lower() in ("true", "false"):
            return int(raw.lower() == "true")
        return int(raw)

    def set_transaction_version(self, level: int) -> None:
        """Finalize another transaction.version (what ApiVersions tells clients); a new features epoch."""
        if not 0 <= level <= MAX_TRANSACTION_VERSION:
            raise ValueError(f"transaction.version must be 0..{MAX_TRANSACTION_VERSION}")
        self.transaction_version = level
        self.features_epoch += 1

    def api_versions_features(self, api_version: int) -> dict[str, Any]:
        """ApiVersions v3+ tagged fields: supported and finalized features (Kafka's ApiVersionsResponse:
        below v4 a supported feature whose minimum is 0 is left out, KAFKA-17492; a finalized level 0 is
        left out too)."""
        if api_version < 3:
            return {}
        supported = [] if api_version < 4 else [{"name": FEATURE_NAME, "min_version": 0,
                                                   "max_version": MAX_TRANSACTION_VERSION}]
        finalized = [] if self.transaction_version == 0 else [
            {"name": FEATURE_NAME, "max_version_level": self.transaction_version,
             "min_version_level": self.transaction_version}]
        return {"supported_features": supported, "finalized_features_epoch": self.features_epoch,
                "finalized_features": finalized}

    def offsets_partition(self, group_id: str) -> TopicPartition:
        return OFFSETS_TOPIC, offsets_partition_for(group_id, int(self._setting("offsets.topic.num.partitions")))

    # -- InitProducerId ----------------------------------------------------------------------------
    def init_producer_id(self, transactional_id: str, timeout_ms: int,
                         expected: tuple[int, int] | None = None) -> tuple[int, int]:
        """(producer id, epoch) for a transactional producer; raises KafkaError with Kafka's code.
        expected: the (producer id, epoch) the request names (v3+, KIP-360), None for (-1, -1)."""
        if transactional_id == "":
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Transactional id must not be empty")
        if not 0 < timeout_ms <= int(self._setting("transaction.max.timeout.ms")):
            raise KafkaError(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        now = self.clock.now_ms()
        txn = self.txns.get(transactional_id)
        if txn is None:
            txn = TxnMetadata(transactional_id, self.cluster.allocate_producer_id(), timeout_ms, now)
            self.txns[transactional_id] = txn
            self._ensure_expiry_check()
        if txn.markers_pending:
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        if expected is not None and not valid_expected_producer(txn, *expected):
            raise KafkaError(ErrorCode.PRODUCER_FENCED)
        if txn.state == TxnState.ONGOING:
            # Fence the current producer and abort its transaction; the caller retries (and then gets
            # the next epoch, or a new producer id if fencing exhausted this one's epochs).
            self._fence_and_abort(txn)
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        if txn.state not in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        if is_epoch_exhausted(txn.producer_epoch) and (expected is None or expected[1] == txn.producer_epoch):
            new_epoch, last_epoch = 0, (txn.producer_epoch if expected is not None else NO_PRODUCER_EPOCH)
            new_id = self.cluster.allocate_producer_id()
        else:
            new_id = txn.producer_id
            new_epoch, last_epoch = incremented_epoch(txn, None if expected is None else expected[1])
        txn.prev_producer_id = txn.producer_id
        txn.producer_id = new_id
        txn.producer_epoch, txn.last_producer_epoch = new_epoch, last_epoch
        txn.timeout_ms = timeout_ms
        txn.partitions = set()
        txn.pending_offsets = {}
        txn.start_ms = -1
        txn.last_update_ms = now
        txn.transition(TxnEvent.INIT_PRODUCER_ID)
        self._changed(txn)
        return txn.producer_id, txn.producer_epoch

    def _fence_and_abort(self, txn: TxnMetadata) -> None:
        """Kafka's prepareFenceProducerEpoch then endTransaction(ABORT, isFromClient = false) with the
        broker's transaction version: the markers carry the fenced epoch (+ 1 more with TV2)."""
        fenced = txn.producer_epoch if txn.producer_epoch == EPOCH_MAX else txn.producer_epoch + 1
        self._cancel_timer(txn)
        txn.transition(TxnEvent.FENCE_EPOCH)
        txn.producer_epoch = fenced
        self._changed(txn)
        self.end_txn(txn.transactional_id, txn.producer_id, fenced, commit=False,
                     transaction_version=self.transaction_version, from_client=False)

    # -- AddPartitionsToTxn, AddOffsetsToTxn, verification -----------------------------------------
    def _lookup(self, transactional_id: str | None, producer_id: int) -> TxnMetadata:
        if not transactional_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Transactional id must not be empty")
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return txn

    def add_partitions(self, transactional_id: str | None, producer_id: int, epoch: int,
                       partitions: Iterable[TopicPartition], transaction_version: int = 0) -> None:
        """Kafka's handleAddPartitionsToTransaction; raises KafkaError."""
        txn = self._lookup(transactional_id, producer_id)
        if txn.producer_epoch != epoch:
            raise KafkaError(ErrorCode.PRODUCER_FENCED)
        if txn.markers_pending:
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        wanted = set(partitions)
        if txn.state == TxnState.ONGOING and wanted <= txn.partitions:
            return
        now = self.clock.now_ms()
        starting = txn.state in (TxnState.EMPTY, TxnState.COMPLETE_ABORT, TxnState.COMPLETE_COMMIT)
        txn.transition(TxnEvent.ADD_PARTITIONS)
        txn.prev_producer_id = txn.producer_id
        if starting:
            txn.start_ms = now
            self._schedule_timeout(txn)
        txn.partitions |= wanted
        txn.last_update_ms = now
        txn.client_transaction_version = transaction_version
        self._changed(txn)

    def verify_partitions(self, transactional_id: str | None, producer_id: int, epoch: int,
                          partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """Kafka's handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4+ verify_only, KIP-890 part 1):
        NONE for a partition in the transaction, TRANSACTION_ABORTABLE for one that is not."""
        wanted = list(partitions)
        try:
            txn = self._lookup(transactional_id, producer_id)
            if txn.producer_epoch != epoch:
                raise KafkaError(ErrorCode.PRODUCER_FENCED)
            if txn.markers_pending:
                raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        except KafkaError as exc:
            return {tp: exc.code for tp in wanted}
        return {tp: ErrorCode.NONE if tp in txn.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in wanted}

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group_id: str) -> None:
        """AddOffsetsToTxn: the group's __consumer_offsets partition joins the transaction."""
        self.add_partitions(transactional_id, producer_id, epoch, [self.offsets_partition(group_id)])

    def check_produce(self, partition: Partition, batch: RecordBatch, transactional_id: str | None,
                      version: int) -> None:
        """Before a transactional batch is appended (Kafka's ReplicaManager with KIP-890): a partition that
        holds no open transaction of this producer and epoch is checked with the coordinator: added to the
        transaction by Produce v12+ (transaction version 2), verified to be in it below. Raises the Produce
        partition error as RejectedBeforeAppend (Kafka answers these with log start offset -1)."""
        if not batch.is_transactional or batch.is_control or batch.producer_id < 0:
            return
        if transactional_id is None:
            # Kafka refuses transactional records without a transactional id (no WRITE on it).
            raise RejectedBeforeAppend(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        pid, epoch = batch.producer_id, batch.producer_epoch
        entry = partition.log.producers.entries.get(pid)
        if entry is not None and entry.current_txn_first_offset >= 0 and entry.epoch == epoch:
            return
        tp = (partition.topic.name, partition.index)
        if version >= 12:
            try:
                self.add_partitions(transactional_id, pid, epoch, [tp], transaction_version=2)
            except KafkaError as exc:
                raise RejectedBeforeAppend(produce_error(exc.code, version), exc.message) from None
            return
        if not self._setting("transaction.partition.verification.enable"):
            return
        code = self.verify_partitions(transactional_id, pid, epoch, [tp])[tp]
        if code != ErrorCode.NONE:
            raise RejectedBeforeAppend(produce_error(code, version),
                                       f"Transactional batch of producer {pid} for {tp[0]}-{tp[1]} failed verification")

    # -- EndTxn ------------------------------------------------------------------------------------
    def end_txn(self, transactional_id: str | None, producer_id: int, epoch: int, commit: bool,
                transaction_version: int = 0, *, from_client: bool = True) -> tuple[int, int]:
        """Kafka's endTransaction: the decision, the markers, the completion. Returns the (producer id,
        epoch) EndTxn v5 answers ((-1, -1) with transaction version below 2); raises KafkaError."""
        if not transactional_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Transactional id must not be empty")
        txn = self.txns.get(transactional_id)
        if txn is None:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if transaction_version < 2:
            self._end_v1(txn, producer_id, epoch, commit, from_client)
            return NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        return self._end_v2(txn, producer_id, epoch, commit, from_client)

    def _end_v1(self, txn: TxnMetadata, producer_id: int, epoch: int, commit: bool, from_client: bool) -> None:
        fence = txn.state == TxnState.PREPARE_EPOCH_FENCE
        if txn.producer_id != producer_id:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if (from_client and epoch != txn.producer_epoch) or epoch < txn.producer_epoch:
            raise KafkaError(ErrorCode.PRODUCER_FENCED)
        if txn.markers_pending:
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        state = txn.state
        if state == TxnState.ONGOING or fence:
            if fence:
                txn.last_producer_epoch = NO_PRODUCER_EPOCH
            self._prepare_end(txn, commit, 0, no_partition_added=False, next_producer_id=NO_PRODUCER_ID)
            return
        if state == TxnState.COMPLETE_COMMIT and commit or state == TxnState.COMPLETE_ABORT and not commit:
            return  # a retry of an EndTxn that completed
        raise KafkaError(ErrorCode.INVALID_TXN_STATE, f"Transactional id {txn.transactional_id} is in state "
                         f"{state.value}, but received transaction marker result to send: "
                         f"{'COMMIT' if commit else 'ABORT'}")

    def _end_v2(self, txn: TxnMetadata, producer_id: int, epoch: int, commit: bool,
                from_client: bool) -> tuple[int, int]:
        """Transaction version 2 (EndTxn v5, KIP-890 part 2): every EndTxn bumps the epoch; a retry is
        recognised by the epoch it names being one below the bumped one. Kafka's table for Empty and
        Complete*: PF = PRODUCER_FENCED, ITS = INVALID_TXN_STATE, EB = epoch bump, NONE = no change.
                          Abort(retry) Abort(current) Commit(retry) Commit(current)
            Empty           PF          EB              PF            ITS
            CompleteAbort   NONE        EB              ITS           ITS
            CompleteCommit  ITS         EB              NONE          ITS
        """
        fence = txn.state == TxnState.PREPARE_EPOCH_FENCE
        retry_on_overflow = (not fence and txn.prev_producer_id == producer_id and epoch == EPOCH_MAX - 1
                             and txn.producer_epoch == 0)
        retry_on_bump = not fence and txn.producer_epoch == epoch + 1
        state = txn.state
        if fence:
            valid = (not from_client or epoch == txn.producer_epoch) and epoch >= txn.producer_epoch
        elif state in (TxnState.ONGOING, TxnState.EMPTY, TxnState.DEAD):
            valid = epoch == txn.producer_epoch
        elif state in PREPARING:
            valid = retry_on_bump
        else:
            valid = retry_on_bump or retry_on_overflow or epoch == txn.producer_epoch
        is_retry = retry_on_bump or retry_on_overflow
        if txn.producer_id != producer_id and not retry_on_overflow:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if not valid:
            raise KafkaError(ErrorCode.PRODUCER_FENCED)
        if txn.markers_pending:
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        invalid = KafkaError(ErrorCode.INVALID_TXN_STATE, f"Transactional id {txn.transactional_id} is in state "
                             f"{state.value}, but received transaction marker result to send: "
                             f"{'COMMIT' if commit else 'ABORT'}")
        if state == TxnState.ONGOING or fence:
            no_partition_added = False
        elif state == TxnState.COMPLETE_COMMIT:
            if commit and is_retry:
                return txn.producer_id, txn.producer_epoch
            if commit or is_retry:
                raise invalid
            no_partition_added = True
        elif state == TxnState.COMPLETE_ABORT:
            if commit:
                raise invalid
            if is_retry:
                return txn.producer_id, txn.producer_epoch
            no_partition_added = True
        elif state == TxnState.EMPTY and not commit:
            no_partition_added = True
        else:
            raise invalid
        if fence:
            txn.last_producer_epoch = NO_PRODUCER_EPOCH
            next_id = NO_PRODUCER_ID
        else:
            next_id = self.cluster.allocate_producer_id() if is_epoch_exhausted(txn.producer_epoch) else NO_PRODUCER_ID
        return self._prepare_end(txn, commit, 2, no_partition_added=no_partition_added, next_producer_id=next_id)

    def _prepare_end(self, txn: TxnMetadata, commit: bool, transaction_version: int, *,
                     no_partition_added: bool, next_producer_id: int) -> tuple[int, int]:
        """Kafka's prepareAbortOrCommit, then the markers (unless held) and prepareComplete. Returns the
        identity the producer continues with (a new producer id at epoch 0 after an epoch overflow)."""
        now = self.clock.now_ms()
        if transaction_version >= 2:
            bumped = txn.producer_epoch if (txn.producer_epoch == EPOCH_MAX and not commit) else txn.producer_epoch + 1
            txn.last_producer_epoch = txn.producer_epoch
            txn.producer_epoch = bumped
        if no_partition_added:
            txn.start_ms = now
            txn.partitions = set()
        txn.next_producer_id = next_producer_id
        txn.last_update_ms = now
        txn.client_transaction_version = transaction_version
        self._cancel_timer(txn)
        event = TxnEvent.END_COMMIT if commit else (TxnEvent.ABORT_EMPTY if no_partition_added and
                                                    txn.state != TxnState.ONGOING else TxnEvent.END_ABORT)
        txn.prev_producer_id = txn.producer_id
        txn.transition(event)
        self._changed(txn)
        rotated = transaction_version >= 2 and next_producer_id != NO_PRODUCER_ID
        answer = (next_producer_id, 0) if rotated else (txn.producer_id, txn.producer_epoch)
        if self.hold_markers:
            self._held.append((txn.transactional_id, commit))
        else:
            self._write_markers_and_complete(txn, commit)
        return answer

    def release_markers(self) -> None:
        """Write the markers held while `hold_markers` was set, and complete those transactions."""
        self.hold_markers = False
        held, self._held = self._held, []
        for transactional_id, commit in held:
            txn = self.txns.get(transactional_id)
            if txn is not None and txn.markers_pending:
                self._write_markers_and_complete(txn, commit)

    def _write_markers_and_complete(self, txn: TxnMetadata, commit: bool) -> None:
        now = self.clock.now_ms()
        self.coordinator_epoch = partition_of(self.cluster, TXN_TOPIC, txn.transactional_id).leader_epoch
        control = ControlType.COMMIT if commit else ControlType.ABORT
        for topic_name, index in sorted(txn.partitions):
            if topic_name == OFFSETS_TOPIC:
                continue
            partition = self.cluster.partition(topic_name, index)
            if partition is None:
                continue  # deleted meanwhile: Kafka drops a marker for a partition that is gone
            self.write_marker(partition.log, control, txn.producer_id, txn.producer_epoch, now)
        if commit:
            for group_id, offsets in txn.pending_offsets.items():
                self.apply_committed_offsets(group_id, offsets)
        # prepareComplete
        txn.pending_offsets = {}
        txn.prev_producer_id = txn.producer_id
        if txn.client_transaction_version >= 2 and txn.next_producer_id != NO_PRODUCER_ID:
            txn.producer_id, txn.producer_epoch = txn.next_producer_id, 0
        txn.next_producer_id = NO_PRODUCER_ID
        txn.partitions = set()
        txn.last_update_ms = now
        txn.transition(TxnEvent.MARKERS_WRITTEN)
        self._changed(txn)

    def write_marker(self, log: PartitionLog, control: ControlType, producer_id: int, epoch: int,
                     now_ms: int) -> int:
        """Append a COMMIT/ABORT control batch to a partition through its log (producer state and last
        stable offset follow); an ABORT is recorded in the partition's aborted-transaction index. Returns
        the marker's offset."""
        entry = log.producers.entries.get(producer_id)
        first = entry.current_txn_first_offset if entry is not None else -1
        data = build_control_batch(control, producer_id=producer_id, producer_epoch=epoch,
                                   coordinator_epoch=self.coordinator_epoch, timestamp_ms=now_ms)
        stored = log.append(RecordBatch(data), now_ms)
        entry = log.producers.entries.get(producer_id)
        if entry is not None:
            entry.coordinator_epoch = self.coordinator_epoch
        if control == ControlType.ABORT:
            self.aborted.add(log, AbortedTxn(producer_id, first if first >= 0 else stored.base_offset, stored.base_offset))
        return stored.base_offset

    # -- TxnOffsetCommit ---------------------------------------------------------------------------
    def txn_offset_commit(self, transactional_id: str, group_id: str, producer_id: int, epoch: int,
                          generation_id: int, member_id: str, group_instance_id: str | None,
                          offsets: Sequence[tuple[str, int, int, int, str | None]],
                          version: int) -> dict[TopicPartition, ErrorCode]:
        """Offsets (topic, partition, offset, leader epoch, metadata) a transaction commits for a group: kept
        in the transaction until its COMMIT marker. Raises KafkaError for what fails every partition."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_GROUP_ID)
        group_tp = self.offsets_partition(group_id)
        if version >= 5:
            try:
                self.add_partitions(transactional_id, producer_id, epoch, [group_tp], transaction_version=2)
            except KafkaError as exc:
                raise KafkaError(txn_offset_commit_error(exc.code, version), exc.message) from None
        elif self._setting("transaction.partition.verification.enable"):
            code = self.verify_partitions(transactional_id, producer_id, epoch, [group_tp])[group_tp]
            if code != ErrorCode.NONE:
                raise KafkaError(txn_offset_commit_error(code, version))
        txn = self._lookup(transactional_id, producer_id)
        groups = self._groups()
        max_metadata = int(groups.setting("offset.metadata.max.bytes")) if groups is not None \
            else self._setting("offset.metadata.max.bytes")
        if groups is not None:
            validate_transactional_commit(groups, group_id, generation_id, member_id, group_instance_id)
        now = self.clock.now_ms()
        result: dict[TopicPartition, ErrorCode] = {}
        pending = txn.pending_offsets.setdefault(group_id, {})
        for topic, index, offset, leader_epoch, metadata in offsets:
            if metadata is not None and len(metadata.encode()) > max_metadata:
                result[(topic, index)] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            pending[(topic, index)] = PendingOffset(offset, leader_epoch, metadata or "", now)
            result[(topic, index)] = ErrorCode.NONE
        return result

    def apply_committed_offsets(self, group_id: str, offsets: dict[TopicPartition, PendingOffset]) -> None:
        """A committed transaction's offsets become the group's committed offsets (what OffsetFetch reads)."""
        groups = self._groups()
        if groups is None:
            self.committed_offsets.setdefault(group_id, {}).update(offsets)
            return
        from mockbroker.state.groups.offsets import CommittedOffset

        for (topic, index), o in offsets.items():
            t = self.cluster.topic(topic)
            groups.offsets.commit(group_id, topic, index, CommittedOffset(
                o.offset, o.leader_epoch, o.metadata, o.commit_timestamp_ms, None,
                t.topic_id if t is not None else None))
        group = groups.groups.get(group_id)
        if group is not None and hasattr(groups, "after_offset_commit"):
            groups.after_offset_commit(group, "")

    def has_pending_offsets(self, group_id: str, topic: str | None = None, partition: int | None = None) -> bool:
        """Whether an open transaction holds offsets of the group (of this partition): OffsetFetch with
        require_stable answers UNSTABLE_OFFSET_COMMIT for those."""
        for txn in self.txns.values():
            offsets = txn.pending_offsets.get(group_id)
            if offsets and (topic is None or (topic, partition) in offsets):
                return True
        return False

    def resume(self, txn: TxnMetadata) -> None:
        """A transactional id loaded from __transaction_state (state/coordinators/load.py), as Kafka's coordinator
        takes its partition over: an Ongoing transaction's timeout runs again, one left in PrepareCommit /
        PrepareAbort gets its markers, one left being fenced is aborted."""
        self.txns[txn.transactional_id] = txn
        self._ensure_expiry_check()
        if txn.state == TxnState.ONGOING:
            self._schedule_timeout(txn)
        elif txn.markers_pending:
            self._write_markers_and_complete(txn, txn.state == TxnState.PREPARE_COMMIT)
        elif txn.state == TxnState.PREPARE_EPOCH_FENCE:
            self.end_txn(txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=False,
                         transaction_version=self.transaction_version, from_client=False)

    # -- timeouts and expiration -------------------------------------------------------------------
    def _schedule_timeout(self, txn: TxnMetadata) -> None:
        self._cancel_timer(txn)
        if self.scheduler is None:
            return
        # Kafka aborts when start + timeout < now: the first millisecond after the deadline.
        txn.timer = self.scheduler.call_at(txn.start_ms + txn.timeout_ms + 1, self._on_timeout)

    def _on_timeout(self) -> None:
        self.abort_timed_out_transactions()

    @staticmethod
    def _cancel_timer(txn: TxnMetadata) -> None:
        if txn.timer is not None:
            txn.timer.cancel()
            txn.timer = None

    def abort_timed_out_transactions(self) -> list[str]:
        """Fence and abort every Ongoing transaction past its timeout (Kafka's abortTimedOutTransactions);
        the transactional ids aborted."""
        now = self.clock.now_ms()
        done = []
        for txn in list(self.txns.values()):
            if txn.state == TxnState.ONGOING and txn.start_ms + txn.timeout_ms < now:
                try:
                    self._fence_and_abort(txn)
                except KafkaError:
                    continue
                done.append(txn.transactional_id)
        return done

    def _ensure_expiry_check(self) -> None:
        if self.scheduler is None or self._expiry_timer is not None:
            return
        interval = self._setting("transaction.remove.expired.transaction.cleanup.interval.ms")
        self._expiry_timer = self.scheduler.call_later(interval, self._periodic_expiry)

    def _periodic_expiry(self) -> None:
        self._expiry_timer = None
        self.expire_transactional_ids()
        if self.txns:
            self._ensure_expiry_check()

    def expire_transactional_ids(self) -> list[str]:
        """Remove transactional ids idle (Empty/Complete*) for transactional.id.expiration.ms."""
        now = self.clock.now_ms()
        expiration = int(self._setting("transactional.id.expiration.ms"))
        gone = []
        for txn in list(self.txns.values()):
            if txn.state in EXPIRATION_ALLOWED and txn.last_update_ms <= now - expiration:
                txn.transition(TxnEvent.EXPIRE)
                del self.txns[txn.transactional_id]
                if self.listener is not None:
                    self.listener(txn.transactional_id, None)
                gone.append(txn.transactional_id)
        return gone
