"""DescribeProducers (key 61), v0.

Per partition, the producers the partition holds state for (state/log/producers.py): id, epoch, last
sequence, last timestamp, coordinator epoch and the first offset of the open transaction (-1 if
none). Errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER.
Authorization (with an authorizer, `authorize`): READ on each topic (TOPIC_AUTHORIZATION_FAILED on its
partitions).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, extend, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.DESCRIBE_PRODUCERS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, AclOperation.READ, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    message = "Topic authorization failed."
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                               error_message=message, active_producers=[])
                                           for p in t.partition_indexes])
              for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_describe_producers(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    topics = []
    for t in req.topics:
        topic = ctx.cluster.topic(t.name)
        parts = []
        for index in t.partition_indexes:
            p = topic.partition(index) if topic is not None else None
            if p is None:
                parts.append(Msg(partition_index=index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                 error_message=None, active_producers=[]))
                continue
            if not ctx.node.leads(p):
                parts.append(Msg(partition_index=index, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                 error_message=None, active_producers=[]))
                continue
            producers = [
                Msg(producer_id=e.producer_id, producer_epoch=e.epoch, last_sequence=e.last_seq,
                    last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                    current_txn_start_offset=e.current_txn_first_offset)
                for e in sorted(p.log.producers.entries.values(), key=lambda e: e.producer_id)
            ]
            parts.append(Msg(partition_index=index, error_code=ErrorCode.NONE, error_message=None,
                             active_producers=producers))
        topics.append(Msg(name=t.name, partitions=parts))
    return Msg(throttle_time_ms=0, topics=topics)
