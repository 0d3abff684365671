"""Shared fixtures of the real-client tier.

- `cli_broker`: the `mockbroker` command (`python -m mockbroker --port 0`) as a subprocess, one per
  session; yields its bootstrap address, stops it with SIGTERM and checks that it exits cleanly.
- `target`: a broker for the core produce/consume tests, parametrized over the in-process fixture
  broker ("inproc") and the CLI broker ("cli"). For the CLI broker there is no log to inspect: what
  landed is judged by what the client's consumer reads back. The in-process broker takes the test's
  @pytest.mark.mockbroker arguments, as the `mockbroker` fixture does.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mockbroker import MockBroker
from tests.interop.workload import Target

REPO = Path(__file__).resolve().parents[2]
# A new group's first rebalance would wait Kafka's default 3 s for more members; tests set it to 0, as
# test setups of real Kafka usually do. Retention is off: the tests' records carry fixed timestamps of 2020
# (workload.BASE_TS), long past Kafka's 7-day log.retention.ms, and this broker lives for the whole session,
# so its retention check (every 5 minutes, as Kafka's) would delete them, as Kafka would, whenever it falls
# between a test's produce and its consume (seen once: KafkaJS read nothing of a topic, its log start
# offset already at its end).
CLI_ARGS = ["--config", "group.initial.rebalance.delay.ms=0", "--config", "log.retention.ms=-1"]


@pytest.fixture(scope="session")
def cli_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m mockbroker --port 0` in a subprocess; yields "host:port"; SIGTERM at the end."""
    log = tmp_path_factory.mktemp("cli-broker") / "stderr.log"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", *CLI_ARGS], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=30)
        line = proc.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("mockbroker listening on "):
            proc.kill()
            proc.wait(10)
            pytest.fail(f"the mockbroker command did not start: {line!r}\n{log.read_text()}", pytrace=False)
        yield line.split()[3]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            rc: int | None
            try:
                rc = proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
                rc = None
            assert rc == 0, f"the mockbroker command did not stop cleanly on SIGTERM (exit {rc}):\n{log.read_text()}"


@pytest.fixture(params=["inproc", "cli"])
def target(request: pytest.FixtureRequest, mockbroker_factory: Callable[..., MockBroker]) -> Target:
    if request.param == "inproc":
        marker = request.node.get_closest_marker("mockbroker")  # the same arguments as the mockbroker fixture
        kwargs = dict(marker.kwargs) if marker else {}
        # Retention off, as on the CLI broker (CLI_ARGS): the workload's 2020 timestamps are past Kafka's 7 days,
        # and the broker's first retention check comes 30 s after its start (Kafka's InitialTaskDelayMs), inside
        # a test that runs that long on a busy machine (seen under pytest -n 2: the Java consumer of
        # test_java_produces_and_consumes_every_codec[inproc] found its topics emptied).
        kwargs["config"] = {"log.retention.ms": "-1", **kwargs.get("config", {})}
        broker = mockbroker_factory(**kwargs)
        return Target("inproc", broker.bootstrap_servers, broker)
    return Target("cli", request.getfixturevalue("cli_broker"), None)
