"""DescribeLogDirs (key 35), v1-v5 (the Java AdminClient's describeLogDirs / describeReplicaLogDirs,
kafka-log-dirs.sh).

As a Kafka broker answers it (KafkaApis.handleDescribeLogDirsRequest, ReplicaManager.describeLogDirs):
- One log directory per node, the one answering: the first of log.dirs when that setting is known,
  else Kafka's default /tmp/kafka-logs (the logs live in memory).
- Its topics: every partition this node holds a replica of (topics null: all; else the ones named;
  unknown topics and partitions are left out). partition_size: the bytes of this replica's copy (the
  whole log, or up to where a replica that is behind has copied: state/cluster/replicas.py); offset_lag 0 (Kafka:
  the high watermark minus this log's end, never below 0); is_future_key false (no
  AlterReplicaLogDirs here).
- total_bytes / usable_bytes (v4+): mockbroker.max.log.bytes and what is left of it when that bound is
  set; else -1 (unknown), Kafka's default for a volume it cannot measure. is_cordoned (v5) false.
- Top-level error_code (v3+) NONE.
- Authorization (with an authorizer, `authorize`): DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import MAX_LOG_BYTES, Cluster, Partition
from mockbroker.state.cluster.replicas import end_of
from mockbroker.state.configs import BROKER_CONFIGS

API_KEY = ApiKey.DESCRIBE_LOG_DIRS
DEFAULT_LOG_DIR = "/tmp/kafka-logs"


def log_dir(cluster: Cluster) -> str:
    """The node's log directory as DescribeLogDirs names it."""
    configured = str(cluster.config.get("log.dirs") or "") if "log.dirs" in BROKER_CONFIGS else ""
    return configured.split(",")[0].strip() or DEFAULT_LOG_DIR


def replica_size(partition: Partition, node_id: int) -> int:
    """The bytes of node_id's copy: the batches below where its copy ends."""
    return partition.log.bytes_below(end_of(partition, node_id))


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results=[])


@handler(API_KEY, 1, 5, authorize=authorize)
def handle_describe_log_dirs(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    node_id = ctx.node_id
    if req.topics is None:
        wanted = [(name, [p.index for p in t.partitions]) for name, t in cluster.topics.items()]
    else:
        wanted = [(t.topic, list(t.partitions)) for t in req.topics]
    topics = []
    for name, indexes in wanted:
        topic = cluster.topic(name)
        if topic is None:
            continue
        parts = []
        for i in dict.fromkeys(indexes):
            p = topic.partition(i)
            if p is not None and node_id in p.replicas:
                parts.append(Msg(partition_index=i, partition_size=replica_size(p, node_id), offset_lag=0,
                                 is_future_key=False))
        if parts:
            topics.append(Msg(name=name, partitions=parts))
    limit = int(cluster.config.get(MAX_LOG_BYTES))
    total, usable = (limit, max(limit - cluster.log_bytes_held(), 0)) if limit >= 0 else (-1, -1)
    result = Msg(error_code=ErrorCode.NONE, log_dir=log_dir(cluster), topics=topics, total_bytes=total,
                 usable_bytes=usable, is_cordoned=False)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, results=[result])
