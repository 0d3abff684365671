"""ElectLeaders (key 43), v0-v2 (the Java AdminClient's electLeaders, kafka-leader-election.sh).

As Kafka's controller answers it (ControllerApis.handleElectLeaders, ReplicationControlManager.electLeaders;
the logic is state/cluster/leadership.py's elect_leader):
- election_type (v1+; v0 is always preferred): 0 PREFERRED, 1 UNCLEAN; another value fails the whole
  request with INVALID_REQUEST (top level, v1+, and on every partition named).
- Per partition: NONE (elected), ELECTION_NOT_NEEDED (preferred: the first replica already leads;
  unclean: the partition has a leader), PREFERRED_LEADER_NOT_AVAILABLE (the first replica is not a live
  ISR member), ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean: no live replica), UNKNOWN_TOPIC_OR_PARTITION
  ("No such topic as t" / "No such partition as t-9"), each with Kafka's message.
- topic_partitions null: every partition of every topic, leaving out the ones answered ELECTION_NOT_NEEDED.
- An unclean election ignores the topic's unclean.leader.election.enable (the operator asked for it) and
  cuts the log back to the new leader's copy (state/cluster/replicas.py).
- Authorization (with an authorizer, `authorize`): ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED at
  the top and on every partition named).
- Error answer (fault injection, `error_response`): the code at the top and on every partition named.
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
from mockbroker.state.cluster import leadership
from mockbroker.state.cluster.cluster import Cluster

API_KEY = ApiKey.ELECT_LEADERS


def _elect(cluster: Cluster, topic: str, index: int, election: int) -> Msg:
    partition = cluster.partition(topic, index)
    if partition is None:
        message: str | None = (f"No such topic as {topic}" if cluster.topic(topic) is None
                   else f"No such partition as {topic}-{index}")
        return Msg(partition_id=index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, error_message=message)
    code, message = leadership.elect_leader(cluster, partition, election)
    return Msg(partition_id=index, error_code=code, error_message=message)


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """ElectLeadersRequest.getErrorResponse: the code at the top (v1+) and on every partition named."""
    return Msg(throttle_time_ms=0, error_code=code, replica_election_results=[
        Msg(topic=t.topic, partition_result=[Msg(partition_id=p, error_code=code, error_message=None)
                                             for p in t.partitions])
        for t in (req.topic_partitions or [])])


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(AclOperation.ALTER):
        return call(req)
    code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, AUTHORIZATION_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    return Msg(throttle_time_ms=0, error_code=code, replica_election_results=[
        Msg(topic=t.topic, partition_result=[Msg(partition_id=p, error_code=code, error_message=message)
                                             for p in t.partitions]) for t in (req.topic_partitions or [])])


@handler(API_KEY, 0, 2, authorize=authorize, error_response=error_response)
def handle_elect_leaders(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    election = req.election_type if header.api_version >= 1 else leadership.PREFERRED
    if election not in (leadership.PREFERRED, leadership.UNCLEAN):
        message = f"Unknown election type {election}"
        return Msg(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, replica_election_results=[
            Msg(topic=t.topic, partition_result=[
                Msg(partition_id=i, error_code=ErrorCode.INVALID_REQUEST, error_message=message)
                for i in t.partitions])
            for t in req.topic_partitions or []])
    results = []
    if req.topic_partitions is None:
        for name, topic in list(cluster.topics.items()):
            answers = [_elect(cluster, name, p.index, election) for p in topic.partitions]
            results.append(Msg(topic=name, partition_result=[
                a for a in answers if a.error_code != ErrorCode.ELECTION_NOT_NEEDED]))
    else:
        for t in req.topic_partitions:
            results.append(Msg(topic=t.topic, partition_result=[_elect(cluster, t.topic, i, election)
                                                                for i in t.partitions]))
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=results)
