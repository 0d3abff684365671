"""What ShareFetch and ShareAcknowledge share (KIP-932; no API key of its own): the partitions a request
names, its acknowledgements applied, the share session moved on, the lock duration the answer reports;
and the share.version feature ApiVersions reports."""

from __future__ import annotations

import uuid
from typing import Any

from mockbroker.context import RequestContext
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.state.share.coordinator import FINAL_EPOCH, ShareCoordinator, ShareSession


def share_fetch_topics(ctx: RequestContext, topics: list[Any]) -> dict[tuple[str, int], uuid.UUID | None]:
    """(topic name, partition) -> topic id of every partition a request names; an unknown topic id is
    kept under its own text as the name (it is answered UNKNOWN_TOPIC_ID)."""
    out: dict[tuple[str, int], uuid.UUID | None] = {}
    for t in topics:
        topic = ctx.cluster.topics_by_id.get(t.topic_id)
        name = topic.name if topic is not None else str(t.topic_id)
        for p in t.partitions:
            out[(name, p.partition_index)] = t.topic_id
    return out


def acknowledge_partitions(ctx: RequestContext, group_id: str, member_id: str, topics: list[Any],
                           now_ms: int) -> dict[tuple[str, int], int]:
    """Apply every partition's AcknowledgementBatches; (topic, partition) -> its error code (only the
    partitions that had acknowledgements)."""
    share = ctx.node.share_coordinator
    out: dict[tuple[str, int], int] = {}
    for t in topics:
        topic = ctx.cluster.topics_by_id.get(t.topic_id)
        for p in t.partitions:
            if not p.acknowledgement_batches:
                continue
            if topic is None:
                out[(str(t.topic_id), p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            batches = [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches]
            out[(topic.name, p.partition_index)] = int(share.acknowledge(group_id, member_id, topic.name,
                                                                         p.partition_index, batches, now_ms))
    return out


def session_step(share: ShareCoordinator, node_id: int, group_id: str, member_id: str, epoch: int,
                 session: ShareSession, named: dict[tuple[str, int], uuid.UUID | None],
                 forgotten: set[tuple[str, int]]) -> None:
    """The session after this request: partitions added and forgotten, the next epoch (or closed)."""
    if epoch != FINAL_EPOCH:
        session.partitions |= {k for k in named if share.cluster.topic(k[0]) is not None}
        session.partitions -= forgotten
    share.session_done(node_id, group_id, member_id, epoch, session)


SHARE_VERSION = "share.version"


def with_share_version(features: dict[str, Any], api_version: int, enabled: bool) -> dict[str, Any]:
    """ApiVersions v3+ features with share.version added: supported 0-1 (v4+: below v4 a minimum of 0 is
    left out, as Kafka does), finalized at 1 when share groups are on."""
    if api_version < 3 or not enabled:
        return features
    out = dict(features)
    if api_version >= 4:
        out["supported_features"] = [*features.get("supported_features", []),
                                     {"name": SHARE_VERSION, "min_version": 0, "max_version": 1}]
    out["finalized_features"] = [*features.get("finalized_features", []),
                                 {"name": SHARE_VERSION, "max_version_level": 1, "min_version_level": 1}]
    return out


def lock_timeout(ctx: RequestContext, group_id: str) -> int:
    """AcquisitionLockTimeoutMs: the group's acquisition lock duration."""
    return ctx.node.share_coordinator.setting("group.share.record.lock.duration.ms", group_id)


# Codes Kafka gives per partition in ShareFetch and ShareAcknowledge answers (the partition's ErrorCode;
# INVALID_RECORD_STATE is ShareFetch's AcknowledgeErrorCode); every other code is a top-level one.
PARTITION_ERRORS = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
    ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD_STATE,
})


def error_topics(topics: list[Any], code: ErrorCode, *, fetch: bool) -> list[Any]:
    """The Responses of an error answer carrying a partition-level `code` on every partition the request
    names (a fault injected on ShareFetch or ShareAcknowledge: nothing was applied). ShareFetch carries
    INVALID_RECORD_STATE as the partitions' AcknowledgeErrorCode."""
    out = []
    for t in topics:
        parts = []
        for p in t.partitions:
            fields: dict[str, Any] = {"partition_index": p.partition_index, "error_code": code, "error_message": None,
                                      "current_leader": Msg(leader_id=-1, leader_epoch=-1)}
            if fetch:
                ack = code == ErrorCode.INVALID_RECORD_STATE
                fields.update(error_code=0 if ack else code, acknowledge_error_code=code if ack else 0,
                              acknowledge_error_message=None, records=[], acquired_records=[])  # never null
            parts.append(Msg(**fields))
        out.append(Msg(topic_id=t.topic_id, partitions=parts))
    return out
