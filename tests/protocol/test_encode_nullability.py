"""None in a field that is not nullable at the version encoded is refused (EncodeError naming the message, the
field and the version), as Kafka's generated serializers refuse it, for every kind of field: records, bytes,
string, array, struct and fixed-size; a nullable field takes None (null on the wire), and a missing key still
takes the field's default (a missing non-nullable struct: all its defaults)."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.protocol.errors import EncodeError
from mockbroker.protocol.messages import decode_response, encode_request, encode_response

SHARE_FETCH, METADATA, FETCH, SASL_AUTHENTICATE, JOIN_GROUP = 78, 3, 1, 36, 11


def share_fetch_response(**partition: Any) -> dict[str, Any]:
    return {"responses": [{"topic_id": None, "partitions": [{"partition_index": 0, **partition}]}]}


@pytest.mark.parametrize(("api_key", "version", "body", "field"), [
    # records: ShareFetchResponse v1 Records is not nullable (Kafka's broker sends empty records)
    (SHARE_FETCH, 1, share_fetch_response(records=None), "ShareFetchResponse.responses[].partitions[].records"),
    # array, flexible
    (SHARE_FETCH, 1, {"responses": None}, "ShareFetchResponse.responses"),
    (SHARE_FETCH, 1, share_fetch_response(acquired_records=None),
     "ShareFetchResponse.responses[].partitions[].acquired_records"),
    # struct (not tagged)
    (SHARE_FETCH, 1, share_fetch_response(current_leader=None),
     "ShareFetchResponse.responses[].partitions[].current_leader"),
    # string, classic and flexible
    (METADATA, 1, {"topics": [{"name": None}]}, "MetadataResponse.topics[].name"),
    (METADATA, 9, {"brokers": [{"node_id": 0, "host": None, "port": 9092}]}, "MetadataResponse.brokers[].host"),
    # array, classic
    (METADATA, 1, {"brokers": None}, "MetadataResponse.brokers"),
    # bytes, classic and flexible
    (SASL_AUTHENTICATE, 0, {"auth_bytes": None}, "SaslAuthenticateResponse.auth_bytes"),
    (SASL_AUTHENTICATE, 2, {"auth_bytes": None}, "SaslAuthenticateResponse.auth_bytes"),
    # fixed-size, alone and in a group
    (METADATA, 1, {"brokers": [{"node_id": None, "host": "h", "port": 1}]}, "MetadataResponse.brokers[].node_id"),
    (FETCH, 4, {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "high_watermark": None}]}]},
     "FetchResponse.responses[].partitions[].high_watermark"),
])
def test_none_in_a_field_not_nullable_at_the_version_is_refused_naming_it(
        api_key: int, version: int, body: dict[str, Any], field: str) -> None:
    with pytest.raises(EncodeError) as caught:
        encode_response(api_key, version, body)
    message = str(caught.value)
    assert f"field {field} " in message and f"v{version}, API key {api_key})" in message
    assert "not nullable" in message


def test_a_request_field_is_checked_too() -> None:
    body = {"group_id": "g", "session_timeout_ms": 1, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": None}]}
    with pytest.raises(EncodeError, match=r"field JoinGroupRequest\.protocols\[\]\.metadata \(JoinGroupRequest v5"):
        encode_request(JOIN_GROUP, 5, body)


def test_the_same_field_takes_none_where_its_version_makes_it_nullable() -> None:
    # Metadata topic names are nullable from v12; Fetch records and aborted transactions are nullable.
    assert decode_response(METADATA, 12, encode_response(METADATA, 12, {"topics": [{"name": None}]}).getvalue()
                           ).topics[0].name is None
    fetch = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "records": None,
                                                          "aborted_transactions": None}]}]}
    partition = decode_response(FETCH, 4, encode_response(FETCH, 4, fetch).getvalue()).responses[0].partitions[0]
    assert partition.records is None and partition.aborted_transactions is None


def test_a_missing_key_still_takes_the_default() -> None:
    # Missing records (b'') and a missing non-nullable struct (all defaults) are written as if given.
    spelled = share_fetch_response(records=b"", current_leader={"leader_id": 0, "leader_epoch": 0},
                                   acquired_records=[])
    assert encode_response(SHARE_FETCH, 1, share_fetch_response()).getvalue() == \
        encode_response(SHARE_FETCH, 1, spelled).getvalue()


def test_none_in_a_tagged_field_still_stands_for_its_default() -> None:
    # A tagged field at its default is left off the wire; None is taken as the default there (not refused).
    with_none = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "current_leader": None}]}]}
    without = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0}]}]}
    assert encode_response(FETCH, 12, with_none).getvalue() == encode_response(FETCH, 12, without).getvalue()
