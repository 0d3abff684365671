"""The example pipeline (examples/spark_pipeline) against mockbroker: JSON events in, windowed counts out.

No twin: what it exercises in the broker (a Kafka source with micro-batches, the Kafka sink) is in the
twins of the other Spark tests; this pins the example itself.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import TIMEOUT

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark_pipeline"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"spark_pipeline_{name}", EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_pipeline_writes_each_closed_window_once(spark: SparkSession, mockbroker: MockBroker, tmp_path: Path) -> None:
    pipeline, sample = load("pipeline"), load("sample_producer")
    mockbroker.create_topic("events", partitions=3)
    mockbroker.create_topic("action-counts")
    events = sample.make_events(60)
    sample.send(mockbroker.bootstrap_servers, "events", events)

    query = pipeline.start(spark, mockbroker.bootstrap_servers, tmp_path / "checkpoint", available_now=True)
    assert query.awaitTermination(TIMEOUT), "the AvailableNow run did not finish"

    records = mockbroker.records("action-counts")
    got = {}
    for r in records:
        value = json.loads(r.value or b"null")
        got[(value["window_start"], value["action"])] = {"events": value["events"], "amount": value["amount"]}
        assert r.key == value["action"].encode()
        assert r.headers == [("producer", b"spark-pipeline")]
    assert got == sample.expected_windows(events)
    assert len(records) == len(got), "each window written once (append mode)"

    # Run again on the same checkpoint with nothing new: nothing more is written.
    again = pipeline.start(spark, mockbroker.bootstrap_servers, tmp_path / "checkpoint", available_now=True)
    assert again.awaitTermination(TIMEOUT)
    assert len(mockbroker.records("action-counts")) == len(records)


def test_the_example_command_runs_end_to_end_with_a_checkpointed_restart(tmp_path: Path) -> None:
    """examples/spark_pipeline/run.py as a user runs it: its own broker and Spark, two runs on one checkpoint."""
    import subprocess

    proc = subprocess.run([sys.executable, str(EXAMPLE / "run.py"), "--events", "60",
                           "--keep-checkpoint", str(tmp_path / "ckpt")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "OK: the restart went on from the checkpoint" in proc.stdout
    assert (tmp_path / "ckpt" / "offsets" / "1").is_file()  # the second run's batch, after the first's
