"""ErrorCode and is_retriable match Kafka 4.3.0's error table; the exception hierarchy."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from mockbroker.protocol import errors
from mockbroker.protocol.errors import (
    EXCEPTION_NAMES,
    DecodeError,
    EncodeError,
    ErrorCode,
    FrameTooLarge,
    ProtocolError,
    UnsupportedVersion,
    is_retriable,
)


def rows(shared: Path) -> list[dict[str, str]]:
    with open(shared / "errors-4.3.0.csv") as fh:
        return list(csv.DictReader(fh))


def test_error_code_has_every_code_and_name_of_kafka_4_3_0(shared: Path) -> None:
    table = rows(shared)
    assert {(r["name"], int(r["code"])) for r in table} == {(e.name, e.value) for e in ErrorCode}
    assert len(ErrorCode) == len(table)


def test_is_retriable_matches_the_retriable_column(shared: Path) -> None:
    for r in rows(shared):
        assert is_retriable(int(r["code"])) is (r["retriable"] == "true"), r["name"]
        assert is_retriable(ErrorCode[r["name"]]) is (r["retriable"] == "true"), r["name"]


def test_exception_names_match_the_exception_column(shared: Path) -> None:
    for r in rows(shared):
        assert EXCEPTION_NAMES.get(ErrorCode[r["name"]], "") == r["exception"], r["name"]


@pytest.mark.parametrize("name, code, retriable", [
    ("NONE", 0, False), ("UNKNOWN_SERVER_ERROR", -1, False), ("OFFSET_OUT_OF_RANGE", 1, False),
    ("CORRUPT_MESSAGE", 2, True), ("UNKNOWN_TOPIC_OR_PARTITION", 3, True),
    ("NOT_LEADER_OR_FOLLOWER", 6, True), ("UNSUPPORTED_VERSION", 35, False),
    ("OUT_OF_ORDER_SEQUENCE_NUMBER", 45, False), ("DUPLICATE_SEQUENCE_NUMBER", 46, False),
    ("INVALID_PRODUCER_EPOCH", 47, False), ("UNKNOWN_TOPIC_ID", 100, True),
])
def test_well_known_codes(name: str, code: int, retriable: bool) -> None:
    assert ErrorCode[name] == code
    assert is_retriable(code) is retriable


def test_unknown_code_is_not_retriable() -> None:
    assert is_retriable(32767) is False


def test_every_protocol_exception_is_a_protocol_error() -> None:
    for exc in (DecodeError, EncodeError, FrameTooLarge, UnsupportedVersion):
        assert issubclass(exc, ProtocolError)
    assert issubclass(FrameTooLarge, DecodeError)
    assert not issubclass(ProtocolError, (ValueError, LookupError))
    assert set(errors.__all__) >= {"ErrorCode", "ProtocolError", "DecodeError", "is_retriable"}
