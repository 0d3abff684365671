"""The curl examples of docs/http-api.md, run in order against a broker with the control endpoint (so
the docs cannot drift from the endpoint); and the docs' blocks marked `run: docker-tier` (tests/test_docs.py),
run in the image tier."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mockbroker.control_http import ControlServer
from mockbroker.server import MockBroker
from tests.docker.support import REPO, free_port, require_tool
from tests.docker.test_control_http import produce
from tests.test_docs import Block, blocks, commands


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


# -- the docs' `run: docker-tier` blocks, in the image tier --------------------------------------------
# The tier runs on the host's network with a private daemon that has no bridge, so each command runs as
# written except: the ports it names (9092-9094, 8080) become free ones, published ports (`-p`) become
# `--network host` with the broker on 127.0.0.1 (its Schema Registry on a free port), `mockbroker` the image is the tier's image, a named volume
# gets a unique name, a build uses the host's network (so the tier's build cache serves it), and a container
# runs detached until it listens, then is stopped (exit 0).

WRITTEN_PORTS = (9092, 9093, 9094, 8080)
OPTIONS_WITH_VALUE = {"-e", "--env", "-v", "--volume", "-p", "--publish", "--network", "--name", "-f", "--file", "-t",
                      "--tag", "--build-arg", "--secret"}


def docker_tier_blocks() -> list[Block]:
    return blocks("docker-tier")


def tier_ports(base: int, http: int) -> dict[int, int]:
    """The written ports mapped to free ones: 9092-9094 to base..base+2 (a cluster's nodes count up)."""
    return {9092: base, 9093: base + 1, 9094: base + 2, 8080: http}


def with_ports(text: str, ports: dict[int, int]) -> str:
    return re.sub(r"\b(9092|9093|9094|8080)\b", lambda m: str(ports[int(m.group(1))]), text)


@dataclass
class TierCommand:
    env: dict[str, str]
    argv: list[str]
    detached: bool  # a broker container, run until it listens, then stopped
    volumes: list[str]  # named volumes to remove afterwards


def tier_command(command: str, ports: dict[int, int], image: str, name: str, cwd: Path) -> TierCommand:
    """How the image tier runs one command of a docker-tier block (see above)."""
    words = shlex.split(command.replace("$PWD", str(cwd)))
    env: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        variable, _, assigned = words.pop(0).partition("=")
        env[variable] = assigned
    if words[:2] == ["docker", "build"]:  # the daemon has no bridge: builds use the host's network
        return TierCommand(env, ["docker", "build", "--network", "host", *words[2:]], False, [])
    if words[:2] != ["docker", "run"]:
        return TierCommand(env, words, False, [])
    out = ["docker", "run", "--detach", "--network", "host", "--name", name]
    settings: dict[str, str] = {}
    volumes: list[str] = []
    i = 2
    while i < len(words) and words[i].startswith("-"):
        option = words[i]
        value = words[i + 1] if option in OPTIONS_WITH_VALUE else None
        i += 2 if value is not None else 1
        if option in ("--rm", "-p", "--publish", "--network"):
            continue
        if option in ("-e", "--env") and value is not None:
            key, _, setting = value.partition("=")
            settings[key] = with_ports(setting, ports)
            continue
        if value is None:
            out.append(option)
            continue
        if option in ("-v", "--volume") and not value.startswith("/"):
            volume = f"{value.split(':', 1)[0]}-{name}"
            volumes.append(volume)
            value = volume + ":" + value.split(":", 1)[1]
        out += [option, value]
    assert words[i] == "mockbroker", command
    if "KAFKA_LISTENERS" not in settings:
        settings.setdefault("MOCKBROKER_HOST", "127.0.0.1")
        settings.setdefault("MOCKBROKER_PORT", str(ports[9092]))
    settings.update(MOCKBROKER_HTTP_HOST="127.0.0.1", MOCKBROKER_HTTP_PORT=str(ports[8080]))
    if "SCHEMA_REGISTRY_LISTENERS" not in settings:  # the image's registry: a free port, not the host's 8081
        settings.setdefault("MOCKBROKER_SCHEMA_REGISTRY_PORT", "0")
    for key, value in settings.items():
        out += ["--env", f"{key}={value}"]
    return TierCommand(env, [*out, image, *(with_ports(w, ports) for w in words[i + 1:])], True, volumes)


def tier_compose(text: str, ports: dict[int, int], image: str) -> str:
    """A compose block for the host's network: its image the tier's, no published ports, the broker and
    its control endpoint on 127.0.0.1 at free ports."""
    out = []
    for line in with_ports(text, ports).splitlines():
        if line.strip().startswith("ports:"):
            out.append(line[:len(line) - len(line.lstrip())] + "network_mode: host")
            continue
        if line.strip().startswith("image: mockbroker"):
            line = line.replace("image: mockbroker", f"image: {image}")
        out.append(line)
        if line.strip() == "environment:":
            indent = " " * (len(line) - len(line.lstrip()) + 2)
            out += [f"{indent}KAFKA_LISTENERS: PLAINTEXT://127.0.0.1:{ports[9092]}",
                    f"{indent}MOCKBROKER_HTTP_HOST: 127.0.0.1", f"{indent}MOCKBROKER_HTTP_PORT: {ports[8080]}",
                    f'{indent}MOCKBROKER_SCHEMA_REGISTRY_PORT: "0"']
    return "\n".join(out) + "\n"


def test_the_docker_tier_blocks_are_the_ones_this_file_runs() -> None:
    found = docker_tier_blocks()
    assert {b.lang for b in found} <= {"sh", "yaml"}
    assert any(b.lang == "yaml" for b in found) and any("docker build" in b.text for b in found)


def test_a_docs_docker_run_becomes_a_detached_loopback_run_of_the_tier_image(tmp_path: Path) -> None:
    ports = tier_ports(20000, 20010)
    cmd = tier_command("docker run --rm -p 9092:9092 -p 8080:8080 mockbroker --topic orders:3", ports, "img:test",
                       "c1", tmp_path)
    assert cmd.detached and cmd.argv[:7] == ["docker", "run", "--detach", "--network", "host", "--name", "c1"]
    assert "-p" not in cmd.argv and "--rm" not in cmd.argv and cmd.argv[-3:] == ["img:test", "--topic", "orders:3"]
    assert {"MOCKBROKER_HOST=127.0.0.1", "MOCKBROKER_PORT=20000", "MOCKBROKER_HTTP_PORT=20010",
            "MOCKBROKER_SCHEMA_REGISTRY_PORT=0"} <= set(cmd.argv)
    cluster = tier_command("docker run --rm --network host -v \"$PWD/certs:/certs\" -v kafka-data:/data "
                           "-e KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093 mockbroker",
                           ports, "img:test", "c2", tmp_path)
    assert "KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:20000,SASL_SSL://127.0.0.1:20001" in cluster.argv
    assert f"{tmp_path}/certs:/certs" in cluster.argv and cluster.volumes == ["kafka-data-c2"]
    assert not any(a.startswith("MOCKBROKER_PORT=") for a in cluster.argv)
    build = tier_command("DOCKER_BUILDKIT=1 docker build -f docker/Dockerfile -t mockbroker .", ports, "img", "c3",
                         tmp_path)
    assert (build.env, build.detached) == ({"DOCKER_BUILDKIT": "1"}, False)
    assert build.argv == ["docker", "build", "--network", "host", "-f", "docker/Dockerfile", "-t", "mockbroker", "."]


def test_a_docs_compose_file_goes_on_the_host_network_with_the_tier_image() -> None:
    [block] = [b for b in docker_tier_blocks() if b.lang == "yaml"]
    text = tier_compose(block.text, tier_ports(20000, 20010), "img:test")
    assert "image: img:test" in text and "ports:" not in text and "network_mode: host" in text
    assert "KAFKA_LISTENERS: PLAINTEXT://127.0.0.1:20000" in text and "localhost:20000" in text
    assert 'MOCKBROKER_SCHEMA_REGISTRY_PORT: "0"' in text


@pytest.fixture
def tier_image() -> str:
    image = os.environ.get("MOCKBROKER_TEST_IMAGE", "")
    if not image:
        if os.environ.get("CI") == "true":
            pytest.fail("CI never skips the image tier: run it through scripts/docker-test", pytrace=False)
        pytest.skip("image tier: no image built (scripts/docker-test builds one and runs this tier)")
    return image


def consecutive_free_ports(count: int) -> int:
    for _ in range(100):
        base = free_port()
        try:
            for port in range(base, base + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise AssertionError("no run of free ports")


def docker_cli() -> list[str]:
    return shlex.split(os.environ.get("MOCKBROKER_TEST_DOCKER", "docker"))


def wait_for_log(name: str, text: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        proc = subprocess.run([*docker_cli(), "logs", name], capture_output=True, text=True, timeout=60)
        if text in proc.stdout + proc.stderr:
            return proc.stdout
        assert time.monotonic() < deadline, f"{name}: no {text!r} after {timeout} s: {proc.stdout}{proc.stderr}"
        time.sleep(0.2)


@pytest.mark.docker_image
@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in docker_tier_blocks() if b.lang == "sh"])
def test_docs_docker_block_runs_in_the_image_tier(block: Block, tier_image: str, tmp_path: Path) -> None:
    ports = tier_ports(consecutive_free_ports(3), free_port())
    for command in commands(block.text):
        name = f"mockbroker-docs-{uuid.uuid4().hex[:10]}"
        cmd = tier_command(command, ports, tier_image, name, tmp_path)
        argv = [*docker_cli(), *cmd.argv[1:]] if cmd.argv[0] == "docker" else ["bash", "-c", command]
        cwd = REPO if cmd.argv[:2] == ["docker", "build"] else tmp_path
        proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **cmd.env}, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-2000:])
        if not cmd.detached:
            continue
        try:
            line = next(x for x in wait_for_log(name, "mockbroker listening on").splitlines()
                        if x.startswith("mockbroker listening on"))
            assert str(ports[9092]) in line, line
            if "MOCKBROKER_SSL_CA_OUT=/certs/ca.pem" in command:
                assert (tmp_path / "certs" / "ca.pem").exists()
            subprocess.run([*docker_cli(), "stop", "--time", "10", name], capture_output=True, timeout=60, check=True)
            state = json.loads(subprocess.run([*docker_cli(), "inspect", name], capture_output=True, text=True,
                                              timeout=60, check=True).stdout)[0]["State"]
            assert state["ExitCode"] == 0, state
        finally:
            subprocess.run([*docker_cli(), "rm", "--force", name], capture_output=True, timeout=60)
            for volume in cmd.volumes:
                subprocess.run([*docker_cli(), "volume", "rm", "--force", volume], capture_output=True, timeout=60)


