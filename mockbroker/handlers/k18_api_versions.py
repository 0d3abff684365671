"""ApiVersions (key 18), v0-v4.

Answers with every API key this broker serves and its version range, read from the dispatch registry
narrowed by the node's Kafka version persona (mockbroker/personas.py), as the connection narrows what it
accepts (so the advertised list can never disagree with what is served).
- v3+: the client's software name and version must match Kafka's pattern, else INVALID_REQUEST; they are
  kept for the connection (`ctx.extra["client_software"]`), which client telemetry's `match` reads.
- v3+: the features Kafka 4.3 reports in tagged fields: transaction.version, supported 0-2 (left out
  below v4, whose clients may not read a minimum of 0) and finalized at 2 by default (the broker config
  `transaction.version` picks 0 or 1); share.version (KIP-932), supported 0-1 (v4+) and finalized at 1
  when the persona serves share groups (handlers/support/share_requests.py).
- A version above v4: the connection answers with a v0 body (response header v0, as every ApiVersions
  response) holding UNSUPPORTED_VERSION and the ApiVersions key's own range, as Kafka does (KIP-511),
  so the client can retry with a version we know (`error_response`, which the connection sends).
- Error answer (fault injection, `error_response`): the code, no keys (UNSUPPORTED_VERSION: its own range).
"""

from __future__ import annotations

import re

from mockbroker.context import RequestContext
from mockbroker.dispatch import handler, lookup, supported_versions
from mockbroker.handlers.support.share_requests import with_share_version
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

API_KEY = ApiKey.API_VERSIONS
# Matched whole (fullmatch): "$" alone would accept a trailing newline, which Kafka refuses.
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def error_response(req: Msg, code: ErrorCode, version: int) -> Msg:
    """ApiVersionsRequest.getErrorResponse: the code; with UNSUPPORTED_VERSION the ApiVersions key's own
    range, so the client can retry with a version we know."""
    keys = []
    if code == ErrorCode.UNSUPPORTED_VERSION:
        spec = lookup(API_KEY)
        assert spec is not None
        keys = [Msg(api_key=API_KEY, min_version=spec.min_version, max_version=spec.max_version)]
    return Msg(error_code=code, api_keys=keys, throttle_time_ms=0)


@handler(API_KEY, 0, 4, error_response=error_response)
def handle_api_versions(ctx: RequestContext, header: RequestHeader, req: Msg) -> Msg:
    if header.api_version >= 3 and not (
        _SOFTWARE.fullmatch(req.client_software_name or "")
        and _SOFTWARE.fullmatch(req.client_software_version or "")
    ):
        return Msg(error_code=ErrorCode.INVALID_REQUEST, api_keys=[], throttle_time_ms=0)
    if header.api_version >= 3:  # the connection's client information (KIP-511), as client telemetry matches it
        ctx.extra["client_software"] = (req.client_software_name, req.client_software_version)
    return Msg(
        error_code=ErrorCode.NONE,
        api_keys=[Msg(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in supported_versions(ctx.node.persona)],
        throttle_time_ms=0,
        # v3+: supported/finalized features; transaction.version (KIP-890), see state/txn/coordinator.py.
        **with_share_version(ctx.node.txn_coordinator.api_versions_features(header.api_version), header.api_version,
                             ctx.node.persona.share_groups),
    )
