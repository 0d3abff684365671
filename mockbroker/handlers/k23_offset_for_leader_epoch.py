"""OffsetForLeaderEpoch (key 23), v0-v4 (consumers use it to detect log truncation, KIP-320).

As a Kafka broker answers it (ReplicaManager.lastOffsetForLeaderEpoch / Partition):
- For each partition: the largest leader epoch <= the one asked for and the end offset of that epoch
  (the start offset of the next epoch, or the log end offset for the current one), from
  PartitionLog.end_offset_for_epoch; an epoch the log does not know gives -1/-1 with no error.
- Errors per partition: UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition;
  NOT_LEADER_OR_FOLLOWER when this node is not the partition's leader (also when it holds no replica);
  current_leader_epoch (v2+, -1 = not checked) below the partition's epoch: FENCED_LEADER_EPOCH, above
  it: UNKNOWN_LEADER_EPOCH (checked before leadership, as Kafka does for a replica it hosts).
- v0 answers carry no leader_epoch; replica_id (v3+) is not used (answers always come from the leader).
- Authorization (with an authorizer, `authorize`): CLUSTER_ACTION on the cluster covers every topic, else
  DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on its partitions).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, extend, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import Cluster

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH


def end_offset(cluster: Cluster, node_id: int, topic: str, index: int, leader_epoch: int,
               current_leader_epoch: int) -> Msg:
    """One EpochEndOffset as Kafka computes it for the broker `node_id`."""
    partition = cluster.partition(topic, index)
    if partition is None:
        return Msg(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partition=index, leader_epoch=-1, end_offset=-1)
    code = ErrorCode.NONE
    if node_id not in partition.replicas:
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER
    elif current_leader_epoch != -1 and current_leader_epoch < partition.leader_epoch:
        code = ErrorCode.FENCED_LEADER_EPOCH
    elif current_leader_epoch != -1 and current_leader_epoch > partition.leader_epoch:
        code = ErrorCode.UNKNOWN_LEADER_EPOCH
    elif partition.leader_id != node_id:
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER
    if code != ErrorCode.NONE:
        return Msg(error_code=code, partition=index, leader_epoch=-1, end_offset=-1)
    epoch, offset = partition.log.end_offset_for_epoch(leader_epoch)
    return Msg(error_code=ErrorCode.NONE, partition=index, leader_epoch=epoch, end_offset=offset)


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.CLUSTER_ACTION):
        return call(req)
    allowed, refused = split(access, AclOperation.DESCRIBE, req.topics, lambda t: t.topic)
    if not refused:
        return call(req)
    errors = [Msg(topic=t.topic, partitions=[Msg(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                                 partition=p.partition, leader_epoch=-1, end_offset=-1)
                                             for p in t.partitions]) for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("topics", errors))


@handler(API_KEY, 0, 4, authorize=authorize)
def handle_offset_for_leader_epoch(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    topics = []
    for t in req.topics:
        partitions = [end_offset(cluster, ctx.node_id, t.topic, p.partition, p.leader_epoch,
                                 p.get("current_leader_epoch", -1))
                      for p in t.partitions]
        topics.append(Msg(topic=t.topic, partitions=partitions))
    return Msg(throttle_time_ms=0, topics=topics)
