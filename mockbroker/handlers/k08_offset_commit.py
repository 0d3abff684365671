"""OffsetCommit (key 8), v0-v10: a group stores consumed positions (state: mockbroker/state/offsets.py).

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
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.error_responses import error_response
from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 8


@handler(API_KEY, 0, 10)
def handle_offset_commit(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    misrouted = ctx.node.group_coordinator_error(req.group_id)
    if misrouted is not None:
        return error_response(API_KEY, v, req, misrouted)
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
