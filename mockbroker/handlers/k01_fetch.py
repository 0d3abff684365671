"""Fetch (key 1), v0-v18.

- Stored batches are handed back as the views the log holds (no copy, no re-encoding); a fetch at an
  offset inside a batch gets that whole batch, and the client skips the records before its position.
- Limits: partition_max_bytes per partition and max_bytes (v3+) for the response; the first batch of
  the first partition with data is returned even when larger (KIP-74). Only whole batches are sent
  (Kafka may end a partition's data with a partial batch; clients ignore one, so leaving it out is
  equivalent).
- Long poll: with less than min_bytes available and max_wait_ms > 0 the request parks on a future
  (no polling, no CPU while parked). Each append to one of its partitions runs a constant-cost check per
  partition, as Kafka's DelayedFetch does: the bytes appended since the last read (the log's running
  size), capped at partition_max_bytes; only when they reach min_bytes (or a partition's topic, leader
  epoch or log start changed) does the fetch read again. At max_wait_ms it answers with what there is.
- Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID (v13+, topics by id),
  NOT_LEADER_OR_FOLLOWER (a node that does not lead the partition, or none does), FENCED_LEADER_EPOCH /
  UNKNOWN_LEADER_EPOCH (current_leader_epoch, v9+); the first two carry the current leader's id and epoch
  (v12+) and its endpoint (node_endpoints, v16+) as KIP-951 has it (handlers/support/leader_hints.py);
  OFFSET_OUT_OF_RANGE (below the log start offset or past the log end offset); an error partition
  answers high watermark, last stable offset and log start offset -1, as Kafka does.
- Follower fetching (KIP-392): a consumer's fetch at v11+ (replica_id -1) may be served by any replica
  of the partition; a follower serves up to its own high watermark (no further than its copy,
  state/cluster/replicas.py). With replica.selector.class RackAwareReplicaSelector the leader answers a consumer
  whose rack_id matches an in-sync follower's rack with preferred_read_replica and no records
  (state/cluster/replica_selection.py), at once.
- Divergence (v12+, KIP-320): a partition with last_fetched_epoch whose log diverges (the epoch ended
  before the fetch offset, e.g. after an unclean election cut the log back) is answered at once with
  diverging_epoch (that epoch and its end offset) and no records; an epoch the log cannot place is
  OFFSET_OUT_OF_RANGE.
- Isolation (v4+): read_committed stops at the last stable offset and lists the aborted transactions
  of the range returned; read_uncommitted reads to the high watermark (aborted_transactions null).
- Fetch sessions (v7+, KIP-227): see state/fetch_sessions.py (eviction of idle and small sessions when
  the cache is full, on the broker clock); top-level FETCH_SESSION_ID_NOT_FOUND,
  INVALID_FETCH_SESSION_EPOCH, and FETCH_SESSION_TOPIC_ID_ERROR for a session continued at a version on the
  other side of v13 (topic ids). An incremental fetch that leaves its session with no partitions closes
  it and is answered sessionless (session id 0).
- Down-conversion is bounded per request (handlers/support/request_steps.py): past mockbroker.max.request.step.ms
  the remaining partitions are converted one step per event-loop pass (one partition's conversion whole),
  so other connections are served meanwhile; the records are those the read found.
- v0-v3: batches are down-converted to magic 0 (v0-v1) or magic 1 (v2-v3), as Kafka 3.x did (records
  below the fetch offset of an uncompressed batch left out); at most mockbroker.max.records.per.batch
  records per partition are converted per fetch (the first batch always), the client fetches the rest. A zstd batch cannot be down-converted and a
  topic with compression.type zstd cannot be fetched before v10: UNSUPPORTED_COMPRESSION_TYPE.
- Authorization (with an authorizer, `authorize`): READ on each topic (TOPIC_AUTHORIZATION_FAILED on its
  partitions); a follower's fetch (replica id >= 0): CLUSTER_ACTION on the cluster. When every topic is
  refused, a sessionless fetch is answered at once.
- Error answer (fault injection, `error_response`): the code on every partition named.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, cast

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    extend,
    split,
    then,
    topic_name,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.leader_hints import current_leader, node_endpoints
from mockbroker.handlers.support.request_steps import let_others_run, now_s, step_seconds
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import DecodeError, EncodeError, ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.protocol.records.batch import RecordBatch
from mockbroker.protocol.records.legacy import convert_from_v2
from mockbroker.state.cluster.cluster import Cluster, Partition, Topic
from mockbroker.state.cluster.replica_selection import preferred_read_replica
from mockbroker.state.cluster.replicas import end_of, follower_high_watermark
from mockbroker.state.fetch_sessions import FINAL_EPOCH, INITIAL_EPOCH, FetchSession, SessionPartition
from mockbroker.state.log.partition_log import PartitionLog
from mockbroker.state.log.validation import MAX_RECORDS_PER_BATCH

API_KEY = ApiKey.FETCH
READ_COMMITTED = 1


@dataclass
class PartitionRead:
    """What one partition contributes to a response."""

    want: SessionPartition
    error: int = ErrorCode.NONE
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    chunks: list[memoryview] = field(default_factory=list)
    size: int = 0
    aborted: list[Msg] | None = None
    partition: Partition | None = None
    preferred_read_replica: int = -1  # KIP-392: the follower the consumer should fetch from next
    diverging: Msg | None = None  # KIP-320 (v12+): the epoch and end offset where the log diverges


@dataclass(frozen=True)
class FetchClient:
    """Who fetches: a consumer (replica_id < 0) at v11+ may read from a follower and be sent to one (its
    rack_id, client.rack)."""

    from_consumer_v11: bool
    rack: str | None


def _lookup(cluster: Cluster, want: SessionPartition, by_id: bool) -> tuple[Partition | None, int]:
    topic = cluster.topics_by_id.get(want.topic_id) if by_id else cluster.topic(want.topic)
    if topic is None:
        return None, ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    p = topic.partition(want.partition)
    if p is None:
        return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return p, ErrorCode.NONE


def _read_partition(ctx: RequestContext, want: SessionPartition, by_id: bool, isolation: int,
                    budget: int, min_one: bool, client: FetchClient) -> PartitionRead:
    out = PartitionRead(want)
    p, err = _lookup(ctx.cluster, want, by_id)
    if p is None:
        out.error = err
        return out
    out.partition = p
    log = p.log
    # An error below leaves the offsets at -1, as Kafka's ReplicaManager answers errors (createLogReadResult).
    # As Kafka's Partition.getLocalLog: a replica checks the epoch first, then whether it leads.
    if want.current_leader_epoch >= 0 and ctx.node_id in p.replicas:
        if want.current_leader_epoch > log.leader_epoch:
            out.error = ErrorCode.UNKNOWN_LEADER_EPOCH
            return out
        if want.current_leader_epoch < log.leader_epoch:
            out.error = ErrorCode.FENCED_LEADER_EPOCH
            return out
    # KIP-392: a v11+ consumer fetch may be served by any replica (Kafka's FetchParams.fetchOnlyLeader);
    # a follower serves up to its own high watermark.
    leads = ctx.node.leads(p)
    if not leads and not (client.from_consumer_v11 and ctx.node_id in p.replicas):
        out.error = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return out
    if leads:
        high_watermark, stable, log_end = log.high_watermark, log.last_stable_offset, log.log_end_offset
    else:
        high_watermark = follower_high_watermark(p, ctx.node_id)
        stable, log_end = min(log.last_stable_offset, high_watermark), end_of(p, ctx.node_id)
    if leads and client.from_consumer_v11:
        preferred = preferred_read_replica(ctx.cluster, p, client.rack, want.fetch_offset)
        if preferred is not None:
            # The leader skips the read and names the replica (ReplicaManager.readFromLog).
            out.preferred_read_replica = preferred
            out.high_watermark, out.last_stable_offset = high_watermark, stable
            out.log_start_offset = log.log_start_offset
            return out
    if want.last_fetched_epoch >= 0 and _diverges(out, log, want):
        out.high_watermark, out.last_stable_offset = high_watermark, stable
        out.log_start_offset = log.log_start_offset
        return out
    if want.fetch_offset < log.log_start_offset or want.fetch_offset > log_end:
        out.error = ErrorCode.OFFSET_OUT_OF_RANGE
        return out
    out.high_watermark = high_watermark
    out.last_stable_offset = stable
    out.log_start_offset = log.log_start_offset
    upto = stable if isolation == READ_COMMITTED else high_watermark
    limit = min(want.partition_max_bytes, budget)
    out.chunks, out.size = log.read(want.fetch_offset, limit, min_one=min_one, upto=upto)
    if isolation == READ_COMMITTED:
        # The range returned ends after its last batch (Kafka's fetchUpperBoundOffset).
        end = RecordBatch(out.chunks[-1]).last_offset + 1 if out.chunks else upto
        txns = ctx.node.aborted_transactions(p, want.fetch_offset, end) if out.chunks else []
        out.aborted = [Msg(producer_id=pid, first_offset=first) for pid, first in txns]
    return out


def _diverges(out: PartitionRead, log: PartitionLog, want: SessionPartition) -> bool:
    """Fetch v12+ with last_fetched_epoch (KIP-320, Kafka's Partition.readRecords): True when the log
    diverges from what the fetcher has (the epoch it last fetched ended before its fetch offset, or the log
    knows only smaller epochs): out.diverging then names the largest epoch and its end offset. An epoch
    the log cannot place, or a fetch offset below the log start, is OFFSET_OUT_OF_RANGE (also True)."""
    epoch, end = log.end_offset_for_epoch(want.last_fetched_epoch)
    if epoch < 0 or end < 0 or want.fetch_offset < log.log_start_offset:
        out.error = ErrorCode.OFFSET_OUT_OF_RANGE
        return True
    if epoch < want.last_fetched_epoch or end < want.fetch_offset:
        out.diverging = Msg(epoch=epoch, end_offset=end)
        return True
    return False


def _collect(ctx: RequestContext, wants: list[SessionPartition], by_id: bool, isolation: int,
             max_bytes: int, client: FetchClient) -> tuple[list[PartitionRead], int]:
    reads = []
    total = 0
    min_one = True
    for want in wants:
        r = _read_partition(ctx, want, by_id, isolation, max(0, max_bytes - total), min_one, client)
        if r.size:
            min_one = False
            total += r.size
        reads.append(r)
    return reads, total


def _want_from_request(ctx: RequestContext, t: Msg, p: Msg, by_id: bool) -> SessionPartition:
    name = t.topic
    topic_id = t.topic_id
    if by_id:
        topic = ctx.cluster.topics_by_id.get(topic_id)
        name = topic.name if topic is not None else ""
    return SessionPartition(
        topic=name or "",
        topic_id=topic_id or ZERO_UUID,
        partition=p.partition,
        fetch_offset=p.fetch_offset,
        partition_max_bytes=p.partition_max_bytes,
        current_leader_epoch=p.current_leader_epoch,
        last_fetched_epoch=p.last_fetched_epoch,
    )


def _down_convert(chunks: list[memoryview], version: int, fetch_offset: int, max_records: int) -> list[Any]:
    """Kafka 3.x's down-conversion: records below the fetch offset of uncompressed batches are left out.
    Bounded: at most mockbroker.max.records.per.batch records per partition (the first batch always)."""
    magic = 0 if version <= 1 else 1
    batches = [RecordBatch(c) for c in chunks]
    return [convert_from_v2(batches, magic, first_offset=fetch_offset, max_records=max_records)]


def _fail(r: PartitionRead, code: int) -> None:
    """Turn a read into an error answer (Kafka's FetchResponse.partitionResponse: no offsets, no records)."""
    r.error = code
    r.high_watermark = r.last_stable_offset = r.log_start_offset = -1
    r.chunks, r.size, r.aborted = [], 0, None


def _records_for(version: int, r: PartitionRead) -> Any:
    """The records of a read as `version` carries them. As KafkaApis.maybeConvertFetchedData: a topic with
    compression.type zstd cannot be fetched before v10, nor a zstd batch down-converted for v0-v3
    (UNSUPPORTED_COMPRESSION_TYPE)."""
    if version < 10 and r.partition is not None and r.partition.topic.config.get("compression.type") == "zstd":
        _fail(r, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)
    elif version <= 3 and r.chunks and r.partition is not None:
        try:
            limit = int(r.partition.topic.config.broker.get(MAX_RECORDS_PER_BATCH))
            return _down_convert(r.chunks, version, r.want.fetch_offset, limit)
        except EncodeError:
            _fail(r, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)
        except DecodeError:
            # Stored records that cannot be read (a batch stored past validation, as a log written before may hold).
            _fail(r, ErrorCode.CORRUPT_MESSAGE)
    return r.chunks


def _answer(ctx: RequestContext, version: int, reads: list[PartitionRead], session_id: int, incremental: bool,
            session: FetchSession | None) -> Msg | Awaitable[Msg]:
    """The response to these reads. Before v4 each partition's batches are down-converted first, in steps
    (handlers/request_steps.py): past mockbroker.max.request.step.ms the remaining partitions are converted
    one step per event-loop pass (a partition's conversion is never split), then the response is built."""
    if version > 3:
        return _build_response(ctx, version, reads, session_id, incremental, session)
    converted: list[Any] = []
    if _convert_step(ctx, version, reads, converted):
        return _build_response(ctx, version, reads, session_id, incremental, session, converted)
    return _convert_in_steps(ctx, version, reads, session_id, incremental, session, converted)


def _convert_step(ctx: RequestContext, version: int, reads: list[PartitionRead], converted: list[Any]) -> bool:
    """Convert the reads from where the last step stopped; False when the step ran past the bound with
    partitions left."""
    started = now_s()
    bound = -1.0
    first = True
    while len(converted) < len(reads):
        if not first:
            if bound < 0:
                bound = step_seconds(ctx.cluster)
            if now_s() - started > bound:
                return False
        first = False
        converted.append(_records_for(version, reads[len(converted)]))
    return True


async def _convert_in_steps(ctx: RequestContext, version: int, reads: list[PartitionRead], session_id: int,
                            incremental: bool, session: FetchSession | None, converted: list[Any]) -> Msg:
    while True:
        await let_others_run()
        if _convert_step(ctx, version, reads, converted):
            return _build_response(ctx, version, reads, session_id, incremental, session, converted)


async def _answered(answer: Msg | Awaitable[Msg]) -> Msg:
    return answer if isinstance(answer, Msg) else await cast(Awaitable[Msg], answer)


def _build_response(ctx: RequestContext, version: int, reads: list[PartitionRead], session_id: int, incremental: bool,
                    session: FetchSession | None, converted: list[Any] | None = None) -> Msg:
    """The response; `converted`: each read's records already down-converted (v0-v3, see _answer)."""
    topics: list[Msg] = []
    by_topic: dict[tuple[str, uuid.UUID], Msg] = {}
    hinted: set[int] = set()
    for i, r in enumerate(reads):
        w = r.want
        records = converted[i] if converted is not None else _records_for(version, r)
        include = w.needs_response(bool(r.size), r.error, r.high_watermark, r.last_stable_offset,
                                   r.log_start_offset) or r.diverging is not None or r.preferred_read_replica >= 0
        if incremental and not include:
            continue
        key = (w.topic, w.topic_id)
        entry = by_topic.get(key)
        if entry is None:
            entry = Msg(topic=w.topic, topic_id=w.topic_id, partitions=[])
            by_topic[key] = entry
            topics.append(entry)
        entry.partitions.append(Msg(
            partition_index=w.partition,
            error_code=r.error,
            high_watermark=r.high_watermark,
            last_stable_offset=r.last_stable_offset,
            log_start_offset=r.log_start_offset,
            aborted_transactions=r.aborted,
            preferred_read_replica=r.preferred_read_replica,
            records=records,
        ))
        if r.diverging is not None:
            entry.partitions[-1].diverging_epoch = r.diverging
        hint = current_leader(r.partition, r.error) if version >= 12 and ctx.node.persona.leader_hints else None
        if hint is not None:
            entry.partitions[-1].current_leader = hint
            hinted.add(hint.leader_id)
        if session is not None and incremental and r.size:
            # Fairness: partitions that just returned data go to the back of the session's order.
            k = (w.topic, w.topic_id, w.partition)
            session.partitions[k] = session.partitions.pop(k)
    response = Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=session_id, responses=topics)
    if hinted and version >= 16:
        response.node_endpoints = node_endpoints(ctx, hinted)
    return response


def _error_response(code: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, session_id=0, responses=[])


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every partition the request names (FetchRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=0, responses=[
        Msg(topic=t.topic, topic_id=t.topic_id, partitions=[
            Msg(partition_index=p.partition, error_code=code, high_watermark=-1, last_stable_offset=-1,
                log_start_offset=-1, preferred_read_replica=-1, records=None)
            for p in t.partitions])
        for t in req.topics])


def _is_follower(req: Msg) -> bool:
    state = req.get("replica_state")
    replica = state.replica_id if state is not None and state.get("replica_id", -1) >= 0 else req.get("replica_id", -1)
    return replica is not None and replica >= 0


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if _is_follower(req):
        allowed, refused = ((list[Msg](), req.topics) if not access.on_cluster(AclOperation.CLUSTER_ACTION)
                            else (req.topics, []))
    else:
        allowed, refused = split(access, AclOperation.READ, req.topics,
                                 lambda t: topic_name(access, t.topic, t.get("topic_id")))
    if not refused:
        return call(req)
    errors = error_response(with_list(req, "topics", refused), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                            header.api_version).responses
    if not allowed and req.get("session_epoch", -1) in (0, -1):
        return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=0, responses=errors)
    return then(call(with_list(req, "topics", allowed)), extend("responses", errors))


