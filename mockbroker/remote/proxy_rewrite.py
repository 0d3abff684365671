"""The fault proxy's rewriting of broker endpoints: which responses carry a broker's host and port, and how
they are re-encoded to name the proxy's listener for that broker instead (mockbroker/remote/proxy.py).

A response carrying endpoints is decoded at its request's version with the protocol package, each endpoint
is replaced by what `route(node_id, host, port)` gives, and the response is encoded again; every other
response, and one of these carrying no endpoint (Produce and Fetch without KIP-951 leader hints), is left
byte-exact. The APIs and their endpoint fields:
- Metadata: brokers[] (node_id, host, port);
- FindCoordinator: node_id/host/port (v0-v3), coordinators[] (v4+); an error answer's empty host is kept;
- DescribeCluster: brokers[] (broker_id, host, port);
- Produce (v10+), Fetch (v16+), ShareFetch, ShareAcknowledge: node_endpoints[] (KIP-951 leader hints).
Metadata's topic ids are also read, so that topic filters can name Fetch and Produce requests that carry
topic ids only (v13+).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.headers import encode_response_header, response_header_version
from mockbroker.protocol.messages import Msg, decode_response, encode_response
from mockbroker.protocol.primitives import Reader, Writer

Route = Callable[[int, str, int], Awaitable[tuple[str, int]]]

# API key -> the lowest version whose response can carry an endpoint.
ENDPOINT_APIS: dict[int, int] = {
    ApiKey.METADATA: 0, ApiKey.FIND_COORDINATOR: 0, ApiKey.DESCRIBE_CLUSTER: 0,
    ApiKey.PRODUCE: 10, ApiKey.FETCH: 16, ApiKey.SHARE_FETCH: 0, ApiKey.SHARE_ACKNOWLEDGE: 0,
}


def carries_endpoints(api_key: int, version: int) -> bool:
    """Whether a response of api_key at version may name a broker's host and port."""
    lowest = ENDPOINT_APIS.get(api_key)
    return lowest is not None and version >= lowest


def _endpoints(api_key: int, msg: Msg) -> list[tuple[Msg, str]]:
    """(struct, name of its node id field) of every endpoint a decoded response holds."""
    if api_key == ApiKey.METADATA:
        return [(b, "node_id") for b in msg.brokers]
    if api_key == ApiKey.DESCRIBE_CLUSTER:
        return [(b, "broker_id") for b in msg.brokers]
    if api_key == ApiKey.FIND_COORDINATOR:
        found = [(c, "node_id") for c in msg.get("coordinators") or []]
        if msg.get("host"):
            found.append((msg, "node_id"))
        return [(c, field) for c, field in found if c.host]
    return [(e, "node_id") for e in msg.get("node_endpoints") or []]


def topic_ids(api_key: int, msg: Msg) -> dict[uuid.UUID, str]:
    """{topic id: name} a Metadata response teaches (v10+), else empty."""
    if api_key != ApiKey.METADATA:
        return {}
    out = {}
    for t in msg.topics:
        topic_id = t.get("topic_id")
        if t.name and topic_id is not None and topic_id != uuid.UUID(int=0):
            out[topic_id] = t.name
    return out


def nodes(api_key: int, msg: Msg) -> dict[tuple[str, int], int]:
    """{(host, port): node id} of the brokers a Metadata or DescribeCluster response lists."""
    if api_key not in (ApiKey.METADATA, ApiKey.DESCRIBE_CLUSTER):
        return {}
    return {(e.host, e.port): e[field] for e, field in _endpoints(api_key, msg)}


def encode_frame(api_key: int, version: int, correlation_id: int, msg: Msg) -> bytes:
    """A response frame, size prefix included, as the broker would send it."""
    w = Writer()
    w.int32(0)  # the size, patched below
    encode_response_header(correlation_id, response_header_version(api_key, version), w)
    encode_response(api_key, version, msg, w)
    frame = bytearray(w.getvalue())
    frame[0:4] = (len(frame) - 4).to_bytes(4, "big", signed=True)
    return bytes(frame)


async def rewrite(api_key: int, version: int, correlation_id: int, body: Reader,
                  route: Route, learn: Callable[[int, Msg], None]) -> bytes | None:
    """The response frame (size prefix included) with each endpoint replaced by route's, or None when the
    response names no endpoint (pass the original bytes on). learn(api_key, msg) sees every decoded one."""
    msg = decode_response(api_key, version, body)
    learn(api_key, msg)
    found = _endpoints(api_key, msg)
    if not found:
        return None
    for struct, field in found:
        struct.host, struct.port = await route(int(struct[field]), str(struct.host), int(struct.port))
    return encode_frame(api_key, version, correlation_id, msg)
