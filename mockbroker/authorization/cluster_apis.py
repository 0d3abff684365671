"""Authorization of the cluster and configuration APIs, as Kafka's KafkaApis, AclApis and ConfigHelper
check them:

- DescribeAcls: DESCRIBE on the cluster; CreateAcls, DeleteAcls: ALTER on the cluster
  (CLUSTER_AUTHORIZATION_FAILED for the whole request).
- DescribeUserScramCredentials: DESCRIBE on the cluster; AlterUserScramCredentials: ALTER.
- DescribeConfigs: DESCRIBE_CONFIGS, AlterConfigs and IncrementalAlterConfigs: ALTER_CONFIGS, per
  resource: a topic on the topic (TOPIC_AUTHORIZATION_FAILED), a group on the group
  (GROUP_AUTHORIZATION_FAILED), a broker, broker logger or client-metrics resource on the cluster
  (CLUSTER_AUTHORIZATION_FAILED).
- DescribeCluster: cluster authorized operations when asked (0 without DESCRIBE on the cluster).
- ElectLeaders, AlterPartitionReassignments: ALTER on the cluster; ListPartitionReassignments,
  DescribeLogDirs: DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED at the top and on every
  partition named, as their getErrorResponse builds it).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, Call, check, extend, then, with_list
from mockbroker.dispatch import HandlerResult
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import CLUSTER_NAME, AclOperation, ResourceType

CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
Op = AclOperation
MESSAGES = {ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
            ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed."}
# ConfigResource types: TOPIC 2, BROKER 4, BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32.
_CONFIG_RESOURCES = {2: (ResourceType.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                     32: (ResourceType.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)}


@check(29)
def describe_acls(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=CLUSTER_DENIED, error_message=MESSAGES[CLUSTER_DENIED], resources=[])


@check(30)
def create_acls(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.ALTER):
        return call(req)
    return Msg(throttle_time_ms=0, results=[Msg(error_code=CLUSTER_DENIED, error_message=MESSAGES[CLUSTER_DENIED])
                                            for _ in req.creations])


@check(31)
def delete_acls(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.ALTER):
        return call(req)
    return Msg(throttle_time_ms=0, filter_results=[
        Msg(error_code=CLUSTER_DENIED, error_message=MESSAGES[CLUSTER_DENIED], matching_acls=[])
        for _ in req.filters])


@check(50)
def describe_user_scram_credentials(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=CLUSTER_DENIED, error_message=MESSAGES[CLUSTER_DENIED], results=[])


@check(51)
def alter_user_scram_credentials(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.ALTER):
        return call(req)
    users = dict.fromkeys([u.name for u in req.deletions] + [u.name for u in req.upsertions])
    return Msg(throttle_time_ms=0, results=[Msg(user=u, error_code=CLUSTER_DENIED,
                                                error_message=MESSAGES[CLUSTER_DENIED]) for u in users])


def _config_denied(access: Access, op: Op, resource: Msg) -> ErrorCode | None:
    rtype, code = _CONFIG_RESOURCES.get(resource.resource_type, (ResourceType.CLUSTER, CLUSTER_DENIED))
    name = CLUSTER_NAME if rtype is ResourceType.CLUSTER else resource.resource_name
    return None if access.may(op, rtype, name) else code


def _configs(access: Access, req: Msg, call: Call, op: Op, out_field: str, with_configs: bool) -> HandlerResult:
    allowed, errors = [], []
    for resource in req.resources:
        code = _config_denied(access, op, resource)
        if code is None:
            allowed.append(resource)
            continue
        error = Msg(error_code=code, error_message=MESSAGES[code], resource_type=resource.resource_type,
                    resource_name=resource.resource_name)
        if with_configs:
            error.configs = []
        errors.append(error)
    if not errors:
        return call(req)
    if not allowed:
        return Msg(throttle_time_ms=0, **{out_field: errors})
    return then(call(with_list(req, "resources", allowed)), extend(out_field, errors))


@check(32)
def describe_configs(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return _configs(access, req, call, Op.DESCRIBE_CONFIGS, "results", True)


@check(33, 44)
def alter_configs(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    return _configs(access, req, call, Op.ALTER_CONFIGS, "responses", False)


@check(60)
def describe_cluster(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not req.include_cluster_authorized_operations:
        return call(req)

    def edit(response: Msg) -> None:
        response.cluster_authorized_operations = access.operations(ResourceType.CLUSTER, CLUSTER_NAME) \
            if access.on_cluster(Op.DESCRIBE) else 0

    return then(call(req), edit)


@check(43)
def elect_leaders(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.ALTER):
        return call(req)
    message = MESSAGES[CLUSTER_DENIED]
    return Msg(throttle_time_ms=0, error_code=CLUSTER_DENIED, replica_election_results=[
        Msg(topic=t.topic, partition_result=[Msg(partition_id=p, error_code=CLUSTER_DENIED, error_message=message)
                                             for p in t.partitions]) for t in (req.topic_partitions or [])])


@check(45)
def alter_partition_reassignments(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.ALTER):
        return call(req)
    message = MESSAGES[CLUSTER_DENIED]
    return Msg(throttle_time_ms=0, allow_replication_factor_change=req.get("allow_replication_factor_change", True),
               error_code=CLUSTER_DENIED, error_message=message, responses=[
                   Msg(name=t.name, partitions=[Msg(partition_index=p.partition_index, error_code=CLUSTER_DENIED,
                                                    error_message=message) for p in t.partitions])
                   for t in req.topics])


@check(46)
def list_partition_reassignments(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=CLUSTER_DENIED, error_message=MESSAGES[CLUSTER_DENIED], topics=[
        Msg(name=t.name, partitions=[Msg(partition_index=p, replicas=[], adding_replicas=[], removing_replicas=[])
                                     for p in t.partition_indexes]) for t in (req.topics or [])])


@check(35)
def describe_log_dirs(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if access.on_cluster(Op.DESCRIBE):
        return call(req)
    return Msg(throttle_time_ms=0, error_code=CLUSTER_DENIED, results=[])
