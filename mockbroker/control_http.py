"""The control endpoint: a small JSON-over-HTTP/1.1 API to a running broker, for users outside Python.

    mockbroker --http-port 8080            (or MOCKBROKER_HTTP_PORT=8080)
    curl -s localhost:8080/topics

Served with asyncio streams on the broker's own event loop (stdlib only), so every handler reads and
changes broker state directly, with no locks and no thread hops. One request at a time per connection;
keep-alive as HTTP/1.1 has it; request bodies need a Content-Length (at most 1 MiB).

    GET    /                                  the list of endpoints
    GET    /health                            {"status": "ok"}
    GET    /topics                            every topic: name, id, partition count, config overrides
    POST   /topics {name, partitions?, config?}   create a topic (201)
    GET    /topics/{name}                     partitions: leader, epoch, log start offset, high
                                              watermark, last stable offset, batch count, bytes
    DELETE /topics/{name}                     delete a topic
    GET    /topics/{name}/records?partition=&offset=&limit=
                                              decoded records (control records left out); keys, values
                                              and header values as UTF-8 when they decode, else base64,
                                              with a *_encoding field saying which ("utf-8"/"base64")
    GET    /topics/{name}/batches?partition=&raw=   stored batches' headers (raw=true: their bytes, base64)
    GET    /producers?topic=&partition=       producer state per partition
    GET    /transactions                      what the broker's transaction coordinator holds ([] if none)
    GET    /groups                            what the broker's group coordinator holds ([] if none)
    POST   /compact {topic, partition?}       run the log cleaner now (501 if this build has none)
    POST   /retention {topic?}                apply retention now, one topic or all (501 if none)
    GET    /clock                             the broker clock, ms
    POST   /clock/advance {seconds}           move the broker clock forward; due timers run
    GET    /faults                            the fault rules waiting
    POST   /faults {api_key, error | drop | delay, count?, topic?, partition?}   MockBroker.inject (201)
    DELETE /faults                            remove every fault rule
    GET    /requests?api_key=&limit=          the requests received (most recent last)
    POST   /reset                             delete every topic (internal ones excepted), clear the
                                              fault rules and the request record (the clock, producer
                                              ids, groups and transactional ids are kept)

Errors are JSON, {"error": "<kind>", "message": "..."}, with a 4xx status for anything the caller got
wrong (400 malformed or invalid, 404 unknown path/topic/partition, 405 wrong method, 409 topic exists,
411 no Content-Length, 413 body too large, 431 header too large) and 501 for a feature this build lacks.
A bug of ours answers 500 with a JSON body (the traceback goes to the broker's log, never to the client).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import enum
import inspect
import json
import logging
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from mockbroker.errors import KafkaError
from mockbroker.inspection import batch_info, record_info
from mockbroker.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.server import MockBroker
    from mockbroker.state.cluster import Partition, Topic

log = logging.getLogger("mockbroker.control")

MAX_BODY = 1 << 20
MAX_HEADERS = 100
LINE_LIMIT = 64 * 1024
IDLE_TIMEOUT = 60.0  # seconds a kept-alive connection may wait for its next request
READ_TIMEOUT = 10.0  # seconds to receive a request's headers and body once it started
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           408: "Request Timeout", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
           431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
           505: "HTTP Version Not Supported"}


class HttpError(Exception):
    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers or {}


@dataclasses.dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = dataclasses.field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        """The body as a JSON object ({} when empty)."""
        if not self.body.strip():
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HttpError(400, "bad_json", f"the body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise HttpError(400, "bad_json", "the body must be a JSON object")
        return value

    def arg(self, name: str) -> str | None:
        values = self.query.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise HttpError(400, "bad_query", f"query parameter {name} given {len(values)} times")
        return values[0]

    def int_arg(self, name: str, default: int | None = None, *, lo: int | None = None,
                hi: int | None = None) -> int | None:
        raw = self.arg(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise HttpError(400, "bad_query", f"query parameter {name}={raw!r} is not an integer") from None
        _check_range(name, value, lo, hi, "bad_query")
        return value

    def bool_arg(self, name: str) -> bool:
        raw = (self.arg(name) or "").lower()
        if raw in ("", "0", "false", "no"):
            return False
        if raw in ("1", "true", "yes"):
            return True
        raise HttpError(400, "bad_query", f"query parameter {name}={raw!r} is not true or false")


def _check_range(name: str, value: int | float, lo: int | float | None, hi: int | float | None, kind: str) -> None:
    if lo is not None and value < lo:
        raise HttpError(400, kind, f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise HttpError(400, kind, f"{name} must be <= {hi}, got {value}")


# ------------------------------------------------------------------------------------------------
# JSON field helpers


def _field(body: dict[str, Any], name: str, types: tuple[type, ...], what: str, *, required: bool = False) -> Any:
    if name not in body or body[name] is None:
        if required:
            raise HttpError(400, "missing_field", f"field {name!r} is required ({what})")
        return None
    value = body[name]
    if isinstance(value, bool) and bool not in types:
        raise HttpError(400, "bad_field", f"field {name!r} must be {what}, got {json.dumps(value)}")
    if not isinstance(value, types):
        raise HttpError(400, "bad_field", f"field {name!r} must be {what}, got {json.dumps(value)}")
    return value


def _int_field(body: dict[str, Any], name: str, *, required: bool = False, lo: int | None = None,
               hi: int | None = None) -> int | None:
    value = _field(body, name, (int,), "an integer", required=required)
    if value is not None:
        _check_range(name, value, lo, hi, "bad_field")
    return value


def _reject_unknown_fields(body: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(body) - allowed)
    if extra:
        raise HttpError(400, "unknown_field", f"unknown field(s) {', '.join(extra)}; expected {', '.join(sorted(allowed))}")


def encoded(data: bytes | None) -> tuple[str | None, str | None]:
    """(text, encoding): UTF-8 text when the bytes decode, else base64; (None, None) for null."""
    if data is None:
        return None, None
    try:
        return bytes(data).decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(bytes(data)).decode("ascii"), "base64"


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of what a broker feature returns (dataclasses, enums, bytes, sets, objects)."""
    if depth > 8:
        return repr(value)
    if isinstance(value, enum.Enum):
        return value.name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return encoded(bytes(value))[0]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v, depth + 1) for v in value), key=repr)
    if isinstance(value, (list, tuple)) or hasattr(value, "__iter__") and not hasattr(value, "__dict__"):
        return [jsonable(v, depth + 1) for v in value]
    if hasattr(value, "__dict__"):
        return {k: jsonable(v, depth + 1) for k, v in vars(value).items()
                if not k.startswith("_") and not callable(v)}
    return repr(value)


