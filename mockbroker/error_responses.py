"""Error responses built from a request, as Kafka's getErrorResponse does: used by fault injection.

Per-partition APIs get the code on every partition the request names; others get the top-level
error_code. An API with neither is refused when the fault is added (see `supports`).
"""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.messages import RESPONSE, Msg, struct_codec


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


def supports(api_key: int, version: int) -> bool:
    if api_key in _BUILDERS:
        return True
    codec = struct_codec(api_key, version, RESPONSE)
    return any(f.name == "error_code" for f in codec.regular)


def error_response(api_key: int, version: int, req: Msg, code: ErrorCode) -> Msg:
    builder = _BUILDERS.get(api_key)
    if builder is not None:
        return builder(req, code)
    return Msg(error_code=code, throttle_time_ms=0)
