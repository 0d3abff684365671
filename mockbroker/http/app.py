"""The HTTP endpoint of a broker: aiohttp's low-level server on the broker's own event loop.

aiohttp parses HTTP/1.1 (request line, headers, bodies, keep-alive, pipelining) and enforces its limits:
request line and header lines of at most 8190 bytes, at most 128 headers, bodies of at most 1 MiB.
This module routes what it parsed:

    GET /            the console (index.html) for a browser asking for HTML, else the JSON index
    GET /console/*   the console's files (static/: HTML, CSS, JS modules; no build step)
    GET /events      server-sent events (events.py)
    GET /openapi.json  the OpenAPI 3.1 description of the JSON API (openapi.py)
    GET /metrics     Prometheus' text format (metrics.py; a route of json_api.ROUTES answering as it is)
    anything else    the JSON API (json_api.ROUTES)

HTTPS when the broker has TLS material (an SSL or SASL_SSL listener): the broker's certificate, so a
client trusts it with the broker's CA file. Who may ask (auth.py): on a broker with SASL users every request, the console's files included, needs HTTP
Basic credentials of one of them (401 with a Basic challenge otherwise) unless the server was made with
auth="none"; under ACLs the principal needs the ACL the matching Kafka API would (403 otherwise).

Every answer of the JSON API is JSON, errors too: {"error": kind, "message": text}. What aiohttp's
parser refuses is answered as JSON as well (400, 431 for a line too long, 505 for another HTTP version)
and the connection closed; the client never sees a traceback (ours go to the broker's log). Protection
against slow and many clients: a connection that has not sent a whole request within
`keepalive_timeout` seconds is closed (aiohttp's keep-alive timer, also armed at connect), a body
must arrive within `read_timeout` (408), and past `max_connections` open connections a new one is
answered 503 and closed.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import inspect
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from aiohttp import http_exceptions, web, web_protocol

from mockbroker.http.auth import HttpAuth
from mockbroker.http.events import EventHub
from mockbroker.http.json_api import ROUTES, JsonApi
from mockbroker.http.openapi import openapi_document
from mockbroker.http.request import HttpError, Request

if TYPE_CHECKING:
    from mockbroker.server import MockBroker

log = logging.getLogger("mockbroker.control")

MAX_BODY = 1 << 20
STATIC_TYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}
STATIC_NAME = re.compile(r"[a-z0-9_-]+\.(html|css|js|svg)")
CONSOLE_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
_NAME = r"(?P<name>[^/]+)"
_ID = r"(?P<id>[^/]+)"
_ROUTES = [(m, re.compile(p.replace("{name}", _NAME).replace("{id}", _ID)), fn, p) for m, p, fn, _ in ROUTES]


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None,
                  close: bool = False) -> web.Response:
    body = (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
    response = web.Response(status=status, body=body, content_type="application/json", charset="utf-8",
                            headers={"Cache-Control": "no-store", **(headers or {})})
    if close:
        response.force_close()
    return response


def _parse_error(status: int, exc: BaseException | None, message: str | None) -> tuple[int, str, str]:
    """(status, error kind, message) for what aiohttp's parser refused."""
    text = getattr(exc, "message", None) or message or "malformed request"
    if isinstance(exc, http_exceptions.LineTooLong):
        return 431, "too_large", f"request line or header too long: {text}"
    if isinstance(exc, http_exceptions.BadHttpMessage) and "version" in str(text).lower():
        return 505, "bad_version", f"HTTP/1.1 and HTTP/1.0 only: {text}"
    if status >= 500:
        return status, "internal", "the request failed"
    return 400, "bad_request", str(text)


