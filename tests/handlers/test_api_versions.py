"""Raw-protocol tests of ApiVersions (18): the advertised ranges, KIP-511's answer to a newer client,
and the check of the client software name and version."""

from __future__ import annotations

import struct

import pytest

from mockbroker.dispatch import supported_versions
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import decode_response
from mockbroker.protocol.primitives import Writer
from mockbroker.server import MockBroker
from tests.handlers.conftest import API_VERSIONS
from tests.rawclient import RawClient


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions_lists_every_served_key_with_its_range(mockbroker: MockBroker, client: RawClient,
                                                            version: int) -> None:
    body = {"client_software_name": "mockbroker-tests", "client_software_version": "1.0"}
    resp = client.request(API_VERSIONS, version, body)
    assert resp.error_code == ErrorCode.NONE
    advertised = [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys]
    assert advertised == supported_versions(mockbroker.node.persona)  # all but telemetry (off by default)
    assert [k for k, _, _ in supported_versions()] == sorted({k for k, _, _ in advertised} | {71, 72})
    assert (API_VERSIONS, 0, 4) in advertised
    assert resp.throttle_time_ms == 0


def _api_versions_frame(version: int, correlation_id: int) -> bytes:
    """An ApiVersions request at a version no schema knows: header v2 and a v3+ body, as a newer client sends."""
    w = Writer()
    hdr.encode_request_header(hdr.RequestHeader(API_VERSIONS, version, correlation_id, "future-client"), w)
    w.compact_string("future-client")
    w.compact_string("9.9")
    w.uvarint(0)  # no tagged fields
    payload = w.getvalue()
    return struct.pack(">i", len(payload)) + payload


def test_api_versions_above_v4_answers_v0_body_with_unsupported_version(client: RawClient) -> None:
    client.send_frame(_api_versions_frame(127, 77))
    frame = client.recv_frame()
    cid, reader = hdr.decode_response_header(frame, 0)  # always response header v0 (KIP-511)
    assert cid == 77
    resp = decode_response(API_VERSIONS, 0, reader)
    assert resp.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [(API_VERSIONS, 0, 4)]
    # The connection stays usable: the client retries with a version the broker knows.
    assert client.request(API_VERSIONS, 3, {"client_software_name": "c", "client_software_version": "1"}
                          ).error_code == ErrorCode.NONE


@pytest.mark.parametrize(("name", "version"), [
    ("bad name", "1.0"),
    ("-leading-dash", "1.0"),
    ("trailing.", "1.0"),
    ("", "1.0"),
    ("librdkafka", "2.3.0 beta"),
])
def test_api_versions_v3_invalid_client_software_gets_invalid_request(client: RawClient, name: str,
                                                                      version: str) -> None:
    resp = client.request(API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
    assert resp.error_code == ErrorCode.INVALID_REQUEST
    assert resp.api_keys == []


def test_api_versions_v3_accepts_real_client_names(client: RawClient) -> None:
    for name, version in [("apache-kafka-java", "3.9.0"), ("librdkafka", "2.6.1"), ("confluent-kafka-python",
                                                                                    "2.6.1-rdkafka-2.6.1")]:
        resp = client.request(API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
        assert resp.error_code == ErrorCode.NONE, name


def test_api_versions_v2_does_not_check_software_name(client: RawClient) -> None:
    assert client.request(API_VERSIONS, 2, {}).error_code == ErrorCode.NONE
