"""The interop tooling itself, no broker needed: the real clients are installed, the harnesses build
and run, their codecs work on this machine and produce what the broker's Python codecs can read,
and a run against nothing ends within its bounds instead of hanging.
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import struct
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import crc32c
import lz4.frame
import pytest
import snappy
import zstandard

from tests.interop import clients
from tests.interop.clients import HarnessError, of_type, run_java, run_kafkajs, run_kcat

java = pytest.mark.java
interop = pytest.mark.interop

KAFKA_CLIENTS_VERSION = "4.3.0"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: connections are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def decompress(codec: str, data: bytes) -> bytes:
    """What the broker will have to do with a client's compressed records, with the Python libraries."""
    if codec == "none":
        return data
    if codec == "gzip":
        return gzip.decompress(data)
    if codec == "lz4":
        return bytes(lz4.frame.decompress(data))
    if codec == "zstd":
        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(data))
    if codec == "snappy":
        xerial = b"\x82SNAPPY\x00"
        if not data.startswith(xerial):
            return bytes(snappy.uncompress(data))  # raw snappy (KafkaJS, librdkafka may send either)
        out, pos = bytearray(), 16  # magic, version, compatible version; then (int32 size, chunk)*
        while pos < len(data):
            (size,) = struct.unpack_from(">i", data, pos)
            out += snappy.uncompress(data[pos + 4 : pos + 4 + size])
            pos += 4 + size
        return bytes(out)
    raise ValueError(codec)


# ------------------------------------------------------------------------------------------------
# helpers that need no client


def test_missing_client_skips_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(clients.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="kcat not found"):
        clients.require("kcat not found on PATH")


def test_missing_client_fails_when_interop_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clients.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="kcat not found"):
        clients.require("kcat not found on PATH")
    clients.require(None)  # available: nothing happens


def test_cache_dir_follows_mockbroker_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    deps = clients._deps()
    monkeypatch.setenv("MOCKBROKER_CACHE", str(tmp_path))
    assert deps.cache_dir() == tmp_path
    cp = deps.java_classpath().split(":")
    assert cp[0].startswith(str(tmp_path / "java" / "classes-"))  # one build per version of the sources
    assert f"{tmp_path}/java/lib/kafka-clients-{KAFKA_CLIENTS_VERSION}.jar" in cp
    # the old net.jpountz lz4 jar in the wheel shadows lz4-java's classes: never on the classpath
    assert not any("lz4-1.3.0" in p for p in cp)


def test_parse_json_lines_keeps_stray_output_visible() -> None:
    lines = clients.parse_json_lines(b'{"type": "a"}\n\nnot json\n[1]\n')
    assert lines == [{"type": "a"}, {"type": "unparsed", "text": "not json"}, {"type": "unparsed", "text": "[1]"}]


# ------------------------------------------------------------------------------------------------
# Java: kafka-clients 4.3.0 and the harness


@interop
@java
def test_java_jars_are_in_the_cache_and_kafka_clients_is_4_3_0() -> None:
    clients.require_java()
    deps = clients._deps()
    for jar in deps.java_jars():
        with zipfile.ZipFile(jar) as zf:
            assert zf.testzip() is None, jar
    with zipfile.ZipFile(deps.java_lib_dir() / f"kafka-clients-{KAFKA_CLIENTS_VERSION}.jar") as zf:
        props = zf.read("kafka/kafka-version.properties").decode()
    assert f"version={KAFKA_CLIENTS_VERSION}" in props.splitlines()


@interop
@java
def test_java_harness_reports_kafka_clients_version() -> None:
    [line] = run_java("version", timeout=60)
    assert line["type"] == "version"
    assert line["kafka_clients"] == KAFKA_CLIENTS_VERSION
    assert int(line["java"].split(".")[0]) >= 17