@handler(API_KEY, 0, 18, authorize=authorize, error_response=error_response)
def handle_fetch(ctx: RequestContext, header: RequestHeader, req: Msg) -> Any:
    v = header.api_version
    by_id = v >= 13
    isolation = req.isolation_level if v >= 4 else 0
    max_bytes = req.max_bytes if v >= 3 else 0x7FFFFFFF
    sessions = ctx.node.fetch_sessions
    session: FetchSession | None = None
    incremental = False
    requested = [_want_from_request(ctx, t, p, by_id) for t in req.topics for p in t.partitions]
    if v >= 7 and req.session_epoch not in (INITIAL_EPOCH, FINAL_EPOCH):
        try:
            session = sessions.get(req.session_id, req.session_epoch)
        except KafkaError as exc:
            return _error_response(exc.code)
        if session.uses_topic_ids != by_id:
            return _error_response(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(requested, req.forgotten_topics_data, by_id)
        if session.partitions:
            sessions.touch(session, ctx.node.clock.now_ms())
            session.next_epoch()
            wants = list(session.partitions.values())
            session_id = session.session_id
            incremental = True
        else:
            # A session left with no partitions is closed; the fetch is answered sessionless (Kafka's
            # FetchManager.newContext).
            sessions.close(session.session_id)
            session = None
            session_id = 0
            wants = requested
    else:
        if v >= 7 and req.session_id:
            sessions.close(req.session_id)
        session_id = 0
        if v >= 7 and req.session_epoch == INITIAL_EPOCH:
            session = sessions.open(by_id, ctx.node.clock.now_ms(), len(requested))
            if session is not None:
                session_id = session.session_id
                session.update(requested, [], by_id)
        wants = requested

    replica_id = req.replica_state.replica_id if v >= 15 else req.replica_id
    client = FetchClient(v >= 11 and replica_id < 0, req.rack_id if v >= 11 else None)
    reads, total = _collect(ctx, wants, by_id, isolation, max_bytes, client)
    if req.max_wait_ms <= 0 or total >= req.min_bytes or _answer_now(reads) or not wants:
        return _answer(ctx, v, reads, session_id, incremental, session)
    return _long_poll(ctx, v, req, wants, by_id, isolation, max_bytes, session_id, incremental, session, reads,
                      client)


def _answer_now(reads: list[PartitionRead]) -> bool:
    """An error, a diverging epoch or a preferred read replica is answered at once (ReplicaManager.fetchMessages)."""
    return any(r.error or r.diverging is not None or r.preferred_read_replica >= 0 for r in reads)


@dataclass(slots=True)
class _Parked:
    """One partition of a parked fetch: what the last real read found, to count new bytes cheaply."""

    log: PartitionLog
    topic: Topic
    topics: dict[Any, Topic]  # the cluster's topics by name (or by id, v13+): the topic still there?
    key: Any  # the topic's name (or id)
    fetch_offset: int
    partition_max_bytes: int
    leader_epoch: int
    size_at_read: int  # the log's size_bytes when last read
    found: int  # bytes that read returned for this partition
    stable_at_read: int  # the last stable offset when last read (-1: read_uncommitted, not watched)
    replicated_at_read: int | None  # where a lagging in-sync follower held the high watermark (state/cluster/replicas.py)


def _park_state(cluster: Cluster, reads: list[PartitionRead], by_id: bool, isolation: int) -> list[_Parked]:
    topics: dict[Any, Topic] = cluster.topics_by_id if by_id else cluster.topics
    out = []
    for r in reads:
        if r.partition is not None:
            log, topic = r.partition.log, r.partition.topic
            stable = log.last_stable_offset if isolation == READ_COMMITTED else -1
            out.append(_Parked(log, topic, topics, topic.topic_id if by_id else topic.name, r.want.fetch_offset,
                               r.want.partition_max_bytes, log.leader_epoch, log.size_bytes, r.size, stable,
                               log.replicated_end))
    return out


def _worth_reading(parked: list[_Parked], min_bytes: int) -> bool:
    """Whether a parked fetch should read again: constant cost per partition, as Kafka's DelayedFetch
    .tryComplete (bytes appended since the last read, capped at partition_max_bytes, counted from the
    log's running size; no batch is read). Also true when a partition's state changed in a way that
    makes the answer an error (topic gone, new leader epoch, log start moved past the fetch offset), or,
    read_committed, when the last stable offset moved."""
    available = 0
    for p in parked:
        log = p.log
        if (p.topics.get(p.key) is not p.topic or log.leader_epoch != p.leader_epoch
                or log.log_start_offset > p.fetch_offset):
            return True
        if p.stable_at_read >= 0 and log.last_stable_offset != p.stable_at_read:
            return True  # read_committed: a transaction ended, data already counted may now be readable
        if log.replicated_end != p.replicated_at_read:
            return True  # the high watermark was held by a lagging follower and moved: data may be readable
        grown = log.size_bytes - p.size_at_read
        could = p.found + grown if grown > 0 else p.found
        available += could if could < p.partition_max_bytes else p.partition_max_bytes
    return available >= min_bytes


async def _long_poll(ctx: RequestContext, v: int, req: Msg, wants: list[SessionPartition], by_id: bool,
                     isolation: int, max_bytes: int, session_id: int, incremental: bool,
                     session: FetchSession | None, reads: list[PartitionRead], client: FetchClient) -> Msg:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + req.max_wait_ms / 1000.0
    parked = _park_state(ctx.cluster, reads, by_id, isolation)
    wake_future: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        # Runs on every append to one of the partitions: cheap unless enough bytes may be there.
        if not wake_future.done() and _worth_reading(parked, req.min_bytes):
            wake_future.set_result(None)

    logs = [p.log for p in parked]
    for log in logs:
        log.add_append_listener(wake)
    try:
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            done, _ = await asyncio.wait([wake_future], timeout=remaining)
            if not done:
                break
            wake_future = loop.create_future()
            reads, total = _collect(ctx, wants, by_id, isolation, max_bytes, client)
            if total >= req.min_bytes or _answer_now(reads):
                return await _answered(_answer(ctx, v, reads, session_id, incremental, session))
            # Not enough yet (read_committed below an open transaction, or fewer bytes than counted):
            # count from this read on, so the next real read needs new bytes.
            parked[:] = _park_state(ctx.cluster, reads, by_id, isolation)
    finally:
        for log in logs:
            log.remove_append_listener(wake)
    reads, _ = _collect(ctx, wants, by_id, isolation, max_bytes, client)
    return await _answered(_answer(ctx, v, reads, session_id, incremental, session))
