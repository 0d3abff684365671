"""ShareGroupDescribe (key 77), v1 (as Kafka 4.3): share groups with their state, epochs, assignor
("simple") and members, each with its epoch, client, subscribed topics and assignment (topic ids and
names) (state: mockbroker/state/share/group.py).
A group id that is no share group: GROUP_ID_NOT_FOUND with Kafka's message ("Group X not found." or "Group
X is not a share group."); an empty group id: INVALID_GROUP_ID. Authorized operations when asked for:
every group operation (no ACLs here).
- Authorization (with an authorizer, `authorize`): DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code on every group.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.constants import NOT_REQUESTED
from mockbroker.handlers.support.group_authorization import described_groups
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.groups.common import GROUP_AUTHORIZED_OPERATIONS

API_KEY = ApiKey.SHARE_GROUP_DESCRIBE


def _failed(group_id: str, code: int, message: str | None = None) -> Msg:
    return Msg(error_code=code, error_message=message, group_id=group_id, group_state="", group_epoch=0,
               assignment_epoch=0, assignor_name="", members=[], authorized_operations=NOT_REQUESTED)


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every group named."""
    return Msg(throttle_time_ms=0, groups=[_failed(g, code) for g in req.group_ids])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return described_groups(access, header, req, call, "group_ids", bool(req.get("include_authorized_operations")))


@handler(API_KEY, 1, 1, authorize=authorize, error_response=error_response)
def handle_share_group_describe(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    groups = []
    for group_id in req.group_ids:
        misrouted = ctx.node.group_coordinator_error(group_id)
        share = ctx.node.share_coordinator.groups.get(group_id)
        if not group_id:
            groups.append(_failed(group_id, ErrorCode.INVALID_GROUP_ID))
        elif misrouted is not None:
            groups.append(_failed(group_id, misrouted))
        elif share is None:
            other = ctx.node.group_coordinator_started and group_id in ctx.node.group_coordinator.groups
            groups.append(_failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                  f"Group {group_id} is not a share group." if other else f"Group {group_id} not found."))
        else:
            members = []
            for m in share.members.values():
                assigned = []
                for name, partitions in sorted(m.assignment.items()):
                    topic = ctx.cluster.topic(name)
                    if topic is not None:
                        assigned.append(Msg(topic_id=topic.topic_id, topic_name=name, partitions=list(partitions)))
                members.append(Msg(member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                                   client_id=m.client_id, client_host=m.client_host,
                                   subscribed_topic_names=list(m.subscribed),
                                   assignment=Msg(topic_partitions=assigned)))
            groups.append(Msg(error_code=0, error_message=None, group_id=group_id, group_state=share.state,
                              group_epoch=share.group_epoch, assignment_epoch=share.assignment_epoch,
                              assignor_name="simple", members=members,
                              authorized_operations=GROUP_AUTHORIZED_OPERATIONS if req.include_authorized_operations
                              else NOT_REQUESTED))
    return Msg(throttle_time_ms=0, groups=groups)
