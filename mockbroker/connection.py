"""One client connection: frames in, handlers run, answers out in request order.

Like Kafka's broker, a connection processes one request at a time: while a handler waits (a long-poll
Fetch), the following requests of that connection wait behind it, so answers always go out in request
order. Pipelined requests whose handlers answer at once are processed straight from buffer_updated,
with no task switch.

What gets an error code and what closes the connection (decided here, in one place):
- a frame over socket.request.max.bytes, a negative size, a header that cannot be read, an API key
  we do not know or do not serve, a version outside the served range (the registry's, narrowed by the
  node's Kafka version persona: mockbroker/personas.py; except ApiVersions), a body
  that does not decode: the connection is closed, as Kafka does (InvalidRequestException);
- ApiVersions at a version we do not know: a v0 answer with UNSUPPORTED_VERSION and its own version range
  (the registry's error answer of ApiVersions, mockbroker/dispatch.py);
- errors about the request's content (unknown topic, bad batch, ...): the handler's error codes;
- an exception inside a handler (a bug of ours): logged with its traceback, connection closed; the
  broker keeps serving every other connection.

Requests are received straight into their frames' buffers (asyncio.BufferedProtocol and the frame
decoder's get_buffer / buffer_updated), so a large Produce request is copied once, by the kernel.

Back-pressure: answers go out through a queue of chunks (views of stored batches, never copied or
joined) that is handed to the transport only while its write buffer is under WRITE_BUFFER_HIGH. Above
it, the connection stops reading and handling requests until the buffer drains (pause_writing /
resume_writing), so a slow reader cannot make the broker buffer without end.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import itertools
import logging
import socket
import struct
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from mockbroker import dispatch
from mockbroker.context import RequestContext
from mockbroker.idle_timeout import IdleTimeout
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode, ProtocolError
from mockbroker.protocol.framing import FrameDecoder
from mockbroker.protocol.messages import Msg, decode_request, encode_response
from mockbroker.protocol.primitives import Writer
from mockbroker.protocol.produce_codec import decode_produce_request, encode_produce_response
from mockbroker.quota_throttle import throttle_after, with_mutation_quota

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.faults import Faults, RequestRecord
    from mockbroker.node import BrokerNode
    from mockbroker.scheduler import Scheduler
    from mockbroker.security import BrokerSecurity, ConnectionSecurity
    from mockbroker.state.cluster.cluster import Cluster, Listener

log = logging.getLogger("mockbroker.connection")

API_VERSIONS = ApiKey.API_VERSIONS
FETCH = int(ApiKey.FETCH)
PRODUCE = int(ApiKey.PRODUCE)
_ids = itertools.count(1)
# While a handler waits, stop reading once this much is buffered behind it.
MAX_BUFFERED_WHILE_BUSY = 4 * 1024 * 1024
# The transport's write buffer above which the connection stops handing it response chunks, reading and
# handling requests (back-pressure); it resumes when the buffer drains to a quarter of this.
WRITE_BUFFER_HIGH = 1024 * 1024
_SIZE = struct.Struct(">i")  # a response's size prefix
_SIZE_AND_ID = struct.Struct(">ii")  # the size prefix and the correlation id


class ConnectionHost(Protocol):
    """What a connection uses of the broker that accepted it (mockbroker.server.MockBroker, which imports
    this module: the server depends on its connections, never the other way round)."""

    cluster: Cluster
    clock: Clock
    scheduler: Scheduler
    faults: Faults
    requests: RequestRecord  # the request record, with the counters /metrics reads (its .metrics)
    security: BrokerSecurity  # TLS and SASL per listener (mockbroker/security)
    capture: list[bytes] | None  # every request frame, raw, when a list
    node_latency_ms: dict[int, int]  # answers of these nodes go out this many ms late (set_latency)

    @property
    def nodes(self) -> Mapping[int, BrokerNode]: ...

    def record_request(self, ctx: RequestContext, header: hdr.RequestHeader) -> None: ...

    def connection_opened(self, connection: Connection) -> None:
        """A connection was accepted (the broker closes it at stop, or when its node stops)."""

    def connection_closed(self, connection: Connection) -> None:
        """A connection went away."""


class Connection(asyncio.BufferedProtocol):
    """A connection accepted by `listener`, bound to the node the listener belongs to."""

    def __init__(self, broker: ConnectionHost, listener: Listener) -> None:
        self.broker = broker
        self.listener = listener
        self.node = broker.nodes[listener.node_id]
        self.decoder = FrameDecoder(int(broker.cluster.config.get("socket.request.max.bytes")))
        self.transport: asyncio.Transport | None = None
        self.ctx: RequestContext | None = None
        self._busy = False  # a handler is awaiting
        self._task: asyncio.Task[None] | None = None
        self._pending: Any = None  # the awaitable the task waits on
        self._write_paused = False
        self._read_paused = False
        self._closed = False
        self._out: collections.deque[bytes | bytearray | memoryview] = collections.deque()  # see _drain
        self.security: ConnectionSecurity | None = None  # SSL / SASL listeners (mockbroker/security)
        self._idle: IdleTimeout | None = None  # connections.max.idle.ms (mockbroker/idle_timeout.py)
        self._started = 0.0  # when the request being handled was read (perf_counter), for its latency
        self._counters = broker.requests.metrics  # what /metrics reads (mockbroker/metrics.py)
        self._muted = False  # throttled by a quota: no request is read until the throttle time passes
        self._cost: tuple[int, float] = (0, 0.0)  # the request's size and its handler's time (quotas)

    # -- asyncio.Protocol ------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes
        self.transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.ctx = RequestContext(self.node, self.listener, next(_ids), str(peer[0]), int(peer[1]))
        self.security = self.broker.security.for_connection(self.listener, transport.get_extra_info("ssl_object"))
        if self.security is not None:
            self.ctx.extra["security"] = self.security
            if self.security.sasl is not None:  # Kafka's sasl.server.max.receive.size until authenticated
                self.decoder.max_frame_size = min(self.decoder.max_frame_size, self.security.max_receive_before_auth)
        self.broker.connection_opened(self)
        if self.node.quota_sensors.connection(self.ctx.client_host, self.broker.clock.now_ms()) > 0:
            self._close("connection_creation_rate quota of its ip exceeded")  # Kafka's ConnectionQuotas
            return
        self._idle = IdleTimeout(self.broker.scheduler, int(self.broker.cluster.config.get("connections.max.idle.ms")),
                                 is_busy=lambda: self._busy, close=self._close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._out.clear()
        if self._idle is not None:
            self._idle.cancel()
        self.cancel_pending()
        self.broker.connection_closed(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        """Received bytes go straight into the frame decoder's buffers (a large frame into its own)."""
        return self.decoder.get_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        if self._idle is not None:
            self._idle.touch()
        self.decoder.buffer_updated(nbytes)
        self._process()

    def pause_writing(self) -> None:
        self._write_paused = True
        self._pause_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        self._drain()
        if self._write_paused:
            return  # the queued answers filled the buffer again
        self._resume_reading()
        self._process()

    # -- processing ------------------------------------------------------------------------------
    def _pause_reading(self) -> None:
        if not self._read_paused and self.transport is not None and not self._closed:
            self._read_paused = True
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if (self._read_paused and not self._write_paused and not self._muted and self.transport is not None
                and not self._closed):
            self._read_paused = False
            self.transport.resume_reading()

    def _process(self) -> None:
        while not self._busy and not self._muted and not self._write_paused and not self._closed:
            try:
                frame = self.decoder.next_frame()
            except ProtocolError as exc:
                self._close(f"bad frame: {exc}")
                return
            if frame is None:
                return
            self._handle_frame(frame)
        if self._busy and self.decoder.buffered() > MAX_BUFFERED_WHILE_BUSY:
            self._pause_reading()

    def _handle_frame(self, frame: bytearray) -> None:
        self._started = time.perf_counter()
        broker = self.broker
        if broker.capture is not None:
            broker.capture.append(bytes(frame))
        security = self.security
        if security is not None and security.sasl is not None and security.sasl.expects_raw_token:
            self._raw_sasl_token(frame)
            return
        try:
            header, reader = hdr.decode_request_header(frame)
        except ProtocolError as exc:
            self._close(f"unreadable request header: {exc}")
            return
        api_key, version = header.api_key, header.api_version
        if security is not None:
            refused = security.gate(api_key, version)
            if refused is not None:
                if refused.answer:
                    self._answer_illegal_sasl_state(header, reader)
                self._close(refused.reason)
                return
        spec = dispatch.lookup(api_key)
        if spec is None:
            self._close(f"API key {api_key} is not served")
            return
        node = self.node
        served = dispatch.served_range(api_key, node.persona)  # the node's Kafka release's
        if served is None:
            self._close(f"{spec.name} is not served by this Kafka version")
            return
        lo, hi = served
        if not lo <= version <= hi:
            if api_key == API_VERSIONS and version > hi:
                answer = dispatch.error_response(API_VERSIONS, 0, Msg(), ErrorCode.UNSUPPORTED_VERSION)
                answer.api_keys = [Msg(api_key=API_VERSIONS, min_version=lo, max_version=hi)]  # as served here
                self._send(header, answer, version=0)
                return
            self._close(f"{spec.name} v{version} is not served (v{lo}-v{hi})")
            return
        try:
            # The usual Produce read inline (protocol/produce_codec.py), anything else by the general codec
            request = decode_produce_request(version, reader) if api_key == PRODUCE else None
            if request is None:
                request = decode_request(api_key, version, reader)
        except ProtocolError as exc:
            self._close(f"malformed {spec.name} v{version} request: {exc}")
            return
        ctx = self.ctx
        assert ctx is not None
        broker.record_request(ctx, header)
        try:
            fn = with_mutation_quota(spec.fn, header)  # CreateTopics & co.: the mutation quota (quota_throttle.py)
            if node.security.authorizer is not None:  # Kafka's authorization (imported once one is on)
                from mockbroker.authorization import guard
                fn = guard(ctx, api_key, fn)
            faults = broker.faults
            fault = (faults.take(header, request, self._topic_name, node.node_id, self._share_session)
                     if faults.rules else None)  # faults.active, inline: every request comes here
            started = time.perf_counter()
            if fault is not None:
                result = fault.apply(self._close, ctx, header, request, fn)
            else:
                result = fn(ctx, header, request)
            self._cost = (len(frame), time.perf_counter() - started)
            if broker.node_latency_ms:
                latency = broker.node_latency_ms.get(node.node_id)
                if latency:
                    result = _late(result, latency / 1000.0)
        except Exception:
            log.exception("handler of %s v%d failed", spec.name, version)
            self._close("internal error")
            return
        # A handler's answer is a Msg (a dict), None or a CloseConnection, or an awaitable of one (checked
        # last: inspect.isawaitable is an ABC check, the slowest of these).
        if result is not None and not isinstance(result, (dict, dispatch.CloseConnection)) and inspect.isawaitable(result):
            self._busy = True
            self._pending = result
            self._task = asyncio.get_running_loop().create_task(self._finish(header, result))
            return
        self._answer(header, result)

    def _answer(self, header: hdr.RequestHeader, result: Any) -> None:
        """Act on what a handler returned: a response to send, None (no answer: acks=0), or a close."""
        self._counters.answered(header.api_key, time.perf_counter() - self._started)
        if header.api_key == FETCH and isinstance(result, dict):
            self._counters.fetched(result)
        if isinstance(result, dispatch.CloseConnection):
            self._close(result.reason)
        else:
            assert self.ctx is not None
            throttle_ms = throttle_after(self.ctx, header, self._cost[0], self._cost[1], result)
            if throttle_ms > 0:  # muted from now on the broker clock (before the client can see the answer)
                self._mute(throttle_ms)
            if result is not None:
                self._send(header, result)
        if self.security is not None and self.security.sasl is not None and not self.security.settled:
            self._after_sasl_step()

    def _after_sasl_step(self) -> None:
        """Close a failed authentication (after Kafka's delay); lift the frame limit once authenticated."""
        assert self.security is not None and self.security.sasl is not None
        if self.security.sasl.failed:
            self._close_after_failed_authentication("SASL authentication failed")
        elif self.security.sasl.complete:
            self.decoder.max_frame_size = int(self.broker.cluster.config.get("socket.request.max.bytes"))
            self.security.settled = True

    def _close_after_failed_authentication(self, reason: str) -> None:
        """Stop reading and close after connections.failed.authentication.delay.ms, as Kafka (KIP-306)."""
        self._pause_reading()
        self._busy = True  # nothing more is processed
        delay = self.broker.security.failed_authentication_delay_s
        asyncio.get_running_loop().call_later(delay, self._close, reason)

    def _answer_illegal_sasl_state(self, header: hdr.RequestHeader, reader: Any) -> None:
        """The request's error response with ILLEGAL_SASL_STATE (Kafka's SaslServerAuthenticator answers a
        request other than SaslAuthenticate during the exchange so, then closes); a request that cannot be
        decoded gets no answer."""
        served = dispatch.served_range(header.api_key, self.node.persona)
        if served is None or not served[0] <= header.api_version <= served[1]:
            return
        try:
            request = decode_request(header.api_key, header.api_version, reader)
        except ProtocolError:
            return
        self._send(header, dispatch.error_response(header.api_key, header.api_version, request,
                                                   ErrorCode.ILLEGAL_SASL_STATE))

    def _raw_sasl_token(self, frame: bytearray) -> None:
        """After a v0 SaslHandshake: the frame is a bare SASL token, the answer a size-prefixed token."""
        from mockbroker.security.failure import SaslFailure

        assert self.security is not None and self.security.sasl is not None
        try:
            reply = self.security.sasl.authenticate(bytes(frame))
        except SaslFailure as exc:
            self._close_after_failed_authentication(f"SASL authentication failed: {exc.message}")
            return
        if self.transport is not None and not self._closed:
            self.transport.write(len(reply).to_bytes(4, "big") + reply)
        self._after_sasl_step()

    def cancel_pending(self) -> asyncio.Task[None] | None:
        """Cancel a waiting handler (connection gone, broker stopping); its task, if one was running."""
        task, pending = self._task, self._pending
        self._task = self._pending = None
        if inspect.iscoroutine(pending) and inspect.getcoroutinestate(pending) == inspect.CORO_CREATED:
            pending.close()  # the task never started it: close it so it is not reported as never awaited
        if task is not None and not task.done():
            task.cancel()
            return task
        return None

    def _mute(self, ms: int) -> None:
        """Kafka's throttled channel: read no request for `ms` of the broker clock (the answer is sent)."""
        self._muted = True
        self._pause_reading()

        def unmute() -> None:
            self._muted = False
            self._resume_reading()
            self._process()

        self.broker.scheduler.call_later(ms, unmute)

    def _topic_name(self, topic_id: Any) -> str | None:
        topic = self.broker.cluster.topics_by_id.get(topic_id)
        return topic.name if topic is not None else None

    def _share_session(self, req: Any) -> list[tuple[str, int]]:
        """The partitions of the share session a ShareFetch belongs to on this node (fault rules' filters)."""
        session = self.node.share_coordinator.sessions.get((self.node.node_id, req.group_id or "", req.member_id or ""))
        return sorted(session.partitions) if session is not None else []

    async def _finish(self, header: hdr.RequestHeader, pending: Any) -> None:
        try:
            response = await pending
        except asyncio.CancelledError:
            self._close("cancelled")
            return
        except Exception:
            log.exception("handler of API key %d v%d failed", header.api_key, header.api_version)
            self._close("internal error")
            return
        self._answer(header, response)
        if self._closed:
            return
        self._busy = False
        if not self._write_paused:
            self._resume_reading()
        self._process()

    def _send(self, header: hdr.RequestHeader, body: Any, version: int | None = None) -> None:
        if self._closed or self.transport is None:
            return
        if self._idle is not None:
            self._idle.touch()
        v = header.api_version if version is None else version
        w = Writer()
        # The size (patched below) and the response header: the correlation id, in v1 an empty tagged field set.
        flexible = hdr.response_header_version(header.api_key, v) >= 1
        w.raw(_SIZE_AND_ID.pack(0, header.correlation_id) + (b"\x00" if flexible else b""))
        try:
            if header.api_key != PRODUCE or not encode_produce_response(v, body, w):  # protocol/produce_codec.py
                encode_response(header.api_key, v, body, w)
        except ProtocolError:
            log.exception("cannot encode the response to API key %d v%d", header.api_key, v)
            self._close("internal error")
            return
        chunks = w.chunks()
        first = chunks[0]
        assert isinstance(first, bytearray)
        _SIZE.pack_into(first, 0, len(w) - 4)
        if len(chunks) == 1 and not self._out:
            self.transport.write(first)
        else:
            self._out.extend(chunks)
            self._drain()

    def _drain(self) -> None:
        """Hand queued response chunks to the transport while its buffer is under the high-water mark.

        Large responses are lists of views of stored batches. Giving them to the transport a chunk at a
        time, only as it drains, keeps them uncopied: Python 3.11's writelines joins every chunk into
        one new bytes object, and its socket transport then shifts its buffer after each send."""
        out = self._out
        transport = self.transport
        while out and not self._write_paused and transport is not None and not self._closed:
            transport.write(out.popleft())

    def _close(self, reason: str) -> None:
        if self._closed:
            return
        log.info("closing connection %s: %s", self.ctx.connection_id if self.ctx else "?", reason)
        self._closed = True
        if self.transport is not None:
            self.transport.close()

    def close(self) -> None:
        self._close("broker stopping")


async def _late(result: Any, seconds: float) -> Any:
    """A handler's answer held back `seconds` (a node's latency, MockBroker.set_latency)."""
    response = await result if inspect.isawaitable(result) else result
    await asyncio.sleep(seconds)
    return response
