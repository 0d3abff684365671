"""AlterShareGroupOffsets (key 91), v0 (as Kafka 4.3): sets the start offset of a share group's share
partitions (state: mockbroker/state/share/coordinator.py); each partition named starts again at its
StartOffset with nothing in flight, as Kafka's persister initializes it.
- Top-level errors: INVALID_GROUP_ID for an empty group id; NON_EMPTY_GROUP while the group has members;
  GROUP_ID_NOT_FOUND for a consumer or classic group's id ("Group X is not a share group."). A group id
  nobody uses gets an empty share group, as Kafka makes one.
- Per partition: UNKNOWN_TOPIC_OR_PARTITION for a topic or partition that does not exist; INVALID_REQUEST
  for a negative start offset.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED at the top),
  READ on each topic (TOPIC_AUTHORIZATION_FAILED on its partitions).
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
API_KEY = ApiKey.ALTER_SHARE_GROUP_OFFSETS


def error_response(req: Msg, code: ErrorCode, version: int, message: str | None = None) -> Msg:
    """The code at the top, no topics."""
    return Msg(throttle_time_ms=0, error_code=code, error_message=message, responses=[])


def refused_topic(t: Msg) -> Msg:
    """A topic the client may not read: each of its partitions TOPIC_AUTHORIZATION_FAILED."""
    return Msg(topic_name=t.topic_name, topic_id=ZERO_UUID, partitions=[
        Msg(partition_index=p.partition_index, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None)
        for p in t.partitions])


@handler(API_KEY, 0, 0, authorize=share_offsets_check(AclOperation.READ, refused_topic), error_response=error_response)
def handle_alter_share_group_offsets(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    if not req.group_id:
        return error_response(req, ErrorCode.INVALID_GROUP_ID, v)
    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return error_response(req, misrouted, v)
    if req.group_id in ctx.node.group_coordinator.groups:
        return error_response(req, ErrorCode.GROUP_ID_NOT_FOUND, v, f"Group {req.group_id} is not a share group.")
    share = ctx.node.share_coordinator
    try:
        share.offsets_alterable(req.group_id, create=True)
    except KafkaError as e:
        return error_response(req, ErrorCode(e.code), v, e.message)
    responses = []
    for t in req.topics:
        topic = ctx.cluster.topic(t.topic_name)
        partitions = []
        for p in t.partitions:
            code, message = ErrorCode.NONE, None
            if topic is None or topic.partition(p.partition_index) is None:
                code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic-partition does not exist."
            elif p.start_offset < 0:
                code, message = ErrorCode.INVALID_REQUEST, "The start offset must not be negative."
            else:
                share.alter_offsets(req.group_id, t.topic_name, p.partition_index, p.start_offset)
            partitions.append(Msg(partition_index=p.partition_index, error_code=code, error_message=message))
        responses.append(Msg(topic_name=t.topic_name, topic_id=topic.topic_id if topic is not None else ZERO_UUID,
                             partitions=partitions))
    return Msg(throttle_time_ms=0, error_code=0, error_message=None, responses=responses)