@interop
@java
def test_java_harness_help_lists_every_command() -> None:
    clients.require_java()
    proc = subprocess.run([*clients.java_argv("--help")[:-2], "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for command in ("version", "produce", "consume", "txn", "admin", "batch", "decode", "codecs"):
        assert f"\n  {command} " in proc.stdout


@interop
@java
def test_java_harness_unknown_command_is_a_usage_error() -> None:
    with pytest.raises(HarnessError) as info:
        run_java("no-such-command", {}, timeout=60)
    assert info.value.returncode == 2
    assert info.value.lines[-1]["type"] == "fatal"
    assert info.value.lines[-1]["error"] == "UsageError"


@interop
@java
def test_java_codecs_all_work_on_this_machine() -> None:
    lines = run_java("codecs", timeout=60)
    results = {line["codec"]: line for line in of_type(lines, "codec")}
    assert sorted(results) == sorted(CODECS)
    failed = {c: r.get("message") for c, r in results.items() if not r["ok"]}
    assert not failed


@interop
@java
@pytest.mark.parametrize("codec", CODECS)
def test_java_batch_round_trips_records_and_python_can_decompress_it(codec: str) -> None:
    records = [
        {"key": "k0", "value": "hello", "timestamp": 1_700_000_000_000, "headers": [{"key": "h", "value": "v"}]},
        {"key": None, "value_b64": base64.b64encode(b"\x00\xff\xfe").decode(), "timestamp": 1_700_000_000_005},
        {"key": "k2", "value": None, "timestamp": 1_700_000_000_001, "headers": [{"key": "n", "value": None}]},
    ]
    lines = run_java("batch", {"records": records, "compression": codec, "producer_id": 42, "producer_epoch": 3,
                               "base_sequence": 7, "base_offset": 100}, timeout=60)
    [batch] = of_type(lines, "batch")
    [info] = of_type(lines, "batch_info")
    assert info["valid"] is True
    assert (info["compression"], info["magic"], info["count"]) == (codec, 2, 3)
    assert (info["base_offset"], info["last_offset"]) == (100, 102)
    assert (info["producer_id"], info["producer_epoch"], info["base_sequence"], info["last_sequence"]) == (42, 3, 7, 9)
    assert info["max_timestamp"] == 1_700_000_000_005
    got = of_type(lines, "batch_record")
    assert [r["key"] for r in got] == ["k0", None, "k2"]
    assert [r["value_b64"] for r in got] == [
        base64.b64encode(b"hello").decode(), base64.b64encode(b"\x00\xff\xfe").decode(), None]
    assert "value" not in got[1]  # not UTF-8: only the base64 form
    assert got[0]["headers"] == [{"key": "h", "value": "v", "value_b64": base64.b64encode(b"v").decode()}]
    assert got[2]["headers"] == [{"key": "n", "value": None, "value_b64": None}]

    raw = base64.b64decode(batch["batch_b64"])
    assert len(raw) == batch["size_bytes"] == info["size_bytes"]
    plain = decompress(codec, raw[61:])  # records section after the 61-byte v2 batch header
    assert b"hello" in plain and b"\x00\xff\xfe" in plain


@interop
@java
def test_java_decode_reads_batch_bytes_back() -> None:
    [batch, *_] = run_java("batch", {"records": [{"value": "x"}], "compression": "zstd"}, timeout=60)
    lines = run_java("decode", {"batch_b64": batch["batch_b64"]}, timeout=60)
    assert [line["type"] for line in lines] == ["batch_info", "batch_record"]
    assert lines[1]["value"] == "x"


@interop
@java
def test_java_produce_without_a_broker_reports_errors_within_its_timeout(closed_port: int) -> None:
    lines = run_java("produce", {"bootstrap": f"127.0.0.1:{closed_port}", "topic": "t", "timeout_ms": 1500,
                                 "records": [{"value": "x"}]}, timeout=60)
    [err] = of_type(lines, "send_error")
    assert err["error"] == "TimeoutException" and err["index"] == 0
    assert lines[-1] == {"type": "done", "sent": 0, "failed": 1}


@interop
@java
def test_java_watchdog_ends_a_run_past_its_deadline(closed_port: int) -> None:
    with pytest.raises(HarnessError) as info:
        run_java("consume", {"bootstrap": f"127.0.0.1:{closed_port}", "topic": "t", "timeout_ms": 30_000,
                             "deadline_ms": 1500}, timeout=60)
    assert info.value.returncode == 3
    assert info.value.lines[-1]["error"] == "Watchdog"


# ------------------------------------------------------------------------------------------------
# KafkaJS


@interop
def test_kafkajs_loads_with_the_pinned_version() -> None:
    pinned = json.loads((clients.HARNESS_DIR / "node" / "package.json").read_text())["dependencies"]["kafkajs"]
    [line] = run_kafkajs("version", timeout=60)
    assert line["type"] == "version"
    assert line["kafkajs"] == pinned


@interop
def test_kafkajs_codecs_work_and_python_reads_what_they_write() -> None:
    lines = run_kafkajs("codecs", {"emit_bytes": True}, timeout=60)
    results = {line["codec"]: line for line in of_type(lines, "codec")}
    assert sorted(results) == sorted(CODECS)
    for codec, r in results.items():
        assert r["ok"], (codec, r.get("message"))
        if codec != "none":
            plain = base64.b64decode(r["plain_b64"])
            assert decompress(codec, base64.b64decode(r["compressed_b64"])) == plain, codec


CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def java_batch(compression: str, records: Sequence[Mapping[str, object]]) -> bytes:
    lines = run_java("batch", {"records": records, "compression": compression}, timeout=60)
    return base64.b64decode(of_type(lines, "batch")[0]["batch_b64"])


def recompressed(batch: bytes, codec: str, compressed_records: bytes) -> bytes:
    """An uncompressed v2 batch with its records section replaced by `compressed_records`."""
    out = bytearray(batch[:61]) + compressed_records
    struct.pack_into(">i", out, 8, len(out) - 12)  # batchLength
    (attributes,) = struct.unpack_from(">h", out, 21)
    struct.pack_into(">h", out, 21, (attributes & ~0x07) | CODEC_IDS[codec])
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


@interop
@java
def test_java_reads_batches_compressed_by_kafkajs_codecs() -> None:
    """What a real broker does with a KafkaJS batch: Kafka's own Java code decompresses it."""
    clients.require_kafkajs()
    records = [{"key": f"k{i}", "value": f"value {i} " + "y" * i} for i in range(300)]  # > one 64 KB lz4 block
    plain_batch = java_batch("none", records)
    section = base64.b64encode(plain_batch[61:]).decode()
    codecs = ["gzip", "snappy", "lz4", "zstd"]
    lines = run_kafkajs("codecs", {"compress": dict.fromkeys(codecs, section)}, timeout=60)
    for line in of_type(lines, "compressed"):
        assert line["ok"], line
        batch = recompressed(plain_batch, line["codec"], base64.b64decode(line["compressed_b64"]))
        decoded = run_java("decode", {"batch_b64": base64.b64encode(batch).decode()}, timeout=60)
        [info] = of_type(decoded, "batch_info")
        assert (info["valid"], info["compression"]) == (True, line["codec"])
        assert [r["value"] for r in of_type(decoded, "batch_record")] == [r["value"] for r in records]


@interop
@java
def test_kafkajs_codecs_read_what_java_compresses() -> None:
    clients.require_kafkajs()
    records = [{"value": f"value {i} " + "z" * i} for i in range(300)]
    sections = {codec: java_batch(codec, records)[61:] for codec in ["gzip", "snappy", "lz4", "zstd"]}
    lines = run_kafkajs("codecs", {"decompress": {c: base64.b64encode(b).decode() for c, b in sections.items()}},
                        timeout=60)
    for line in of_type(lines, "decompressed"):
        assert line["ok"], line
        assert base64.b64decode(line["plain_b64"]) == decompress(line["codec"], sections[line["codec"]])


@interop
def test_kafkajs_without_a_broker_fails_cleanly(closed_port: int) -> None:
    lines = run_kafkajs("produce", {"bootstrap": f"127.0.0.1:{closed_port}", "topic": "t", "timeout_ms": 1500,
                                    "client": {"retry": {"retries": 0}}, "records": [{"value": "x"}]},
                        timeout=60, check=False)
    assert lines[-1]["type"] == "fatal"
    assert "ECONNREFUSED" in lines[-1]["message"]


# ------------------------------------------------------------------------------------------------
# kcat and the installer


@interop
def test_kcat_runs_with_every_codec_built_in() -> None:
    out = run_kcat(["-V"], timeout=30).stdout.decode()
    version_line = next(line for line in out.splitlines() if line.startswith("Version"))
    for feature in ("gzip", "snappy", "lz4", "zstd"):
        assert feature in version_line


@interop
def test_interop_deps_check_finds_everything_installed() -> None:
    clients.require_java()
    clients.require_kafkajs()
    clients.require_kcat()
    proc = subprocess.run([sys.executable, str(clients.REPO / "tools" / "interop_deps.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split()[:2] for line in proc.stdout.splitlines()] == [
        ["java", "ok"], ["node", "ok"], ["kcat", "ok"]]
