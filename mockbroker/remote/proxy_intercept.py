"""Request hooks through the fault proxy (KafkaProxy.intercept, RemoteBroker.intercept with proxy=True):
mockbroker/intercept.py's hooks, run on the proxy's loop for the requests passing through it.

`fn(request, context)` (sync or async) gets the decoded request and returns what an embedded broker's hook
returns: None or `intercept.passthrough` (the cluster answers), a response (a Msg or a plain dict of its
fields, encoded at the request's version), an ErrorCode or `intercept.error(code)` (the API's error
answer, the request not sent on), `intercept.delay(seconds, then=None)`, `intercept.drop(after=False)`.
What differs from the embedded broker:
- The broker's answer comes over the network: `await context.forward()` (async hooks) sends the request on
  to the cluster, once however often asked, and gives its decoded answer (endpoints already naming the
  proxy), which the hook may change and return; None for a request with no answer (Produce acks=0);
  ConnectionError if the cluster closed the connection instead. `context.call_broker()` raises
  RuntimeError: a sync hook cannot wait for the network.
- A hook holds its connection's later requests until it returns or forwards (Kafka serves a connection's
  requests in order); answers still go back in request order.
- context.node_id is the node behind the listener (-1 while not known); context.principal the SASL user
  the client logged in as (User:ANONYMOUS before or without).
- A hook runs on the proxy's thread: a sync hook that blocks stalls every connection of the proxy.
A hook that raises (or returns something else) is a bug of the test: logged with its traceback, the client
gets UNKNOWN_SERVER_ERROR (or the connection closes for an API with no error field).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mockbroker import intercept
from mockbroker.dispatch import carries_error, error_response
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.json_msgs import response_from_json
from mockbroker.protocol.messages import Msg, decode_response
from mockbroker.remote.proxy_rewrite import encode_frame

log = logging.getLogger("mockbroker.intercept")
# Sends the request on (once) and gives the cluster's answer frame: b"" when none is due, None if it closed.
Send = Callable[[], Awaitable[bytes | None]]


class ProxyInterceptContext(intercept.HeaderFields):
    """What a hook gets besides the request: where it came from, and the cluster's answer on demand."""

    def __init__(self, header: hdr.RequestHeader, request: Msg, node_id: int, principal: str, send: Send) -> None:
        self.header = header
        self.request = request
        self.node_id = node_id
        self.principal = principal
        self._send = send
        self._sent: asyncio.Future[bytes | None] | None = None

    @property
    def called_broker(self) -> bool:
        """Whether the request was sent on to the cluster."""
        return self._sent is not None

    def call_broker(self) -> Any:
        raise RuntimeError("through the proxy the cluster's answer comes over the network: use an async hook "
                           "and `await context.forward()`")

    async def forward_frame(self) -> bytes | None:
        """The cluster's answer frame as it comes (sent on the first time): b"" none due, None it closed."""
        if self._sent is None:
            self._sent = asyncio.ensure_future(self._send())
        return await self._sent

    async def forward(self) -> Msg | None:
        """The request sent on to the cluster (once) and its decoded answer; None when no answer is due."""
        frame = await self.forward_frame()
        if frame is None:
            raise ConnectionError(f"the cluster closed the connection before answering API key {self.api_key}")
        if not frame:
            return None
        body = memoryview(frame)[4:]
        _, reader = hdr.decode_response_header(body, hdr.response_header_version(self.api_key, self.api_version))
        return decode_response(self.api_key, self.api_version, reader)

    def encode(self, answer: Any) -> bytes:
        """An answer (a Msg) as the response frame to this request."""
        return encode_frame(self.api_key, self.api_version, self.header.correlation_id, answer)


async def run(hook: Callable[[Msg, Any], Any], context: ProxyInterceptContext) -> bytes | None:
    """Call `hook` for a request: the answer frame to send the client (b"": none due), or None to close."""
    try:
        out = hook(context.request, context)
        if inspect.isawaitable(out):
            out = await out
        return await _resolve(out, context)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("proxy: request hook for API key %d v%d failed", context.api_key, context.api_version)
        if carries_error(context.api_key, context.api_version):
            return context.encode(error_response(context.api_key, context.api_version, context.request,
                                                 ErrorCode.UNKNOWN_SERVER_ERROR))
        return None


async def _resolve(out: Any, context: ProxyInterceptContext) -> bytes | None:
    if out is None or out is intercept.passthrough:
        return await context.forward_frame()
    if type(out) is dict:  # a plain dict is read as a canned JSON answer is (UUIDs as text, error names)
        return context.encode(response_from_json(context.api_key, out))
    if isinstance(out, dict):  # a Msg
        return context.encode(out)
    if isinstance(out, ErrorCode | intercept.Error):
        code = ErrorCode(out.code if isinstance(out, intercept.Error) else out)
        if not carries_error(context.api_key, context.api_version):
            log.info("proxy: intercepted %s, which API key %d cannot carry: closing", code.name, context.api_key)
            return None
        return context.encode(error_response(context.api_key, context.api_version, context.request, code))
    if isinstance(out, intercept.Drop):
        if out.after:
            await context.forward_frame()
        return None
    if isinstance(out, intercept.Delay):
        await asyncio.sleep(out.seconds)
        return await _resolve(out.then, context)
    raise TypeError(f"a hook returned {type(out).__name__}: expected a response (Msg or dict), None, "
                    "intercept.passthrough, an ErrorCode, intercept.error/delay/drop")
