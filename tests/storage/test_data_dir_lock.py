"""One lock for the whole data dir (issue 33, item 4): a second broker on a data dir a running broker holds
stops before it reads or writes anything, whatever either's node count, with one line naming the directory
(exit code 2 from the command, DataDirError from Python)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mockbroker.server import MockBroker
from mockbroker.storage import DataDirError
from tests.rawclient import RawClient
from tests.storage.helpers import open_broker, produce, values

pytestmark = pytest.mark.adversarial

REPO = Path(__file__).resolve().parents[2]
METADATA = 3
META = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return env


def _start(data: Path, brokers: int) -> subprocess.Popen[str]:
    """A broker process on the data dir, once it listens (bounded wait) and answers a Metadata request."""
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--brokers", str(brokers),
                             "--data-dir", str(data)], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + 60
    try:
        while not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            assert time.monotonic() < deadline and proc.poll() is None, "the first broker never listened"
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker listening on "), line
        host, _, port = line.split()[3].rstrip(",").rpartition(":")
        with RawClient(host, int(port)) as c:
            assert c.request(METADATA, 12, META).brokers
    except BaseException:
        proc.kill()
        proc.wait(30)
        raise
    finally:
        sel.close()
    return proc


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(60)


def _snapshot(data: Path) -> dict[str, bytes]:
    """Every file under the data dir but the lock file and open active segments' sizes: names and bytes."""
    return {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("first", "second"), [(1, 3), (3, 1), (1, 1), (3, 3)])
def test_a_second_broker_process_on_a_held_data_dir_exits_2_and_touches_nothing(
        tmp_path: Path, first: int, second: int) -> None:
    data = tmp_path / "data"
    holder = _start(data, first)
    try:
        before = _snapshot(data)
        proc = subprocess.run([sys.executable, "-m", "mockbroker", "--port", "0", "--brokers", str(second),
                               "--data-dir", str(data)], cwd=REPO, env=_env(), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("mockbroker: ") and str(data) in lines[0], proc.stderr
        assert "in use by another broker" in lines[0]
        assert _snapshot(data) == before
    finally:
        assert _stop(holder) == 0
    assert not [p for p in data.rglob("*") if p.name.endswith("-stray")]


def test_a_second_mockbroker_in_python_gets_data_dir_error_whatever_its_node_count(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = open_broker(data)
    first.create_topic("t")
    produce(first, "t", b"kept")
    for brokers in (1, 3):
        with pytest.raises(DataDirError, match=str(data)):
            MockBroker(data_dir=data, brokers=brokers)
    assert not (data / "node-1").exists()
    assert first.storage is not None
    first.storage.close()
    again = open_broker(data)  # the lock went with the first broker's clean stop
    assert values(again, "t") == [b"kept"]
    assert again.storage is not None
    again.storage.close()
