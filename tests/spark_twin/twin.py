"""The Java twin of the Spark tests: Spark's Kafka calls without Spark (see conftest.py).

SparkCalls (tests/interop/harness/java/SparkCalls.java, compiled with the rest of the Java harness by
tools/interop_deps.py) makes the calls Spark 4.x's Kafka source and sink make, with the configs they
set, driven by the options a PySpark test passes to spark.read / readStream / write. One JVM serves
the whole session (requests are JSON lines on its stdin), so the tier stays fast.
"""

from __future__ import annotations

import itertools
import json
import os
import selectors
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest

from mockbroker import MockBroker, dispatch
from mockbroker.testing.spark import spark_kafka_options
from tests.interop import clients

Lines = list[dict[str, Any]]
SPARK_CALLS_CLASS = "SparkCalls"


def needs_transactions() -> pytest.MarkDecorator:
    """Skip unless the broker serves the transactional APIs (AddPartitionsToTxn, EndTxn)."""
    dispatch.load_handlers()
    missing = dispatch.lookup(24) is None or dispatch.lookup(26) is None
    return pytest.mark.skipif(missing, reason="needs transactions (AddPartitionsToTxn/EndTxn handlers)")


def needs_compaction() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not hasattr(MockBroker, "compact"), reason="needs compaction (broker.compact)")


class Row(NamedTuple):
    """A row of Spark's Kafka source, as both the twin and the PySpark tests report it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    timestamp_type: int
    headers: tuple[tuple[str, bytes | None], ...] | None = None


def _b64(line: dict[str, Any], name: str) -> bytes | None:
    import base64

    value = line.get(f"{name}_b64")
    return None if value is None else base64.b64decode(value)


def row_of(line: dict[str, Any]) -> Row:
    headers = line.get("headers")
    return Row(
        topic=line["topic"], partition=line["partition"], offset=line["offset"], key=_b64(line, "key"),
        value=_b64(line, "value"), timestamp=line["timestamp"], timestamp_type=line["timestampType"],
        headers=None if headers is None else tuple((h["key"], _b64(h, "value")) for h in headers),
    )


class SparkCallError(AssertionError):
    """A SparkCalls request failed the way Spark would fail: `condition` is Spark's error condition."""

    def __init__(self, end: dict[str, Any], lines: Lines) -> None:
        self.end = end
        self.lines = lines
        self.condition: str | None = end.get("condition")
        self.error: str | None = end.get("error")
        super().__init__(f"{end.get('op')} failed: [{self.condition or self.error}] {end.get('message')}")


@dataclass
class Result:
    """The JSON lines of one request."""

    lines: Lines

    def of_type(self, type_: str) -> Lines:
        return clients.of_type(self.lines, type_)

    @property
    def rows(self) -> list[Row]:
        return sorted(row_of(line) for line in self.of_type("row"))

    @property
    def values(self) -> list[bytes | None]:
        """The values of the rows in (topic, partition, offset) order."""
        return [r.value for r in self.rows]

    def calls(self, api: str) -> Lines:
        return [line for line in self.of_type("call") if line.get("api") == api]


