"""OffsetFetch (key 9), v0-v10: a group's committed offsets.

As Kafka's KafkaApis and OffsetMetadataManager:
- v0-v7 ask for one group; v8+ for a batch of groups (KIP-709), each answered with its own error code.
- A null topic list (v2+) asks for every committed offset of the group.
- A partition without a committed offset (or a group that does not exist) answers offset -1, leader epoch
  -1, metadata "" and no error; topics are not checked (v10 names topics by id: an unknown id gets
  UNKNOWN_TOPIC_ID).
- v9+ (KIP-848): with a member id and epoch, the member must be the group's (UNKNOWN_MEMBER_ID,
  STALE_MEMBER_EPOCH as a group-level error); a classic group accepts any.
- require_stable (v7+): a partition with offsets pending in an open transaction (TxnOffsetCommit) answers
  UNSTABLE_OFFSET_COMMIT and offset -1, as Kafka; the client retries until the transaction ends.
- Group errors go to the top-level error code (v2-v7), to every partition (v0-v1), to the group (v8+).
- Offsets of a deleted topic are gone, as Kafka deletes them with its partitions. Kafka 4 no longer
  serves v0; it is served here with v1's behaviour, for old clients.
- Authorization (with an authorizer, `authorize`): DESCRIBE on the group (v8+: per group;
  GROUP_AUTHORIZATION_FAILED), DESCRIBE on each topic named (TOPIC_AUTHORIZATION_FAILED on its
  partitions; all topics: the ones not described are left out).
- Error answer (fault injection, `error_response`): the code per group (v8+), at the top (v2-v7), on
  every partition asked for (v0-v1).
"""

from __future__ import annotations

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    split,
    then,
    topic_name,
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
from mockbroker.state.groups.coordinator import GroupCoordinator

API_KEY = ApiKey.OFFSET_FETCH


def _partition(index: int, offset: int = -1, leader_epoch: int = -1, metadata: str = "",
               error: ErrorCode = ErrorCode.NONE) -> Msg:
    return Msg(partition_index=index, committed_offset=offset, committed_leader_epoch=leader_epoch,
               metadata=metadata, error_code=error)


def _unstable(ctx: RequestContext, group_id: str, topic: str, partition: int) -> bool:
    """Offsets of this partition wait in an open transaction (the transaction coordinator knows)."""
    return ctx.node.txn_coordinator.has_pending_offsets(group_id, topic, partition)


