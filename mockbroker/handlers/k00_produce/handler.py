"""Produce (key 0), v0-v13.

- acks must be -1, 0 or 1 (INVALID_REQUIRED_ACKS on every partition otherwise); acks=0 gets no
  response at all (the records are still appended), and when any partition failed the connection is
  closed so the client notices, as Kafka does. acks=-1 needs min.insync.replicas in the partition's ISR
  (NOT_ENOUGH_REPLICAS before the append); followers share the leader's log, so once appended a
  record is on every ISR member and acks 1 and -1 answer alike, unless an in-sync follower is stalled:
  then acks=-1 waits for it to catch up or leave the ISR (k00_produce/delayed_produce.py: Kafka's
  DelayedProduce, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below min.insync.replicas).
- v0-v2 carry magic 0/1 message sets, converted to one v2 batch on append; v3+ exactly one v2 batch.
- Per-partition errors never fail the whole request, checked in Kafka's order: UNKNOWN_TOPIC_OR_PARTITION
  (v13: UNKNOWN_TOPIC_ID for an unknown topic id); ProduceRequest.validateRecords (v3+: INVALID_RECORD,
  UNSUPPORTED_COMPRESSION_TYPE); INVALID_REQUIRED_ACKS; NOT_LEADER_OR_FOLLOWER for a partition led by
  another node (or none: an offline partition), with the current leader's id and epoch (v10+,
  KIP-951: handlers/support/leader_hints.py); NOT_ENOUGH_REPLICAS (acks=-1); then the append: CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE, INVALID_TIMESTAMP
  and the producer-state errors of state/log/producers.py.
- As Kafka's ReplicaManager answers them: error_message only with record_errors (v8+); log_start_offset
  (v5+) -1 for the errors raised before the append (state/log/validation.py's RejectedBeforeAppend), the
  partition's log start offset for the others.
- The base offset and partition leader epoch are stamped into the stored batch in place; topics with
  message.timestamp.type=LogAppendTime also get the broker time, answered as log_append_time_ms.
- Produce does not create topics (Kafka creates them through Metadata only).
- mockbroker.max.log.bytes (state/cluster/cluster.py make_room): past it the oldest segments of delete-policy
  topics go first; when nothing can make room, KAFKA_STORAGE_ERROR.
- A partition named several times in one request (in one topic entry or in several entries of the same
  topic) is appended once, with its last copy, and answered once, as Kafka's KafkaApis does (it collects
  the request's partitions into a map keyed by topic-partition).
- The per-request bound (handlers/support/request_steps.py): partitions are appended in the request's order;
  once a step has held the event loop for mockbroker.max.request.step.ms, the rest is done one step per
  loop pass, so other connections are served between heavy partitions. One partition's checks, validation
  and append are never split; each step looks up the topic, leadership and ISR again. The answer (or
  none: acks=0, a close on failure; or the acks=all wait) is the same as in one go. A client that goes
  away mid-request does not stop it: the rest is appended anyway (Kafka completes what it has read).
- Authorization (with an authorizer, `authorize`): WRITE on the transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition; an acks=0 request closes the connection),
  WRITE on each topic (TOPIC_AUTHORIZATION_FAILED, the topic never looked at; with acks=0 the allowed
  partitions are appended, then the connection is closed).
- Error answer (fault injection, `error_response`): the code on every partition named.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from typing import Any, cast

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    extend,
    split,
    then,
    topic_name,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import CloseConnection, HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.k00_produce.delayed_produce import Waiting, must_wait, wait_for_replicas
from mockbroker.handlers.support.leader_hints import current_leader, node_endpoints
from mockbroker.handlers.support.request_steps import let_others_run, now_s, step_seconds
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import Topic
from mockbroker.state.cluster.leadership import check_min_insync
from mockbroker.state.log.validation import BatchRejected, RejectedBeforeAppend, check_produce_records

API_KEY = ApiKey.PRODUCE


def _partition_response(index: int, code: int, message: str | None = None, base_offset: int = -1,
                        log_append_time_ms: int = -1, log_start_offset: int = -1,
                        record_errors: list[Msg] | None = None) -> Msg:
    return Msg(index=index, error_code=code, base_offset=base_offset, log_append_time_ms=log_append_time_ms,
               log_start_offset=log_start_offset, record_errors=record_errors or [], error_message=message)


def _unique_partitions(req: Msg, by_id: bool) -> list[tuple[Msg, list[Msg]]]:
    """The request's topics with their partitions, each topic and partition once (the last copy of a
    partition wins), in the order of their first appearance."""
    topic_data = req["topic_data"]
    if len(topic_data) == 1 and len(topic_data[0]["partition_data"]) == 1:  # the usual request: nothing to merge
        return [(topic_data[0], topic_data[0]["partition_data"])]
    topics: dict[Any, tuple[Msg, dict[int, Msg]]] = {}
    for td in topic_data:
        key = td.topic_id if by_id else td.name
        _, parts = topics.setdefault(key, (td, {}))
        for pd in td.partition_data:
            parts[pd.index] = pd
    return [(td, list(parts.values())) for td, parts in topics.values()]


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every partition the request names (ProduceRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, responses=[
        Msg(name=t.name, topic_id=t.topic_id, partition_responses=[
            Msg(index=p.index, error_code=code, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1)
            for p in t.partition_data])
        for t in req.topic_data])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    if req.get("transactional_id") is not None and not access.may(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                                                  req.transactional_id):
        if req.acks == 0:
            return CloseConnection("produce: transactional id not authorized")
        return error_response(req, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, v)
    allowed, refused = split(access, AclOperation.WRITE, req.topic_data,
                             lambda t: topic_name(access, t.name, t.get("topic_id")))
    if not refused:
        return call(req)
    result = call(with_list(req, "topic_data", allowed))
    if req.acks == 0:
        return CloseConnection("acks=0 produce to a topic not authorized")
    errors = error_response(with_list(req, "topic_data", refused), ErrorCode.TOPIC_AUTHORIZATION_FAILED, v).responses
    return then(result, extend("responses", errors))


@handler(API_KEY, 0, 13, authorize=authorize, error_response=error_response)
def handle_produce(ctx: RequestContext, header: RequestHeader,
                   req: Msg) -> Msg | CloseConnection | Awaitable[Msg | CloseConnection | None] | None:
    v = header.api_version
    topics = _unique_partitions(req, v >= 13)
    now = ctx.node.clock.now_ms()
    responses: list[Msg] = []
    hinted: set[int] = set()
    waiting: Waiting = []  # acks=all: what the ISR must have before the answer (delayed_produce.py)
    started = now_s()
    bound = -1.0
    first = True
    for ti, (td, partition_data) in enumerate(topics):
        topic, missing = _topic_of(ctx, td, v)
        parts: list[Msg] = []
        responses.append(Msg(name=td["name"], topic_id=td["topic_id"], partition_responses=parts))
        for pi, pd in enumerate(partition_data):
            if not first:
                if bound < 0:
                    bound = step_seconds(ctx.cluster)
                if now_s() - started > bound:  # the rest in steps (handlers/support/request_steps.py)
                    rest = deque((t, p) for t in range(ti, len(topics)) for p in topics[t][1][(pi if t == ti else 0):])
                    return _in_steps(ctx, v, req, topics, rest, responses, hinted, waiting)
            first = False
            parts.append(_append_partition(ctx, v, req, topic, missing, pd, now, hinted, waiting))
    return _answer(ctx, req, responses, hinted, waiting)


async def _in_steps(ctx: RequestContext, v: int, req: Msg, topics: list[tuple[Msg, list[Msg]]],
                    rest: deque[tuple[int, Msg]], responses: list[Msg], hinted: set[int],
                    waiting: Waiting) -> Msg | CloseConnection | None:
    """The partitions left when the request's first step ran past mockbroker.max.request.step.ms (`rest`:
    each with the index of its topic entry), then the answer. If the connection goes away meanwhile (its
    waiting handler is cancelled), the rest is still appended, in a task of its own: Kafka appends a request
    it has read whatever becomes of its connection (an acks=0 producer may close right after sending)."""
    steps = (ctx, v, req, topics, rest, responses, hinted, waiting)
    try:
        await _steps(*steps)
    except asyncio.CancelledError:
        if rest:
            ctx.node.carried_on.start(_steps(*steps))
        raise
    result = _answer(ctx, req, responses, hinted, waiting)
    if result is None or isinstance(result, (Msg, CloseConnection)):
        return result
    return await cast(Awaitable[Msg], result)  # acks=all waiting for a stalled follower (delayed_produce.py)


async def _steps(ctx: RequestContext, v: int, req: Msg, topics: list[tuple[Msg, list[Msg]]],
                 rest: deque[tuple[int, Msg]], responses: list[Msg], hinted: set[int],
                 waiting: Waiting) -> None:
    """Append `rest` (taken from its front), one step after each pass of the event loop. What may change
    between steps (the topic deleted or re-created, the leader moved, the ISR shrunk, the partition
    appended to by another connection) is looked up again in each step, as if the request had just
    arrived; one partition's checks, validation and append are never split."""
    while rest:
        await let_others_run()
        now = ctx.node.clock.now_ms()
        started = now_s()
        bound = step_seconds(ctx.cluster)
        looked_up: dict[int, tuple[Topic | None, int]] = {}
        first = True
        while rest and (first or now_s() - started <= bound):
            first = False
            t, pd = rest.popleft()
            td = topics[t][0]
            if t == len(responses):
                responses.append(Msg(name=td.name, topic_id=td.topic_id, partition_responses=[]))
            if t not in looked_up:
                looked_up[t] = _topic_of(ctx, td, v)
            topic, missing = looked_up[t]
            responses[t].partition_responses.append(
                _append_partition(ctx, v, req, topic, missing, pd, now, hinted, waiting))


