"""DeleteRecords (key 21), v0-v2: move partitions' log start offset up (AdminClient.deleteRecords).

As a Kafka broker answers it (KafkaApis.handleDeleteRecordsRequest / Partition.deleteRecordsOnLeader):
- offset -1 means the high watermark; the log start offset only moves up (an offset at or below it
  changes nothing and is not an error); batches wholly below it are dropped.
- low_watermark: the new log start offset (-1 on errors).
- Errors per partition: UNKNOWN_TOPIC_OR_PARTITION; NOT_LEADER_OR_FOLLOWER when this node does not lead
  the partition; OFFSET_OUT_OF_RANGE for an offset above the high watermark or below -1;
  POLICY_VIOLATION on a topic whose cleanup.policy does not include delete (compact only).
- Kafka groups the answer by topic in no order; here topics and partitions follow the request. The
  answer is immediate (one replica: nothing to wait for); parked fetches are not woken.
- Authorization (with an authorizer, `authorize`): DELETE on each topic (TOPIC_AUTHORIZATION_FAILED on
  its partitions).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, extend, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import Cluster

API_KEY = ApiKey.DELETE_RECORDS


def delete_one(cluster: Cluster, node_id: int, topic: str, index: int, offset: int) -> Msg:
    partition = cluster.partition(topic, index)
    if partition is None:
        return Msg(partition_index=index, low_watermark=-1, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if partition.leader_id != node_id:
        return Msg(partition_index=index, low_watermark=-1, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER)
    try:
        low = cluster.delete_records(partition, offset)
    except KafkaError as exc:
        return Msg(partition_index=index, low_watermark=-1, error_code=exc.code)
    return Msg(partition_index=index, low_watermark=low, error_code=ErrorCode.NONE)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, AclOperation.DELETE, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, low_watermark=-1,
                                               error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                                           for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 2, authorize=authorize)
def handle_delete_records(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    topics = [Msg(name=t.name, partitions=[delete_one(cluster, ctx.node_id, t.name, p.partition_index, p.offset)
                                           for p in t.partitions])
              for t in req.topics]
    return Msg(throttle_time_ms=0, topics=topics)