def _api_keys() -> dict[str, int]:
    from mockbroker.protocol.messages import api_keys, api_name

    return {api_name(k): k for k in api_keys()}


# ------------------------------------------------------------------------------------------------
# the endpoints


class ControlServer:
    """The HTTP control endpoint of one broker; start() on the broker's event loop."""

    def __init__(self, broker: MockBroker) -> None:
        self.broker = broker
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.host = ""
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> ControlServer:
        self._server = await asyncio.start_server(self._serve, host, port, limit=LINE_LIMIT, reuse_address=True)
        sockname = self._server.sockets[0].getsockname()
        self.host, self.port = host, sockname[1]
        log.info("control endpoint on %s", self.url)
        return self

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("", "0.0.0.0", "::") else "localhost"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2)
            except (TimeoutError, OSError):
                pass
            self._server = None

    # -- HTTP/1.1 --------------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            keep_alive = True
            while keep_alive:
                try:
                    line = await asyncio.wait_for(reader.readline(), IDLE_TIMEOUT)
                except (TimeoutError, ConnectionError):
                    return
                except (asyncio.LimitOverrunError, ValueError):
                    await self._send(writer, 431, {"error": "too_large", "message": "request line too long"},
                                     close=True)
                    return
                if not line:
                    return
                if not line.strip():
                    continue  # a stray CRLF between requests is allowed
                keep_alive = await self._one(line, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # never let a bug here take the loop's broker down
            log.exception("control endpoint: connection failed")
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one(self, line: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read and answer one request whose request line is `line`; whether to keep the connection."""
        try:
            parts = line.decode("latin-1").strip().split(" ")
            if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                raise HttpError(400, "bad_request", "malformed request line")
            method, target, version = parts
            if version not in ("HTTP/1.1", "HTTP/1.0"):
                raise HttpError(505, "bad_version", f"{version} is not supported (HTTP/1.1)")
            headers = await asyncio.wait_for(self._headers(reader), READ_TIMEOUT)
            conn = headers.get("connection", "").lower()
            keep_alive = (version == "HTTP/1.1" and conn != "close") or (version == "HTTP/1.0" and conn == "keep-alive")
            body = await asyncio.wait_for(self._body(reader, headers, method), READ_TIMEOUT)
        except HttpError as exc:
            await self._send(writer, exc.status, {"error": exc.error, "message": exc.message}, close=True)
            return False
        except (asyncio.LimitOverrunError, ValueError):
            await self._send(writer, 431, {"error": "too_large", "message": "header line too long"}, close=True)
            return False
        except TimeoutError:
            await self._send(writer, 408, {"error": "timeout", "message": "request not received in time"},
                             close=True)
            return False
        status, payload, extra = await self._dispatch(method, target, headers, body)
        await self._send(writer, status, payload, close=not keep_alive, extra=extra, head=method == "HEAD")
        return keep_alive

    async def _headers(self, reader: asyncio.StreamReader) -> dict[str, str]:
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS + 1):
            line = await reader.readline()
            if not line:
                raise asyncio.IncompleteReadError(b"", None)
            if line in (b"\r\n", b"\n"):
                return headers
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep or not name.strip() or name != name.strip():
                raise HttpError(400, "bad_request", "malformed header line")
            key = name.strip().lower()
            if key in headers and key in ("content-length", "transfer-encoding", "host"):
                raise HttpError(400, "bad_request", f"header {name.strip()} given twice")
            headers[key] = value.strip()
        raise HttpError(431, "too_large", f"more than {MAX_HEADERS} header lines")

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str], method: str) -> bytes:
        if "transfer-encoding" in headers:
            raise HttpError(411, "length_required", "chunked bodies are not supported: send a Content-Length")
        raw = headers.get("content-length")
        if raw is None:
            return b""
        if not raw.isdigit():
            raise HttpError(400, "bad_request", f"bad Content-Length {raw!r}")
        size = int(raw)
        if size > MAX_BODY:
            raise HttpError(413, "too_large", f"request body over {MAX_BODY} bytes")
        return await reader.readexactly(size)

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any, *, close: bool,
                    extra: dict[str, str] | None = None, head: bool = False) -> None:
        body = (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}",
                 "Content-Type: application/json; charset=utf-8",
                 f"Content-Length: {len(body)}",
                 "Cache-Control: no-store",
                 f"Connection: {'close' if close else 'keep-alive'}"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head else body))
        try:
            await writer.drain()
        except ConnectionError:
            pass

    async def _dispatch(self, method: str, target: str, headers: dict[str, str],
                        body: bytes) -> tuple[int, Any, dict[str, str]]:
        try:
            url = urlsplit(target)
            path = unquote(url.path)
            if len(path) > 1:
                path = path.rstrip("/")
            query = parse_qs(url.query, keep_blank_values=True)
            route, params, allowed = _route(method, path)
            if route is None:
                if allowed:
                    raise HttpError(405, "method_not_allowed", f"{method} is not allowed on {path} "
                                    f"(allowed: {', '.join(allowed)})", {"Allow": ", ".join(allowed)})
                raise HttpError(404, "not_found", f"no endpoint {path}; GET / lists them")
            request = Request(method, path, query, headers, body, params)
            result = route(self, request)
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, tuple):
                return result[0], result[1], {}
            return 200, result, {}
        except HttpError as exc:
            return exc.status, {"error": exc.error, "message": exc.message}, exc.headers
        except Exception as exc:
            log.exception("control endpoint: %s %s failed", method, target)
            return 500, {"error": "internal", "message": f"{type(exc).__name__}: {exc}"}, {}

    # -- helpers ---------------------------------------------------------------------------------
    def _topic(self, name: str) -> Topic:
        topic = self.broker.cluster.topic(name)
        if topic is None:
            raise HttpError(404, "unknown_topic", f"no topic {name!r}")
        return topic

    def _partition(self, topic: Topic, index: int | None) -> Partition:
        p = topic.partition(index if index is not None else 0)
        if p is None:
            raise HttpError(404, "unknown_partition",
                            f"topic {topic.name!r} has partitions 0..{len(topic.partitions) - 1}, not {index}")
        return p

    # -- endpoints -------------------------------------------------------------------------------
    def index(self, req: Request) -> Any:
        return {"endpoints": [f"{m} {p}" for m, p, _ in ROUTE_DOCS]}

    def health(self, req: Request) -> Any:
        return {"status": "ok", "bootstrap_servers": self.broker.bootstrap_servers}

    def list_topics(self, req: Request) -> Any:
        return {"topics": [self._topic_summary(t) for _, t in sorted(self.broker.cluster.topics.items())]}

    @staticmethod
    def _topic_summary(t: Topic) -> dict[str, Any]:
        return {"name": t.name, "topic_id": str(t.topic_id), "partitions": len(t.partitions),
                "internal": t.internal, "config": t.config.overrides()}

    def get_topic(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        out = self._topic_summary(t)
        out["partitions"] = [
            {"partition": p.index, "leader": p.leader_id, "leader_epoch": p.leader_epoch,
             "replicas": list(p.replicas), "log_start_offset": p.log.log_start_offset,
             "high_watermark": p.log.high_watermark, "last_stable_offset": p.log.last_stable_offset,
             "batches": len(p.log.batches), "size_bytes": p.log.size_bytes}
            for p in t.partitions
        ]
        return out

    def create_topic(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, {"name", "partitions", "config"})
        name = _field(body, "name", (str,), "a topic name", required=True)
        partitions = _int_field(body, "partitions", lo=1)
        config = _field(body, "config", (dict,), "an object of topic settings") or {}
        settings: dict[str, str] = {}
        for key, value in config.items():
            if isinstance(value, bool):
                settings[key] = "true" if value else "false"
            elif isinstance(value, (int, float, str)):
                settings[key] = str(value)
            else:
                raise HttpError(400, "bad_field", f"config {key!r} must be a string, number or boolean")
        try:
            topic = self.broker.create_topic(name, partitions if partitions is not None else -1, settings)
        except KafkaError as exc:
            status = 409 if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS else 400
            raise HttpError(status, exc.code.name.lower(), exc.message or exc.code.name) from None
        req.params["name"] = topic.name
        return 201, self.get_topic(req)

    def delete_topic(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        self.broker.delete_topic(t.name)
        return {"deleted": t.name}

    def records(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        index = req.int_arg("partition", lo=0)
        start = req.int_arg("offset", lo=0)
        limit = req.int_arg("limit", DEFAULT_LIMIT, lo=0, hi=MAX_LIMIT)
        assert limit is not None
        parts = [self._partition(t, index)] if index is not None else list(t.partitions)
        out: list[dict[str, Any]] = []
        next_offsets: dict[str, int] = {}
        for p in parts:
            log_ = p.log
            first = max(start or 0, log_.log_start_offset)
            next_offsets[str(p.index)] = first
            for b in log_.iter_batches(first):
                if len(out) >= limit:
                    break
                if b.is_control:
                    next_offsets[str(p.index)] = b.last_offset + 1
                    continue
                for rec in b.view().records():
                    if rec.offset < first:
                        continue
                    if len(out) >= limit:
                        break
                    out.append(self._record_json(record_info(t.name, p.index, b, rec)))
                    next_offsets[str(p.index)] = rec.offset + 1
                else:
                    next_offsets[str(p.index)] = max(next_offsets[str(p.index)], b.last_offset + 1)
        return {"topic": t.name, "records": out, "next_offsets": next_offsets}

    @staticmethod
    def _record_json(r: Any) -> dict[str, Any]:
        key, key_enc = encoded(r.key)
        value, value_enc = encoded(r.value)
        headers = []
        for hk, hv in r.headers:
            text, enc = encoded(hv)
            headers.append({"key": hk, "value": text, "value_encoding": enc})
        return {"partition": r.partition, "offset": r.offset, "timestamp": r.timestamp,
                "timestamp_type": "LogAppendTime" if r.timestamp_type == 1 else "CreateTime",
                "key": key, "key_encoding": key_enc, "value": value, "value_encoding": value_enc,
                "headers": headers, "producer_id": r.producer_id, "producer_epoch": r.producer_epoch,
                "sequence": r.sequence, "is_transactional": r.is_transactional}

    def batches(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        p = self._partition(t, req.int_arg("partition", lo=0))
        raw = req.bool_arg("raw")
        out = []
        for stored in p.log.batches:
            info = batch_info(stored)
            item = {f.name: jsonable(getattr(info, f.name)) for f in dataclasses.fields(info) if f.name != "raw"}
            item["codec"] = info.codec.name.lower()
            if raw:
                item["raw_base64"] = base64.b64encode(info.raw).decode("ascii")
            out.append(item)
        return {"topic": t.name, "partition": p.index, "batches": out}

    def producers(self, req: Request) -> Any:
        name = req.arg("topic")
        index = req.int_arg("partition", lo=0)
        if index is not None and not name:
            raise HttpError(400, "bad_query", "partition= needs topic=")
        topics = [self._topic(name)] if name else [t for _, t in sorted(self.broker.cluster.topics.items())]
        out = []
        for t in topics:
            parts = [self._partition(t, index)] if index is not None else t.partitions
            for p in parts:
                table = getattr(p.log, "producers", None)
                entries = getattr(table, "entries", None) or {}
                for e in sorted(entries.values(), key=lambda e: e.producer_id):
                    out.append({
                        "topic": t.name, "partition": p.index, "producer_id": e.producer_id,
                        "producer_epoch": e.epoch, "last_sequence": e.last_seq,
                        "last_timestamp": e.last_timestamp,
                        "current_txn_start_offset": getattr(e, "current_txn_first_offset", -1),
                        "coordinator_epoch": getattr(e, "coordinator_epoch", -1),
                        "batches": [{"first_sequence": b.first_seq, "last_sequence": b.last_seq,
                                     "first_offset": b.first_offset, "last_offset": b.last_offset,
                                     "timestamp": b.timestamp} for b in e.batches],
                    })
        return {"producers": out}

    def _feature(self, names: tuple[str, ...], holders: tuple[str, ...]) -> list[Any]:
        """What the broker has under one of `names` (a method called with no arguments, or a collection),
        looked for on the broker, then on `holders` (coordinator objects); [] when it has none."""
        candidates = [self.broker, self.broker.cluster]
        candidates += [getattr(self.broker, h, None) for h in holders]
        for owner in candidates:
            if owner is None:
                continue
            for name in names:
                value = getattr(owner, name, None)
                if value is None:
                    continue
                if callable(value):
                    try:
                        value = value()
                    except TypeError:
                        continue
                if isinstance(value, dict):
                    value = list(value.values())
                result = jsonable(value)
                return result if isinstance(result, list) else [result]
        return []

    def transactions(self, req: Request) -> Any:
        return {"transactions": self._feature(("transactions", "list_transactions", "txns"),
                                              ("txn_coordinator", "transaction_coordinator", "txn"))}

    def groups(self, req: Request) -> Any:
        return {"groups": self._feature(("groups", "list_groups"), ("group_coordinator", "coordinator"))}

    async def compact(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, {"topic", "partition"})
        name = _field(body, "topic", (str,), "a topic name", required=True)
        index = _int_field(body, "partition", lo=0)
        compact = getattr(self.broker, "compact", None)
        if compact is None:
            raise HttpError(501, "not_implemented", "this broker has no log cleaner yet (MockBroker.compact)")
        t = self._topic(name)
        if index is not None:
            self._partition(t, index)
        try:
            result = compact(t.name) if index is None else compact(t.name, index)
            if inspect.isawaitable(result):
                result = await result
        except KafkaError as exc:
            raise HttpError(400, exc.code.name.lower(), exc.message or exc.code.name) from None
        except KeyError as exc:
            raise HttpError(404, "unknown_partition", str(exc.args[0] if exc.args else exc)) from None
        except ValueError as exc:  # e.g. a topic whose cleanup.policy is not compact
            raise HttpError(400, "bad_request", str(exc)) from None
        return {"compacted": t.name, "partition": index, "result": jsonable(result)}

    def retention(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, {"topic"})
        name = _field(body, "topic", (str,), "a topic name")
        enforce = getattr(self.broker, "enforce_retention", None)
        if enforce is None:
            raise HttpError(501, "not_implemented", "this broker has no retention yet (MockBroker.enforce_retention)")
        if name is not None:
            self._topic(name)
        return {"topic": name, "deleted_segments": jsonable(enforce(name))}

    def clock(self, req: Request) -> Any:
        return {"now_ms": self.broker.clock.now_ms()}

    def advance(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, {"seconds"})
        seconds = _field(body, "seconds", (int, float), "a number of seconds", required=True)
        if not math.isfinite(seconds) or seconds < 0:
            raise HttpError(400, "bad_field", f"seconds must be a finite number >= 0, got {seconds}")
        self.broker.clock.advance(seconds)
        return {"now_ms": self.broker.clock.now_ms(), "advanced_seconds": seconds}

    @staticmethod
    def _rule_json(rule: Any) -> dict[str, Any]:
        from mockbroker.protocol.messages import api_name

        out = jsonable(rule)
        try:
            out["api_name"] = api_name(rule.api_key)
        except Exception:
            out["api_name"] = None
        if rule.action == "error":
            try:
                out["error"] = ErrorCode(rule.error_code).name
            except ValueError:
                out["error"] = None
        return out

    def list_faults(self, req: Request) -> Any:
        return {"faults": [self._rule_json(r) for r in self.broker.faults.rules]}

    def add_fault(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, {"api_key", "error", "drop", "delay", "count", "topic", "partition"})
        raw_key = _field(body, "api_key", (int, str), "an API key number or name (e.g. 0 or \"Produce\")",
                         required=True)
        keys = _api_keys()
        if isinstance(raw_key, str):
            if raw_key not in keys:
                raise HttpError(400, "bad_field", f"unknown API name {raw_key!r}")
            api_key = keys[raw_key]
        else:
            if raw_key not in keys.values():
                raise HttpError(400, "bad_field", f"unknown API key {raw_key}")
            api_key = raw_key
        chosen = [k for k in ("error", "drop", "delay") if body.get(k) is not None]
        if len(chosen) != 1:
            raise HttpError(400, "bad_field", "give exactly one of error, drop, delay")
        kwargs: dict[str, Any] = {}
        if "error" in chosen:
            raw_err = _field(body, "error", (int, str), "an error code number or name")
            try:
                kwargs["error"] = ErrorCode[raw_err] if isinstance(raw_err, str) else ErrorCode(raw_err)
            except (KeyError, ValueError):
                raise HttpError(400, "bad_field", f"unknown error code {raw_err!r}") from None
        elif "drop" in chosen:
            drop = _field(body, "drop", (str,), '"before" or "after"')
            if drop not in ("before", "after"):
                raise HttpError(400, "bad_field", f'drop must be "before" or "after", got {drop!r}')
            kwargs["drop"] = drop
        else:
            delay = _field(body, "delay", (int, float), "a number of seconds")
            if not math.isfinite(delay) or delay < 0:
                raise HttpError(400, "bad_field", f"delay must be a finite number >= 0, got {delay}")
            kwargs["delay"] = float(delay)
        count = _int_field(body, "count", lo=1)
        topic = _field(body, "topic", (str,), "a topic name")
        partition = _int_field(body, "partition", lo=0)
        if partition is not None and topic is None:
            raise HttpError(400, "bad_field", "partition needs topic")
        try:
            rule = self.broker.inject(api_key, count=count or 1, topic=topic, partition=partition, **kwargs)
        except ValueError as exc:
            raise HttpError(400, "bad_field", str(exc)) from None
        return 201, {"fault": self._rule_json(rule)}

    def clear_faults(self, req: Request) -> Any:
        n = len(self.broker.faults.rules)
        self.broker.clear_faults()
        return {"cleared": n}

    def requests(self, req: Request) -> Any:
        api_key = req.int_arg("api_key", lo=0)
        limit = req.int_arg("limit", 1000, lo=0, hi=100_000)
        assert limit is not None
        got = self.broker.received(api_key)
        got = got[len(got) - limit:] if limit else []
        return {"requests": [jsonable(r) for r in got]}

    def reset(self, req: Request) -> Any:
        body = req.json()
        _reject_unknown_fields(body, set())
        deleted = []
        for name, topic in sorted(self.broker.cluster.topics.items()):
            if topic.internal:
                continue
            self.broker.delete_topic(name)
            deleted.append(name)
        faults = len(self.broker.faults.rules)
        self.broker.clear_faults()
        self.broker.requests.clear()
        return {"deleted_topics": deleted, "cleared_faults": faults}


_NAME = r"(?P<name>[^/]+)"
ROUTE_DOCS: list[tuple[str, str, Callable[..., Any]]] = [
    ("GET", "/", ControlServer.index),
    ("GET", "/health", ControlServer.health),
    ("GET", "/topics", ControlServer.list_topics),
    ("POST", "/topics", ControlServer.create_topic),
    ("GET", "/topics/{name}", ControlServer.get_topic),
    ("DELETE", "/topics/{name}", ControlServer.delete_topic),
    ("GET", "/topics/{name}/records", ControlServer.records),
    ("GET", "/topics/{name}/batches", ControlServer.batches),
    ("GET", "/producers", ControlServer.producers),
    ("GET", "/transactions", ControlServer.transactions),
    ("GET", "/groups", ControlServer.groups),
    ("POST", "/compact", ControlServer.compact),
    ("POST", "/retention", ControlServer.retention),
    ("GET", "/clock", ControlServer.clock),
    ("POST", "/clock/advance", ControlServer.advance),
    ("GET", "/faults", ControlServer.list_faults),
    ("POST", "/faults", ControlServer.add_fault),
    ("DELETE", "/faults", ControlServer.clear_faults),
    ("GET", "/requests", ControlServer.requests),
    ("POST", "/reset", ControlServer.reset),
]
_ROUTES: list[tuple[str, re.Pattern[str], Callable[..., Any]]] = [
    (m, re.compile(p.replace("{name}", _NAME)), fn) for m, p, fn in ROUTE_DOCS
]


def _route(method: str, path: str) -> tuple[Callable[..., Any] | None, dict[str, str], list[str]]:
    """(handler, path parameters, methods allowed on the path)."""
    allowed: list[str] = []
    lookup = "GET" if method == "HEAD" else method
    for m, pattern, fn in _ROUTES:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if m == lookup:
            return fn, match.groupdict(), []
        allowed.append(m)
    if "GET" in allowed:
        allowed.append("HEAD")
    return None, {}, allowed


async def start_control_server(broker: MockBroker, host: str = "127.0.0.1", port: int = 0) -> ControlServer:
    """Serve the control endpoint for `broker` (call on the broker's event loop)."""
    return await ControlServer(broker).start(host, port)


__all__ = ["ControlServer", "start_control_server", "HttpError", "encoded", "jsonable"]
