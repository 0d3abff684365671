"""DeleteShareGroupOffsets (key 92), v0 (as Kafka 4.3): forgets a share group's share partitions of the
topics named (state: mockbroker/state/share/coordinator.py); a later fetch starts them again at the
group's share.auto.offset.reset, and DescribeShareGroupOffsets shows them as never fetched.
- Top-level errors: INVALID_GROUP_ID for an empty group id; GROUP_ID_NOT_FOUND for a group that is no share
  group; NON_EMPTY_GROUP while the group has members.
- Per topic: UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist, and for one the group holds no
  share partition of ("There is no offset information to delete.").
- Authorization (with an authorizer, `authorize`): DELETE on the group (GROUP_AUTHORIZATION_FAILED at the
  top), READ on each topic (TOPIC_AUTHORIZATION_FAILED on the topic).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code at the top.
"""

from __future__ import annotations

import uuid

from mockbroker.authorization.access import AclOperation
from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.group_authorization import share_offsets_check
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

ZERO_UUID = uuid.UUID(int=0)
API_KEY = ApiKey.DELETE_SHARE_GROUP_OFFSETS


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    """The code at the top, no topics."""
    return Msg(throttle_time_ms=0, error_code=code, error_message=message, responses=[])


def refused_topic(t: Msg) -> Msg:
    """A topic the client may not read: TOPIC_AUTHORIZATION_FAILED on the topic."""
    return Msg(topic_name=t.topic_name, topic_id=ZERO_UUID, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
               error_message="Topic authorization failed.")


@handler(API_KEY, 0, 0, authorize=share_offsets_check(AclOperation.DELETE, refused_topic), error_response=error_response)
def handle_delete_share_group_offsets(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    if not req.group_id:
        return error_response(req, ErrorCode.INVALID_GROUP_ID, v)
    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return error_response(req, misrouted, v)
    share = ctx.node.share_coordinator
    if req.group_id not in share.groups:
        message = (f"Group {req.group_id} is not a share group." if req.group_id in ctx.node.group_coordinator.groups
                   else f"Group {req.group_id} not found.")
        return error_response(req, ErrorCode.GROUP_ID_NOT_FOUND, v, message)
    try:
        share.offsets_alterable(req.group_id, create=False)
    except KafkaError as e:
        return error_response(req, ErrorCode(e.code), v, e.message)
    responses = []
    for t in req.topics:
        topic = ctx.cluster.topic(t.topic_name)
        if topic is None:
            responses.append(Msg(topic_name=t.topic_name, topic_id=ZERO_UUID, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 error_message="This server does not host this topic-partition."))
            continue
        if not share.delete_offsets(req.group_id, t.topic_name):
            responses.append(Msg(topic_name=t.topic_name, topic_id=ZERO_UUID, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 error_message="There is no offset information to delete."))
            continue
        responses.append(Msg(topic_name=t.topic_name, topic_id=topic.topic_id, error_code=0, error_message=None))
    return Msg(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)
