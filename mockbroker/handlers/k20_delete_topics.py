"""DeleteTopics (key 20), v0-v6.

As Kafka's controller answers it (ControllerApis.deleteTopics):
- v0-v5 name topics in topic_names; v6 in topics, each by name or by topic id.
- Unknown name: UNKNOWN_TOPIC_OR_PARTITION; unknown id: UNKNOWN_TOPIC_ID (name null), each with
  Kafka's default message (error_message is in the response from v5).
- INVALID_REQUEST for an entry with neither name nor id ("Neither topic name nor id were specified."),
  with both ("You may not specify both topic name and topic id."), a name or id given twice
  ("Duplicate topic name." / "Duplicate topic id.", one result), and a name whose topic was also
  given by id ("The provided topic name maps to an ID that was already supplied."; not deleted).
- delete.topic.enable=false: every topic gets INVALID_REQUEST (v0-v2) or TOPIC_DELETION_DISABLED (v3+).
- A deleted topic's results carry its name and id. Kafka shuffles the results; here they follow the
  request order. Deletion is immediate (timeout_ms is ignored); parked fetches on it are woken.
- Authorization (with an authorizer, `authorize`): DELETE on each topic (TOPIC_AUTHORIZATION_FAILED); a
  topic named by id needs DESCRIBE first, else its name is withheld.
- Error answer (fault injection): the top-level code (the schema has none: refused when added).
"""

from __future__ import annotations

import uuid
from collections import Counter

from mockbroker.authorization.access import (
    Access,
    AclOperation,
    Call,
    ResourceType,
    extend,
    then,
    topic_name,
    with_list,
)
from mockbroker.context import RequestContext
from mockbroker.dispatch import HandlerResult, handler
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.state.cluster.cluster import Cluster

API_KEY = ApiKey.DELETE_TOPICS
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
UNKNOWN_TOPIC_ID_MESSAGE = "This server does not host this topic ID."


def _result(name: str | None, topic_id: uuid.UUID, code: ErrorCode, message: str | None = None) -> Msg:
    return Msg(name=name, topic_id=topic_id, error_code=code, error_message=message)


def _entries(version: int, req: Msg) -> list[tuple[str | None, uuid.UUID]]:
    if version >= 6:
        return [(t.name, t.topic_id) for t in req.topics]
    return [(name, ZERO_UUID) for name in req.topic_names]


def delete_topics(cluster: Cluster, entries: list[tuple[str | None, uuid.UUID]]) -> list[Msg]:
    """Delete the topics named by (name, id) entries; one DeletableTopicResult per answer."""
    names = Counter(n for n, i in entries if n is not None and i == ZERO_UUID)
    ids = Counter(i for n, i in entries if n is None and i != ZERO_UUID)
    by_id = {i for i in ids if ids[i] == 1 and i in cluster.topics_by_id}
    out: list[Msg] = []
    answered_names: set[str] = set()
    answered_ids: set[uuid.UUID] = set()
    for name, topic_id in entries:
        if name is None:
            if topic_id == ZERO_UUID:
                out.append(_result(None, ZERO_UUID, ErrorCode.INVALID_REQUEST,
                                   "Neither topic name nor id were specified."))
                continue
            if topic_id in answered_ids:
                continue
            answered_ids.add(topic_id)
            if ids[topic_id] > 1:
                out.append(_result(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id."))
                continue
            topic = cluster.topics_by_id.get(topic_id)
            if topic is None:
                out.append(_result(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_ID_MESSAGE))
                continue
            if names.get(topic.name) == 1:
                continue  # also named: answered at the name's entry, not deleted
            cluster.delete_topic(topic.name)
            out.append(_result(topic.name, topic_id, ErrorCode.NONE))
            continue
        if topic_id != ZERO_UUID:
            out.append(_result(name, topic_id, ErrorCode.INVALID_REQUEST,
                               "You may not specify both topic name and topic id."))
            continue
        if name in answered_names:
            continue
        answered_names.add(name)
        if names[name] > 1:
            out.append(_result(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
            continue
        topic = cluster.topic(name)
        if topic is None:
            out.append(_result(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE))
            continue
        if topic.topic_id in by_id or ids.get(topic.topic_id, 0) > 1:
            out.append(_result(name, topic.topic_id, ErrorCode.INVALID_REQUEST,
                               "The provided topic name maps to an ID that was already supplied."))
            continue
        cluster.delete_topic(name)
        out.append(_result(name, topic.topic_id, ErrorCode.NONE))
    return out


def authorize(access: Access, header: RequestHeader, req: Msg, call: Call) -> HandlerResult:
    denied = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    errors: list[Msg] = []
    if header.api_version >= 6:
        allowed = []
        for t in req.topics:
            by_id = t.topic_id != ZERO_UUID
            name = topic_name(access, t.name, t.topic_id)
            if name is None:
                allowed.append(t)
            elif by_id and not access.may(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                errors.append(Msg(name=None, topic_id=t.topic_id, error_code=denied, error_message=None))
            elif not access.may(AclOperation.DELETE, ResourceType.TOPIC, name):
                errors.append(Msg(name=name, topic_id=t.topic_id, error_code=denied, error_message=None))
            else:
                allowed.append(t)
        request = with_list(req, "topics", allowed)
    else:
        names = [n for n in req.topic_names if access.may(AclOperation.DELETE, ResourceType.TOPIC, n)]
        errors = [Msg(name=n, topic_id=ZERO_UUID, error_code=denied, error_message=None)
                  for n in req.topic_names if n not in names]
        request = with_list(req, "topic_names", names)
    if errors and not (request.get("topics") or request.get("topic_names")):
        return Msg(throttle_time_ms=0, responses=errors)
    return then(call(request), extend("responses", errors))


@handler(API_KEY, 0, 6, authorize=authorize)
def handle_delete_topics(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    v = header.api_version
    cluster = ctx.cluster
    entries = _entries(v, req)
    if not cluster.config.get("delete.topic.enable"):
        code = ErrorCode.INVALID_REQUEST if v < 3 else ErrorCode.TOPIC_DELETION_DISABLED
        return Msg(throttle_time_ms=0, responses=[_result(n, i, code) for n, i in entries])
    return Msg(throttle_time_ms=0, responses=delete_topics(cluster, entries))
