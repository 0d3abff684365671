"""Fault injection: make the next N requests of an API key fail, go unanswered, or be late.

Rules are checked in the order they were added; the first rule that matches a request (API key, and
optionally topic/partition) is consumed for it. Actions:
- error(code): the broker answers with that error code instead of handling the request (nothing is
  applied; per-partition APIs get the code on every partition the request names);
- drop_before: the connection is closed before the request is applied (the client sees a network
  error; nothing happened);
- drop_after: the request is applied, then the connection is closed without an answer (the client
  retries something that already happened: this is how a test proves de-duplication);
- delay(seconds): the answer is held back (the request is applied at once).

Every request is also recorded (api key, version, client id, broker-clock time) in
`MockBroker.requests`.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg

if TYPE_CHECKING:
    from mockbroker.context import RequestContext


@dataclass
class ReceivedRequest:
    api_key: int
    api_version: int
    client_id: str | None
    correlation_id: int
    time_ms: int
    connection_id: int
    principal: str = "User:ANONYMOUS"  # who sent it (Kafka's principal: User:alice, User:CN=...)
    listener: str = "PLAINTEXT"  # the name of the listener it came through


TopicNames = Callable[[uuid.UUID], "str | None"]


def _request_topics(api_key: int, req: Msg, name_of: TopicNames) -> list[tuple[str | None, list[int]]]:
    """(topic name, partitions) pairs a request names, for topic/partition filters. Requests that name
    topics by id (Produce v13+, Fetch v13+) are resolved to names with name_of."""
    out: list[tuple[str | None, list[int]]] = []
    if api_key == 0:  # Produce
        for t in req.topic_data:
            out.append((t.name or name_of(t.topic_id), [p.index for p in t.partition_data]))
    elif api_key == 1:  # Fetch
        for t in req.topics:
            out.append((t.topic or name_of(t.topic_id), [p.partition for p in t.partitions]))
    elif api_key == 2:  # ListOffsets
        for t in req.topics:
            out.append((t.name, [p.partition_index for p in t.partitions]))
    return out


@dataclass
class FaultRule:
    api_key: int
    action: str  # "error", "drop_before", "drop_after", "delay"
    count: int = 1
    error_code: int = 0
    delay_s: float = 0.0
    topic: str | None = None
    partition: int | None = None

    def matches(self, header: RequestHeader, req: Msg, name_of: TopicNames) -> bool:
        if header.api_key != self.api_key or self.count <= 0:
            return False
        if self.topic is None:
            return True
        for name, parts in _request_topics(header.api_key, req, name_of):
            if name == self.topic and (self.partition is None or self.partition in parts):
                return True
        return False

    def apply(
        self,
        close: Callable[[str], None],
        ctx: RequestContext,
        header: RequestHeader,
        req: Msg,
        fn: Callable[..., Any],
    ) -> Any:
        """Handle the request as the rule says; `close` closes its connection (with a reason to log)."""
        if self.action == "error":
            from mockbroker.error_responses import error_response

            return error_response(header.api_key, header.api_version, req, ErrorCode(self.error_code))
        if self.action == "drop_before":
            close(f"fault injected: drop before {header.api_key}")
            return None
        result = fn(ctx, header, req)
        if self.action == "drop_after":

            async def applied_then_drop() -> None:
                if inspect.isawaitable(result):
                    await result
                close(f"fault injected: drop after {header.api_key}")
                return None

            return applied_then_drop()
        if self.action == "delay":

            async def delayed() -> Any:
                response = await result if inspect.isawaitable(result) else result
                await asyncio.sleep(self.delay_s)
                return response

            return delayed()
        raise ValueError(f"unknown fault action {self.action}")


class Faults:
    def __init__(self) -> None:
        self.rules: list[FaultRule] = []

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def add(self, rule: FaultRule) -> FaultRule:
        self.rules.append(rule)
        return rule

    def take(self, header: RequestHeader, req: Msg, name_of: TopicNames) -> FaultRule | None:
        for rule in self.rules:
            if rule.matches(header, req, name_of):
                rule.count -= 1
                if rule.count <= 0:
                    self.rules.remove(rule)
                return rule
        return None

    def clear(self) -> None:
        self.rules.clear()
