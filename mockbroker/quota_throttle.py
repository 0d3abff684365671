"""Client quotas applied to each answer, as Kafka's KafkaApis does after handling a request.

The connection calls `throttle_after` with what it knows of a request (its size, its handler's time) and the
answer it is about to send; this records the client's use on its node's quota sensors
(state/quota_rates.py, configs in state/quotas.py) and returns the throttle time:
- Produce: the request's size against producer_byte_rate;
- Fetch from a consumer: the answer's record bytes against consumer_byte_rate; when throttled, the answer
  goes out empty (no topics, the session id kept) and its bytes are taken back, as Kafka's throttled fetch;
- every request: the handler's time against request_percentage (capped at one window);
- CreateTopics, CreatePartitions, DeleteTopics: the partitions created or deleted against
  controller_mutation_rate (recorded after the fact: `with_mutation_quota` is the strict check before).
The answer's throttle_time_ms becomes the largest of these (and what the handler put there), and the
connection mutes itself for that long after sending it (connection.py `_mute`), as Kafka's channel.
The client is the principal's name (ANONYMOUS without authentication) and the header's client id.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from mockbroker.context import RequestContext
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.security import principal_of

Handler = Callable[[RequestContext, RequestHeader, Any], Any]
ZERO_UUID = uuid.UUID(int=0)
PARTITIONS_BEFORE = "quota.partitions_before"  # in ctx.extra, from the wrapper to throttle_after
MUTATIONS: dict[int, int] = {ApiKey.CREATE_TOPICS: 6, ApiKey.CREATE_PARTITIONS: 3, ApiKey.DELETE_TOPICS: 5}  # strict from these versions


def client_of(ctx: RequestContext, header: RequestHeader) -> tuple[str, str]:
    """(user, client id) as Kafka's quota metric tags name them."""
    principal = principal_of(ctx)
    return principal.split(":", 1)[-1], header.client_id or ""


def _size(records: Any) -> int:
    if records is None:
        return 0
    if isinstance(records, (list, tuple)):
        return sum(_size(r) for r in records)
    return int(getattr(records, "nbytes", None) or len(records))


def throttle_after(ctx: RequestContext, header: RequestHeader, request_bytes: int, handler_seconds: float,
                   response: Any) -> int:
    """Record the request on the client's quotas, set the answer's throttle_time_ms; the ms to mute."""
    sensors = ctx.node.quota_sensors
    if not sensors.quotas.entities:
        return 0
    now = ctx.node.clock.now_ms()
    user, client_id = client_of(ctx, header)
    key = header.api_key
    throttle = 0
    if key == ApiKey.PRODUCE:
        throttle = sensors.produce(user, client_id, request_bytes, now)
    elif key == ApiKey.FETCH and response is not None and response.get("responses") is not None:
        fetched = sum(_size(p.get("records")) for t in response.responses for p in t.partitions)
        throttle = sensors.fetch(user, client_id, fetched, now)
        if throttle > 0:
            sensors.unrecord("consumer_byte_rate", user, client_id, fetched, now)
            response.responses = []
    elif key in MUTATIONS and response is not None:
        before = ctx.extra.pop(PARTITIONS_BEFORE, {})
        throttle = sensors.record_mutations(user, client_id, _mutations(ctx, key, response, before), now)
    throttle = max(throttle, sensors.request_time(user, client_id, handler_seconds, now))
    if response is not None and "throttle_time_ms" in response:
        response.throttle_time_ms = max(int(response.throttle_time_ms or 0), throttle)
    return throttle


def _mutations(ctx: RequestContext, key: int, response: Any, before: dict[str, int]) -> int:
    """The partitions the answer's successful topics created or deleted (Kafka counts them so): a new
    topic's partitions, a deleted topic's, the partitions added to a topic."""
    def now(name: str) -> int:
        topic = ctx.cluster.topics.get(name)
        return len(topic.partitions) if topic is not None else 0

    if key == ApiKey.CREATE_TOPICS:
        return sum(now(t.name) for t in response.get("topics") or [] if t.error_code == 0 and t.name)
    if key == ApiKey.DELETE_TOPICS:
        return sum(before.get(t.name, 0) for t in response.get("responses") or [] if t.error_code == 0 and t.name)
    return sum(max(now(t.name) - before.get(t.name, 0), 0) for t in response.get("results") or [] if t.error_code == 0)


def _partitions_before(ctx: RequestContext, request: Any) -> dict[str, int]:
    """The partition counts of the topics a DeleteTopics or CreatePartitions request names, before it runs."""
    names = [t.get("name") for t in request.get("topics") or []] + list(request.get("topic_names") or [])
    out = {}
    for name in names:
        topic = ctx.cluster.topics.get(name) if name else None
        if topic is not None:
            out[name] = len(topic.partitions)
    return out


def with_mutation_quota(fn: Handler, header: RequestHeader) -> Handler:
    """The handler of CreateTopics / CreatePartitions / DeleteTopics, behind Kafka's strict check at the
    versions that have it: a client already over its controller_mutation_rate gets every topic refused with
    THROTTLING_QUOTA_EXCEEDED and the throttle time (older versions are served, then throttled). It notes
    the partition counts before the request, for `throttle_after` to count what changed. Under the authorization guard (which the connection
    puts around it), so a topic the client may not touch keeps its authorization error, as in Kafka."""
    if header.api_key not in MUTATIONS:
        return fn
    strict = header.api_version >= MUTATIONS[header.api_key]

    def checked(ctx: RequestContext, header: RequestHeader, request: Any) -> Any:
        sensors = ctx.node.quota_sensors
        if sensors.quotas.entities:
            user, client_id = client_of(ctx, header)
            throttle = sensors.mutation_throttle(user, client_id, ctx.node.clock.now_ms()) if strict else 0
            if throttle > 0:
                return _refusal(header.api_key, request, throttle)
            ctx.extra[PARTITIONS_BEFORE] = _partitions_before(ctx, request)
        return fn(ctx, header, request)

    return checked


def _refusal(key: int, request: Any, throttle: int) -> Msg:
    code, message = ErrorCode.THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded."
    if key == ApiKey.CREATE_TOPICS:
        return Msg(throttle_time_ms=throttle, topics=[
            Msg(name=t.name, topic_id=ZERO_UUID, error_code=code, error_message=message, topic_config_error_code=0,
                num_partitions=-1, replication_factor=-1, configs=[]) for t in request.topics])
    if key == ApiKey.CREATE_PARTITIONS:
        return Msg(throttle_time_ms=throttle, results=[Msg(name=t.name, error_code=code, error_message=message)
                                                       for t in request.topics])
    topics = ([Msg(name=t.get("name"), topic_id=t.get("topic_id") or ZERO_UUID) for t in request.topics]
              if request.get("topics") is not None else [Msg(name=n, topic_id=ZERO_UUID) for n in request.topic_names])
    return Msg(throttle_time_ms=throttle, responses=[Msg(name=t.name, topic_id=t.topic_id, error_code=code,
                                                         error_message=message) for t in topics])
