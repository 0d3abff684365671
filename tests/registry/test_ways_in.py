"""The ways to a registry: MockBroker(schema_registry=True / a port), the fixture marker, the command's
--schema-registry-port and MOCKBROKER_SCHEMA_REGISTRY_PORT; and none unless asked for."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from mockbroker import MockBroker
from mockbroker.envconfig import Flags, build_settings
from mockbroker.settings import make_settings

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def register(url: str, subject: str, schema: str = SCHEMA) -> dict[str, int]:
    request = urllib.request.Request(f"{url}/subjects/{subject}/versions", method="POST",
                                     data=json.dumps({"schema": schema}).encode(),
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


@pytest.mark.mockbroker(schema_registry=True)
def test_the_fixture_marker_gives_a_registry(mockbroker: MockBroker) -> None:
    assert register(mockbroker.schema_registry_url, "a") == {"id": 1}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_port_given_is_the_port_served_and_none_without_the_option() -> None:
    port = free_port()
    with MockBroker(schema_registry=port).run_in_thread() as broker:
        assert broker.schema_registry_url == f"http://127.0.0.1:{port}"
        assert register(broker.schema_registry_url, "b") == {"id": 1}
    with MockBroker().run_in_thread() as broker:
        assert broker.schema_registry is None
        with pytest.raises(RuntimeError, match="schema_registry=True"):
            _ = broker.schema_registry_url


@pytest.mark.parametrize("bad", [-1, 65536, "8081", 1.5])
def test_a_bad_schema_registry_option_is_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="schema_registry"):
        make_settings(schema_registry=bad)  # type: ignore[arg-type]


def test_the_flag_and_the_variable_reach_the_settings() -> None:
    assert build_settings({}, Flags(schema_registry_port=0)).broker_settings().schema_registry_port == 0
    assert build_settings({"MOCKBROKER_SCHEMA_REGISTRY_PORT": "8081"}).broker_settings().schema_registry_port == 8081
    assert build_settings({}).broker_settings().schema_registry_port is None


def test_the_command_serves_a_registry() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--schema-registry-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("mockbroker listening on ")
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker schema registry on http://"), line
        assert register(line.removeprefix("mockbroker schema registry on "), "c") == {"id": 1}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_https_when_the_broker_has_tls() -> None:
    import ssl

    with MockBroker(security="SSL", schema_registry=True).run_in_thread() as broker:
        assert broker.schema_registry_url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=broker.tls.ca_file)
        with urllib.request.urlopen(f"{broker.schema_registry_url}/subjects", timeout=10, context=context) as answer:
            assert json.loads(answer.read()) == []
