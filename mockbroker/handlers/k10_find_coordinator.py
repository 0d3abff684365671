"""FindCoordinator (key 10), v0-v6.

One group coordinator and one transaction coordinator serve every group and transactional id (no
__consumer_offsets partitioning yet); they live on the lowest live node (BrokerNode.coordinator_id), and
move there, state included, when that node stops. The answer is that node with its advertised address
for the client's listener, as Metadata's broker list (a client on the "internal" listener learns the
internal address).
- Key types: 0 group, 1 transaction (answered the same way; the transaction coordinator's own APIs are
  another module's business). 2 (share) and anything else: INVALID_REQUEST, as a Kafka broker without a
  share coordinator answers (an unknown key type fails the whole request, as Kafka's CoordinatorType.forId).
- v0-v3: one key (v0 has no key type: a group); errors carry node -1, host "", port -1 (Node.noNode()).
  v1+ also has an error message: Kafka sends its Errors.message(), "NONE" on success.
- v4+: batched coordinator_keys, one coordinator entry per key (KIP-699).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = 10
GROUP, TRANSACTION, SHARE = 0, 1, 2
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")


def coordinator_address(ctx: RequestContext) -> tuple[int, str, int]:
    """(node id, host, port) of the coordinator node as the client's listener advertises it."""
    node_id = ctx.node.coordinator_id()
    listener = next((lst for lst in ctx.cluster.listeners if lst.node_id == node_id and lst.name == ctx.listener.name),
                    ctx.listener)
    return node_id, listener.public_host, listener.public_port


@handler(API_KEY, 0, 6)
def handle_find_coordinator(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    key_type = req.key_type if v >= 1 else GROUP
    node_id, host, port = coordinator_address(ctx)
    if v < 4:
        if key_type not in (GROUP, TRANSACTION):
            return Msg(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_MESSAGE,
                       node_id=-1, host="", port=-1)
        return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message="NONE", node_id=node_id, host=host,
                   port=port)
    if key_type not in (GROUP, TRANSACTION):
        message = "" if key_type == SHARE else INVALID_REQUEST_MESSAGE
        return Msg(throttle_time_ms=0, coordinators=[
            Msg(key=key, node_id=-1, host="", port=-1, error_code=ErrorCode.INVALID_REQUEST, error_message=message)
            for key in req.coordinator_keys])
    return Msg(throttle_time_ms=0, coordinators=[
        Msg(key=key, node_id=node_id, host=host, port=port, error_code=ErrorCode.NONE, error_message="")
        for key in req.coordinator_keys])
