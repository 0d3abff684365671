"""The curl examples of docs/http-api.md, run in order against a broker with the control endpoint (so
the docs cannot drift from the endpoint); and the docs' blocks marked `run: docker-tier` (tests/test_docs.py),
run in the image tier."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import subprocess
from collections.abc import Iterator

import pytest

from mockbroker.control_http import ControlServer
from mockbroker.server import MockBroker
from tests.docker.support import REPO, require_tool
from tests.docker.test_control_http import produce


def curl_examples() -> list[str]:
    text = (REPO / "docs" / "http-api.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith("curl ")]


@pytest.fixture
def control() -> Iterator[tuple[MockBroker, int]]:
    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        server = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(10)
        try:
            yield broker, server.port
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), broker._loop).result(10)


def test_every_curl_example_answers_json(control: tuple[MockBroker, int]) -> None:
    curl = require_tool("curl")
    broker, port = control
    broker.create_topic("orders", 3)
    produce(broker, "orders", [(b"order-1", b'{"qty": 1}')], idempotent=True)
    examples = curl_examples()
    assert len(examples) >= 15
    for line in examples:
        argv = [curl if a == "curl" else a.replace("localhost:8080", f"127.0.0.1:{port}") for a in shlex.split(line)]
        proc = subprocess.run([*argv, "-w", "\n%{http_code}"], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, (line, proc.stderr)
        body, _, status = proc.stdout.rpartition("\n")
        payload = json.loads(body)
        assert status in ("200", "201"), (line, status, payload)
    assert broker.topics() == []  # the last example resets
