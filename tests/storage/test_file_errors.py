"""Each damaged file of a data dir is refused with its own name (issue 33, item 6): a garbage meta.properties
names meta.properties, not mockbroker-metadata.json, and a mockbroker-metadata.json nested 100,000 deep is
one clean DataDirError (one line and exit code 2 from the command), not a RecursionError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mockbroker.storage import DataDirError
from tests.storage.helpers import open_broker

pytestmark = pytest.mark.adversarial

REPO = Path(__file__).resolve().parents[2]
NESTED = '{"version": 1, "topics": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _made(data_dir: Path, **kwargs: object) -> None:
    broker = open_broker(data_dir, **kwargs)
    broker.create_topic("t")
    assert broker.storage is not None
    broker.storage.close()


@pytest.mark.parametrize("content", [os.urandom(64) + b"\xff\xfe", b"garbage\nmore garbage\n",
                                     b"cluster.id=abc\nnode.id=one\n"], ids=["bytes", "text", "node-id-not-a-number"])
def test_a_garbage_meta_properties_is_refused_with_its_own_name(tmp_path: Path, content: bytes) -> None:
    _made(tmp_path)
    (tmp_path / "meta.properties").write_bytes(content)
    with pytest.raises(DataDirError) as refused:
        open_broker(tmp_path)
    message = str(refused.value)
    assert str(tmp_path / "meta.properties") in message and "mockbroker-metadata.json" not in message


def test_a_node_directorys_garbage_meta_properties_names_that_node_directory(tmp_path: Path) -> None:
    _made(tmp_path, brokers=3)
    (tmp_path / "node-2" / "meta.properties").write_bytes(b"\x00\xff" * 10)
    with pytest.raises(DataDirError, match=str(tmp_path / "node-2" / "meta.properties")):
        open_broker(tmp_path, brokers=3)


@pytest.mark.parametrize("content", [NESTED, "[1, 2]", '{"version": 1, "topics": [{"name": 1}]}', "\xff{"],
                         ids=["nested-100000-deep", "not-an-object", "wrong-shape", "not-json"])
def test_a_metadata_file_that_does_not_parse_is_one_clean_error_naming_it(tmp_path: Path, content: str) -> None:
    _made(tmp_path)
    (tmp_path / "mockbroker-metadata.json").write_text(content)
    with pytest.raises(DataDirError) as refused:
        open_broker(tmp_path)
    message = str(refused.value)
    assert str(tmp_path / "mockbroker-metadata.json") in message and "does not parse" in message
    assert len(message) < 500


def test_the_command_on_a_deeply_nested_metadata_file_exits_2_with_one_line(tmp_path: Path) -> None:
    _made(tmp_path)
    (tmp_path / "mockbroker-metadata.json").write_text(NESTED)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "mockbroker", "--port", "0", "--data-dir", str(tmp_path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "mockbroker-metadata.json" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
