"""ShareAcknowledge (key 79), v1-v2 (as Kafka 4.3): a share group member acknowledges records it acquired
without fetching more (state: mockbroker/state/share/partition.py, coordinator.py).

ACCEPT (1), RELEASE (2), REJECT (3) and GAP (0), one type per batch or one per offset; a partition's
ErrorCode is INVALID_RECORD_STATE when a record is not acquired by the member (then none of that batch
changes). The request belongs to the member's share session on this node: the epoch must be the session's
next one (INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_NOT_FOUND); 0 is refused (INVALID_SHARE_SESSION_EPOCH:
a session opens with a ShareFetch), -1 acknowledges and closes the session, releasing what the member still
holds. v2: AcquisitionLockTimeoutMs; IsRenewAck (KIP-1222) is not modelled.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED).
- Error answer (fault injection: `error_response`): a partition-level code (NOT_LEADER_OR_FOLLOWER,
  INVALID_RECORD_STATE, ..., support/share_requests.PARTITION_ERRORS) on every partition named, any other
  code at the top level.
"""

from __future__ import annotations

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
)
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.SHARE_ACKNOWLEDGE


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    if code in PARTITION_ERRORS and req.topics:  # on every partition named, as Kafka answers them
        return Msg(throttle_time_ms=0, error_code=0, error_message=None, acquisition_lock_timeout_ms=0,
                   responses=error_topics(req.topics, code, fetch=False), node_endpoints=[])
    return Msg(throttle_time_ms=0, error_code=code, error_message=message, acquisition_lock_timeout_ms=0,
               responses=[], node_endpoints=[])


@handler(API_KEY, 1, 2, authorize=member_of_group, error_response=error_response)
def handle_share_acknowledge(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    share = ctx.node.share_coordinator
    group_id, member_id, epoch = req.group_id or "", req.member_id or "", req.share_session_epoch
    if not group_id or not member_id:
        return error_response(req, ErrorCode.INVALID_REQUEST, v, "GroupId and MemberId must be set.")
    if epoch == 0:
        return error_response(req, ErrorCode.INVALID_SHARE_SESSION_EPOCH, v)
    try:
        session = share.session(ctx.node.node_id, group_id, member_id, epoch, ctx.connection_id)
    except KafkaError as e:
        return error_response(req, ErrorCode(e.code), v, e.message)
    results = acknowledge_partitions(ctx, group_id, member_id, req.topics, ctx.node.clock.now_ms())
    session_step(share, ctx.node.node_id, group_id, member_id, epoch, session, {}, set())
    topics: dict[str, Msg] = {}
    for t in req.topics:
        topic = ctx.cluster.topics_by_id.get(t.topic_id)
        entry = topics.setdefault(str(t.topic_id), Msg(topic_id=t.topic_id, partitions=[]))
        for p in t.partitions:
            name = topic.name if topic is not None else str(t.topic_id)
            code = results.get((name, p.partition_index), 0)
            partition = ctx.cluster.partition(topic.name, p.partition_index) if topic is not None else None
            if partition is not None and not ctx.node.leads(partition):
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            entry.partitions.append(Msg(partition_index=p.partition_index, error_code=code, error_message=None,
                                        current_leader=Msg(leader_id=-1, leader_epoch=-1)))
    return Msg(throttle_time_ms=0, error_code=0, error_message=None, acquisition_lock_timeout_ms=lock_timeout(ctx, group_id),
               responses=list(topics.values()), node_endpoints=[])
