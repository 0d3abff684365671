"""What client telemetry (KIP-714) knows of the client sending a request: the attributes a subscription's
`match` selects on (Kafka's ClientMetricsInstanceMetadata)."""

from __future__ import annotations

from mockbroker.context import RequestContext
from mockbroker.protocol.headers import RequestHeader


def client_attributes(ctx: RequestContext, header: RequestHeader) -> dict[str, str | None]:
    name, version = ctx.extra.get("client_software", (None, None))
    return {"client_id": header.client_id, "client_software_name": name, "client_software_version": version,
            "client_source_address": ctx.client_host, "client_source_port": str(ctx.client_port)}
