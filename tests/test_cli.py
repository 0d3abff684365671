"""The `mockbroker` command: one line once it accepts connections, topics from flags, clean stop."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.rawclient import RawClient


def start(*args: str) -> tuple[subprocess.Popen[str], str, int]:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("mockbroker listening on "), (line, proc.stderr.read() if proc.poll() else "")
    host, _, port = line.split()[3].rpartition(":")
    return proc, host, int(port)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_prints_address_serves_topics_and_stops_cleanly_on_signal(sig: signal.Signals) -> None:
    proc, host, port = start("--topic", "orders:3", "--topic", "audit", "--no-auto-create")
    try:
        with RawClient(host, port) as c:
            meta = c.request(3, 12, {"topics": None})
            parts = {t.name: len(t.partitions) for t in meta.topics}
            assert parts == {"orders": 3, "audit": 1}
            missing = c.request(3, 12, {"topics": [{"name": "nope"}], "allow_auto_topic_creation": True})
            assert missing.topics[0].error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION: auto-create is off
    finally:
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0


def test_cli_advertised_address_is_what_metadata_answers() -> None:
    proc, host, port = start("--advertised-host", "kafka.example", "--advertised-port", "19092")
    try:
        with RawClient(host, port) as c:
            meta = c.request(3, 1, {"topics": None})
            assert [(b.host, b.port) for b in meta.brokers] == [("kafka.example", 19092)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_rejects_a_bad_config_flag_with_a_message() -> None:
    proc = subprocess.run([sys.executable, "-m", "mockbroker", "--port", "0", "--config", "novalue"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "KEY=VALUE" in proc.stderr


def test_cli_in_memory_mode_imports_no_storage_module_and_no_crc_library_before_listening() -> None:
    """Start-up (issue #16): a broker without a data dir loads nothing of mockbroker/storage (about 19 ms: its
    modules and the crc32c package, whose import reads its version through importlib.metadata) before it
    accepts connections; the CRC library comes with the first batch."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "mockbroker", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker listening on "), line
    finally:
        proc.terminate()
        _, importtime = proc.communicate(timeout=10)
    imported = [row.rsplit("|", 1)[-1].strip() for row in importtime.splitlines() if row.startswith("import time:")]
    assert "mockbroker.cli" in imported  # the probe sees the broker's own imports
    assert [m for m in imported if m.startswith("mockbroker.storage.") or m.split(".")[0] == "crc32c"] == []
