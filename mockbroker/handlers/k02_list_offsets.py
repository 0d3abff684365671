"""ListOffsets (key 2), v0-v11.

Per partition, by the requested timestamp:
- -1 LATEST: the high watermark, or with isolation level read_committed (v2+) the last stable offset;
- -2 EARLIEST: the log start offset;
- -3 MAX_TIMESTAMP (v7+): the record with the largest timestamp (the first such, KIP-734);
- -4 EARLIEST_LOCAL (v8+): the log start offset (the whole log is local here);
- -5 LATEST_TIERED (v9+) and -6 EARLIEST_PENDING_UPLOAD (v11+): offset -1, as Kafka answers for a
  topic without tiered storage;
- t >= 0: the first record whose timestamp is >= t, from the time index; none -> offset -1,
  timestamp -1.
v0 answers old_style_offsets (a list with the one offset). v4+ checks current_leader_epoch
(FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH) and answers the leader epoch of the offset found.
Errors, in Kafka's order: INVALID_REQUEST for a partition named twice (v1+, answered once);
UNSUPPORTED_VERSION for a special timestamp older than its version (any other negative timestamp too);
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER.
Authorization (with an authorizer, `authorize`): DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on
its partitions). Error answer (fault injection, `error_response`): the code on every partition named.
"""

from __future__ import annotations

from collections import Counter

from mockbroker.authorization.access import Access, AclOperation, Call, extend, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import DecodeError, ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import Partition

API_KEY = ApiKey.LIST_OFFSETS
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -1, -2, -3, -4, -5, -6
READ_COMMITTED = 1
# The version from which each special timestamp is served (ReplicaManager.timestampMinSupportedVersion);
# any other negative timestamp is UNSUPPORTED_VERSION.
MIN_VERSION = {LATEST: 0, EARLIEST: 0, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9,
               EARLIEST_PENDING_UPLOAD: 11}


def _answer(p: Partition, timestamp: int, isolation: int) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) for one partition."""
    log = p.log
    if timestamp == LATEST:
        offset = log.last_stable_offset if isolation == READ_COMMITTED else log.high_watermark
        return offset, -1, log.leader_epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        epoch = log.leader_epoch
        for b in log.iter_batches(log.log_start_offset):
            epoch = b.leader_epoch
            break
        return log.log_start_offset, -1, epoch
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1, -1
    if timestamp == MAX_TIMESTAMP:
        found = log.max_timestamp_offset()
    else:
        found = log.offset_for_timestamp(timestamp)
    if found is None:
        return -1, -1, -1
    offset, ts, epoch = found
    if isolation == READ_COMMITTED and offset >= log.last_stable_offset:
        return -1, -1, -1
    return offset, ts, epoch


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every partition the request names (ListOffsetsRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, topics=[
        Msg(name=t.name, partitions=[
            Msg(partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1, leader_epoch=-1,
                old_style_offsets=[])
            for p in t.partitions])
        for t in req.topics])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, AclOperation.DESCRIBE, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = error_response(with_list(req, "topics", refused), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                            header.api_version).topics
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 11, authorize=authorize, error_response=error_response)
def handle_list_offsets(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    isolation = req.isolation_level if v >= 2 else 0
    named = Counter((t.name, rp.partition_index) for t in req.topics for rp in t.partitions)
    answered: set[tuple[str, int]] = set()
    topics = []
    for t in req.topics:
        topic = ctx.cluster.topic(t.name)
        parts = []
        for rp in t.partitions:
            key = (t.name, rp.partition_index)
            if v >= 1 and key in answered:
                continue  # Kafka answers each partition once (by topic partition)
            answered.add(key)
            out = Msg(partition_index=rp.partition_index, error_code=ErrorCode.NONE, timestamp=-1, offset=-1,
                      leader_epoch=-1, old_style_offsets=[])
            parts.append(out)
            if v >= 1 and named[key] > 1:
                out.error_code = ErrorCode.INVALID_REQUEST
                continue
            if rp.timestamp < 0 and v < MIN_VERSION.get(rp.timestamp, 0x7FFF):
                out.error_code = ErrorCode.UNSUPPORTED_VERSION
                continue
            p = topic.partition(rp.partition_index) if topic is not None else None
            if p is None:
                out.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            # As Kafka's Partition.getLocalLog: a replica checks the epoch first, then whether it leads.
            if v >= 4 and rp.current_leader_epoch >= 0 and ctx.node_id in p.replicas:
                if rp.current_leader_epoch > p.leader_epoch:
                    out.error_code = ErrorCode.UNKNOWN_LEADER_EPOCH
                    continue
                if rp.current_leader_epoch < p.leader_epoch:
                    out.error_code = ErrorCode.FENCED_LEADER_EPOCH
                    continue
            if not ctx.node.leads(p):
                out.error_code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                continue
            try:
                offset, ts, epoch = _answer(p, rp.timestamp, isolation)
            except DecodeError:  # a stored batch whose records do not decode: Kafka's CorruptRecordException
                out.error_code = ErrorCode.CORRUPT_MESSAGE
                continue
            out.offset, out.timestamp, out.leader_epoch = offset, ts, epoch
            if v == 0:
                out.old_style_offsets = [offset] if offset >= 0 else []
        topics.append(Msg(name=t.name, partitions=parts))
    return Msg(throttle_time_ms=0, topics=topics)
