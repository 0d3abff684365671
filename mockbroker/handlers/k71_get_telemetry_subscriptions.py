"""GetTelemetrySubscriptions (key 71), v0 (KIP-714), as Kafka's ClientMetricsManager answers it.

Served only when client telemetry is on (`mockbroker.client.telemetry.enable`; Kafka needs a
ClientTelemetry metric reporter): otherwise neither telemetry API is advertised (personas.py hides them)
and a request for one is refused as any unserved API is.
- The zero client instance id gets a new one (from the cluster's random source); the answer carries the
  instance id, its subscription id, the requested metrics (the union of the matching CLIENT_METRICS
  subscriptions; ["*"] when one asks for all; [] with none), the push interval (the smallest of theirs,
  300000 with none), accepted compression types [zstd, lz4, gzip, snappy], telemetry.max.bytes and delta
  temporality true. The model: state/client_metrics.py.
- THROTTLING_QUOTA_EXCEEDED when asked again within the push interval (not after an UNKNOWN_SUBSCRIPTION_ID
  or UNSUPPORTED_COMPRESSION_TYPE push): the other fields then stay at their defaults, as in Kafka.
- Error answer (fault injection): the code, zero ids, empty lists.
- Authorization: none (Kafka checks none for either telemetry API).
"""

from __future__ import annotations

import uuid

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler
from mockbroker.handlers.support.telemetry_client import client_attributes
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.state.client_metrics import ACCEPTED_COMPRESSION

API_KEY = ApiKey.GET_TELEMETRY_SUBSCRIPTIONS
ZERO = uuid.UUID(int=0)


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, client_instance_id=ZERO, subscription_id=0,
               accepted_compression_types=[], push_interval_ms=0, telemetry_max_bytes=0, delta_temporality=False,
               requested_metrics=[])


@handler(API_KEY, 0, 0, error_response=error_response)
def handle_get_telemetry_subscriptions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    rng = cluster.random
    code, inst = cluster.client_metrics.get_subscriptions(
        req.client_instance_id, client_attributes(ctx, header), cluster.clock.now_ms(),
        lambda: uuid.UUID(int=rng.getrandbits(128), version=4))
    if code != ErrorCode.NONE:
        return error_response(req, code, header.api_version)
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, client_instance_id=inst.instance_id,
               subscription_id=inst.subscription_id, accepted_compression_types=list(ACCEPTED_COMPRESSION),
               push_interval_ms=inst.push_interval_ms,
               telemetry_max_bytes=int(cluster.config.get("telemetry.max.bytes")), delta_temporality=True,
               requested_metrics=list(inst.metrics))
