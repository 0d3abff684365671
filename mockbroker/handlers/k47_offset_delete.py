"""OffsetDelete (key 47), v0: delete some committed offsets of a group (KIP-496).

As Kafka: the group must exist (GROUP_ID_NOT_FOUND) and, for a classic group, have no members
(NON_EMPTY_GROUP); a KIP-848 group may have members. Group errors are top-level. Per partition: a topic or
partition that does not exist gets UNKNOWN_TOPIC_OR_PARTITION, a topic the group is subscribed to
GROUP_SUBSCRIBED_TO_TOPIC (classic groups: read from the members' consumer-protocol subscriptions),
anything else is deleted (also when nothing was committed). INVALID_GROUP_ID for an empty group id.
Authorization (with an authorizer, `authorize`): DELETE on the group (GROUP_AUTHORIZATION_FAILED), READ
on each topic (TOPIC_AUTHORIZATION_FAILED on its partitions). Error answer (fault injection): the
top-level code.
"""

from __future__ import annotations

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    extend,
    split,
    then,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.OFFSET_DELETE


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.DELETE, ResourceType.GROUP, req.group_id):
        return Msg(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[])
    allowed, refused = split(access, AclOperation.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index,
                                               error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                           for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_offset_delete(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.GROUP_ID_NOT_FOUND)  # a share group's id too
    if misrouted is not None:
        return Msg(error_code=misrouted, throttle_time_ms=0, topics=[])
    cluster = ctx.cluster
    topics_out: list[Msg] = []
    valid: list[tuple[str, int]] = []
    valid_out: list[Msg] = []
    for t in req.topics:
        topic = cluster.topic(t.name)
        out_topic = Msg(name=t.name, partitions=[])
        topics_out.append(out_topic)
        for p in t.partitions:
            out_p = Msg(partition_index=p.partition_index, error_code=ErrorCode.NONE)
            out_topic.partitions.append(out_p)
            if topic is None or topic.partition(p.partition_index) is None:
                out_p.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                valid.append((t.name, p.partition_index))
                valid_out.append(out_p)
    try:
        codes = ctx.node.group_coordinator.delete_offsets(req.group_id, valid)
    except KafkaError as exc:
        return Msg(error_code=exc.code, throttle_time_ms=0, topics=[])
    for out_p, code in zip(valid_out, codes, strict=True):
        out_p.error_code = code
    return Msg(error_code=ErrorCode.NONE, throttle_time_ms=0, topics=topics_out)
