"""Authorization of the group APIs, as Kafka's KafkaApis checks them:

- JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ConsumerGroupHeartbeat: READ on the group
  (GROUP_AUTHORIZATION_FAILED); ConsumerGroupHeartbeat also DESCRIBE on every subscribed topic name
  (TOPIC_AUTHORIZATION_FAILED).
- OffsetCommit: READ on the group (every partition GROUP_AUTHORIZATION_FAILED), READ on each topic.
- OffsetFetch: DESCRIBE on the group (v8+: per group), DESCRIBE on each topic named (all topics: the
  ones not described are left out).
- OffsetDelete: DELETE on the group, READ on each topic. DeleteGroups: DELETE on each group.
- FindCoordinator: DESCRIBE on the group or transactional id of each key.
- DescribeGroups, ConsumerGroupDescribe: DESCRIBE on each group; authorized operations when asked.
- ListGroups: DESCRIBE on the cluster lists all, else only the groups the principal may DESCRIBE.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call, check, extend, then, with_list
from mockbroker.authorization.topic_apis import split, topic_name
from mockbroker.dispatch import HandlerResult
from mockbroker.error_responses import error_response
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import AclOperation, ResourceType

GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
Op = AclOperation
GROUP = ResourceType.GROUP
MESSAGES = {ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
            ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed."}


@check(11, 12, 13, 14, 68)
def group_member(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.READ, GROUP, req.group_id):
        return error_response(header.api_key, header.api_version, req, GROUP_DENIED)
    subscribed = req.get("subscribed_topic_names") if header.api_key == 68 else None
    if subscribed and len(access.topics(Op.DESCRIBE, subscribed)) < len(set(subscribed)):
        return error_response(68, header.api_version, req, TOPIC_DENIED)
    return call(req)


def topic_partition_errors(topics: list[Msg], code: ErrorCode) -> list[Msg]:
    return [Msg(name=t.name, **({"topic_id": t.topic_id} if "topic_id" in t else {}), partitions=[
        Msg(partition_index=p.partition_index, error_code=code) for p in t.partitions]) for t in topics]


@check(8)
def offset_commit(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.READ, GROUP, req.group_id):
        return Msg(throttle_time_ms=0, topics=topic_partition_errors(req.topics, GROUP_DENIED))
    allowed, refused = split(access, Op.READ, req.topics, lambda t: topic_name(access, t.name, t.get("topic_id")))
    if not refused:
        return call(req)
    return then(call(with_list(req, "topics", allowed)), extend("topics", topic_partition_errors(refused, TOPIC_DENIED)))


def _unauthorized_offsets(topics: list[Msg]) -> list[Msg]:
    return [Msg(name=t.name, **({"topic_id": t.topic_id} if "topic_id" in t else {}), partitions=[
        Msg(partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=TOPIC_DENIED)
        for p in t.partition_indexes]) for t in topics]


def _filter_offset_topics(access: Access, asked: list[Msg] | None) -> tuple[list[Msg] | None, list[Msg]]:
    """(the topics to ask the handler for, the refused ones' answers); None: all topics."""
    if asked is None:
        return None, []
    allowed, refused = split(access, Op.DESCRIBE, asked, lambda t: topic_name(access, t.name, t.get("topic_id")))
    return allowed, _unauthorized_offsets(refused)


@check(9)
def offset_fetch(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version

    def visible(topics: list[Msg]) -> list[Msg]:
        return [t for t in topics if access.may(Op.DESCRIBE, ResourceType.TOPIC, t.name)]

    if v < 8:
        if not access.may(Op.DESCRIBE, GROUP, req.group_id):
            return error_response(9, v, req, GROUP_DENIED)
        topics, errors = _filter_offset_topics(access, req.topics)

        def edit(response: Msg) -> None:
            response.topics = (visible(response.topics) if req.topics is None else list(response.topics)) + errors

        return then(call(with_list(req, "topics", topics) if topics is not None else req), edit)
    denied = [g for g in req.groups if not access.may(Op.DESCRIBE, GROUP, g.group_id)]
    groups, refused = [], {}
    for g in req.groups:
        if g in denied:
            continue
        topics, errors = _filter_offset_topics(access, g.topics)
        groups.append(with_list(g, "topics", topics) if topics is not None else g)
        refused[g.group_id] = (g.topics is None, errors)
    denied_answers = [Msg(group_id=g.group_id, topics=[], error_code=GROUP_DENIED) for g in denied]

    def edit_groups(response: Msg) -> None:
        for group in response.groups:
            all_topics, errors = refused.get(group.group_id, (False, []))
            group.topics = (visible(group.topics) if all_topics else list(group.topics)) + errors
        order = {g.group_id: i for i, g in enumerate(req.groups)}  # answered in the request's order, as Kafka
        response.groups = sorted(list(response.groups) + denied_answers, key=lambda g: order.get(g.group_id, 0))

    if not groups:
        return Msg(throttle_time_ms=0, groups=denied_answers)
    return then(call(with_list(req, "groups", groups)), edit_groups)


@check(47)
def offset_delete(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(Op.DELETE, GROUP, req.group_id):
        return Msg(error_code=GROUP_DENIED, throttle_time_ms=0, topics=[])
    allowed, refused = split(access, Op.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, error_code=TOPIC_DENIED)
                                           for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@check(42)
def delete_groups(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed = [g for g in req.groups_names if access.may(Op.DELETE, GROUP, g)]
    errors = [Msg(group_id=g, error_code=GROUP_DENIED) for g in req.groups_names if g not in allowed]
    if not errors:
        return call(req)
    return then(call(with_list(req, "groups_names", allowed)), extend("results", errors))


def _coordinator_denied(key_type: int) -> ErrorCode | None:
    return {0: GROUP_DENIED, 1: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}.get(key_type)


def _may_find(access: Access, key_type: int, key: str) -> bool:
    if key_type == 0:
        return access.may(Op.DESCRIBE, GROUP, key)
    if key_type == 1:
        return access.may(Op.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)
    return True


@check(10)
def find_coordinator(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    key_type = req.get("key_type", 0)
    code = _coordinator_denied(key_type)
    if header.api_version < 4:
        if code is None or _may_find(access, key_type, req.key):
            return call(req)
        return Msg(throttle_time_ms=0, error_code=code, error_message=MESSAGES[code], node_id=-1, host="", port=-1)
    allowed = [k for k in req.coordinator_keys if _may_find(access, key_type, k)]
    if code is None or len(allowed) == len(req.coordinator_keys):
        return call(req)
    errors = [Msg(key=k, node_id=-1, host="", port=-1, error_code=code, error_message=MESSAGES[code])
              for k in req.coordinator_keys if k not in allowed]
    if not allowed:
        return Msg(throttle_time_ms=0, coordinators=errors)
    return then(call(with_list(req, "coordinator_keys", allowed)), extend("coordinators", errors))


def _described(access: Access, header: RequestHeader, req: Msg, call: Call, field: str) -> HandlerResult:
    """DescribeGroups / ConsumerGroupDescribe: DESCRIBE per group, authorized operations when asked."""
    allowed = [g for g in req[field] if access.may(Op.DESCRIBE, GROUP, g)]
    refused = [g for g in req[field] if g not in allowed]
    errors = error_response(header.api_key, header.api_version, with_list(req, field, refused), GROUP_DENIED).groups
    with_ops = bool(req.get("include_authorized_operations")) and (header.api_key == 69 or header.api_version >= 3)

    def edit(response: Msg) -> None:
        if with_ops:
            for group in response.groups:
                if group.error_code == ErrorCode.NONE:
                    group.authorized_operations = access.operations(GROUP, group.group_id)
        response.groups = errors + list(response.groups)

    if not allowed and refused:
        return Msg(throttle_time_ms=0, groups=errors)
    return then(call(with_list(req, field, allowed)), edit)


@check(15)
def describe_groups(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return _described(access, header, req, call, "groups")


@check(69)
def consumer_group_describe(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return _described(access, header, req, call, "group_ids")


@check(16)
def list_groups(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.DESCRIBE):
        return call(req)

    def edit(response: Msg) -> None:
        response.groups = [g for g in response.groups if access.may(Op.DESCRIBE, GROUP, g.group_id)]

    return then(call(req), edit)
