"""The Schema Registry's REST API (v1) on aiohttp, as Confluent's clients call it: one handler that routes
on the raw path (subject names are URL-encoded and may hold '/'), reads bounded JSON bodies and answers in
Confluent's content type; every refusal is Confluent's error body {"error_code": ..., "message": ...}, never
a traceback. The state is a SchemaRegistry (registry/model.py), read and changed on the broker's loop.

Served: subjects and versions (register, look up, list, get, `?deleted=true`, soft and permanent deletes),
schemas by id (schema, subjects, versions), /schemas/types, /config and /config/{subject}, /compatibility
(with `verbose`), /mode and /mode/{subject} (READWRITE, READONLY); schemaType AVRO, JSON and PROTOBUF
(`?format=serialized`: a Protobuf schema as its base64 descriptor), references and /referencedby, IMPORT
mode, schemas' `metadata` and `ruleSet` (kept and returned, rules not executed: registry/contracts.py), and
GET /contexts (the default context "." alone). Not served: other contexts. When the broker has SASL users
every request needs HTTP Basic credentials of one of them (security/basic_auth.py), else 401 with
Confluent's body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from mockbroker.bounded_json import JsonLimitError, loads
from mockbroker.extras import require
from mockbroker.registry.model import SCHEMA_TYPES, RegistryError, SchemaRegistry, Version
from mockbroker.registry.store import Record
from mockbroker.security.basic_auth import BasicCheck, decode_basic, has_users
from mockbroker.security.credentials import Credentials

require("aiohttp", "the Schema Registry")
from aiohttp import http_exceptions, web, web_protocol  # noqa: E402

log = logging.getLogger("mockbroker.registry")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
REALM = 'Basic realm="mockbroker"'
AUTH_MODES = ("basic", "none")  # basic: HTTP Basic over the broker's SASL users, when it has some
MAX_BODY = 2 * 1024 * 1024  # a request body's bound: 413 past it


def _reply(status: int, body: Any) -> web.Response:
    return web.Response(status=status, body=json.dumps(body).encode(), headers={"Content-Type": CONTENT_TYPE})


def _error(exc: RegistryError) -> web.Response:
    response = _reply(exc.status, {"error_code": exc.code, "message": exc.message})
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = REALM
    return response


def _flag(request: web.BaseRequest, name: str) -> bool:
    return request.query.get(name, "false").lower() == "true"


class RegistryApi:
    """The routes over one SchemaRegistry; `handle` is aiohttp's handler."""

    def __init__(self, registry: SchemaRegistry, write: Callable[[list[Record]], None] | None = None,
                 credentials: Credentials | None = None) -> None:
        self.registry = registry
        self.write = write  # where each request's changes go (runner.py: the `_schemas` topic)
        self.credentials = credentials  # the broker's SASL users; None: no authentication
        self.auth = "basic"  # or "none": no authentication even when the broker has users
        self._check = BasicCheck()

    def authenticate(self, header: str) -> None:
        """RegistryError 401 (Confluent's body, as its Jetty answers) unless the request needs no
        credentials (auth "none", a broker without SASL users) or `header` holds a user's valid ones."""
        credentials = self.credentials
        if self.auth == "none" or credentials is None or not has_users(credentials):
            return
        decoded = decode_basic(header)
        if decoded is None or not self._check.check(credentials, *decoded):
            raise RegistryError(401, 401, "Unauthorized")

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        try:
            self.authenticate(request.headers.get("Authorization", ""))
            parts = [unquote(p) for p in request.raw_path.split("?", 1)[0].split("/") if p]
            body = await self._body(request)
            answer = self.route(request.method, parts, request, body)
            self._write()
            return _reply(200, answer)
        except RegistryError as exc:
            return _error(exc)
        except Exception:  # a bug: Confluent's 500 body, and the traceback in the log, not to the client
            log.exception("schema registry: %s %s", request.method, request.path)
            return _error(RegistryError(500, 50001, "Error in the backend data store"))

    def _write(self) -> None:
        journal, self.registry.journal = self.registry.journal, []
        if journal and self.write is not None:
            self.write(journal)

    async def _body(self, request: web.BaseRequest) -> Any:
        if request.method not in ("POST", "PUT"):
            return None
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise RegistryError(413, 413, f"Request body larger than {MAX_BODY} bytes")
        data = await request.content.read(MAX_BODY + 1)
        if len(data) > MAX_BODY:
            raise RegistryError(413, 413, f"Request body larger than {MAX_BODY} bytes")
        try:
            body = loads(data) if data.strip() else {}
        except JsonLimitError as exc:
            raise RegistryError(400, 400, f"Unexpected character in the request body: {exc}") from None
        if not isinstance(body, dict):
            raise RegistryError(422, 422, "The request body must be a JSON object")
        return body

    def route(self, method: str, parts: list[str], request: web.BaseRequest, body: Any) -> Any:
        routes: dict[str, Callable[[str, list[str], web.BaseRequest, Any], Any]] = {
            "subjects": self.subjects, "schemas": self.schemas, "config": self.config,
            "compatibility": self.compatibility, "mode": self.mode, "contexts": self.contexts}
        if not parts:
            if method == "GET":
                return {}
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        handler = routes.get(parts[0])
        if handler is None:
            raise RegistryError(404, 404, "HTTP 404 Not Found")
        return handler(method, parts[1:], request, body)

    # -- /subjects -----------------------------------------------------------------------------
    def subjects(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        reg, deleted = self.registry, _flag(request, "deleted")
        match method, rest:
            case "GET", []:
                return reg.subject_names(deleted=deleted)
            case "POST", [subject]:
                v = reg.lookup(subject, body.get("schema"), body.get("schemaType", "AVRO"), deleted=deleted,
                               references=body.get("references"), normalize=_flag(request, "normalize"),
                               contract=body)
                return self._version_body(subject, v)
            case "DELETE", [subject]:
                return reg.delete_subject(subject, permanent=_flag(request, "permanent"))
            case "GET", [subject, "versions"]:
                return [v.version for v in reg.versions(subject, deleted=deleted)]
            case "POST", [subject, "versions"]:
                return {"id": reg.register(subject, body.get("schema"), body.get("schemaType", "AVRO"),
                                           body.get("references"), _flag(request, "normalize"),
                                           _given(body, "id", 0), _given(body, "version", 1), body)}
            case "GET", [subject, "versions", version]:
                return self._version_body(subject, reg.version(subject, version, deleted=deleted),
                                          request.query.get("format"))
            case "GET", [subject, "versions", version, "schema"]:
                return reg.schema(reg.version(subject, version, deleted=deleted).schema_id).text
            case "GET", [subject, "versions", version, "referencedby"]:
                return reg.referenced_by(subject, version)
            case "DELETE", [subject, "versions", version]:
                return reg.delete_version(subject, version, permanent=_flag(request, "permanent"))
        raise self._not_found(method, rest, ["GET", "POST", "DELETE"])

    def _version_body(self, subject: str, v: Version, fmt: str | None = None) -> dict[str, Any]:
        return {"subject": subject, "version": v.version, "id": v.schema_id,
                **self.registry.schema_body(v.schema_id, fmt)}

    # -- /schemas ------------------------------------------------------------------------------
    def schemas(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        reg = self.registry
        if method != "GET":
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        if rest == ["types"]:
            return list(SCHEMA_TYPES)
        if len(rest) >= 2 and rest[0] == "ids":
            schema_id = _schema_id(rest[1])
            match rest[2:]:
                case []:
                    return reg.schema_body(schema_id, request.query.get("format"))
                case ["schema"]:
                    return reg.schema(schema_id).text
                case ["subjects"]:
                    return sorted({s for s, _ in reg.subjects_of(schema_id, _flag(request, "deleted"))})
                case ["versions"]:
                    return [{"subject": s, "version": v}
                            for s, v in reg.subjects_of(schema_id, _flag(request, "deleted"))]
        raise RegistryError(404, 404, "HTTP 404 Not Found")

    # -- /config, /mode, /compatibility -----------------------------------------------------------
    def config(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        reg = self.registry
        subject = rest[0] if len(rest) == 1 else None
        if len(rest) > 1:
            raise RegistryError(404, 404, "HTTP 404 Not Found")
        if method == "GET":
            if subject is not None and subject not in reg.subject_compatibility and not _flag(
                    request, "defaultToGlobal"):
                raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility "
                                                f"configured")
            return {"compatibilityLevel": reg.compatibility_of(subject)}
        if method == "PUT":
            return {"compatibility": reg.set_compatibility(subject, body.get("compatibility"))}
        if method == "DELETE":
            return {"compatibilityLevel": reg.delete_compatibility(subject)}
        raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")

    def mode(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        reg = self.registry
        subject = rest[0] if len(rest) == 1 else None
        if len(rest) > 1:
            raise RegistryError(404, 404, "HTTP 404 Not Found")
        if method == "GET":
            if subject is not None and subject not in reg.subject_mode and not _flag(request, "defaultToGlobal"):
                raise RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")
            return {"mode": reg.mode_of(subject)}
        if method == "PUT":
            return {"mode": reg.set_mode(subject, body.get("mode"), _flag(request, "force"))}
        if method == "DELETE":
            return {"mode": reg.delete_mode(subject)}
        raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")

    def compatibility(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        if method != "POST":
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        match rest:
            case ["subjects", subject, "versions"]:
                version: str | None = None
            case ["subjects", subject, "versions", version]:
                pass
            case _:
                raise RegistryError(404, 404, "HTTP 404 Not Found")
        messages = self.registry.test_compatibility(subject, body.get("schema"), version,
                                                    body.get("schemaType", "AVRO"), body.get("references"))
        answer: dict[str, Any] = {"is_compatible": not messages}
        if _flag(request, "verbose"):
            answer["messages"] = messages
        return answer

    def contexts(self, method: str, rest: list[str], request: web.BaseRequest, body: Any) -> Any:
        """GET /contexts: the default context "." only (schema contexts are not served)."""
        if rest:
            raise RegistryError(404, 404, "HTTP 404 Not Found")
        if method != "GET":
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        return ["."]

    @staticmethod
    def _not_found(method: str, rest: list[str], methods: list[str]) -> RegistryError:
        if method not in methods:
            return RegistryError(405, 405, "HTTP 405 Method Not Allowed")
        return RegistryError(404, 404, "HTTP 404 Not Found")


def _given(body: dict[str, Any], name: str, least: int) -> int | None:
    """A register body's explicit `id` or `version` (IMPORT mode): None when absent, -1 or 0 (Confluent's
    "not given"); 42201 / 42202 when it is not a number in range."""
    value = body.get(name)
    unset = (-1, 0) if name == "version" else (-1,)
    if value is None or (not isinstance(value, bool) and value in unset):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 2**31 - 1:
        raise RegistryError(422, 42202 if name == "version" else 42201, f"Invalid {name} {value!r}")
    return value


def _schema_id(text: str) -> int:
    if not text.isdigit() or len(text) > 10:
        raise RegistryError(404, 40403, f"Schema {text} not found")
    return int(text)


class _RequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection handler, answering what its parser refuses (a request line or header too long,
    a malformed request) with Confluent's error body instead of aiohttp's text."""

    def handle_error(self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        text = str(getattr(exc, "message", None) or message or "malformed request")
        if isinstance(exc, http_exceptions.LineTooLong):
            status, text = 431, f"Request line or header too long: {text[:200]}"
        elif status < 500:
            status = 400
        else:
            log.error("schema registry: request failed", exc_info=exc)
            text = "Error in the backend data store"
        if request.writer.output_size > 0:
            raise ConnectionError("response already started; cannot send the error")
        response = _reply(status, {"error_code": 50001 if status >= 500 else status, "message": text})
        response.force_close()
        return response


class _Server(web.Server):
    def __call__(self) -> _RequestHandler:
        return _RequestHandler(self, loop=self._loop, **self._kwargs)


class RegistryServer:
    """The registry's HTTP server on the current loop: start(host, port) and stop(); `url` once started."""

    def __init__(self, registry: SchemaRegistry | None = None,
                 write: Callable[[list[Record]], None] | None = None, credentials: Credentials | None = None) -> None:
        self.registry = registry if registry is not None else SchemaRegistry()
        self.api = RegistryApi(self.registry, write, credentials)
        self._runner: web.ServerRunner | None = None
        self.host, self.port, self.scheme = "", 0, "http"

    async def start(self, host: str = "127.0.0.1", port: int = 0, ssl_context: Any = None) -> RegistryServer:
        server = _Server(self.api.handle, access_log=None, handler_cancellation=True)
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_address=True, ssl_context=ssl_context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.host, self.port = host, runner.addresses[0][1]
        self.scheme = "https" if ssl_context is not None else "http"
        log.info("schema registry on %s", self.url)
        return self

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("", "0.0.0.0", "::") else "localhost"
        return f"{self.scheme}://{f'[{host}]' if ':' in host else host}:{self.port}"

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
