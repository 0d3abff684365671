"""DescribeCluster (key 60), v0-v2 (the Java AdminClient's describeCluster).

As a Kafka broker answers it (KafkaApis.handleDescribeCluster / AuthHelper):
- brokers: every running node, with the advertised host/port of the listener this client connected to
  (as Metadata does) and its rack; v2 adds is_fenced: with include_fenced_brokers the stopped nodes
  (broker.stop_node) are listed too, fenced.
- cluster_id and controller_id (a KRaft broker reports one of the live brokers; here the cluster's
  controller node), endpoint_type (v1+) 1 = BROKER.
- endpoint_type asked (v1+): 2 (CONTROLLER) is MISMATCHED_ENDPOINT_TYPE, anything else but 1
  UNSUPPORTED_ENDPOINT_TYPE, with Kafka's messages (INVALID_REQUEST for both at v0, where the field is
  always 1).
- cluster_authorized_operations: every cluster operation when asked for, INT32_MIN when not (there is
  no authorizer).
- Authorization (with an authorizer, `authorize`): the principal's cluster authorized operations when
  asked (0 without DESCRIBE on the cluster).
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, then
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.brokers import brokers_for
from mockbroker.handlers.support.constants import CLUSTER_OPERATIONS, NOT_REQUESTED
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security.acls import CLUSTER_NAME

API_KEY = ApiKey.DESCRIBE_CLUSTER
ENDPOINT_TYPES = {1: "BROKER", 2: "CONTROLLER"}


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    if not req.include_cluster_authorized_operations:
        return call(req)

    def edit(response: Msg) -> None:
        response.cluster_authorized_operations = access.operations(ResourceType.CLUSTER, CLUSTER_NAME) \
            if access.on_cluster(AclOperation.DESCRIBE) else 0

    return then(call(req), edit)


@handler(API_KEY, 0, 2, authorize=authorize)
def handle_describe_cluster(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    cluster = ctx.cluster
    asked = req.endpoint_type if v >= 1 else 1
    if asked != 1:
        if asked not in ENDPOINT_TYPES:
            code = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
            message = f"Unsupported endpoint type {asked}"
        else:
            code = ErrorCode.MISMATCHED_ENDPOINT_TYPE
            message = ("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                       f"{ENDPOINT_TYPES[asked]}")
        return Msg(throttle_time_ms=0, error_code=code if v >= 1 else ErrorCode.INVALID_REQUEST,
                   error_message=message, endpoint_type=1, cluster_id="", controller_id=-1, brokers=[],
                   cluster_authorized_operations=NOT_REQUESTED)
    # A stopped node is what Kafka calls a fenced broker: listed only when v2 asks for fenced brokers.
    include_fenced = v >= 2 and bool(req.include_fenced_brokers)
    brokers = [Msg(broker_id=b.node_id, host=b.host, port=b.port, rack=b.rack,
                   is_fenced=not cluster.nodes[b.node_id].alive)
               for b in brokers_for(ctx, include_stopped=include_fenced)]
    controller = cluster.controller_id if any(b.broker_id == cluster.controller_id for b in brokers) else -1
    return Msg(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=1,
        cluster_id=cluster.cluster_id,
        controller_id=controller,
        brokers=brokers,
        cluster_authorized_operations=CLUSTER_OPERATIONS if req.include_cluster_authorized_operations
        else NOT_REQUESTED,
    )