class _RequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection handler, answering what its parser refuses with JSON instead of text."""

    over_limit = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        manager = self._manager
        if isinstance(manager, _Server) and len(manager.connections) > manager.max_connections:
            self.over_limit = True  # answered 503 by ControlServer._handle, then closed

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        status, error, text = _parse_error(status, exc, message)
        if status >= 500 and error == "internal":
            log.error("control endpoint: request failed", exc_info=exc)
        else:
            log.debug("control endpoint: refused a request: %s", text)
        if request.writer.output_size > 0:
            raise ConnectionError("response already started; cannot send the error")
        return json_response(status, {"error": error, "message": text}, close=True)


class _Server(web.Server):
    def __init__(self, *args: Any, max_connections: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_connections = max_connections

    def __call__(self) -> _RequestHandler:
        return _RequestHandler(self, loop=self._loop, **self._kwargs)


class ControlServer:
    """The HTTP endpoint (JSON API, console, live events) of one broker; start() on the broker's loop."""

    def __init__(self, broker: MockBroker, *, keepalive_timeout: float = 15.0, read_timeout: float = 10.0,
                 max_connections: int = 256, events_interval: float = 0.25, auth: str = "basic",
                 tls: bool | None = None) -> None:
        self.broker = broker
        self.auth = HttpAuth(broker, auth)  # HTTP Basic over the broker's SASL users, and its ACLs (auth.py)
        self.tls = tls  # HTTPS with the broker's certificate: None: when a listener uses TLS; True / False: forced
        self.scheme = "http"
        self.keepalive_timeout = keepalive_timeout
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self.events = EventHub(broker, events_interval)
        self.api = JsonApi(broker, self.events.rates)
        self._runner: web.ServerRunner | None = None
        self.host = ""
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> ControlServer:
        server = _Server(self._handle, max_connections=self.max_connections,
                         keepalive_timeout=self.keepalive_timeout, lingering_time=1.0, access_log=None)
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        ssl_context = self._ssl_context()
        site = web.TCPSite(runner, host, port, reuse_address=True, ssl_context=ssl_context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.host, self.port = host, runner.addresses[0][1]
        self.scheme = "https" if ssl_context is not None else "http"
        self.events.start()
        log.info("control endpoint on %s", self.url)
        return self

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("", "0.0.0.0", "::") else "localhost"
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}"

    def _ssl_context(self) -> Any:
        """HTTPS when the broker has TLS material (a TLS listener): its certificate and key, no client
        certificate asked (the HTTP principal comes from Basic credentials); None: plain HTTP."""
        if self.tls is False:
            return None
        broker_tls = getattr(self.broker.security, "tls", None)
        if broker_tls is None:
            if self.tls:
                raise ValueError("HTTPS needs the broker's TLS material: give it an SSL or SASL_SSL listener")
            return None
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(broker_tls.certfile, broker_tls.keyfile, broker_tls.key_password)
        return ctx

    async def stop(self) -> None:
        await self.events.stop()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    # -- routing ---------------------------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        if getattr(request.protocol, "over_limit", False):
            return json_response(503, {"error": "too_many_connections",
                                       "message": f"more than {self.max_connections} connections open"},
                                 close=True)
        if request.version not in ((1, 1), (1, 0)):
            return json_response(505, {"error": "bad_version", "message": "HTTP/1.1 and HTTP/1.0 only"}, close=True)
        path = request.path if request.path == "/" else request.path.rstrip("/")
        try:
            principal = self.auth.principal(request.headers)
        except HttpError as exc:
            return json_response(exc.status, {"error": exc.error, "message": exc.message}, exc.headers)
        if request.method in ("GET", "HEAD"):
            if path == "/" and "text/html" in request.headers.get("Accept", ""):
                return self._static("index.html")
            if path.startswith("/console/"):
                return self._static(path.removeprefix("/console/"))
            if path == "/openapi.json":
                return json_response(200, openapi_document())
            if path == "/events" and request.method == "GET":
                try:
                    self.auth.authorize(principal, request.remote or "", "GET", "/events", None)
                except HttpError as exc:
                    return json_response(exc.status, {"error": exc.error, "message": exc.message})
                return await self.events.stream(request)
        if path in ("/events", "/openapi.json"):
            return json_response(405, {"error": "method_not_allowed", "message": f"{request.method} is not allowed on "
                                       f"{path} (allowed: GET, HEAD)"}, {"Allow": "GET, HEAD"})
        return await self._json(request, path, principal)

    def _static(self, name: str) -> web.Response:
        if not STATIC_NAME.fullmatch(name):
            return json_response(404, {"error": "not_found", "message": f"no console file {name!r}"})
        resource = importlib.resources.files("mockbroker.http") / "static" / name
        try:
            data = resource.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return json_response(404, {"error": "not_found", "message": f"no console file {name!r}"})
        ext = name[name.rindex("."):]
        headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        if ext == ".html":
            headers["Content-Security-Policy"] = CONSOLE_CSP
        return web.Response(body=data, content_type=STATIC_TYPES[ext], charset="utf-8", headers=headers)

    async def _json(self, request: web.BaseRequest, path: str, principal: str | None) -> web.Response:
        try:
            handler, params, allowed, route = _route(request.method, path)
            if handler is None:
                if allowed:
                    raise HttpError(405, "method_not_allowed", f"{request.method} is not allowed on {path} "
                                    f"(allowed: {', '.join(allowed)})", {"Allow": ", ".join(allowed)})
                raise HttpError(404, "not_found", f"no endpoint {path}; GET / lists them")
            body = await self._body(request)
            query: dict[str, list[str]] = {}
            for key, value in request.query.items():
                query.setdefault(key, []).append(value)
            req = Request(request.method, path, query, dict(request.headers), body, params)
            self.auth.authorize(principal, request.remote or "", request.method, route, req)
            result = handler(self.api, req)
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, web.Response):  # an answer that is not JSON (GET /metrics)
                return result
            status, payload = result if isinstance(result, tuple) else (200, result)
            return json_response(status, payload)
        except HttpError as exc:
            close = exc.status in (408, 411, 413)
            return json_response(exc.status, {"error": exc.error, "message": exc.message}, exc.headers, close)
        except Exception as exc:
            log.exception("control endpoint: %s %s failed", request.method, request.path_qs)
            return json_response(500, {"error": "internal", "message": f"{type(exc).__name__}: {exc}"})

    async def _body(self, request: web.BaseRequest) -> bytes:
        if "Transfer-Encoding" in request.headers:
            raise HttpError(411, "length_required", "chunked bodies are not supported: send a Content-Length")
        size = request.content_length
        if size is None:
            return b""
        if size > MAX_BODY:
            raise HttpError(413, "too_large", f"request body over {MAX_BODY} bytes")
        try:
            return await asyncio.wait_for(request.read(), self.read_timeout)
        except TimeoutError:
            raise HttpError(408, "timeout", f"request body not received within {self.read_timeout} s") from None
        except web.HTTPRequestEntityTooLarge:
            raise HttpError(413, "too_large", f"request body over {MAX_BODY} bytes") from None


def _route(method: str, path: str) -> tuple[Any, dict[str, str], list[str], str]:
    """(handler, path parameters, methods allowed on the path, the route's pattern)."""
    allowed: list[str] = []
    lookup = "GET" if method == "HEAD" else method
    for m, pattern, fn, route in _ROUTES:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if m == lookup:
            return fn, match.groupdict(), [], route
        allowed.append(m)
    if "GET" in allowed:
        allowed.append("HEAD")
    return None, {}, allowed, ""


async def start_control_server(broker: MockBroker, host: str = "127.0.0.1", port: int = 0,
                               auth: str = "basic") -> ControlServer:
    """Serve the control endpoint for `broker` (call on the broker's event loop)."""
    return await ControlServer(broker, auth=auth).start(host, port)
