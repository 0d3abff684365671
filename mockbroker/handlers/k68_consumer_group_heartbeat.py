"""ConsumerGroupHeartbeat (key 68), v0-v1: the KIP-848 consumer group protocol
(state: mockbroker/state/consumer_groups.py).

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
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.error_responses import error_response
from mockbroker.handlers.k11_join_group import client_host
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 68


@handler(API_KEY, 0, 1)
def handle_consumer_group_heartbeat(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return error_response(API_KEY, header.api_version, req, misrouted)
    response = ctx.node.group_coordinator.consumer_group_heartbeat(req, header.api_version, header.client_id or "",
                                                                     client_host(ctx))
    response.throttle_time_ms = 0
    return response
