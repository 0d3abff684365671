"""The broker's own exception: a Kafka error code raised by state/ and turned into a response field.

State objects raise `KafkaError(ErrorCode.X, "why")`; handlers catch it and put the code (and, where the
response has one, the message) into the partition/topic/top-level error field. Nothing else is
sent back to a client: a bug in a handler closes that connection and is logged (see connection.py).
"""

from __future__ import annotations

from mockbroker.protocol.errors import ErrorCode


class KafkaError(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(f"{code.name}: {message}" if message else code.name)
        self.code = code
        self.message = message


__all__ = ["KafkaError", "ErrorCode"]
