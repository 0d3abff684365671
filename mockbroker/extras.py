"""The optional dependencies, by feature, and the one clear error a feature gives when its extra is missing.

The core (`pip install mockbroker`) serves PLAINTEXT and SASL PLAIN/SCRAM listeners, every codec, the
pytest fixture and the CLI (client telemetry is served by the core; only decoding its payloads needs
an extra). These features need more, each named by an extra of pyproject.toml:

    extra       packages               features
    http        aiohttp, prometheus-client   the HTTP endpoint: JSON control API, web console, /metrics (--http-port)
    security    cryptography, PyJWT    TLS listeners (SSL, SASL_SSL); OAUTHBEARER with signed tokens
    registry    fastavro, jsonschema,  the Schema Registry beside the broker (--schema-registry-port), its
                protobuf, grpcio-tools Avro, JSON Schema and Protobuf schemas
    telemetry   opentelemetry-proto    decoding what clients push with KIP-714 (broker.client_metrics())
    all         all of the above

Each feature calls `require(module, feature)` where it starts; a missing module becomes a
MissingExtraError (an ImportError) whose message is one line naming the extra, which the CLI prints
as its error (exit 2).
"""

from __future__ import annotations

import importlib
from types import ModuleType

# module -> (extra, distribution on PyPI); tests/test_packaging.py checks it against pyproject.toml
EXTRAS: dict[str, tuple[str, str]] = {
    "aiohttp": ("http", "aiohttp"),
    "prometheus_client": ("http", "prometheus-client"),
    "fastavro": ("registry", "fastavro"),
    "jsonschema": ("registry", "jsonschema"),
    "google.protobuf": ("registry", "protobuf"),
    "grpc_tools": ("registry", "grpcio-tools"),
    "cryptography": ("security", "cryptography"),
    "jwt": ("security", "PyJWT"),
    "opentelemetry.proto.metrics.v1.metrics_pb2": ("telemetry", "opentelemetry-proto"),
}


class MissingExtraError(ImportError):
    """A feature was asked for without the optional package it needs; the message names the extra."""


def require(module: str, feature: str) -> ModuleType:
    """Import `module` (one of EXTRAS) for `feature`, or raise MissingExtraError with the pip command."""
    extra, distribution = EXTRAS[module]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f"{feature} needs {distribution}: pip install 'mockbroker[{extra}]'",
                                name=module) from exc
