"""ConsumerGroupHeartbeat (key 68), v0-v1: the KIP-848 consumer group protocol
(state: mockbroker/state/groups/consumer.py).

Joining (epoch 0), heartbeating, leaving (-1) and a static member's temporary leave (-2), with the
assignment computed by the broker (server_assignor "uniform" or "range"; uniform by default) from
subscribed_topic_names and (v1+) subscribed_topic_regex. Partitions move only after the previous owner
has released them. v0: the broker picks the member id of a new member; v1 (KIP-1082): the client must send
its own (INVALID_REQUEST otherwise).
Errors as Kafka: INVALID_REQUEST (with Kafka's messages), UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION,
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_ID_NOT_FOUND (no
such group, or a non-empty classic group: classic and KIP-848 members do not share a group here).
Sessions (group.consumer.session.timeout.ms, 45 s) and heartbeat intervals
(group.consumer.heartbeat.interval.ms, 5 s) are broker settings.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED),
  DESCRIBE on every subscribed topic name (TOPIC_AUTHORIZATION_FAILED;
  handlers/support/group_authorization.py).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code, member epoch 0.
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.group_authorization import member_of_group
from mockbroker.handlers.support.group_members import client_host
from mockbroker.handlers.support.group_types import group_api_error
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.CONSUMER_GROUP_HEARTBEAT


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, error_message=None, member_id=None, member_epoch=0,
               heartbeat_interval_ms=0, assignment=None)


@handler(API_KEY, 0, 1, authorize=member_of_group, error_response=error_response)
def handle_consumer_group_heartbeat(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.GROUP_ID_NOT_FOUND)  # a share group's id too
    if misrouted is not None:
        return error_response(req, misrouted, header.api_version)
    response = ctx.node.group_coordinator.consumer_group_heartbeat(req, header.api_version, header.client_id or "",
                                                                     client_host(ctx))
    response.throttle_time_ms = 0
    return response
