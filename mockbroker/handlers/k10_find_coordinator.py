"""FindCoordinator (key 10), v0-v6.

The coordinator of a group id is the leader of its __consumer_offsets partition, that of a transactional
id the leader of its __transaction_state partition (Utils.abs(key.hashCode) % partitions,
state/cluster/internal_topics.py); the answer is that node with its advertised address for the client's
listener, as Metadata's broker list (a client on the "internal" listener learns the internal address).
- The internal topic is created by the first lookup, as Kafka's broker does; Kafka answers that first
  lookup COORDINATOR_NOT_AVAILABLE while the controller creates it, here creation is immediate and the
  coordinator is answered at once. A partition with no leader (offline): COORDINATOR_NOT_AVAILABLE.
- Key types: 0 group, 1 transaction, 2 share (v6+, KIP-932): a key "group:topicId:partition" whose
  coordinator is the leader of its __share_group_state partition (the key as Kafka's SharePartitionKey
  writes it back: group id trimmed, the topic id's own text, the partition as a number). A share key before
  v6, or one that is no such key: INVALID_REQUEST. Any other type: INVALID_REQUEST (an unknown key type
  fails the whole request, as Kafka's CoordinatorType.forId).
- v0-v3: one key (v0 has no key type: a group); errors carry node -1, host "", port -1 (Node.noNode()).
  v1+ also has an error message: Kafka sends its Errors.message(), "NONE" on success.
- v4+: batched coordinator_keys, one coordinator entry per key (KIP-699), each on its own node.
- Authorization (with an authorizer, `authorize`): DESCRIBE on the group or transactional id of each
  key (GROUP_AUTHORIZATION_FAILED / TRANSACTIONAL_ID_AUTHORIZATION_FAILED, node -1); share keys (v6+)
  need CLUSTER_ACTION on the cluster, else every key CLUSTER_AUTHORIZATION_FAILED (Kafka's
  authorizeClusterOperation throws and fails the whole request).
- Error answer (fault injection, `error_response`): Node.noNode() with the code, for the key or every key
  of a v4+ batch, with Kafka's message of a coordinator error.
"""

from __future__ import annotations

from mockbroker.authorization.access import Access, AclOperation, Call, ResourceType, extend, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.handlers.support.constants import AUTHORIZATION_MESSAGES
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC, coordinator_node
from mockbroker.state.share.persisted import coordinator_key, parse_coordinator_key

API_KEY = ApiKey.FIND_COORDINATOR
GROUP, TRANSACTION, SHARE = 0, 1, 2
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")


COORDINATOR_NOT_AVAILABLE_MESSAGE = "The coordinator is not available."


def coordinator_address(ctx: RequestContext, key_type: int, key: str) -> tuple[int, str, int] | None:
    """(node id, host, port) of the key's coordinator as the client's listener advertises it; None when
    its partition has no live leader."""
    if key_type == SHARE:
        node_id = coordinator_node(ctx.cluster, SHARE_STATE_TOPIC, coordinator_key(parse_coordinator_key(key)))
    elif key_type == GROUP:
        node_id = ctx.node.group_coordinator_id(key)
    else:
        node_id = ctx.node.txn_coordinator_id(key)
    if node_id < 0 or not ctx.cluster.nodes[node_id].alive:
        return None
    listener = next((lst for lst in ctx.cluster.listeners if lst.node_id == node_id and lst.name == ctx.listener.name),
                    None)
    if listener is None:
        return None
    return node_id, listener.public_host, listener.public_port


# Kafka's default messages of the coordinator errors (Errors.message()), sent by FindCoordinator.
_COORDINATOR_MESSAGES = {
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests.",
}


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """Node.noNode() (-1, "", -1) for the key, or for every key of a v4+ batch."""
    message = _COORDINATOR_MESSAGES.get(code) or AUTHORIZATION_MESSAGES.get(code, code.name)
    if version < 4:
        return Msg(throttle_time_ms=0, error_code=code, error_message=message, node_id=-1, host="", port=-1)
    return Msg(throttle_time_ms=0, coordinators=[
        Msg(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)
        for key in req.coordinator_keys])


_KEY_RESOURCES = {GROUP: (ResourceType.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED),
                  TRANSACTION: (ResourceType.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)}


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    key_type = req.get("key_type", GROUP)
    if key_type == SHARE and header.api_version >= 6 and not access.on_cluster(AclOperation.CLUSTER_ACTION):
        return error_response(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, header.api_version)
    if key_type not in _KEY_RESOURCES:
        return call(req)
    rtype, code = _KEY_RESOURCES[key_type]
    message = AUTHORIZATION_MESSAGES[code]
    if header.api_version < 4:
        if access.may(AclOperation.DESCRIBE, rtype, req.key):
            return call(req)
        return Msg(throttle_time_ms=0, error_code=code, error_message=message, node_id=-1, host="", port=-1)
    allowed = [k for k in req.coordinator_keys if access.may(AclOperation.DESCRIBE, rtype, k)]
    if len(allowed) == len(req.coordinator_keys):
        return call(req)
    errors = [Msg(key=k, node_id=-1, host="", port=-1, error_code=code, error_message=message)
              for k in req.coordinator_keys if k not in allowed]
    if not allowed:
        return Msg(throttle_time_ms=0, coordinators=errors)
    return then(call(with_list(req, "coordinator_keys", allowed)), extend("coordinators", errors))


def _valid_share_key(key: str) -> bool:
    try:
        parse_coordinator_key(key)
    except ValueError:
        return False
    return True


@handler(API_KEY, 0, 6, authorize=authorize, error_response=error_response)
def handle_find_coordinator(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    key_type = req.key_type if v >= 1 else GROUP
    if v < 4:
        if key_type not in (GROUP, TRANSACTION):
            return Msg(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_MESSAGE,
                       node_id=-1, host="", port=-1)
        found = coordinator_address(ctx, key_type, req.key)
        if found is None:
            return Msg(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
                       error_message=COORDINATOR_NOT_AVAILABLE_MESSAGE, node_id=-1, host="", port=-1)
        node_id, host, port = found
        return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message="NONE", node_id=node_id, host=host,
                   port=port)
    if key_type not in (GROUP, TRANSACTION, SHARE) or (key_type == SHARE and v < 6):
        message = "" if key_type == SHARE else INVALID_REQUEST_MESSAGE
        return Msg(throttle_time_ms=0, coordinators=[
            Msg(key=key, node_id=-1, host="", port=-1, error_code=ErrorCode.INVALID_REQUEST, error_message=message)
            for key in req.coordinator_keys])
    coordinators = []
    for key in req.coordinator_keys:
        if key_type == SHARE and not _valid_share_key(key):
            coordinators.append(Msg(key=key, node_id=-1, host="", port=-1, error_code=ErrorCode.INVALID_REQUEST,
                                    error_message=""))
            continue
        found = coordinator_address(ctx, key_type, key)
        if found is None:
            coordinators.append(Msg(key=key, node_id=-1, host="", port=-1,
                                    error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                    error_message=COORDINATOR_NOT_AVAILABLE_MESSAGE))
        else:
            node_id, host, port = found
            coordinators.append(Msg(key=key, node_id=node_id, host=host, port=port, error_code=ErrorCode.NONE,
                                    error_message=""))
    return Msg(throttle_time_ms=0, coordinators=coordinators)
