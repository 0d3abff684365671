"""The `mockbroker` command with a data dir: KAFKA_LOG_DIRS and --data-dir, topics from the environment
that the data dir already holds, and a data dir that cannot be used."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.rawclient import RawClient
from tests.storage.helpers import open_broker, values

REPO = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return env | extra


def _run_until_listening(args: list[str], env: dict[str, str]) -> int:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    try:
        assert line.startswith("mockbroker listening on "), line
        host, _, port = line.split()[3].rpartition(":")
        with RawClient(host, int(port)) as c:
            c.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": False})
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(30)
    return rc


def test_kafka_log_dirs_keeps_the_topics_of_kafka_create_topics_across_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = _env(KAFKA_LOG_DIRS=str(data), KAFKA_CREATE_TOPICS="kept:2:1")
    assert _run_until_listening([], env) == 0
    assert (data / "kept-1" / "partition.metadata").exists() and (data / ".kafka_cleanshutdown").exists()
    broker = open_broker(data)
    broker.create_topic("more")
    topic_id = broker.cluster.topic("kept").topic_id  # type: ignore[union-attr]
    broker.storage.close()  # type: ignore[union-attr]
    # the second run finds the topic it is asked to create already there: kept as it was, not an error
    assert _run_until_listening([], env) == 0
    again = open_broker(data)
    assert again.topics() == ["kept", "more"] and again.cluster.topic("kept").topic_id == topic_id  # type: ignore[union-attr]
    assert values(again, "kept") == []


def test_data_dir_flag_wins_and_an_unusable_data_dir_exits_2_with_one_message(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    proc = subprocess.run([sys.executable, "-m", "mockbroker", "--port", "0", "--data-dir", str(blocked)], cwd=REPO,
                          env=_env(KAFKA_LOG_DIRS=str(tmp_path / "env")), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("mockbroker: ") and str(blocked) in lines[0], proc.stderr
    assert not (tmp_path / "env").exists()
