"""CreatePartitions (key 37), v0-v3.

As Kafka's controller answers it (ControllerApis.createPartitions + ReplicationControlManager):
- count is the new total. Errors per topic, with Kafka's messages: UNKNOWN_TOPIC_OR_PARTITION,
  INVALID_PARTITIONS ("Topic already has N partition(s)." / "... would not be an increase."),
  INVALID_REPLICA_ASSIGNMENT (assignments given but not one per new partition, or a bad replica list:
  empty, unknown node, a node twice, a replica count unlike the topic's).
- assignments: null lets the broker place the new partitions; else one broker id list per new
  partition, the first id being the leader.
- A name given twice: INVALID_REQUEST "Duplicate topic name." (one result, listed first as Kafka does).
- More than 10,000 new partitions in one request (counted over its topics in order): the topic that
  crosses the bound gets POLICY_VIOLATION "Excessively large number of partitions per request." and
  adds nothing (Kafka's controller bounds a request's records at 10,000 and fails that topic).
- validate_only: every check, nothing created. timeout_ms is ignored (creation is immediate).
- Authorization (with an authorizer, `authorize`): ALTER on each topic (TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from collections import Counter

from mockbroker.authorization.access import Access, AclOperation, Call, extend, split, then, with_list
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.errors import KafkaError
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.CREATE_PARTITIONS


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    allowed, refused = split(access, AclOperation.ALTER, req.topics, lambda t: t.name)
    if not refused:
        return call(req)
    errors = [Msg(name=t.name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                  error_message="The topic authorization is failed.")
              for t in refused]
    return then(call(with_list(req, "topics", allowed)), extend("results", errors))


@handler(API_KEY, 0, 3, authorize=authorize)
def handle_create_partitions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    cluster = ctx.cluster
    counts = Counter(t.name for t in req.topics)
    results = [Msg(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
               for name in dict.fromkeys(t.name for t in req.topics) if counts[name] > 1]
    added = 0
    for t in req.topics:
        if counts[t.name] > 1:
            continue
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]
        try:
            added += cluster.create_partitions(t.name, t.count, validate_only=bool(req.validate_only),
                                               assignments=assignments, added_before=added)
        except KafkaError as exc:
            results.append(Msg(name=t.name, error_code=exc.code, error_message=exc.message))
            continue
        results.append(Msg(name=t.name, error_code=ErrorCode.NONE, error_message=None))
    return Msg(throttle_time_ms=0, results=results)
