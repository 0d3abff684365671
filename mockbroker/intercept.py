"""Request hooks: a test's own function answers, delays, drops or rewrites the requests of one API.

    from mockbroker import intercept

    def fake_metadata(request, context):
        answer = context.call_broker()              # the broker's own answer (a Msg), to rewrite
        answer.topics.append({"name": "ghost", "partitions": []})
        return answer

    hook = broker.intercept(ApiKey.METADATA, fake_metadata, node=None, count=None)
    ...
    hook.remove()                                   # or broker.clear_intercepts()

A hook is a fault rule with action "hook" (faults.py): it goes through the one seam where the connection
takes fault rules (Faults.take, then FaultRule.apply), in the order rules were added, filtered by API key
and node, consumed `count` times (None: until removed). `fn(request, context)` is sync or async and
returns (or resolves to):
- None or `intercept.passthrough`: the broker handles the request (if the hook already called the broker,
  that answer goes out, so the request is never applied twice);
- a response: a Msg of the API's response struct or a plain dict of its fields (fields left out take the
  schema's defaults; it is encoded at the request's version, so fields that version lacks are not sent).
  A plain dict is read as the control API's canned answers are (protocol/json_msgs.py: a UUID may be its
  text, an error code its name); a value that does not fit its field is a bug of the hook (below);
- an error: `intercept.error(code)` or an ErrorCode: the API's error answer (dispatch.error_response);
- `intercept.delay(seconds, then=None)`: the answer held back `seconds` of real time, then `then` (any of
  these; None: the broker's answer);
- `intercept.drop(after=False)`: the connection closed unanswered; before the request is applied, or
  (after=True) once the broker has applied it.
`context.call_broker()` (sync) or `await context.forward()` (async hooks; also for answers that wait, as a
long-poll Fetch) runs the broker's handler once and gives its answer, which the hook may change and return.
A hook that raises (or returns something else) is a bug of the test: it is logged with its traceback and
the client gets UNKNOWN_SERVER_ERROR (the connection is closed for the few APIs with no error field); the
broker keeps serving.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.dispatch import CloseConnection, carries_error, error_response
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.json_msgs import response_from_json
from mockbroker.protocol.messages import Msg

if TYPE_CHECKING:
    from mockbroker.context import RequestContext

log = logging.getLogger("mockbroker.intercept")


class _Pass:
    def __repr__(self) -> str:
        return "intercept.passthrough"


passthrough = _Pass()  # returned by a hook: let the broker answer


@dataclass(frozen=True)
class Error:
    code: int


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Any = None


@dataclass(frozen=True)
class Drop:
    after: bool = False


def error(code: int | ErrorCode) -> Error:
    """Answer with the API's error answer carrying `code`."""
    return Error(int(code))


def delay(seconds: float, then: Any = None) -> Delay:
    """Hold the answer back `seconds` (real time), then answer with `then` (None: the broker's answer)."""
    if seconds < 0:
        raise ValueError("a delay is 0 seconds or more")
    return Delay(float(seconds), then)


def drop(after: bool = False) -> Drop:
    """Close the connection without an answer: before the request is applied, or after (after=True)."""
    return Drop(after)


class HeaderFields:
    """The request header's fields a hook reads, as properties of its context (`header` set by the context)."""

    header: RequestHeader

    @property
    def api_key(self) -> int:
        return self.header.api_key

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


class InterceptContext(HeaderFields):
    """What a hook gets besides the request: where it came from, and the broker's own answer on demand."""

    def __init__(self, ctx: RequestContext, header: RequestHeader, request: Msg,
                 handler: Callable[..., Any]) -> None:
        self.ctx = ctx
        self.header = header
        self.request = request
        self._handler = handler
        self._called = False
        self._result: Any = None  # the handler's answer, or its awaitable until forward() awaited it

    @property
    def node_id(self) -> int:
        """The node the request was sent to."""
        return self.ctx.node_id

    @property
    def called_broker(self) -> bool:
        return self._called

    def _run(self) -> Any:
        if not self._called:
            self._called = True
            self._result = self._handler(self.ctx, self.header, self.request)
        return self._result

    def call_broker(self) -> Any:
        """The broker's answer to the request (applied once, however often asked): a Msg, or None for a
        request with no answer (Produce acks=0). An answer that must wait (a long-poll Fetch, a Produce
        waiting for replicas) needs `await context.forward()` from an async hook: RuntimeError here."""
        result = self._run()
        if _is_awaitable(result):
            raise RuntimeError(f"the broker's answer to API key {self.api_key} waits: use an async hook and "
                               "`await context.forward()`")
        return result

    async def forward(self) -> Any:
        """The broker's answer to the request, awaited if it waits (applied once, however often asked)."""
        result = self._run()
        if _is_awaitable(result):
            result = self._result = await result
        return result

    def broker_answer(self) -> Any:
        """The broker's answer as the connection takes it (awaitable or not): the handler's result."""
        return self._run()


