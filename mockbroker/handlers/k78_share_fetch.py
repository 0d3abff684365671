"""ShareFetch (key 78), v1-v2 (as Kafka 4.3): a share group member acquires records and acknowledges
earlier ones in one request (state: mockbroker/state/share/partition.py, coordinator.py).

- Share sessions: epoch 0 opens the member's session on this node with the partitions named (no
  acknowledgements allowed then: INVALID_REQUEST), a positive epoch must be the session's next one
  (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND with no session) and adds the partitions named and
  drops ForgottenTopicsData, -1 only acknowledges and closes the session, releasing what the member still
  holds.
- Acknowledgements (ACCEPT 1, RELEASE 2, REJECT 3, GAP 0; one type per batch or one per offset) are applied
  first; a partition's AcknowledgeErrorCode is INVALID_RECORD_STATE when a record is not acquired by the
  member.
- Then records are acquired from the session's partitions this node leads, up to MaxRecords in all: the
  answer carries the log's batches holding them and AcquiredRecords (offset ranges with their delivery
  counts); the client delivers only the acquired offsets. AcquisitionLockTimeoutMs is the group's lock
  duration. With nothing acquired the request waits up to MaxWaitMs for new records or released ones.
- Partitions this node does not lead: NOT_LEADER_OR_FOLLOWER; unknown topic ids: UNKNOWN_TOPIC_ID.
  v2 (KIP-1222's renew acknowledgements and acquire modes) is accepted; IsRenewAck and ShareAcquireMode
  are not modelled (records are acquired batch-optimistically, a renew is treated as nothing).
Simpler than Kafka: read_uncommitted only (share.isolation.level is not modelled); MinBytes and MaxBytes
are not used to size the answer.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED).
- Error answer (fault injection: `error_response`): a partition-level code (NOT_LEADER_OR_FOLLOWER,
  UNKNOWN_TOPIC_OR_PARTITION, ..., support/share_requests.PARTITION_ERRORS) on every partition named
  (INVALID_RECORD_STATE as their AcknowledgeErrorCode), any other code, or a request naming no partition
  (an incremental fetch of its session), at the top level.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.share_requests import (
    PARTITION_ERRORS,
    acknowledge_partitions,
    error_topics,
    lock_timeout,
    session_step,
    share_fetch_topics,
)
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.share.coordinator import FINAL_EPOCH
from mockbroker.state.share.partition import AcquiredRange

API_KEY = ApiKey.SHARE_FETCH
DEFAULT_MAX_RECORDS = 500


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    if code in PARTITION_ERRORS and req.topics:  # on every partition named, as Kafka answers them
        return Msg(throttle_time_ms=0, error_code=0, error_message=None, acquisition_lock_timeout_ms=0,
                   responses=error_topics(req.topics, code, fetch=True), node_endpoints=[])
    return Msg(throttle_time_ms=0, error_code=code, error_message=message, acquisition_lock_timeout_ms=0,
               responses=[], node_endpoints=[])


@handler(API_KEY, 1, 2, authorize=member_of_group, error_response=error_response)
def handle_share_fetch(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg | Awaitable[Msg]:
    v = header.api_version
    share = ctx.node.share_coordinator
    now = ctx.node.clock.now_ms()
    group_id, member_id, epoch = req.group_id or "", req.member_id or "", req.share_session_epoch
    has_acks = any(p.acknowledgement_batches for t in req.topics for p in t.partitions)
    if not group_id or not member_id:
        return error_response(req, ErrorCode.INVALID_REQUEST, v, "GroupId and MemberId must be set.")
    if epoch == 0 and has_acks:
        return error_response(req, ErrorCode.INVALID_REQUEST, v, "Acknowledge data present on initial fetch request.")
    try:
        session = share.session(ctx.node.node_id, group_id, member_id, epoch, ctx.connection_id)
    except KafkaError as e:
        return error_response(req, ErrorCode(e.code), v, e.message)
    named = share_fetch_topics(ctx, req.topics)
    results = acknowledge_partitions(ctx, group_id, member_id, req.topics, now)
    forgotten = {(ctx.cluster.topics_by_id[t.topic_id].name, p) for t in req.forgotten_topics_data
                 if t.topic_id in ctx.cluster.topics_by_id for p in t.partitions}
    session_step(share, ctx.node.node_id, group_id, member_id, epoch, session, named, forgotten)
    answer = _Answer(ctx, v, group_id, member_id, named, results)
    if epoch == FINAL_EPOCH:
        return answer.build({})
    wanted = sorted(session.partitions)
    max_records = req.max_records if req.max_records > 0 else DEFAULT_MAX_RECORDS
    acquired = answer.acquire(wanted, max_records)
    if acquired or req.max_wait_ms <= 0:
        return answer.build(acquired)
    return _long_poll(ctx, answer, wanted, max_records, req.max_wait_ms)


class _Answer:
    """One ShareFetch's answer being put together: the partitions named, their acknowledgement results,
    what was acquired."""

    def __init__(self, ctx: RequestContext, version: int, group_id: str, member_id: str,
                 named: dict[tuple[str, int], uuid.UUID | None], ack_results: dict[tuple[str, int], int]) -> None:
        self.ctx, self.version, self.group_id, self.member_id = ctx, version, group_id, member_id
        self.named, self.ack_results = named, ack_results

    def acquire(self, wanted: list[tuple[str, int]], max_records: int) -> dict[tuple[str, int], list[AcquiredRange]]:
        ctx = self.ctx
        out: dict[tuple[str, int], list[AcquiredRange]] = {}
        left = max_records
        for topic, index in wanted:
            partition = ctx.cluster.partition(topic, index)
            if left <= 0 or partition is None or not ctx.node.leads(partition):
                continue
            ranges = ctx.node.share_coordinator.acquire(self.group_id, self.member_id, topic, index, left,
                                                        ctx.node.clock.now_ms())
            if ranges:
                out[(topic, index)] = ranges
                left -= sum(r.last_offset - r.first_offset + 1 for r in ranges)
        return out

    def build(self, acquired: dict[tuple[str, int], list[AcquiredRange]]) -> Msg:
        ctx = self.ctx
        keys = sorted(set(self.named) | set(self.ack_results) | set(acquired))
        topics: dict[str, Msg] = {}
        for topic, index in keys:
            t = ctx.cluster.topic(topic)
            topic_id = t.topic_id if t is not None else (self.named.get((topic, index)) or uuid.UUID(int=0))
            entry = topics.setdefault(topic, Msg(topic_id=topic_id, partitions=[]))
            partition = ctx.cluster.partition(topic, index)
            code: int = ErrorCode.NONE
            if partition is None:
                code = ErrorCode.UNKNOWN_TOPIC_ID if t is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif not ctx.node.leads(partition):
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            ranges = acquired.get((topic, index), [])
            records: list[memoryview] = []  # empty, never null: clients read a size
            if ranges and partition is not None:
                first, last = ranges[0].first_offset, ranges[-1].last_offset
                records, _ = partition.log.read(first, 2**31 - 1, min_one=True, upto=last + 1)
            leader = (Msg(leader_id=partition.leader_id, leader_epoch=partition.leader_epoch)
                      if partition is not None and code == ErrorCode.NOT_LEADER_OR_FOLLOWER
                      else Msg(leader_id=-1, leader_epoch=-1))
            entry.partitions.append(Msg(
                partition_index=index, error_code=code, error_message=None,
                acknowledge_error_code=self.ack_results.get((topic, index), 0), acknowledge_error_message=None,
                current_leader=leader, records=records,
                acquired_records=[Msg(first_offset=r.first_offset, last_offset=r.last_offset,
                                      delivery_count=r.delivery_count) for r in ranges]))
        return Msg(throttle_time_ms=0, error_code=0, error_message=None,
                   acquisition_lock_timeout_ms=lock_timeout(ctx, self.group_id), responses=list(topics.values()),
                   node_endpoints=[])


async def _long_poll(ctx: RequestContext, answer: _Answer, wanted: list[tuple[str, int]], max_records: int,
                     max_wait_ms: int) -> Msg:
    """Wait (real time, as Fetch's long poll) for records to acquire: appends, releases, expired locks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait_ms / 1000.0
    woken: asyncio.Event = asyncio.Event()
    logs = [p.log for t, i in wanted if (p := ctx.cluster.partition(t, i)) is not None]
    share = ctx.node.share_coordinator
    for log in logs:
        log.add_append_listener(woken.set)
    share.listeners.append(woken.set)
    try:
        while (remaining := deadline - loop.time()) > 0:
            try:
                await asyncio.wait_for(woken.wait(), timeout=remaining)
            except TimeoutError:
                break
            woken.clear()
            acquired = answer.acquire(wanted, max_records)
            if acquired:
                return answer.build(acquired)
    finally:
        for log in logs:
            log.remove_append_listener(woken.set)
        if woken.set in share.listeners:
            share.listeners.remove(woken.set)
    return answer.build(answer.acquire(wanted, max_records))
