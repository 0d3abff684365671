"""DescribeShareGroupOffsets (key 90), v0-v1 (as Kafka 4.3): each share partition's start offset (and, v1,
KIP-1226's lag: records from the start offset to the high watermark not yet acknowledged or archived)
(state: mockbroker/state/share/coordinator.py).
Topics null: every share partition the group has. A partition the group never fetched: start offset and
lag -1. A group id that is no share group: GROUP_ID_NOT_FOUND on the group; a topic that does not exist:
UNKNOWN_TOPIC_OR_PARTITION on its partitions. The leader epoch is the partition's current one.
- Authorization (with an authorizer, `authorize`): DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED on
  the group), DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on its partitions).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code on every group.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, extend, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS


def _group_error(group_id: str, code: int, message: str | None = None) -> Msg:
    return Msg(group_id=group_id, topics=[], error_code=code, error_message=message)


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every group named."""
    return Msg(throttle_time_ms=0, groups=[_group_error(g.group_id, code) for g in req.groups])


def _partition(index: int, start: int, lag: int, epoch: int, code: int = 0) -> Msg:
    return Msg(partition_index=index, start_offset=start, leader_epoch=epoch, lag=lag, error_code=code,
               error_message=None)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed = [g for g in req.groups if access.may(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id)]
    refused = [_group_error(g.group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in req.groups if g not in allowed]
    names = {t.topic_name for g in allowed for t in (g.topics or [])}
    hidden = names - set(access.topics(AclOperation.DESCRIBE, sorted(names)))

    def edit(response: Msg) -> None:
        for group in response.groups:
            for topic in group.topics:
                if topic.topic_name in hidden:
                    for p in topic.partitions:
                        p.update(start_offset=-1, lag=-1, leader_epoch=-1,
                                 error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        extend("groups", refused)(response)
    return then(call(with_list(req, "groups", allowed)), edit)


@handler(API_KEY, 0, 1, authorize=authorize, error_response=error_response)
def handle_describe_share_group_offsets(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    share = ctx.node.share_coordinator
    groups: list[Msg] = []
    for g in req.groups:
        misrouted = ctx.node.group_coordinator_error(g.group_id)
        if misrouted is not None:
            groups.append(_group_error(g.group_id, misrouted))
            continue
        if g.group_id not in share.groups:
            groups.append(_group_error(g.group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {g.group_id} not found."))
            continue
        wanted: dict[str, list[int]] = {}
        if g.topics is None:
            for group_id, topic_name, index in sorted(share.partitions):
                if group_id == g.group_id:
                    wanted.setdefault(topic_name, []).append(index)
        else:
            for t in g.topics:
                wanted.setdefault(t.topic_name, []).extend(t.partitions)
        topics: list[Any] = []
        for name, indexes in wanted.items():
            topic = ctx.cluster.topic(name)
            partitions = []
            for index in indexes:
                part = topic.partition(index) if topic is not None else None
                if part is None:
                    partitions.append(_partition(index, -1, -1, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                start, lag = share.start_offset_and_lag(g.group_id, name, index)
                partitions.append(_partition(index, start, lag, part.leader_epoch))
            topics.append(Msg(topic_name=name, topic_id=topic.topic_id if topic is not None else uuid.UUID(int=0),
                              partitions=partitions))
        groups.append(Msg(group_id=g.group_id, topics=topics, error_code=0, error_message=None))
    return Msg(throttle_time_ms=0, groups=groups)
