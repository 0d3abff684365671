"""What a failed SASL authentication tells the client (a leaf module: sasl.py and oauth.py raise it)."""

from __future__ import annotations


def generic_failure(mechanism: str) -> str:
    """The message Kafka sends for a SaslException (it never passes the exception's text on)."""
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


class SaslFailure(Exception):
    """Authentication failed; `message` is what the client is told (SaslAuthenticate's error_message)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