@pytest.mark.docker_image
def test_the_readme_compose_file_serves_a_client_on_the_host(tier_image: str, tmp_path: Path) -> None:
    from confluent_kafka.admin import AdminClient

    from tests.docker.test_entrypoint import confluent_consume, confluent_produce

    [block] = [b for b in docker_tier_blocks() if b.lang == "yaml"]
    ports = tier_ports(consecutive_free_ports(3), free_port())
    (tmp_path / "compose.yaml").write_text(tier_compose(block.text, ports, tier_image))
    compose = ["docker-compose", "--project-name", f"mbdocs{uuid.uuid4().hex[:8]}", "--file",
               str(tmp_path / "compose.yaml")]
    try:
        subprocess.run([*compose, "up", "--detach"], cwd=tmp_path, capture_output=True, timeout=300, check=True)
        bootstrap = f"localhost:{ports[9092]}"
        assert confluent_produce(bootstrap, "orders", [b"one"]) == [(0, 0)]
        assert confluent_consume(bootstrap, "orders", 1) == [b"one"]
        topic = AdminClient({"bootstrap.servers": bootstrap}).list_topics("orders", timeout=30).topics["orders"]
        assert len(topic.partitions) == 3  # KAFKA_NUM_PARTITIONS
    finally:
        subprocess.run([*compose, "down", "--volumes", "--timeout", "10"], cwd=tmp_path, capture_output=True,
                       timeout=300)
