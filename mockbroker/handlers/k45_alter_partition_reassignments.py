"""AlterPartitionReassignments (key 45), v0-v1 (the Java AdminClient's alterPartitionReassignments,
kafka-reassign-partitions.sh).

As Kafka's controller answers it (ReplicationControlManager.alterPartitionReassignments; the logic is
state/cluster/reassignments.py):
- Per partition: NONE (started, or completed at once), INVALID_REPLICA_ASSIGNMENT (an empty list, an
  unknown node, a node twice), NO_REASSIGNMENT_IN_PROGRESS (replicas null: cancel, with none going on),
  UNKNOWN_TOPIC_OR_PARTITION, each with Kafka's message.
- v1's allow_replication_factor_change false: a target with another replica count than the partition's
  is INVALID_REPLICATION_FACTOR for that partition (KIP-860); the response echoes the flag.
- The new replicas catch up after mockbroker.reassignment.ms on the broker clock (0, the default: the
  reassignment completes before the answer); a timer completes it then.
- Authorization (with an authorizer, `authorize`): ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED at
  the top and on every partition named).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster import reassignments
from mockbroker.state.cluster.reassignments import original_replicas

API_KEY = ApiKey.ALTER_PARTITION_REASSIGNMENTS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER):
        return call(req)
    code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    return Msg(throttle_time_ms=0, allow_replication_factor_change=req.get("allow_replication_factor_change", True),
               error_code=code, error_message=message, responses=[
                   Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, error_code=code,
                                                    error_message=message) for p in t.partitions])
                   for t in req.topics])


@handler(API_KEY, 0, 1, authorize=authorize)
def handle_alter_partition_reassignments(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    node = ctx.node
    now = node.clock.now_ms()
    allow_rf_change = bool(req.allow_replication_factor_change) if header.api_version >= 1 else True
    responses = []
    pending = False
    for t in req.topics:
        parts = []
        for p in t.partitions:
            code, message = ErrorCode.NONE, None
            try:
                current = cluster.partition(t.name, p.partition_index)
                if (not allow_rf_change and p.replicas is not None and current is not None
                        and len(p.replicas) != len(original_replicas(current))):
                    raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                     f"The replication factor is changed from {len(original_replicas(current))} "
                                     f"to {len(p.replicas)}")
                partition = reassignments.alter(cluster, t.name, p.partition_index, p.replicas, now)
                pending = pending or partition.reassignment is not None
            except KafkaError as exc:
                code, message = exc.code, exc.message
            parts.append(Msg(partition_index=p.partition_index, error_code=code, error_message=message))
        responses.append(Msg(name=t.name, partitions=parts))
    due = reassignments.next_due_ms(cluster) if pending else None
    if due is not None and due > now:
        def complete() -> None:
            reassignments.complete_due(cluster, node.clock.now_ms())

        node.scheduler.call_at(due, complete)
    return Msg(throttle_time_ms=0, allow_replication_factor_change=allow_rf_change, error_code=ErrorCode.NONE,
               error_message=None, responses=responses)
