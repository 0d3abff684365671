"""One client connection of the fault proxy (mockbroker/remote/proxy.py), paired with its own connection to
the real broker behind the listener the client reached.

Requests are read frame by frame and decoded (header and body, with the protocol package) to be recorded
and matched against the fault rules, then passed on byte-exact. Responses pass back byte-exact too, except
those naming brokers' endpoints (mockbroker/remote/proxy_rewrite.py). A fault rule acts as the embedded
broker's does (mockbroker/faults.py): error answers with the API's error response and sends nothing on;
drop_before closes the connection without sending the request on; drop_after sends it on, then closes
instead of passing its answer back; delay holds the answer back for its seconds.

Answers reach the client in the order of its requests, as Kafka's do: each request expecting one gets a
slot in a queue, filled when the broker answers (or at once for an injected error); one writer sends the
slots in order. A request that cannot be decoded (a version newer than the protocol package knows) is
passed on unrecorded and unfaulted, its answer byte-exact. After a SaslHandshake v0 the client sends bare
SASL tokens: the connection passes everything on unread from then on. A request a hook rule matches
(KafkaProxy.intercept) goes to the hook (mockbroker/remote/proxy_intercept.py); the connection reads on once
the hook has returned or sent the request on. The upstream connection is in TLS
when the cluster's settings say so (mockbroker/remote/proxy_security.py); the client's own TLS, if the
proxy offers it, ends at the proxy's listener.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from mockbroker.dispatch import error_response
from mockbroker.faults import FaultRule, Faults, RequestRecord
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.errors import ErrorCode, ProtocolError
from mockbroker.protocol.json_msgs import response_from_json
from mockbroker.protocol.messages import Msg, decode_request
from mockbroker.remote import proxy_intercept
from mockbroker.remote.proxy_rewrite import carries_endpoints, encode_frame, rewrite
from mockbroker.remote.proxy_security import ProxySecurity, open_upstream

log = logging.getLogger(__name__)

MAX_FRAME = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes
FORWARD, ANSWERED, STOP, FORWARD_THEN_CLOSE, HOOK = "forward", "answered", "stop", "forward then close", "hook"


class ProxyHost(Protocol):
    """What a paired connection needs of its proxy."""

    faults: Faults
    requests: RequestRecord
    timeout: float
    security: ProxySecurity
    listener_name: str  # what received() gives as each request's listener: what clients speak to the proxy

    async def route(self, node_id: int, host: str, port: int) -> tuple[str, int]: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def learn(self, api_key: int, msg: Msg) -> None: ...

    def node_of(self, upstream: tuple[str, int]) -> int | None: ...

    def upstream_opened(self, local: tuple[str, int]) -> None: ...


@dataclass
class Slot:
    """One answer the client waits for, in request order: the frame to send, or None to close instead."""

    answer: asyncio.Future[bytes | None]
    api_key: int | None = None  # None: not decoded, passed back as it comes
    api_version: int = 0
    delay_s: float = 0.0
    close_instead: bool = False  # drop_after
    then_opaque: bool = False  # a SaslHandshake v0: bare tokens follow


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """One size-prefixed frame (prefix included), or None at the end of the stream or on a bad size."""
    try:
        prefix = await reader.readexactly(4)
        size = int.from_bytes(prefix, "big", signed=True)
        if not 0 <= size <= MAX_FRAME:
            return None
        return prefix + await reader.readexactly(size)
    except (asyncio.IncompleteReadError, OSError):
        return None


class PairedConnection:
    """A client's connection to one listener of the proxy and the proxy's connection to the real broker."""

    def __init__(self, host: ProxyHost, upstream: tuple[str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, connection_id: int) -> None:
        self.host = host
        self.upstream = upstream
        self.reader = reader
        self.writer = writer
        self.connection_id = connection_id
        self.up_writer: asyncio.StreamWriter | None = None
        self.pending: dict[int, Slot] = {}  # correlation id -> the slot its answer fills
        self.queue: asyncio.Queue[Slot] = asyncio.Queue()
        self.opaque = False
        self.principal = "User:ANONYMOUS"  # the SASL user once a PLAIN or SCRAM client names it
        self.mechanism = ""
        self.hooked: tuple[FaultRule, hdr.RequestHeader, Msg, bool] | None = None  # the request a hook takes

    async def run(self) -> None:
        """Serve the client until either side closes or a fault closes the connection."""
        loop = asyncio.get_running_loop()
        try:
            up_reader, up_writer = await open_upstream(self.upstream, self.host.security.upstream,
                                                       self.host.timeout)
        except (TimeoutError, OSError) as exc:
            log.info("proxy: cannot reach %s:%d: %s", *self.upstream, exc)
            self.close()
            return
        self.up_writer = up_writer
        local = up_writer.get_extra_info("sockname")
        if local is not None:
            self.host.upstream_opened((str(local[0]), int(local[1])))
        tasks = [loop.create_task(self._guarded(self._requests())),
                 loop.create_task(self._guarded(self._responses(up_reader)))]
        try:
            await self._write_answers()
        finally:
            for task in tasks:
                task.cancel()
            self.close()

    async def _guarded(self, loop: Coroutine[Any, Any, None]) -> None:
        """Run one direction's loop; if it fails, log it and close the connection (never a hung client)."""
        try:
            await loop
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("proxy: connection %d to %s:%d failed", self.connection_id, *self.upstream)
            self._unanswered()
            self._closing_slot()

    def close(self) -> None:
        for w in (self.writer, self.up_writer):
            if w is not None and not w.is_closing():
                w.close()

    def _slot(self, api_key: int | None, version: int, correlation_id: int | None) -> Slot:
        slot = Slot(asyncio.get_running_loop().create_future(), api_key, version)
        if correlation_id is not None:
            self.pending[correlation_id] = slot
        self.queue.put_nowait(slot)
        return slot

    def _closing_slot(self) -> None:
        slot = self._slot(None, 0, None)
        slot.answer.set_result(None)

    # -- client -> broker ----------------------------------------------------------------------------
    async def _requests(self) -> None:
        assert self.up_writer is not None
        while True:
            frame = await read_frame(self.reader)
            if frame is None:
                self._closing_slot()
                return
            what = FORWARD if self.opaque else self._request(frame)
            if what == HOOK:
                what = await self._hook(frame)
            if what == ANSWERED:
                continue
            if what == STOP or self.up_writer.is_closing():
                return
            self.up_writer.write(frame)
            try:
                await self.up_writer.drain()
            except OSError:
                return
            if what == FORWARD_THEN_CLOSE:
                self._closing_slot()
                return

    def _request(self, frame: bytes) -> str:
        """Record and fault one request: FORWARD it (its answer's slot queued), ANSWERED here, STOP reading
        (the connection closes once the answers before it are sent), or FORWARD_THEN_CLOSE."""
        body = memoryview(frame)[4:]
        try:
            header, reader = hdr.decode_request_header(body)
        except ProtocolError:
            try:
                _, _, correlation_id = hdr.peek_api_key_version(body)
            except ProtocolError:
                self._closing_slot()
                return STOP
            self._slot(None, 0, correlation_id)  # an API key the package does not know: passed on unread
            return FORWARD
        try:
            request: Msg | None = decode_request(header.api_key, header.api_version, reader)
        except ProtocolError:
            request = None
        if request is not None and header.api_key in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE):
            self._sasl(header.api_key, request)
        node = self.host.node_of(self.upstream)
        self.host.requests.add(header.api_key, header.api_version, header.client_id, header.correlation_id,
                               int(time.time() * 1000), self.connection_id, self.principal, self.host.listener_name,
                               node_id=-1 if node is None else node)
        faults = self.host.faults
        rule = faults.take(header, request, self.host.topic_name, node) if request is not None and faults.active else None
        answered = not (header.api_key == ApiKey.PRODUCE and request is not None and request.acks == 0)
        if rule is not None and request is not None:
            return self._apply(rule, header, request, answered)
        if answered:
            slot = self._slot(header.api_key, header.api_version, header.correlation_id)
            slot.then_opaque = header.api_key == ApiKey.SASL_HANDSHAKE and header.api_version == 0
        return FORWARD

    def _sasl(self, api_key: int, request: Msg) -> None:
        """Note the mechanism a SaslHandshake asks for, and the user name a PLAIN or SCRAM first message
        gives (Kafka's principal: User:<name>); a failed authentication closes the connection anyway."""
        if api_key == ApiKey.SASL_HANDSHAKE:
            self.mechanism = str(request.mechanism)
            return
        token = bytes(request.auth_bytes or b"")
        name = None
        if self.mechanism == "PLAIN" and token.count(b"\0") == 2:
            name = token.split(b"\0")[1]
        elif self.mechanism.startswith("SCRAM-") and token.startswith((b"n,", b"y,", b"p=")):
            attrs = dict(part.split(b"=", 1) for part in token.split(b",")[2:] if b"=" in part)
            name = attrs.get(b"n")
        if name:
            self.principal = "User:" + name.decode("utf-8", "replace").replace("=2C", ",").replace("=3D", "=")

    def _apply(self, rule: FaultRule, header: hdr.RequestHeader, request: Msg, answered: bool) -> str:
        """Act on the fault rule a request matched (faults.FaultRule.apply's actions, over the wire)."""
        if rule.action == "hook":  # run by _hook, which the request loop awaits
            self.hooked = (rule, header, request, answered)
            return HOOK
        if rule.action in ("error", "respond"):
            if rule.action == "error":
                answer = error_response(header.api_key, header.api_version, request, ErrorCode(rule.error_code))
            else:
                assert rule.response is not None
                answer = response_from_json(header.api_key, rule.response)
            slot = self._slot(header.api_key, header.api_version, None)
            slot.answer.set_result(encode_frame(header.api_key, header.api_version, header.correlation_id, answer))
            return ANSWERED
        if rule.action == "drop_before":
            log.info("proxy: fault injected: drop before %d", header.api_key)
            self._closing_slot()
            return STOP
        if not answered:  # acks=0: no answer to hold back or drop; drop_after closes once it is sent on
            return FORWARD_THEN_CLOSE if rule.action == "drop_after" else FORWARD
        slot = self._slot(header.api_key, header.api_version, header.correlation_id)
        if rule.action == "drop_after":
            slot.close_instead = True
        elif rule.action == "delay":
            slot.delay_s = rule.delay_s
        return FORWARD

    async def _hook(self, frame: bytes) -> str:
        """Run the hook a request matched; return once it has answered or sent the request on: ANSWERED
        (the request is in the hook's hands) or STOP (it closes the connection unanswered)."""
        assert self.hooked is not None
        rule, header, request, answered = self.hooked
        fn = rule.hook
        assert fn is not None
        self.hooked = None
        slot = self._slot(header.api_key, header.api_version, None) if answered else None  # its place in order
        forwarded = asyncio.Event()

        async def send() -> bytes | None:  # the request sent on (once: the context keeps the result)
            if self.up_writer is None or self.up_writer.is_closing():
                return None
            upstream = Slot(asyncio.get_running_loop().create_future(), header.api_key, header.api_version)
            if answered:  # the cluster's answer fills this slot (rewritten), not the client's
                self.pending[header.correlation_id] = upstream
            self.up_writer.write(frame)
            forwarded.set()
            await self.up_writer.drain()
            return await upstream.answer if answered else b""

        node = self.host.node_of(self.upstream)
        context = proxy_intercept.ProxyInterceptContext(header, request, -1 if node is None else node,
                                                        self.principal, send)
        task = asyncio.ensure_future(proxy_intercept.run(fn, context))
        waiter = asyncio.ensure_future(forwarded.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

        def done(finished: asyncio.Future[bytes | None]) -> None:
            answer = None if finished.cancelled() else finished.result()
            if slot is not None and not slot.answer.done():
                slot.answer.set_result(answer)
            elif slot is None and answer is None:
                self._closing_slot()

        task.add_done_callback(done)
        closing = task.done() and not task.cancelled() and task.result() is None and not forwarded.is_set()
        return STOP if closing else ANSWERED

    # -- broker -> client ----------------------------------------------------------------------------
    async def _responses(self, up_reader: asyncio.StreamReader) -> None:
        while True:
            frame = await read_frame(up_reader)
            if frame is None:
                self._unanswered()
                self._closing_slot()
                return
            correlation_id = int.from_bytes(frame[4:8], "big", signed=True)
            slot = self.pending.pop(correlation_id, None) if len(frame) >= 8 else None
            if slot is None:  # a bare SASL token's answer, or an answer to nothing we sent: as it came
                self._slot(None, 0, None).answer.set_result(frame)
                continue
            if slot.api_key is not None and carries_endpoints(slot.api_key, slot.api_version):
                frame = await self._rewritten(slot, correlation_id, frame)
            slot.answer.set_result(None if slot.close_instead else frame)

    def _unanswered(self) -> None:
        """The broker closed: the answers still awaited will not come (the client's connection closes)."""
        for slot in self.pending.values():
            if not slot.answer.done():
                slot.answer.set_result(None)
        self.pending.clear()

    async def _rewritten(self, slot: Slot, correlation_id: int, frame: bytes) -> bytes:
        assert slot.api_key is not None
        body = memoryview(frame)[4:]
        try:
            _, reader = hdr.decode_response_header(body, hdr.response_header_version(slot.api_key, slot.api_version))
            new = await rewrite(slot.api_key, slot.api_version, correlation_id, reader,
                                self.host.route, self.host.learn)
        except ProtocolError as exc:
            log.warning("proxy: cannot decode a response of API key %d v%d to rewrite it: %s",
                        slot.api_key, slot.api_version, exc)
            return frame
        return frame if new is None else new

    async def _write_answers(self) -> None:
        while True:
            slot = await self.queue.get()
            answer = await slot.answer
            if slot.delay_s:
                await asyncio.sleep(slot.delay_s)
            if answer is None:
                return
            if slot.then_opaque:
                self.opaque = True
            self.writer.write(answer)
            try:
                await self.writer.drain()
            except OSError:
                return
