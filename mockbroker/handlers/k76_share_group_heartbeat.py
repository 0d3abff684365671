"""ShareGroupHeartbeat (key 76), v1 (as Kafka 4.3; v0 was KIP-932's early access): a share group's members
join (epoch 0, with the member id the client chose), heartbeat with their epoch and leave (-1)
(state: mockbroker/state/share/group.py, coordinator.py).

Every answer carries the member's epoch, the heartbeat interval (group.share.heartbeat.interval.ms, 5 s)
and its assignment by topic id (the simple assignor: a partition may go to several members). A member that
leaves hands its acquired records back. Share groups and consumer groups keep separate ids here: a share
group id that names a consumer or classic group is refused with GROUP_ID_NOT_FOUND as Kafka refuses a
heartbeat for a group of another type.
Errors as Kafka: INVALID_REQUEST (empty group or member id, a first heartbeat without topics),
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND, NOT_COORDINATOR.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code, member epoch 0.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.group_members import client_host
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.SHARE_GROUP_HEARTBEAT


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, error_message=message, member_id=None, member_epoch=0,
               heartbeat_interval_ms=0, assignment=None)


@handler(API_KEY, 1, 1, authorize=member_of_group, error_response=error_response)
def handle_share_group_heartbeat(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return error_response(req, misrouted, v)
    if req.group_id and req.group_id in ctx.node.group_coordinator.groups:
        return error_response(req, ErrorCode.GROUP_ID_NOT_FOUND, v, f"Group {req.group_id} is not a share group.")
    share = ctx.node.share_coordinator
    try:
        member = share.heartbeat(req.group_id, req.member_id or "", req.member_epoch,
                                 list(req.subscribed_topic_names) if req.subscribed_topic_names is not None else None,
                                 ctx.node.clock.now_ms(), client_id=header.client_id or "",
                                 client_host=client_host(ctx), rack_id=req.rack_id)
    except KafkaError as e:
        return error_response(req, ErrorCode(e.code), v, e.message)
    interval = share.setting("group.share.heartbeat.interval.ms", req.group_id)
    if member is None:
        return Msg(throttle_time_ms=0, error_code=0, error_message=None, member_id=req.member_id, member_epoch=-1,
                   heartbeat_interval_ms=interval, assignment=None)
    topics = []
    for name, partitions in sorted(member.assignment.items()):
        topic = ctx.cluster.topic(name)
        if topic is not None:
            topics.append(Msg(topic_id=topic.topic_id, partitions=list(partitions)))
    return Msg(throttle_time_ms=0, error_code=0, error_message=None, member_id=member.member_id,
               member_epoch=member.member_epoch, heartbeat_interval_ms=interval,
               assignment=Msg(topic_partitions=topics))
