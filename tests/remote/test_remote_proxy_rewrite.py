"""The fault proxy's endpoint rewriting (mockbroker/remote/proxy_rewrite.py) on encoded answers, without a
cluster: every API that names a broker gets the proxy's address, error answers' empty endpoints stay, and
answers naming no broker are left to pass byte-exact (None)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from mockbroker.protocol import headers as hdr
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import Msg, decode_response, encode_response
from mockbroker.protocol.primitives import Reader
from mockbroker.remote.proxy_rewrite import carries_endpoints, encode_frame, rewrite

HINT = {"node_id": 2, "host": "kafka-2.internal", "port": 9092, "rack": None}


def rewritten(api_key: int, version: int, body: dict[str, Any]) -> tuple[Msg | None, list[tuple[int, str, int]], Msg]:
    """(the rewritten answer decoded, or None; the endpoints route() was asked for; what learn() saw)."""
    asked: list[tuple[int, str, int]] = []
    learnt: list[Msg] = []

    async def route(node_id: int, host: str, port: int) -> tuple[str, int]:
        asked.append((node_id, host, port))
        return "127.0.0.1", 40000 + node_id

    async def run() -> bytes | None:
        return await rewrite(api_key, version, 5, Reader(encode_response(api_key, version, body).getvalue()), route,
                             lambda key, msg: learnt.append(msg))

    frame = asyncio.run(run())
    if frame is None:
        return None, asked, learnt[0]
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    correlation_id, reader = hdr.decode_response_header(memoryview(frame)[4:],
                                                        hdr.response_header_version(api_key, version))
    assert correlation_id == 5
    return decode_response(api_key, version, reader), asked, learnt[0]


@pytest.mark.parametrize("api_key, version, body", [
    (ApiKey.METADATA, 12, {"brokers": [{"node_id": 2, "host": "kafka-2.internal", "port": 9092, "rack": None}]}),
    (ApiKey.METADATA, 0, {"brokers": [{"node_id": 2, "host": "kafka-2.internal", "port": 9092}]}),
    (ApiKey.DESCRIBE_CLUSTER, 1, {"brokers": [{"broker_id": 2, "host": "kafka-2.internal", "port": 9092}]}),
    (ApiKey.FIND_COORDINATOR, 3, {"node_id": 2, "host": "kafka-2.internal", "port": 9092}),
    (ApiKey.FIND_COORDINATOR, 6, {"coordinators": [{"key": "g", "node_id": 2, "host": "kafka-2.internal",
                                                    "port": 9092}]}),
    (ApiKey.PRODUCE, 11, {"node_endpoints": [HINT]}),
    (ApiKey.FETCH, 17, {"node_endpoints": [HINT]}),
    (ApiKey.SHARE_FETCH, 1, {"node_endpoints": [HINT]}),
    (ApiKey.SHARE_ACKNOWLEDGE, 1, {"node_endpoints": [HINT]}),
])
def test_every_endpoint_names_the_proxy(api_key: int, version: int, body: dict[str, Any]) -> None:
    answer, asked, _ = rewritten(api_key, version, body)
    assert answer is not None and asked == [(2, "kafka-2.internal", 9092)]
    [endpoint] = answer.get("brokers") or answer.get("coordinators") or answer.get("node_endpoints") or [answer]
    assert (endpoint.host, endpoint.port) == ("127.0.0.1", 40002)


@pytest.mark.parametrize("api_key, version, body", [
    (ApiKey.FIND_COORDINATOR, 3, {"error_code": 15, "node_id": -1, "host": "", "port": -1}),
    (ApiKey.FIND_COORDINATOR, 4, {"coordinators": [{"key": "g", "error_code": 15, "node_id": -1, "host": "",
                                                    "port": -1}]}),
    (ApiKey.PRODUCE, 11, {"responses": []}),
    (ApiKey.FETCH, 17, {"responses": []}),
])
def test_answers_naming_no_broker_are_left_byte_exact(api_key: int, version: int, body: dict[str, Any]) -> None:
    answer, asked, _ = rewritten(api_key, version, body)
    assert answer is None and asked == []


def test_metadata_teaches_topic_ids_and_only_endpoint_apis_are_decoded() -> None:
    topic_id = uuid.uuid4()
    _, _, learnt = rewritten(ApiKey.METADATA, 12, {"brokers": [], "topics": [
        {"name": "orders", "topic_id": topic_id, "partitions": []}]})
    assert learnt.topics[0].topic_id == topic_id
    assert carries_endpoints(ApiKey.PRODUCE, 10) and not carries_endpoints(ApiKey.PRODUCE, 9)
    assert carries_endpoints(ApiKey.FETCH, 16) and not carries_endpoints(ApiKey.FETCH, 15)
    assert not carries_endpoints(ApiKey.LIST_OFFSETS, 7) and not carries_endpoints(ApiKey.API_VERSIONS, 3)


def test_an_encoded_frame_is_what_the_broker_would_send() -> None:
    frame = encode_frame(ApiKey.API_VERSIONS, 3, 9, Msg(error_code=35))
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    correlation_id, reader = hdr.decode_response_header(memoryview(frame)[4:], 0)  # ApiVersions: header v0 always
    assert correlation_id == 9 and decode_response(ApiKey.API_VERSIONS, 3, reader).error_code == 35
