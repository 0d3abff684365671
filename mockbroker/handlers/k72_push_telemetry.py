"""PushTelemetry (key 72), v0 (KIP-714), as Kafka's ClientMetricsManager answers it.

Served only when client telemetry is on (see k71_get_telemetry_subscriptions). Checks in Kafka's order:
INVALID_REQUEST (a zero or reserved instance id; a push after the client said it was terminating),
THROTTLING_QUOTA_EXCEEDED (within the push interval of the last push, unless right after a
GetTelemetrySubscriptions or terminating), UNKNOWN_SUBSCRIPTION_ID (the subscriptions changed: the
client asks again), UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE (more than telemetry.max.bytes).
An accepted push with metrics is kept as sent (state/client_metrics.py); `broker.client_metrics()`
decodes it (mockbroker/client_telemetry.py). Kafka hands it to its reporter plugin, whose failure to read
the payload answers INVALID_RECORD: here a payload is only decoded when a test asks, so a bad one is
reported then, not answered.
- Error answer (fault injection): the code. Authorization: none (as Kafka).
"""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.telemetry_client import client_attributes
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.PUSH_TELEMETRY


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code)


@handler(API_KEY, 0, 0, error_response=error_response)
def handle_push_telemetry(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    code = cluster.client_metrics.push(
        req.client_instance_id, client_attributes(ctx, header), req.subscription_id, bool(req.terminating),
        req.compression_type, bytes(req.metrics or b""), int(cluster.config.get("telemetry.max.bytes")),
        cluster.clock.now_ms())
    return Msg(throttle_time_ms=0, error_code=code)
