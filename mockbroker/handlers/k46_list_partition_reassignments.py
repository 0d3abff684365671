"""ListPartitionReassignments (key 46), v0 (the Java AdminClient's listPartitionReassignments).

As Kafka's controller answers it (ReplicationControlManager.listPartitionReassignments): the partitions
with a reassignment in progress (state/cluster/reassignments.py), each with its current replicas (the target
followed by the replicas being removed), the replicas being added and the ones being removed; topics
null: every topic; topics and partitions that do not exist or have none going on are left out (no error).
Authorization (with an authorizer, `authorize`): DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster import reassignments

API_KEY = ApiKey.LIST_PARTITION_REASSIGNMENTS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED], topics=[
        Msg(name=t.name, partitions=[Msg(partition_index=p, replicas=[], adding_replicas=[], removing_replicas=[])
                                     for p in t.partition_indexes]) for t in (req.topics or [])])


@handler(API_KEY, 0, 0, authorize=authorize)
def handle_list_partition_reassignments(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    wanted = None if req.topics is None else [(t.name, list(t.partition_indexes)) for t in req.topics]
    by_topic: dict[str, Msg] = {}
    for r in reassignments.ongoing(ctx.cluster, wanted):
        entry = by_topic.setdefault(r.topic, Msg(name=r.topic, partitions=[]))
        entry.partitions.append(Msg(partition_index=r.partition, replicas=r.replicas, adding_replicas=r.adding,
                                    removing_replicas=r.removing))
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, topics=list(by_topic.values()))