def fetch_group(ctx: RequestContext, coordinator: GroupCoordinator, group_id: str, member_id: str | None,
                member_epoch: int, topics: list[Msg] | None, by_id: bool,
                require_stable: bool = False) -> tuple[ErrorCode, list[Msg]]:
    """(group error, topics) for one group of the request (NOT_COORDINATOR when another node coordinates it)."""
    misrouted = group_api_error(ctx, group_id, ErrorCode.GROUP_ID_NOT_FOUND)  # a share group's id too
    if misrouted is not None:
        return misrouted, []
    try:
        exists = coordinator.validate_offset_fetch(group_id, member_id, member_epoch)
    except KafkaError as exc:
        return exc.code, []
    cluster = ctx.cluster
    out: list[Msg] = []
    if topics is None:
        by_topic: dict[str, list[Msg]] = {}
        for (topic, partition), value in (coordinator.fetch_all_offsets(group_id) if exists else {}).items():
            if require_stable and _unstable(ctx, group_id, topic, partition):
                by_topic.setdefault(topic, []).append(_partition(partition, error=ErrorCode.UNSTABLE_OFFSET_COMMIT))
                continue
            by_topic.setdefault(topic, []).append(
                _partition(partition, value.offset, value.leader_epoch, value.metadata))
        for topic, partitions in by_topic.items():
            t = cluster.topic(topic)
            if by_id and t is None:
                continue
            ids = {"topic_id": t.topic_id} if t is not None and by_id else {}  # v10+ (the v0-7 topics[] has none)
            out.append(Msg(name=topic, partitions=partitions, **ids))
        return ErrorCode.NONE, out
    for req_topic in topics:
        name = req_topic.name
        if by_id:
            t = cluster.topics_by_id.get(req_topic.topic_id)
            if t is None:
                out.append(Msg(name="", topic_id=req_topic.topic_id, partitions=[
                    _partition(p, error=ErrorCode.UNKNOWN_TOPIC_ID) for p in req_topic.partition_indexes]))
                continue
            name = t.name
        partitions = []
        for p in req_topic.partition_indexes:
            if require_stable and _unstable(ctx, group_id, name, p):
                partitions.append(_partition(p, error=ErrorCode.UNSTABLE_OFFSET_COMMIT))
                continue
            found = coordinator.fetch_offset(group_id, name, p) if exists else None
            if found is None:
                partitions.append(_partition(p))
            else:
                partitions.append(_partition(p, found.offset, found.leader_epoch, found.metadata))
        out.append(Msg(name=name, partitions=partitions, **({"topic_id": req_topic.topic_id} if by_id else {})))
    return ErrorCode.NONE, out


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code per group (v8+), at the top (v2-v7), or at the top and on every partition asked for (v0-v1)."""
    if version >= 8:
        return Msg(throttle_time_ms=0, groups=[Msg(group_id=g.group_id, topics=[], error_code=code)
                                               for g in req.groups])
    if version < 2:  # no top-level error yet: on every partition asked for
        return Msg(throttle_time_ms=0, error_code=code, topics=[
            Msg(name=t.name, partitions=[
                Msg(partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code)
                for p in t.partition_indexes])
            for t in (req.topics or [])])
    return Msg(throttle_time_ms=0, error_code=code, topics=[])


def _refused_offsets(topics: list[Msg]) -> list[Msg]:
    return [Msg(name=t.name, **({"topic_id": t.topic_id} if "topic_id" in t else {}), partitions=[
        Msg(partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="",
            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        for p in t.partition_indexes]) for t in topics]


def _filter_offset_topics(access: Access, asked: list[Msg] | None) -> tuple[list[Msg] | None, list[Msg]]:
    """(the topics to ask the handler for, the refused ones' answers); None: all topics."""
    if asked is None:
        return None, []
    allowed, refused = split(access, AclOperation.DESCRIBE, asked,
                             lambda t: topic_name(access, t.name, t.get("topic_id")))
    return allowed, _refused_offsets(refused)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    v = header.api_version
    group_denied = ErrorCode.GROUP_AUTHORIZATION_FAILED

    def visible(topics: list[Msg]) -> list[Msg]:
        return [t for t in topics if access.may(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)]

    if v < 8:
        if not access.may(AclOperation.DESCRIBE, ResourceType.GROUP, req.group_id):
            return error_response(req, group_denied, v)
        topics, errors = _filter_offset_topics(access, req.topics)

        def edit(response: Msg) -> None:
            response.topics = (visible(response.topics) if req.topics is None else list(response.topics)) + errors

        return then(call(with_list(req, "topics", topics) if topics is not None else req), edit)
    denied = [g for g in req.groups if not access.may(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id)]
    groups, refused = [], {}
    for g in req.groups:
        if g in denied:
            continue
        topics, errors = _filter_offset_topics(access, g.topics)
        groups.append(with_list(g, "topics", topics) if topics is not None else g)
        refused[g.group_id] = (g.topics is None, errors)
    denied_answers = [Msg(group_id=g.group_id, topics=[], error_code=group_denied) for g in denied]

    def edit_groups(response: Msg) -> None:
        for group in response.groups:
            all_topics, errors = refused.get(group.group_id, (False, []))
            group.topics = (visible(group.topics) if all_topics else list(group.topics)) + errors
        order = {g.group_id: i for i, g in enumerate(req.groups)}  # answered in the request's order, as Kafka
        response.groups = sorted(list(response.groups) + denied_answers, key=lambda g: order.get(g.group_id, 0))

    if not groups:
        return Msg(throttle_time_ms=0, groups=denied_answers)
    return then(call(with_list(req, "groups", groups)), edit_groups)


@handler(API_KEY, 0, 10, authorize=authorize, error_response=error_response)
def handle_offset_fetch(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    coordinator = ctx.node.group_coordinator
    if v >= 8:
        groups = []
        for g in req.groups:
            error, topics = fetch_group(ctx, coordinator, g.group_id, g.member_id if v >= 9 else None,
                                        g.member_epoch if v >= 9 else -1, g.topics, v >= 10, bool(req.require_stable))
            groups.append(Msg(group_id=g.group_id, topics=topics, error_code=error))
        return Msg(throttle_time_ms=0, groups=groups)
    topics_req = req.topics if v >= 2 else (req.topics or [])
    error, topics = fetch_group(ctx, coordinator, req.group_id, None, -1, topics_req, False,
                                v >= 7 and bool(req.require_stable))
    if error != ErrorCode.NONE:
        if v < 2:
            # No top-level error before v2: every partition asked for carries it.
            topics = [Msg(name=t.name, partitions=[_partition(p, error=error) for p in t.partition_indexes])
                      for t in topics_req]
        else:
            topics = []
    return Msg(throttle_time_ms=0, topics=topics, error_code=error)
