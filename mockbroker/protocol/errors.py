"""Kafka's error codes (generated from errors-4.3.0.csv) and the protocol package's exceptions.

Local vs remote errors, decided here: a DecodeError means the peer sent bytes we cannot parse (the
broker answers with an error code where the message framing survives, or closes the connection);
an EncodeError means our own code built a message that does not fit the schema (a bug on our side).
"""

from __future__ import annotations

from ._generated.error_codes import EXCEPTION_NAMES, RETRIABLE, ErrorCode

__all__ = [
    "ErrorCode",
    "RETRIABLE",
    "EXCEPTION_NAMES",
    "ProtocolError",
    "DecodeError",
    "EncodeError",
    "FrameTooLarge",
    "UnsupportedVersion",
    "is_retriable",
]


class ProtocolError(Exception):
    """Base class of every exception the protocol package raises on bad input."""


class DecodeError(ProtocolError):
    """Malformed bytes: the message says which field and at which offset."""


class EncodeError(ProtocolError):
    """A value that cannot be encoded for the requested version."""


class CompressionError(DecodeError):
    """A compressed payload its codec cannot read: malformed, truncated, not that codec (Kafka's broker
    answers UNKNOWN_SERVER_ERROR: its KafkaException "Failed to decompress record stream")."""


class LimitExceeded(DecodeError):
    """Well-formed input past a bound the reader keeps to bound its work: more records than allowed in
    one batch, or a batch that decompresses to more bytes than allowed (the broker answers
    MESSAGE_TOO_LARGE)."""


class FrameTooLarge(DecodeError):
    """A frame's length prefix is above the configured maximum (checked before allocating)."""


class UnsupportedVersion(ProtocolError):
    """An API key or version the codec has no schema for."""


def is_retriable(code: int) -> bool:
    return code in RETRIABLE
