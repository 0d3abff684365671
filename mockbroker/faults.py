"""Fault injection: make the next N requests of an API key fail, go unanswered, or be late.

Rules are checked in the order they were added; the first rule that matches a request (API key, and
optionally topic/partition and the node it was sent to) is consumed for it. Actions:
- error(code): the broker answers with that error code instead of handling the request (nothing is
  applied): the API's error answer, which the dispatch registry gives (each handler module registers
  its own; per-partition APIs get the code on every partition the request names);
- drop_before: the connection is closed before the request is applied (the client sees a network
  error; nothing happened);
- drop_after: the request is applied, then the connection is closed without an answer (the client
  retries something that already happened: this is how a test proves de-duplication);
- delay(seconds): the answer is held back (the request is applied at once);
- hook: a test's function answers (MockBroker.intercept; mockbroker/intercept.py says what it may do);
- respond: a canned answer given as JSON (the control API's POST /faults {response}; protocol/json_msgs.py
  turns it into the API's response struct, encoded at the request's version).
A rule's count None keeps it until it is removed (a hook's default). Topic/partition filters look at
Produce, Fetch, ListOffsets, ShareFetch (the partitions it names and those of its share session) and
ShareAcknowledge; a rule with a topic never matches another API.

A rule with a probability below 1 fires on each matching request with that chance, drawn from the broker's
seeded source (`cluster.random`, state/seeding.py), so the same seed and the same requests fire it on the
same requests; a matching request it does not fire on goes on to the next rule, and only firings count
against `count`. Rules without a probability draw nothing.

Every request is also recorded (api key, version, client id, broker-clock time) in
`MockBroker.requests` (a RequestRecord): bounded in entries (the oldest fall out) and in what each entry
holds (a client id is kept to its first MAX_RECORDED_CLIENT_ID characters, and equal ids share one
string), so a client sending huge or ever-new client ids cannot grow the broker's memory without bound.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import random
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker import intercept
from mockbroker.dispatch import carries_error, error_response, lookup
from mockbroker.metrics import RequestCounters
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.json_msgs import response_from_json
from mockbroker.protocol.messages import Msg

if TYPE_CHECKING:
    from mockbroker.context import RequestContext


@dataclass(slots=True)
class ReceivedRequest:
    api_key: int
    api_version: int
    client_id: str | None
    correlation_id: int
    time_ms: int
    connection_id: int
    principal: str = "User:ANONYMOUS"  # who sent it (Kafka's principal: User:alice, User:CN=...)
    listener: str = "PLAINTEXT"  # the name of the listener it came through
    node_id: int = 1  # the node that served it


# Client ids longer than this are recorded cut to it (Kafka allows 32,767 bytes; none of the clients'
# defaults comes near 200 characters).
MAX_RECORDED_CLIENT_ID = 200
# The most requests the record keeps; older ones fall out first.
MAX_RECORDED_REQUESTS = 100_000
# How many distinct client ids are shared (interned); past it the table starts over.
_MAX_INTERNED_CLIENT_IDS = 4096


class RequestRecord:
    """The requests a broker received, most recent last, bounded in count and in bytes per entry."""

    # What a snapshot (mockbroker/snapshots.py) copies one level only: the entries never change once recorded.
    SNAPSHOT_SHALLOW = frozenset({"_entries"})

    def __init__(self, max_entries: int = MAX_RECORDED_REQUESTS) -> None:
        self._entries: deque[ReceivedRequest] = deque(maxlen=max_entries)
        self._client_ids: dict[str, str] = {}
        self.total = 0  # every request ever added (older ones fall out of _entries, the count goes on)
        self.metrics = RequestCounters()  # by API key, latency, bytes out (metrics.py); clear() leaves them

    def _client_id(self, client_id: str | None) -> str | None:
        if client_id is None:
            return None
        client_id = client_id[:MAX_RECORDED_CLIENT_ID]
        shared = self._client_ids.get(client_id)
        if shared is None:
            if len(self._client_ids) >= _MAX_INTERNED_CLIENT_IDS:
                self._client_ids.clear()
            shared = self._client_ids[client_id] = client_id
        return shared

    def add(self, api_key: int, api_version: int, client_id: str | None, correlation_id: int, time_ms: int,
            connection_id: int, principal: str = "User:ANONYMOUS", listener: str = "PLAINTEXT",
            node_id: int = 1) -> None:
        # The usual case: a client id seen before, already interned.
        shared = self._client_ids.get(client_id) if client_id is not None else None
        if shared is None:
            shared = self._client_id(client_id)
        self._entries.append(ReceivedRequest(api_key, api_version, shared, correlation_id,
                                             time_ms, connection_id, principal, listener, node_id))
        self.total += 1
        received = self.metrics.received  # RequestsPerSec (metrics.py), inline: every request comes here
        received[api_key] = received.get(api_key, 0) + 1

    def since(self, total: int, at_most: int) -> list[ReceivedRequest]:
        """The requests added after the record's count was `total` (the newest `at_most` of them, and only
        those still kept)."""
        new = min(self.total - total, len(self._entries), at_most)
        return list(itertools.islice(self._entries, len(self._entries) - new, None)) if new > 0 else []

    def clear(self) -> None:
        self._entries.clear()
        self._client_ids.clear()

    def __iter__(self) -> Iterator[ReceivedRequest]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


TopicNames = Callable[[uuid.UUID], "str | None"]
# The (topic, partition) pairs of the share session a ShareFetch belongs to on the node it came to: an
# incremental ShareFetch names only what changed, yet fetches every partition of its session.
SessionPartitions = Callable[[Msg], "list[tuple[str, int]]"]


def _request_topics(api_key: int, req: Msg, name_of: TopicNames,
                    session_of: SessionPartitions | None = None) -> list[tuple[str | None, list[int]]]:
    """(topic name, partitions) pairs a request names, for topic/partition filters (Produce, Fetch,
    ListOffsets, ShareFetch, ShareAcknowledge). Requests that name topics by id (Produce v13+, Fetch v13+,
    ShareFetch, ShareAcknowledge) are resolved to names with name_of; a ShareFetch also names the partitions
    of its share session (session_of)."""
    out: list[tuple[str | None, list[int]]] = []
    if api_key == ApiKey.PRODUCE:
        for t in req.topic_data:
            out.append((t.name or name_of(t.topic_id), [p.index for p in t.partition_data]))
    elif api_key == ApiKey.FETCH:
        for t in req.topics:
            out.append((t.topic or name_of(t.topic_id), [p.partition for p in t.partitions]))
    elif api_key == ApiKey.LIST_OFFSETS:
        for t in req.topics:
            out.append((t.name, [p.partition_index for p in t.partitions]))
    elif api_key in (ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE):  # topics by id; ShareFetch's forgotten ones too
        for t in [*req.topics, *(req.get("forgotten_topics_data") or [])]:
            parts = t.partitions
            out.append((name_of(t.topic_id), [p if isinstance(p, int) else p.partition_index for p in parts]))
        if api_key == ApiKey.SHARE_FETCH and session_of is not None:
            out.extend((topic, [index]) for topic, index in session_of(req))
    return out


@dataclass
class FaultRule:
    api_key: int
    action: str  # "error", "drop_before", "drop_after", "delay", "hook", "respond"
    count: int | None = 1  # None: until removed
    error_code: int = 0
    delay_s: float = 0.0
    topic: str | None = None
    partition: int | None = None
    node: int | None = None  # only requests sent to this node (None: any)
    probability: float = 1.0  # the chance it fires on a matching request (drawn from the broker's seed)
    hook: Callable[..., Any] | None = None  # action "hook": fn(request, context) (mockbroker/intercept.py)
    response: dict[str, Any] | None = None  # action "respond": the answer's fields as JSON

    def matches(self, header: RequestHeader, req: Msg, name_of: TopicNames, node_id: int | None = None,
                session_of: SessionPartitions | None = None) -> bool:
        if header.api_key != self.api_key or (self.count is not None and self.count <= 0):
            return False
        if self.node is not None and node_id != self.node:
            return False
        if self.topic is None:
            return True
        for name, parts in _request_topics(header.api_key, req, name_of, session_of):
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
        if self.action == "hook":
            assert self.hook is not None
            return intercept.run(self.hook, close, ctx, header, req, fn)
        if self.action == "respond":
            assert self.response is not None
            return response_from_json(header.api_key, self.response)
        if self.action == "error":
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
    def __init__(self, rng: random.Random | None = None) -> None:
        self.rules: list[FaultRule] = []
        self.random = rng or random.Random()  # the broker's seeded source (cluster.random)

    @property
    def active(self) -> bool:
        return bool(self.rules)

    def add(self, rule: FaultRule) -> FaultRule:
        self.rules.append(rule)
        return rule

    def take(self, header: RequestHeader, req: Msg, name_of: TopicNames, node_id: int | None = None,
             session_of: SessionPartitions | None = None) -> FaultRule | None:
        for rule in self.rules:
            if rule.matches(header, req, name_of, node_id, session_of):
                if rule.probability < 1.0 and self.random.random() >= rule.probability:
                    continue  # not this time: the request goes on to the next rule
                if rule.count is not None:
                    rule.count -= 1
                    if rule.count <= 0:
                        self.rules.remove(rule)
                return rule
        return None

    def remove(self, rule: FaultRule) -> None:
        """Take one rule away (a hook's remove()); gone already is fine."""
        self.rules[:] = [r for r in self.rules if r is not rule]

    def clear(self) -> None:
        """Remove every rule but the hooks (MockBroker.clear_faults)."""
        self.rules[:] = [r for r in self.rules if r.action == "hook"]

    def clear_hooks(self) -> None:
        """Remove every hook (MockBroker.clear_intercepts)."""
        self.rules[:] = [r for r in self.rules if r.action != "hook"]

    def add_hook(self, api_key: int, fn: Callable[..., Any], node: int | None = None, count: int | None = None,
                 on_loop: Callable[..., Any] | None = None) -> intercept.Hook:
        """Add a request hook (MockBroker.intercept) and its handle; on_loop(fn, *args) runs its removal on the
        broker's loop (the thread hop)."""
        if not callable(fn):
            raise TypeError("a hook is a function fn(request, context)")
        if count is not None and count < 1:
            raise ValueError("count is 1 or more (None: until removed)")
        rule = self.add(FaultRule(int(api_key), "hook", count, node=node, hook=fn))
        return intercept.Hook(rule, self.remove if on_loop is None else lambda r: on_loop(self.remove, r))


def make_rule(api_key: int, *, error: int | ErrorCode | None = None, drop: str | None = None,
              delay: float | None = None, count: int = 1, topic: str | None = None, partition: int | None = None,
              node: int | None = None, probability: float = 1.0) -> FaultRule:
    """The rule MockBroker.inject adds. Exactly one of: error=<code> (answered with that error, not
    applied), drop="before" (connection closed, not applied), drop="after" (applied, then the connection is
    closed unanswered), delay=<seconds> (applied, answer held back). probability (0 < p <= 1): the chance
    it fires on each matching request, from the broker's seed (the module's docstring)."""
    chosen = [x is not None for x in (error, drop, delay)]
    if sum(chosen) != 1:
        raise ValueError("give exactly one of error=, drop=, delay=")
    if not 0.0 < probability <= 1.0:
        raise ValueError(f"probability must be above 0 and at most 1, got {probability!r}")
    rule = _make_rule(api_key, error, drop, delay, count, topic, partition, node)
    rule.probability = float(probability)
    return rule


def _make_rule(api_key: int, error: int | ErrorCode | None, drop: str | None, delay: float | None, count: int,
               topic: str | None, partition: int | None, node: int | None) -> FaultRule:
    if error is not None:
        spec = lookup(api_key)
        if spec is not None and not all(carries_error(api_key, v)
                                        for v in range(spec.min_version, spec.max_version + 1)):
            raise ValueError(f"{spec.name} responses have no field to carry an injected error code "
                             "(use drop= or delay=)")
        return FaultRule(api_key, "error", count, error_code=int(error), topic=topic, partition=partition, node=node)
    if drop is not None:
        if drop not in ("before", "after"):
            raise ValueError('drop must be "before" or "after"')
        return FaultRule(api_key, f"drop_{drop}", count, topic=topic, partition=partition, node=node)
    return FaultRule(api_key, "delay", count, delay_s=float(delay or 0), topic=topic, partition=partition, node=node)
