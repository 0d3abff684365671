"""Encoding refuses a key that no version of its struct has (a misspelling, another struct's field) with an
EncodeError naming the key, the struct's path, the API and the version; a key that some other version of
the struct has (one Msg built for every version) is left off the wire as before."""

from __future__ import annotations

import uuid

import pytest

from mockbroker.protocol.errors import EncodeError
from mockbroker.protocol.messages import Msg, decode_request, decode_response, encode_request, encode_response

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3


def produce_response(**partition: object) -> Msg:
    return Msg(throttle_time_ms=0, responses=[Msg(name="t", partition_responses=[Msg(index=0, **partition)])])


@pytest.mark.parametrize("version", [0, 3, 8, 9, 12, 13])
def test_a_misspelled_field_is_refused_naming_it_its_struct_the_api_and_the_version(version: int) -> None:
    with pytest.raises(EncodeError) as caught:
        encode_response(PRODUCE, version, produce_response(eror_code=3))
    message = str(caught.value)
    assert "'eror_code'" in message
    assert "ProduceResponse.responses[].partition_responses[]" in message
    assert f"ProduceResponse v{version}, API key 0" in message


def test_every_unknown_key_of_a_struct_is_named() -> None:
    with pytest.raises(EncodeError, match=r"unknown fields 'errorcode', 'thrott' in ProduceResponse \("):
        encode_response(PRODUCE, 10, Msg(thrott=0, responses=[], errorcode=1))


@pytest.mark.parametrize(("partition", "path"), [
    # an array of structs inside an array of structs inside an array
    ({"aborted_transactions": [Msg(producer_id=1, first_ofset=0)]},
     "FetchResponse.responses[].partitions[].aborted_transactions[]"),
    # a tagged struct (v12+): its own keys are checked too
    ({"current_leader": Msg(leader_id=1, leader_epoc=2)}, "FetchResponse.responses[].partitions[].current_leader"),
])
def test_a_misspelled_field_of_a_nested_struct_is_refused(partition: dict[str, object], path: str) -> None:
    msg = Msg(throttle_time_ms=0, error_code=0, session_id=0, responses=[Msg(topic="t", partitions=[
        Msg(partition_index=0, error_code=0, high_watermark=0, records=None, **partition)])])
    with pytest.raises(EncodeError) as caught:
        encode_response(FETCH, 12, msg)
    assert f"in {path} (FetchResponse v12, API key 1)" in str(caught.value)
    assert ("'first_ofset'" if "aborted_transactions" in partition else "'leader_epoc'") in str(caught.value)


def test_nothing_is_written_for_a_refused_message() -> None:
    from mockbroker.protocol.primitives import Writer

    w = Writer()
    w.int32(7)
    with pytest.raises(EncodeError):
        encode_response(PRODUCE, 10, Msg(throttle_tme_ms=0, responses=[]), w)
    assert w.getvalue() == (7).to_bytes(4, "big")


def test_a_field_the_version_does_not_carry_still_encodes_as_if_absent() -> None:
    # throttle_time_ms is ProduceResponse v1+, log_start_offset v5+, topic_id (of responses[]) v13+.
    full = Msg(throttle_time_ms=9, responses=[Msg(name="t", topic_id=uuid.uuid4(), partition_responses=[
        Msg(index=2, error_code=3, base_offset=4, log_append_time_ms=-1, log_start_offset=5)])])
    bare = Msg(responses=[Msg(name="t", partition_responses=[Msg(index=2, error_code=3, base_offset=4)])])
    assert encode_response(PRODUCE, 0, full).getvalue() == encode_response(PRODUCE, 0, bare).getvalue()
    decoded = decode_response(PRODUCE, 0, encode_response(PRODUCE, 0, full).getvalue())
    assert decoded.responses[0].partition_responses[0].error_code == 3
    assert decoded.throttle_time_ms == 0
    v12 = encode_response(PRODUCE, 12, full).getvalue()
    assert decode_response(PRODUCE, 12, v12).responses[0].name == "t"


def test_a_field_of_an_older_segment_only_is_accepted_at_the_newest_version() -> None:
    # old_style_offsets is ListOffsetsResponse v0 only (a segment of its own): a handler may set it for all.
    partition = Msg(partition_index=0, error_code=0, old_style_offsets=[5], timestamp=-1, offset=5, leader_epoch=0)
    msg = Msg(throttle_time_ms=0, topics=[Msg(name="t", partitions=[partition])])
    assert decode_response(LIST_OFFSETS, 0, encode_response(LIST_OFFSETS, 0, msg).getvalue()) \
        .topics[0].partitions[0].old_style_offsets == [5]
    assert decode_response(LIST_OFFSETS, 8, encode_response(LIST_OFFSETS, 8, msg).getvalue()) \
        .topics[0].partitions[0].offset == 5


def test_a_known_tagged_field_is_accepted_and_written() -> None:
    leader = Msg(leader_id=4, leader_epoch=7)
    msg = produce_response(error_code=6, current_leader=leader)
    decoded = decode_response(PRODUCE, 10, encode_response(PRODUCE, 10, msg).getvalue())
    assert decoded.responses[0].partition_responses[0].current_leader == leader


def test_a_decoded_message_re_encodes_with_its_unknown_tags() -> None:
    body = encode_request(METADATA, 12, Msg(topics=None, allow_auto_topic_creation=True,
                                            include_topic_authorized_operations=False,
                                            _unknown_tags=[(99, b"\x01\x02")])).getvalue()
    decoded = decode_request(METADATA, 12, body)
    assert decoded._unknown_tags == [(99, b"\x01\x02")]
    assert encode_request(METADATA, 12, decoded).getvalue() == body


def test_requests_are_checked_too() -> None:
    with pytest.raises(EncodeError, match=r"'topic_name' in MetadataRequest.topics\[\] \(MetadataRequest v12"):
        encode_request(METADATA, 12, Msg(topics=[Msg(topic_name="t")]))


def test_a_field_of_another_struct_of_the_same_message_is_refused() -> None:
    # topic_id is a field of OffsetFetchResponse.groups[].topics[] (v10+), never of the v0-7 topics[].
    msg = Msg(throttle_time_ms=0, error_code=0, topics=[Msg(name="t", topic_id=uuid.uuid4(), partitions=[])])
    with pytest.raises(EncodeError, match=r"'topic_id' in OffsetFetchResponse.topics\[\] \(OffsetFetchResponse v7"):
        encode_response(9, 7, msg)
    topic_id = uuid.uuid4()
    group = Msg(group_id="g", error_code=0, topics=[Msg(name="t", topic_id=topic_id, partitions=[])])
    decoded = decode_response(9, 10, encode_response(9, 10, Msg(groups=[group])).getvalue())
    assert decoded.groups[0].topics[0].topic_id == topic_id