class SparkCallsProcess:
    """`java ... SparkCalls serve`: one request per line in, JSON lines out, each request closed by an
    "end" line. A request that outlives its timeout kills the process (the next request restarts it)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._ids = itertools.count(1)
        self._stderr = tempfile.TemporaryFile()

    def _start(self) -> subprocess.Popen[bytes]:
        clients.require_java()
        extra = os.environ.get("MOCKBROKER_JAVA_OPTS", "").split()
        level = os.environ.get("MOCKBROKER_JAVA_LOG_LEVEL", "WARN")
        argv = ["java", *clients.JAVA_OPTS, *extra, "-cp", clients._deps().java_classpath(), SPARK_CALLS_CLASS,
                "serve", level]
        self._buffer = b""
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        return self._proc

    def stderr_tail(self, lines: int = 40) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace")
        self._stderr.seek(0, os.SEEK_END)
        return "\n".join(text.splitlines()[-lines:])

    def request(self, op: str, args: dict[str, Any] | None = None, timeout: float = 90.0) -> tuple[dict[str, Any], Lines]:
        """Send one request; return (its end line, the lines before it). Never waits past `timeout`."""
        proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
        assert proc.stdin is not None and proc.stdout is not None
        rid = next(self._ids)
        payload = {**(args or {}), "op": op, "id": rid, "deadline_ms": int(timeout * 1000) - 2000}
        proc.stdin.write(json.dumps(payload).encode() + b"\n")
        proc.stdin.flush()
        lines: Lines = []
        deadline = time.monotonic() + timeout
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                while b"\n" in self._buffer:
                    raw, self._buffer = self._buffer.split(b"\n", 1)
                    line = clients.parse_json_lines(raw)
                    if not line:
                        continue
                    if line[0].get("type") == "end" and line[0].get("id") == rid:
                        return line[0], lines
                    if line[0].get("type") == "fatal":
                        self.close()
                        raise clients.HarnessError(f"SparkCalls {op}: fatal", argv=[op], returncode=None,
                                                   lines=lines + line, stderr=self.stderr_tail())
                    lines.append(line[0])
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    self.close()
                    raise clients.HarnessError(f"SparkCalls {op}: no answer in {timeout:.0f}s", argv=[op],
                                               returncode=None, lines=lines, stderr=self.stderr_tail())
                chunk = os.read(fd, 65536)
                if not chunk:
                    rc = proc.wait(10)
                    self._proc = None
                    raise clients.HarnessError(f"SparkCalls {op}: the JVM exited ({rc})", argv=[op], returncode=rc,
                                               lines=lines, stderr=self.stderr_tail())
                self._buffer += chunk

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(15)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(10)


class TwinStream:
    """A streaming query of the twin: the source side of spark.readStream...start()."""

    def __init__(self, twin: SparkTwin, name: str, options: dict[str, str]) -> None:
        self.twin = twin
        self.name = name
        self.options = options
        self.initial_offsets: dict[str, dict[str, int]] = {}
        self.batches: list[Result] = []

    def start(self) -> Result:
        result = self.twin.call("stream_start", stream=self.name, options=self.options)
        self.initial_offsets = result.of_type("initial_offsets")[0]["offsets"]
        return result

    def trigger(self) -> Result:
        """One processing-time trigger: a micro-batch if the offsets moved (or it is the first)."""
        result = self.twin.call("stream_trigger", stream=self.name)
        if result.of_type("batch"):
            self.batches.append(result)
        return result

    def available_now(self) -> Result:
        """Trigger.AvailableNow: batches up to the offsets that were latest when it began."""
        result = self.twin.call("stream_available_now", stream=self.name)
        if result.of_type("batch"):
            self.batches.append(result)
        return result

    @property
    def rows(self) -> list[Row]:
        """Every row of every batch so far (as a sink appending them would hold)."""
        return sorted(r for batch in self.batches for r in batch.rows)

    def stop(self) -> None:
        self.twin.call("stream_stop", stream=self.name)


class SparkTwin:
    """The twin of a Spark session against one broker."""

    def __init__(self, calls: SparkCallsProcess, broker: MockBroker) -> None:
        self.calls = calls
        self.broker = broker
        self.streams: list[TwinStream] = []
        self._names = itertools.count()

    def options(self, **options: Any) -> dict[str, str]:
        return spark_kafka_options(self.broker, **options)

    def call(self, op: str, *, timeout: float = 90.0, **args: Any) -> Result:
        """Run one SparkCalls request; raise SparkCallError when it fails as Spark would."""
        end, lines = self.calls.request(op, args, timeout=timeout)
        if not end.get("ok"):
            raise SparkCallError(end, lines)
        return Result(lines)

    def read(self, **options: Any) -> Result:
        """spark.read.format("kafka").options(...).load(), collected."""
        return self.call("batch_read", options=self.options(**options))

    def stream(self, **options: Any) -> TwinStream:
        """spark.readStream.format("kafka").options(...): started (initial offsets resolved)."""
        stream = TwinStream(self, f"s{next(self._names)}-{id(self)}", self.options(**options))
        stream.start()
        self.streams.append(stream)
        return stream

    def write(self, rows: list[dict[str, Any]], **options: Any) -> Result:
        """df.write.format("kafka").options(...).save() for rows {topic?, key?, value, headers?, partition?}."""
        return self.call("write", rows=rows, options=self.options(**options))

    def produce(self, topic: str, records: list[dict[str, Any]], **config: Any) -> Result:
        """Test set-up: one new (idempotent) KafkaProducer sends the records, synchronously."""
        return self.call("produce", bootstrap=self.broker.bootstrap_servers, topic=topic, records=records,
                         sync=True, config=config)

    def txn(self, topic: str, transactions: list[dict[str, Any]], transactional_id: str = "spark-twin-txn") -> Result:
        """Test set-up: transactions of a transactional producer (KafkaHarness txn)."""
        return self.call("txn", bootstrap=self.broker.bootstrap_servers, topic=topic, transactions=transactions,
                         transactional_id=transactional_id)

    def txn_open(self, topic: str, records: list[dict[str, Any]], transactional_id: str) -> Result:
        """Test set-up: a transaction with the records sent and flushed, left open."""
        return self.call("txn_open", bootstrap=self.broker.bootstrap_servers, topic=topic, records=records,
                         transactional_id=transactional_id)

    def txn_finish(self, transactional_id: str, end: str = "commit") -> Result:
        return self.call("txn_finish", transactional_id=transactional_id, end=end)

    def admin(self, *ops: dict[str, Any]) -> list[dict[str, Any]]:
        """Test set-up: Admin operations (KafkaHarness admin); their result lines, errors raised."""
        result = self.call("admin", bootstrap=self.broker.bootstrap_servers, ops=list(ops))
        assert not result.of_type("error"), result.lines
        return result.of_type("result")

    def close(self) -> None:
        for stream in self.streams:
            try:
                self.calls.request("stream_stop", {"stream": stream.name}, timeout=30)
            except clients.HarnessError:
                pass
        try:
            self.calls.request("close_producers", {}, timeout=30)
        except clients.HarnessError:
            pass