def _is_awaitable(value: Any) -> bool:
    return value is not None and not isinstance(value, (dict, CloseConnection)) and inspect.isawaitable(value)


def run(hook: Callable[[Msg, InterceptContext], Any], close: Callable[[str], None], ctx: RequestContext,
        header: RequestHeader, request: Msg, handler: Callable[..., Any]) -> Any:
    """Call `hook` for a request and turn what it returns into the handler result the connection takes."""
    context = InterceptContext(ctx, header, request, handler)
    try:
        out = hook(request, context)
        if _is_awaitable(out):
            return _finish(out, context, close)
        return _resolve(out, context, close)
    except Exception:
        return _failed(context, close)


async def _finish(out: Any, context: InterceptContext, close: Callable[[str], None]) -> Any:
    try:
        answer = _resolve(await out, context, close)
        return await answer if _is_awaitable(answer) else answer
    except Exception:
        return _failed(context, close)


def _resolve(out: Any, context: InterceptContext, close: Callable[[str], None]) -> Any:
    header = context.header
    if out is None or out is passthrough:
        return context.broker_answer()
    if type(out) is dict:  # a plain dict is read as a canned JSON answer is (UUIDs as text, error names)
        return response_from_json(header.api_key, out)
    if isinstance(out, dict | CloseConnection):  # a response (a Msg), or the handlers' close
        return out
    if isinstance(out, ErrorCode | Error):
        code = ErrorCode(out.code if isinstance(out, Error) else out)
        if not carries_error(header.api_key, header.api_version):
            return CloseConnection(f"intercepted: {code.name}, which API key {header.api_key} cannot carry")
        return error_response(header.api_key, header.api_version, context.request, code)
    if isinstance(out, Drop):
        if not out.after:
            close(f"intercepted: drop before API key {header.api_key}")
            return None
        answer = context.broker_answer()

        async def applied_then_drop() -> None:
            if _is_awaitable(answer):
                await answer
            close(f"intercepted: drop after API key {header.api_key}")

        return applied_then_drop()
    if isinstance(out, Delay):
        async def delayed() -> Any:
            await asyncio.sleep(out.seconds)
            answer = _resolve(out.then, context, close)
            return await answer if _is_awaitable(answer) else answer

        return delayed()
    raise TypeError(f"a hook returned {type(out).__name__}: expected a response (Msg or dict), None, "
                    "intercept.passthrough, an ErrorCode, intercept.error/delay/drop")


def _failed(context: InterceptContext, close: Callable[[str], None]) -> Any:
    """A hook raised: log it; the API's UNKNOWN_SERVER_ERROR answer, or a close if it has no error field."""
    header = context.header
    log.exception("request hook for API key %d v%d failed", header.api_key, header.api_version)
    pending = context._result
    if inspect.iscoroutine(pending) and inspect.getcoroutinestate(pending) == inspect.CORO_CREATED:
        pending.close()  # the broker's answer the hook asked for and left: not reported as never awaited
    if carries_error(header.api_key, header.api_version):
        return error_response(header.api_key, header.api_version, context.request, ErrorCode.UNKNOWN_SERVER_ERROR)
    close("request hook failed")
    return None


class Hook:
    """The handle `MockBroker.intercept` returns: `remove()` takes the hook away."""

    def __init__(self, rule: Any, remove: Callable[[Any], None]) -> None:
        self.rule = rule
        self._remove = remove

    @property
    def api_key(self) -> int:
        return int(self.rule.api_key)

    def remove(self) -> None:
        """Take the hook away (requests already in its hands finish as it says)."""
        self._remove(self.rule)
