"""The compiled struct codecs (mockbroker/protocol/struct_compiler.py): fixed-size fields read and written in groups,
with the errors of the field-by-field codec (the field named) when bytes run short or a value does not pack."""

from __future__ import annotations

import pytest

from mockbroker.protocol.errors import DecodeError, EncodeError
from mockbroker.protocol.messages import StructCodec, decode_response, encode_response
from mockbroker.protocol.primitives import Reader, Writer

PARTITION = {"index": 3, "error_code": 0, "base_offset": 41, "log_append_time_ms": -1, "log_start_offset": 7}


def produce_response(**partition: object) -> dict[str, object]:
    return {"responses": [{"name": "t", "partition_responses": [{**PARTITION, **partition}]}], "throttle_time_ms": 0}


def test_consecutive_fixed_size_fields_are_read_and_written_as_one_group() -> None:
    spec = tuple((name, ftype, (0, 32767), None, None, None, 0, False, None)
                 for name, ftype in (("a", "int32"), ("b", "int16"), ("c", "bool"), ("s", "string"),
                                     ("d", "int64"), ("e", "float64")))
    codec = StructCodec(spec, 0, False)
    assert codec.source().count("if pos + ") == 2 and codec.source().count("packed = ") == 2  # a, b, c and d, e
    value = {"a": -5, "b": 300, "c": True, "s": "x", "d": 2**40, "e": 0.5}
    w = Writer()
    codec.encode(w, value)
    assert w.getvalue() == bytes.fromhex("fffffffb 012c 01 0001 78 0000010000000000 3fe0000000000000")
    assert codec.decode(Reader(w.getvalue())) == value
    wire = encode_response(0, 10, produce_response()).getvalue()
    decoded = decode_response(0, 10, wire)
    assert {k: decoded.responses[0].partition_responses[0][k] for k in PARTITION} == PARTITION


@pytest.mark.parametrize("cut", [1, 5, 13, 20])
def test_a_group_cut_short_fails_naming_the_field_that_ran_out(cut: int) -> None:
    wire = encode_response(0, 8, produce_response()).getvalue()  # v8: the last classic encoding
    start = 4 + 2 + 1 + 4  # responses count, name "t", partition_responses count
    names = ["index", "error_code", "base_offset", "log_append_time_ms", "log_start_offset"]
    sizes = [4, 2, 8, 8, 8]
    ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
    expected = names[next(i for i, end in enumerate(ends) if end > cut)]
    with pytest.raises(DecodeError, match=f"field '{expected}'"):
        decode_response(0, 8, wire[: start + cut])


@pytest.mark.parametrize(("field", "value"), [("error_code", 70000), ("base_offset", "x"), ("index", None)])
def test_a_value_that_does_not_pack_fails_naming_its_field(field: str, value: object) -> None:
    with pytest.raises(EncodeError, match=rf"field ProduceResponse\.responses\[\]\.partition_responses\[\]\.{field} "
                                          r"\(ProduceResponse v10, API key 0\)"):
        encode_response(0, 10, produce_response(**{field: value}))
