"""OffsetCommit (key 8), v0-v10: a group stores consumed positions (state: mockbroker/state/groups/offsets.py).

As Kafka's KafkaApis and OffsetMetadataManager:
- Topics are checked first: a topic that does not exist, or a partition beyond its count, gets
  UNKNOWN_TOPIC_OR_PARTITION (v10 names topics by id: an unknown id gets UNKNOWN_TOPIC_ID) and is not
  committed; the others go to the group.
- Who may commit: members of the group's current generation (classic: ILLEGAL_GENERATION,
  UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while CompletingRebalance; KIP-848:
  UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH, UNSUPPORTED_VERSION below v9), or anyone with generation -1 and no
  member id while the group has no members (simple commits: assign()+commit, the admin client). A commit
  with generation -1 to a group that does not exist creates a simple (classic, protocol-less) group; with
  a generation it gets GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before. Group errors are reported on
  every partition. A commit from a member extends its session.
- Metadata strings over offset.metadata.max.bytes (4096): OFFSET_METADATA_TOO_LARGE for that partition.
- v2-v4 retention_time_ms (-1: the broker's offsets.retention.minutes) sets that offset's expiry; v1's
  commit timestamp is ignored (Kafka 4 no longer serves v0-v1; they are served here as v2 without
  retention, for old clients).
- INVALID_GROUP_ID for an empty group id.
- Authorization (with an authorizer, `authorize`): READ on the group (GROUP_AUTHORIZATION_FAILED on every
  partition), READ on each topic (TOPIC_AUTHORIZATION_FAILED on its partitions).
- Error answer (fault injection, a group not coordinated here: `error_response`): the code on every
  partition named.
"""

from __future__ import annotations

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    extend,
    partition_errors,
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

API_KEY = ApiKey.OFFSET_COMMIT


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """The code on every partition the request names (OffsetCommitRequest.getErrorResponse)."""
    return Msg(throttle_time_ms=0, topics=partition_errors(req.topics, code))


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not access.may(AclOperation.READ, ResourceType.GROUP, req.group_id):
        return Msg(throttle_time_ms=0, topics=partition_errors(req.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED))
    allowed, refused = split(access, AclOperation.READ, req.topics,
                             lambda t: topic_name(access, t.name, t.get("topic_id")))
    if not refused:
        return call(req)
    errors = partition_errors(refused, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 10, authorize=authorize, error_response=error_response)
def handle_offset_commit(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = group_api_error(ctx, req.group_id, ErrorCode.GROUP_ID_NOT_FOUND)  # a share group's id too
    if misrouted is not None:
        return error_response(req, misrouted, v)
    coordinator = ctx.node.group_coordinator
    cluster = ctx.cluster
    by_id = v >= 10
    # (response topic, partition response, topic name or None when not to be committed, request partition)
    work: list[tuple[Msg, Msg, str | None, Msg]] = []
    topics_out: list[Msg] = []
    for t in req.topics:
        if by_id:
            topic = cluster.topics_by_id.get(t.topic_id)
            missing = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = cluster.topic(t.name)
            missing = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        out_topic = Msg(name=t.name, topic_id=t.topic_id, partitions=[])
        topics_out.append(out_topic)
        for p in t.partitions:
            out_p = Msg(partition_index=p.partition_index, error_code=ErrorCode.NONE)
            out_topic.partitions.append(out_p)
            if topic is None:
                out_p.error_code = missing
            elif topic.partition(p.partition_index) is None:
                out_p.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                work.append((out_topic, out_p, topic.name, p))
    if work:
        generation = req.generation_id_or_member_epoch if v >= 1 else -1
        member_id = req.member_id if v >= 1 else ""
        try:
            group = coordinator.validate_offset_commit(req.group_id, generation, member_id, req.group_instance_id, v)
        except KafkaError as exc:
            for _, out_p, _, _ in work:
                out_p.error_code = exc.code
        else:
            retention = req.retention_time_ms if 2 <= v <= 4 else -1
            for _, out_p, name, p in work:
                assert name is not None
                out_p.error_code = coordinator.commit_offset(
                    group, member_id, name, p.partition_index, p.committed_offset,
                    p.committed_leader_epoch if v >= 6 else -1, p.committed_metadata, retention)
            coordinator.after_offset_commit(group, member_id)
    return Msg(throttle_time_ms=0, topics=topics_out)
