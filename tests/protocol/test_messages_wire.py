"""The wire format pinned by hand-written bytes and by kafka-python's own codecs, not by our encoder.

A bug that the encoder and the decoder share survives every round trip; these tests catch it. The
bytes below were written out field by field from Kafka's schemas (schemas-4.3.0 / schemas-3.9.0).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import random
import uuid
from typing import Any

import pytest

from mockbroker.protocol.headers import RequestHeader, decode_request_header, encode_request_header
from mockbroker.protocol.messages import (
    StructCodec,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from mockbroker.protocol.primitives import Reader, Writer
from tests.protocol.strategies import combo_id, normalise, random_message


def h(text: str) -> bytes:
    """Hex with spaces and | separators, so the bytes can be laid out field by field."""
    return bytes.fromhex(text.replace("|", " "))


def pin(api_key: int, kind: str, version: int, value: dict[str, Any], wire: bytes) -> Any:
    """Our encoding of value is exactly `wire`, and `wire` decodes back to value."""
    encode = encode_request if kind == "request" else encode_response
    decode = decode_request if kind == "request" else decode_response
    assert encode(api_key, version, value).getvalue().hex(" ") == wire.hex(" ")
    decoded = decode(api_key, version, wire)
    assert decoded == normalise(api_key, kind, version, value)
    return decoded


# --- hand-checked bytes -------------------------------------------------------------------------


def test_api_versions_request_v3_uses_compact_strings_and_tagged_fields() -> None:
    wire = h("03 6b70 | 04 332e30 | 00")  # name "kp", version "3.0" (uvarint len+1), no tagged fields
    pin(18, "request", 3, {"client_software_name": "kp", "client_software_version": "3.0"}, wire)


def test_api_versions_request_v3_frame_has_header_v2_with_non_compact_client_id() -> None:
    header = RequestHeader(api_key=18, api_version=3, correlation_id=42, client_id="id")
    body = encode_request(18, 3, {"client_software_name": "kp", "client_software_version": "3.0"})
    wire = encode_request_header(header).getvalue() + body.getvalue()
    assert wire == h("0012 0003 | 0000002a | 0002 6964 | 00 | 03 6b70 04 332e30 00")
    parsed, reader = decode_request_header(wire)
    assert parsed.client_id == "id" and parsed.header_version == 2
    assert decode_request(18, 3, reader).client_software_name == "kp"


def test_api_versions_response_v3_carries_finalized_features_epoch_as_tag_1() -> None:
    value = {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
             "throttle_time_ms": 0, "finalized_features_epoch": 5}
    wire = h("0000 | 02 0012 0000 0004 00 | 00000000 | 01 01 08 0000000000000005")
    pin(18, "response", 3, value, wire)


def test_metadata_request_v0_is_an_int32_array_of_int16_strings() -> None:
    pin(3, "request", 0, {"topics": [{"name": "foo"}]}, h("00000001 | 0003 666f6f"))


def test_metadata_request_v12_topic_array_elements_carry_no_null_marker() -> None:
    # topics is nullable from v1; that makes the ARRAY nullable, not its elements
    wire = h("02 | 00000000000000000000000000000000 04 666f6f 00 | 01 | 00 | 00")
    decoded = pin(3, "request", 12, {"topics": [{"name": "foo"}], "allow_auto_topic_creation": True}, wire)
    assert decoded.topics[0].name == "foo"


def test_metadata_request_v12_null_topics_and_null_topic_name() -> None:
    pin(3, "request", 12, {"topics": None, "allow_auto_topic_creation": False}, h("00 | 00 | 00 | 00"))
    topic_id = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
    wire = h("02 | 0102030405060708090a0b0c0d0e0f10 00 00 | 01 | 00 | 00")
    pin(3, "request", 12, {"topics": [{"topic_id": topic_id, "name": None}]}, wire)


def test_produce_request_v3_records_are_int32_length_prefixed() -> None:
    value = {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
             "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"\x01\x02\x03"}]}]}
    wire = h("ffff | ffff | 00007530 | 00000001 0001 74 | 00000001 00000000 | 00000003 010203")
    pin(0, "request", 3, value, wire)


def test_produce_request_v9_records_are_compact_and_every_struct_ends_in_tagged_fields() -> None:
    value = {"transactional_id": "tx", "acks": -1, "timeout_ms": 30000,
             "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"\x01\x02\x03"}]}]}
    wire = h("03 7478 | ffff | 00007530 | 02 02 74 | 02 00000000 04 010203 00 | 00 | 00")
    pin(0, "request", 9, value, wire)


def test_produce_request_v2_comes_from_the_3_9_0_schema() -> None:
    value = {"acks": 1, "timeout_ms": 100,
             "topic_data": [{"name": "t", "partition_data": [{"index": 2, "records": None}]}]}
    pin(0, "request", 2, value, h("0001 | 00000064 | 00000001 0001 74 | 00000001 00000002 ffffffff"))


def test_fetch_response_v4_aborted_transactions_is_a_nullable_array_of_plain_structs() -> None:
    partition = {"partition_index": 0, "error_code": 0, "high_watermark": 100, "last_stable_offset": 50,
                 "aborted_transactions": [{"producer_id": 7, "first_offset": 40}], "records": b""}
    value = {"throttle_time_ms": 0, "responses": [{"topic": "t", "partitions": [partition]}]}
    head = "00000000 | 00000001 0001 74 | 00000001 00000000 0000 0000000000000064 0000000000000032"
    pin(1, "response", 4, value, h(f"{head} | 00000001 0000000000000007 0000000000000028 | 00000000"))
    partition["aborted_transactions"] = None
    pin(1, "response", 4, value, h(f"{head} | ffffffff | 00000000"))


def test_fetch_response_v12_aborted_transactions_is_compact_and_elements_end_in_tagged_fields() -> None:
    partition = {"partition_index": 0, "error_code": 0, "high_watermark": 100, "last_stable_offset": 50,
                 "log_start_offset": 0, "aborted_transactions": [{"producer_id": 7, "first_offset": 40}],
                 "preferred_read_replica": -1, "records": None}
    value = {"responses": [{"topic": "t", "partitions": [partition]}]}
    wire = h("00000000 | 0000 | 00000000 | 02 02 74 | 02 00000000 0000 0000000000000064 0000000000000032 "
             "0000000000000000 | 02 0000000000000007 0000000000000028 00 | ffffffff | 00 | 00 | 00 | 00")
    pin(1, "response", 12, value, wire)


def test_nullable_struct_is_an_int8_marker_then_the_struct() -> None:
    topic_id = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
    value = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "member_id": "m",
             "member_epoch": 3, "heartbeat_interval_ms": 5000,
             "assignment": {"topic_partitions": [{"topic_id": topic_id, "partitions": [0, 1]}]}}
    wire = h("00000000 | 0000 | 00 | 02 6d | 00000003 | 00001388 "
             "| 01 02 0102030405060708090a0b0c0d0e0f10 03 00000000 00000001 00 00 | 00")
    pin(68, "response", 0, value, wire)
    value["assignment"] = None
    pin(68, "response", 0, value, h("00000000 0000 00 02 6d 00000003 00001388 | ff | 00"))


def test_non_nullable_struct_is_inline_with_its_own_tagged_fields() -> None:
    # FetchSnapshotRequest v1: Partitions[].SnapshotId is a plain struct; ReplicaDirectoryId is tag 0
    directory = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
    partition = {"partition": 1, "current_leader_epoch": 2, "snapshot_id": {"end_offset": 3, "epoch": 4},
                 "position": 5, "replica_directory_id": directory}
    value = {"replica_id": -1, "max_bytes": 100, "topics": [{"name": "t", "partitions": [partition]}]}
    wire = h("ffffffff | 00000064 | 02 02 74 | 02 00000001 00000002 | 0000000000000003 00000004 00 "
             "| 0000000000000005 | 01 00 10 0102030405060708090a0b0c0d0e0f10 | 00 | 00")
    pin(59, "request", 1, value, wire)


def test_fetch_request_v12_cluster_id_is_tag_0_at_the_end_of_the_body() -> None:
    value = {"cluster_id": "c", "replica_id": -1, "max_wait_ms": 500, "min_bytes": 1,
             "session_epoch": -1,
             "topics": [{"topic": "t", "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                       "fetch_offset": 0, "last_fetched_epoch": -1,
                                                       "log_start_offset": -1,
                                                       "partition_max_bytes": 1048576}]}]}
    wire = h("ffffffff | 000001f4 | 00000001 | 7fffffff | 00 | 00000000 | ffffffff "
             "| 02 02 74 02 00000000 ffffffff 0000000000000000 ffffffff ffffffffffffffff 00100000 00 00 "
             "| 01 | 01 | 01 00 02 0263")
    pin(1, "request", 12, value, wire)


def test_fetch_request_v15_replica_state_is_a_tagged_struct() -> None:
    value = {"replica_state": {"replica_id": 1, "replica_epoch": 7}, "max_wait_ms": 0, "min_bytes": 0,
             "max_bytes": 0, "session_epoch": 0}
    wire = h("00000000 00000000 00000000 | 00 | 00000000 00000000 | 01 | 01 | 01 "
             "| 01 01 0d 00000001 0000000000000007 00")
    decoded = pin(1, "request", 15, value, wire)
    assert decoded.replica_state.replica_epoch == 7 and decoded.cluster_id is None


def test_tagged_field_left_at_its_default_is_not_written() -> None:
    # FetchRequest v18 partition HighWatermark (tag 1) defaults to int64 max
    part = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 0, "high_watermark": 2**63 - 1}
    base = {"topics": [{"topic_id": uuid.UUID(int=0), "partitions": [part]}]}
    plain = encode_request(1, 18, base).getvalue()
    part["high_watermark"] = 10
    tagged = encode_request(1, 18, base).getvalue()
    # the partition's tagged-field count goes 00 -> 01, then tag 1, size 8, the int64
    assert len(tagged) == len(plain) + 10
    assert h("01 01 08 000000000000000a") in tagged and h("01 01 08") not in plain
    assert decode_request(1, 18, plain).topics[0].partitions[0].high_watermark == 2**63 - 1
    assert decode_request(1, 18, tagged).topics[0].partitions[0].high_watermark == 10


def test_nullable_tagged_field_with_a_non_null_default_writes_its_null() -> None:
    # No 4.3.0 schema has one yet; Kafka's generated code writes the null explicitly, so does ours.
    spec = (("note", "string", (0, 32767), (0, 32767), (0, 32767), 0, "dflt", False, None),)
    codec = StructCodec(spec, 0, True)
    for value, wire in (({"note": None}, "01 00 01 00"), ({}, "00"), ({"note": "dflt"}, "00"),
                        ({"note": "x"}, "01 00 02 02 78")):
        w = Writer()
        codec.encode(w, value)
        assert w.getvalue() == h(wire)
        assert codec.decode(Reader(h(wire))).note == value.get("note", "dflt")


def test_compact_nullable_string_null_is_a_single_zero_byte() -> None:
    # FindCoordinator v4 response: Coordinators[].ErrorMessage is a compact nullable string
    value = {"coordinators": [{"key": "", "node_id": 0, "host": "", "port": 0, "error_code": 0,
                               "error_message": None}]}
    wire = h("00000000 | 02 | 01 | 00000000 | 01 | 00000000 | 0000 | 00 | 00 | 00")
    pin(10, "response", 4, value, wire)


def test_unknown_tagged_fields_are_kept_in_tag_order_between_known_ones() -> None:
    # ApiVersions v3 response: known tags 0..3; 5 and 9 are unknown and must survive a round trip
    value = {"finalized_features_epoch": 1, "_unknown_tags": [(9, b"\xaa"), (5, b"")]}
    wire = h("0000 | 01 | 00000000 | 03 01 08 0000000000000001 05 00 09 01 aa")
    decoded = decode_response(18, 3, wire)
    assert decoded["_unknown_tags"] == [(5, b""), (9, b"\xaa")]
    assert encode_response(18, 3, value).getvalue() == wire
    assert encode_response(18, 3, decoded).getvalue() == wire


# --- kafka-python's codecs as a second opinion ------------------------------------------------

def _has_kafka_python_3() -> bool:
    try:
        return importlib.util.find_spec("kafka.protocol.api_message") is not None
    except ImportError:
        return False


# kafka-python 3.x: JSON-schema driven classes (kafka.protocol.*) and the older hand-written ones
# (kafka.protocol.old.*); the pyproject's test extra installs it.
needs_kafka_python = pytest.mark.skipif(not _has_kafka_python_3(), reason="kafka-python 3.x not installed")


def _kafka_python_json_classes() -> dict[tuple[int, str], Any]:
    from kafka.protocol.api_message import ApiMessage

    found: dict[tuple[int, str], Any] = {}
    kafka_protocol = importlib.import_module("kafka.protocol")
    for mod_info in pkgutil.walk_packages(kafka_protocol.__path__, "kafka.protocol."):
        if ".old" in mod_info.name or "generate_stubs" in mod_info.name:
            continue
        module = importlib.import_module(mod_info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, ApiMessage) and obj is not ApiMessage
                    and getattr(obj, "_json", None)):
                cls: Any = obj
                found[(cls.API_KEY, cls.type)] = cls
    return found


def _kafka_python_hand_written_classes() -> list[Any]:
    from kafka.protocol.old.api import Request, Response

    old = importlib.import_module("kafka.protocol.old")
    found = []
    for mod_info in pkgutil.iter_modules(old.__path__, "kafka.protocol.old."):
        module = importlib.import_module(mod_info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, (Request, Response))
                    and obj.__module__ == mod_info.name and isinstance(getattr(obj, "API_VERSION", None), int)):
                found.append(obj)
    return sorted(found, key=lambda c: (c.API_KEY, c.API_VERSION, c.__name__))


# Bugs in kafka-python 3.0.12's hand-written classes, not in ours (checked against the schemas):
KAFKA_PYTHON_OLD_BUGS = {
    "DescribeAclsRequest_v2",  # v2 is flexible (flexibleVersions 2+); their class reuses the v1 schema
    "DescribeAclsResponse_v2",
    "DescribeLogDirsRequest_v0",  # Partitions is []int32; their class has a single Int32
}


def _strip_unknown_tags(value: Any) -> Any:
    """kafka-python drops unknown tagged fields, so leave them out of cross-checks."""
    if isinstance(value, dict):
        return {k: _strip_unknown_tags(v) for k, v in value.items() if k != "_unknown_tags"}
    if isinstance(value, list):
        return [_strip_unknown_tags(v) for v in value]
    return value


def _sample(api_key: int, kind: str, version: int, rng: random.Random) -> dict[str, Any]:
    value = _strip_unknown_tags(random_message(api_key, kind, version, rng))
    if api_key == 18 and kind == "response":
        value["error_code"] = 0  # kafka-python decodes an ApiVersions error response as v0 whatever the version
    return value


@needs_kafka_python
def test_kafka_python_json_classes_read_and_write_the_same_bytes_at_every_shared_version() -> None:
    rng = random.Random(7)
    classes = _kafka_python_json_classes()
    assert len(classes) >= 100  # 50-odd API keys, request and response
    checked = 0
    for (api_key, kind), cls in sorted(classes.items()):
        lo, hi = cls.valid_versions
        encode = encode_request if kind == "request" else encode_response
        decode = decode_request if kind == "request" else decode_response
        for version in range(lo, hi + 1):
            for _ in range(4):
                value = _sample(api_key, kind, version, rng)
                ours = encode(api_key, version, value).getvalue()
                theirs_obj = cls.decode(ours, version=version)
                theirs_obj._header = None  # kafka-python leaves it unset on a header-less decode
                theirs = theirs_obj.encode(version=version)
                assert theirs.hex() == ours.hex(), combo_id((api_key, kind, version))
                assert decode(api_key, version, theirs) == normalise(api_key, kind, version, value)
                checked += 1
    assert checked > 1000


@needs_kafka_python
def test_kafka_python_hand_written_classes_read_and_write_the_same_bytes() -> None:
    rng = random.Random(8)
    classes = _kafka_python_hand_written_classes()
    assert len(classes) > 200
    for cls in classes:
        if cls.__name__ in KAFKA_PYTHON_OLD_BUGS:
            continue
        kind = "request" if cls.is_request() else "response"
        encode = encode_request if kind == "request" else encode_response
        for _ in range(4):
            value = _sample(cls.API_KEY, kind, cls.API_VERSION, rng)
            ours = encode(cls.API_KEY, cls.API_VERSION, value).getvalue()
            assert cls.decode(ours).encode().hex() == ours.hex(), cls.__name__


@needs_kafka_python
def test_kafka_python_metadata_request_v12_decodes_with_ours() -> None:
    from kafka.protocol.metadata import MetadataRequest

    theirs = MetadataRequest[12](
        topics=[MetadataRequest.MetadataRequestTopic(name="foo", topic_id=None)],
        allow_auto_topic_creation=True, include_topic_authorized_operations=True,
    ).encode()
    ours = decode_request(3, 12, theirs)
    assert ours.topics[0].name == "foo" and ours.topics[0].topic_id == uuid.UUID(int=0)
    assert ours.allow_auto_topic_creation is True and ours.include_topic_authorized_operations is True
    assert encode_request(3, 12, ours).getvalue() == theirs


@needs_kafka_python
def test_kafka_python_produce_request_v9_decodes_with_ours() -> None:
    from kafka.protocol.producer import ProduceRequest

    topic = ProduceRequest.TopicProduceData
    theirs = ProduceRequest[9](
        transactional_id="tx", acks=-1, timeout_ms=30000,
        topic_data=[topic(name="t", partition_data=[topic.PartitionProduceData(index=0, records=b"\x01\x02")])],
    ).encode()
    ours = decode_request(0, 9, theirs)
    assert ours.transactional_id == "tx" and ours.acks == -1
    assert bytes(ours.topic_data[0].partition_data[0].records) == b"\x01\x02"
    assert encode_request(0, 9, ours).getvalue() == theirs


@needs_kafka_python
def test_kafka_python_fetch_request_v12_cluster_id_tag_decodes_with_ours() -> None:
    from kafka.protocol.consumer import FetchRequest

    theirs = FetchRequest[12](cluster_id="c", replica_id=-1, max_wait_ms=500, min_bytes=1, topics=[],
                              forgotten_topics_data=[], rack_id="r").encode()
    ours = decode_request(1, 12, theirs)
    assert ours.cluster_id == "c" and ours.rack_id == "r" and ours.max_bytes == 2**31 - 1
    assert encode_request(1, 12, ours).getvalue() == theirs


@needs_kafka_python
def test_our_api_versions_response_v3_decodes_with_kafka_python() -> None:
    from kafka.protocol.metadata import ApiVersionsResponse

    ours = encode_response(18, 3, {"api_keys": [{"api_key": 0, "min_version": 3, "max_version": 13}],
                                   "throttle_time_ms": 5}).getvalue()
    theirs = ApiVersionsResponse.decode(ours, version=3)
    assert theirs.throttle_time_ms == 5
    assert [(k.api_key, k.min_version, k.max_version) for k in theirs.api_keys] == [(0, 3, 13)]


@needs_kafka_python
def test_kafka_python_old_metadata_request_v0_decodes_with_ours() -> None:
    from kafka.protocol.old.metadata import MetadataRequest_v0

    theirs = MetadataRequest_v0(topics=["a", "bc"]).encode()
    assert [t.name for t in decode_request(3, 0, theirs).topics] == ["a", "bc"]
