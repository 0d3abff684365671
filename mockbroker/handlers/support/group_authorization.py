"""The authorization checks several group APIs share (each API names its check in its @handler):

- member_of_group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ConsumerGroupHeartbeat): READ on the
  group (GROUP_AUTHORIZATION_FAILED, the API's error answer); ConsumerGroupHeartbeat also DESCRIBE on
  every subscribed topic name (TOPIC_AUTHORIZATION_FAILED).
- described_groups (DescribeGroups, ConsumerGroupDescribe): DESCRIBE on each group; the authorized
  operations of the others when asked.
- share_offsets_check (AlterShareGroupOffsets, DeleteShareGroupOffsets): an operation on the group
  (GROUP_AUTHORIZATION_FAILED at the top), then READ on each topic, the refused topics answered with
  TOPIC_AUTHORIZATION_FAILED in the API's own shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, extend, then, with_list
from mockbroker.dispatch import HandlerResult, error_response
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

GROUP = ResourceType.GROUP


def member_of_group(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.READ, GROUP, req.group_id):
        return error_response(header.api_key, header.api_version, req, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    subscribed = req.get("subscribed_topic_names") if header.api_key == ApiKey.CONSUMER_GROUP_HEARTBEAT else None
    if subscribed and len(access.topics(AclOperation.DESCRIBE, subscribed)) < len(set(subscribed)):
        return error_response(header.api_key, header.api_version, req, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return call(req)


def described_groups(access: Access, header: RequestHeader, req: Msg, call: Call, field: str,
                     with_ops: bool) -> HandlerResult:
    """DESCRIBE per group named in `field`; with_ops: fill in the authorized operations."""
    allowed = [g for g in req[field] if access.may(AclOperation.DESCRIBE, GROUP, g)]
    refused = [g for g in req[field] if g not in allowed]
    errors = error_response(header.api_key, header.api_version, with_list(req, field, refused),
                            ErrorCode.GROUP_AUTHORIZATION_FAILED).groups

    def edit(response: Msg) -> None:
        if with_ops:
            for group in response.groups:
                if group.error_code == ErrorCode.NONE:
                    group.authorized_operations = access.operations(GROUP, group.group_id)
        response.groups = errors + list(response.groups)

    if not allowed and refused:
        return Msg(throttle_time_ms=0, groups=errors)
    return then(call(with_list(req, field, allowed)), edit)


Authorize = Callable[[Access, RequestHeader, Msg, Call], HandlerResult]


def share_offsets_check(group_operation: AclOperation, refused_topic: Callable[[Msg], Any]) -> Authorize:
    """The check of a share-offsets API: `group_operation` on the group, READ on each topic of `req.topics`;
    `refused_topic(topic)` is a refused topic's entry in the answer's `responses`."""

    def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
        if not access.may(group_operation, GROUP, req.group_id):
            return error_response(header.api_key, header.api_version, req, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        allowed = set(access.topics(AclOperation.READ, [t.topic_name for t in req.topics]))
        refused = [refused_topic(t) for t in req.topics if t.topic_name not in allowed]
        return then(call(with_list(req, "topics", [t for t in req.topics if t.topic_name in allowed])),
                    extend("responses", refused))

    return authorize