def _topic_of(ctx: RequestContext, td: Msg, v: int) -> tuple[Topic | None, int]:
    """A topic entry's topic (by id from v13), and the error for its partitions when there is none."""
    if v >= 13:
        topic = ctx.cluster.topics_by_id.get(td["topic_id"]) if td["topic_id"] != ZERO_UUID else None
        return topic, ErrorCode.UNKNOWN_TOPIC_ID
    return ctx.cluster.topic(td["name"]), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _append_partition(ctx: RequestContext, v: int, req: Msg, topic: Topic | None, missing: int, pd: Msg, now: int,
                      hinted: set[int], waiting: Waiting) -> Msg:
    """One partition: Kafka's checks in order, then the append; its answer."""
    # Msg fields by subscript on this path (every produced batch comes here): an attribute goes through
    # Msg.__getattr__ after a failed lookup, several times slower.
    acks = req["acks"]
    index, records = pd["index"], pd["records"]
    node = ctx.node
    partition = topic.partition(index) if topic is not None else None
    if partition is None:
        return _partition_response(index, missing if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    tp = f"{partition.topic.name}-{partition.index}"
    try:
        spans = check_produce_records(records, v, tp)
    except KafkaError as exc:
        return _partition_response(index, exc.code)
    if acks not in (-1, 0, 1):
        return _partition_response(index, ErrorCode.INVALID_REQUIRED_ACKS)
    if partition.topic.internal:
        # Kafka's ReplicaManager: "Cannot append to internal topic" (its coordinators write them).
        return _partition_response(index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if not node.leads(partition):
        answer = _partition_response(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        hint = current_leader(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if hint is not None and v >= 10:
            answer.current_leader = hint
            hinted.add(hint.leader_id)
        return answer
    if acks == -1:
        try:
            check_min_insync(partition)
        except KafkaError as exc:
            return _partition_response(index, exc.code)
    try:
        ctx.cluster.make_room(len(records) if records is not None else 0, now)
        result = node.appender.append_records(partition, records, v, now, req["transactional_id"], spans, tp)
    except BatchRejected as exc:
        errs = [Msg(batch_index=e.batch_index, batch_index_error_message=e.message) for e in exc.record_errors]
        return _partition_response(index, exc.code, exc.message, record_errors=errs,
                                   log_start_offset=partition.log.log_start_offset)
    except RejectedBeforeAppend as exc:
        return _partition_response(index, exc.code)
    except KafkaError as exc:
        return _partition_response(index, exc.code, log_start_offset=partition.log.log_start_offset)
    answer = _partition_response(index, ErrorCode.NONE, None, result.base_offset, result.log_append_time_ms,
                                 result.log_start_offset)
    if acks == -1:
        waiting.append((partition, partition.log.log_end_offset, answer))
    return answer


def _answer(ctx: RequestContext, req: Msg, responses: list[Msg], hinted: set[int],
            waiting: Waiting) -> Msg | CloseConnection | Awaitable[Msg] | None:
    """The request's answer once every partition is done: none for acks=0 (a close when one failed),
    else the response, after the ISR caught up for acks=all when a follower is stalled."""
    if req["acks"] == 0:
        # No response; but a failed partition closes the connection so the client notices (KafkaApis).
        failed = [p for t in responses for p in t["partition_responses"] if p["error_code"] != ErrorCode.NONE]
        return CloseConnection(f"acks=0 produce failed on {len(failed)} partition(s)") if failed else None
    response = Msg(responses=responses, throttle_time_ms=0)
    if hinted:
        response["node_endpoints"] = node_endpoints(ctx, hinted)
    node_id = ctx.node.node_id
    if waiting and must_wait(node_id, waiting):
        return wait_for_replicas(node_id, waiting, req["timeout_ms"], response)
    return response
