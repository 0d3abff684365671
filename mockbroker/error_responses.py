"""Error responses built from a request, as Kafka's getErrorResponse does: used by fault injection.

Per-partition APIs get the code on every partition the request names; others get the top-level
error_code. An API with neither is refused when the fault is added (see `supports`).
"""

from __future__ import annotations

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import RESPONSE, Msg, struct_codec


def _produce(req: Msg, code: ErrorCode) -> Msg:
    return Msg(throttle_time_ms=0, responses=[
        Msg(name=t.name, topic_id=t.topic_id, partition_responses=[
            Msg(index=p.index, error_code=code, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1)
            for p in t.partition_data])
        for t in req.topic_data])


def _fetch(req: Msg, code: ErrorCode) -> Msg:
    return Msg(throttle_time_ms=0, error_code=ErrorCode.NONE, session_id=0, responses=[
        Msg(topic=t.topic, topic_id=t.topic_id, partitions=[
            Msg(partition_index=p.partition, error_code=code, high_watermark=-1, last_stable_offset=-1,
                log_start_offset=-1, preferred_read_replica=-1, records=None)
            for p in t.partitions])
        for t in req.topics])


def _list_offsets(req: Msg, code: ErrorCode) -> Msg:
    return Msg(throttle_time_ms=0, topics=[
        Msg(name=t.name, partitions=[
            Msg(partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1, leader_epoch=-1,
                old_style_offsets=[])
            for p in t.partitions])
        for t in req.topics])


def _metadata(req: Msg, code: ErrorCode) -> Msg:
    return Msg(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, error_code=code,
               topics=[Msg(error_code=code, name=t.name, topic_id=t.topic_id, partitions=[])
                       for t in (req.topics or [])])


_BUILDERS = {0: _produce, 1: _fetch, 2: _list_offsets, 3: _metadata}


# -- the group coordinator's APIs (builders that need the version) ---------------------------------------

def _offset_commit(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, topics=[
        Msg(name=t.name, topic_id=t.get("topic_id"), partitions=[
            Msg(partition_index=p.partition_index, error_code=code) for p in t.partitions])
        for t in req.topics])


def _offset_fetch(req: Msg, code: ErrorCode, version: int) -> Msg:
    if version >= 8:
        return Msg(throttle_time_ms=0, groups=[Msg(group_id=g.group_id, topics=[], error_code=code)
                                               for g in req.groups])
    if version < 2:  # no top-level error yet: on every partition asked for
        return Msg(throttle_time_ms=0, error_code=code, topics=[
            Msg(name=t.name, partitions=[
                Msg(partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code)
                for p in t.partition_indexes])
            for t in (req.topics or [])])
    return Msg(throttle_time_ms=0, error_code=code, topics=[])


# Kafka's default messages of the coordinator errors (Errors.message()), sent by FindCoordinator.
_COORDINATOR_MESSAGES = {
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests.",
}


def _find_coordinator(req: Msg, code: ErrorCode, version: int) -> Msg:
    """Node.noNode() (-1, "", -1) for the key, or for every key of a v4+ batch."""
    message = _COORDINATOR_MESSAGES.get(code, code.name)
    if version < 4:
        return Msg(throttle_time_ms=0, error_code=code, error_message=message, node_id=-1, host="", port=-1)
    return Msg(throttle_time_ms=0, coordinators=[
        Msg(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)
        for key in req.coordinator_keys])


def _join_group(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, generation_id=-1, protocol_type=None, protocol_name="",
               leader="", skip_assignment=False, member_id="", members=[])


def _leave_group(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, members=[])


def _describe_groups(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, groups=[
        Msg(error_code=code, error_message=None, group_id=g, group_state="", protocol_type="", protocol_data="",
            members=[], authorized_operations=-2147483648) for g in req.groups])


def _delete_groups(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, results=[Msg(group_id=g, error_code=code) for g in req.groups_names])


def _consumer_group_describe(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, groups=[
        Msg(error_code=code, error_message=None, group_id=g, group_state="", group_epoch=0, assignment_epoch=0,
            assignor_name="", members=[], authorized_operations=-2147483648) for g in req.group_ids])


def _consumer_group_heartbeat(req: Msg, code: ErrorCode, version: int) -> Msg:
    return Msg(throttle_time_ms=0, error_code=code, error_message=None, member_id=None, member_epoch=0,
               heartbeat_interval_ms=0, assignment=None)


def _elect_leaders(req: Msg, code: ErrorCode, version: int) -> Msg:
    """ElectLeadersRequest.getErrorResponse: the code at the top (v1+) and on every partition named."""
    return Msg(throttle_time_ms=0, error_code=code, replica_election_results=[
        Msg(topic=t.topic, partition_result=[Msg(partition_id=p, error_code=code, error_message=None)
                                             for p in t.partitions])
        for t in (req.topic_partitions or [])])


_VERSIONED_BUILDERS = {8: _offset_commit, 9: _offset_fetch, 10: _find_coordinator, 11: _join_group,
                       13: _leave_group, 15: _describe_groups, 42: _delete_groups, 68: _consumer_group_heartbeat,
                       69: _consumer_group_describe, 43: _elect_leaders}


def supports(api_key: int, version: int) -> bool:
    if api_key in _BUILDERS or api_key in _VERSIONED_BUILDERS:
        return True
    codec = struct_codec(api_key, version, RESPONSE)
    return any(f.name == "error_code" for f in codec.regular)


def error_response(api_key: int, version: int, req: Msg, code: ErrorCode) -> Msg:
    versioned = _VERSIONED_BUILDERS.get(api_key)
    if versioned is not None:
        return versioned(req, code, version)
    builder = _BUILDERS.get(api_key)
    if builder is not None:
        return builder(req, code)
    return Msg(error_code=code)  # throttle_time_ms (where the version has one) takes its default, 0
