"""Every fenced code block of the documentation runs as a test, and the site builds with warnings as errors.

The documentation is README.md, docker/README.md and docs/*.md (docs/architecture.md excepted: the
architecture notes, owned by their own page, hold two diagrams and no code). Every fenced block has a
marker, an HTML comment on the line before its opening fence; a block without one fails
test_every_block_has_a_marker, so a new block cannot go unchecked:

    <!-- run: pytest -->              a python block that is a pytest file: written to an empty directory
                                      (no pytest configuration: pytest-asyncio's strict mode) and run by
                                      pytest in a subprocess; it must pass
    <!-- run: pytest, needs: spark --> the same, in the Spark tier (markers spark, slow)
    <!-- run: python -->              a python block run as a script in a subprocess, in an empty directory
    <!-- run: serve -->               an sh block of commands that each start a broker: each is run as written,
                                      in a private network namespace (so the ports written are free), from a
                                      directory whose .venv is this interpreter's; it must print
                                      "mockbroker listening on" and exit 0 on SIGTERM
    <!-- run: shell, needs: broker --> an sh block run by bash in such a namespace, with `mockbroker --port
                                      9092` running there; it must exit 0
    <!-- run: docker-tier -->         needs Docker: run by tests/docker/test_readme_examples.py in the image
                                      tier (scripts/docker-test), never here
    <!-- checked-by: FILE::TEST -->   another test runs or checks it (the test must exist)
    <!-- not-run: REASON -->          cannot run as written (e.g. a `pip install` from the package index
                                      before a release); the reason is said

Lines `--8<-- "FILE"` / `--8<-- "FILE:SECTION"` are pymdownx.snippets includes, resolved before running.
Also here: the command synopsis against the argparse parsers, the HTTP endpoint table against the app's
routes (the environment table is checked in tests/docker/test_envconfig_table.py), the API table against
the dispatch registry, and `mkdocs build --strict` (test_site_builds, when mkdocs is installed).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
EXEMPT = {"docs/architecture.md"}
KINDS = {"pytest", "python", "serve", "shell", "docker-tier"}
FENCE = re.compile(r"^(\s*)(```+)\s*([\w-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(run|not-run|checked-by):\s*(.*?)\s*-->\s*$")
SNIPPET = re.compile(r'^\s*--8<--\s+"([^":]+)(?::([\w-]+))?"\s*$')
LISTENING = "mockbroker listening on"
WAIT = 60.0


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    lang: str
    marker: str  # "run", "not-run", "checked-by" or "" when there is none
    value: str  # what follows the marker's colon
    text: str  # the block's content, dedented to its fence

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def kind(self) -> str:
        return self.value.split(",")[0].strip() if self.marker == "run" else self.marker

    @property
    def needs(self) -> str | None:
        match = re.search(r"needs:\s*([\w-]+)", self.value)
        return match.group(1) if match else None


def doc_files() -> list[Path]:
    files = [REPO / "README.md", REPO / "docker" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [f for f in files if str(f.relative_to(REPO)) not in EXEMPT]


def resolve_snippets(text: str) -> str:
    """pymdownx.snippets' includes, as mkdocs.yml configures them (paths from the repository root)."""
    out = []
    for line in text.splitlines(keepends=True):
        match = SNIPPET.match(line)
        if match is None:
            out.append(line)
            continue
        included = (REPO / match.group(1)).read_text()
        if match.group(2):
            name = match.group(2)
            included = included.split(f"--8<-- [start:{name}]", 1)[1].split("\n", 1)[1]
            included = included.split(f"--8<-- [end:{name}]", 1)[0].rsplit("\n", 1)[0] + "\n"
        out.append(included)
    return "".join(out)


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, lang = match.groups()
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(previous)
        body = "".join(line[len(indent):] + "\n" if line.startswith(indent) else line.lstrip() + "\n"
                       for line in lines[i + 1:end])
        found.append(Block(str(path.relative_to(REPO)), i + 1, lang,
                           marker.group(1) if marker else "", marker.group(2) if marker else "",
                           resolve_snippets(body)))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for f in doc_files() for b in blocks_of(f)]


def blocks(kind: str, needs: str | None = None) -> list[Block]:
    return [b for b in all_blocks() if b.kind == kind and b.needs == needs]


def params(kind: str, needs: str | None = None) -> list:
    return [pytest.param(b, id=b.id) for b in blocks(kind, needs)]


def child_env() -> dict[str, str]:
    """This environment with the repository first on the path (its code, not an installed copy) and this
    interpreter's bin directory first on PATH (`mockbroker`, `pytest`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_")) or k in (
        "MOCKBROKER_SPARK_JARS", "MOCKBROKER_REQUIRE_SPARK")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(VENV_BIN) + os.pathsep + env.get("PATH", "")
    return env


def run(argv: list[str], cwd: Path, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=timeout)


def netns_argv() -> list[str]:
    """A private network namespace (user namespace: no root needed) with its loopback up, or a skip."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("no private network namespace here (unshare -rn): the written ports may be taken")
    return [unshare, "-rn", "bash", "-c"]


def sandbox(tmp_path: Path) -> Path:
    """An empty directory whose .venv is this interpreter's (the docs write `.venv/bin/mockbroker`)."""
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)
    return tmp_path


def commands(text: str) -> list[str]:
    """The commands of an sh block: continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line.split(" #")[0].strip() for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


# -- every block is accounted for ----------------------------------------------------------------------

def test_every_block_has_a_marker() -> None:
    unmarked = [b.id for b in all_blocks() if not b.marker]
    assert not unmarked, f"fenced blocks without a <!-- run/not-run/checked-by --> marker: {unmarked}"


def test_every_marker_is_one_this_file_runs() -> None:
    bad = [b.id for b in all_blocks() if b.marker == "run" and b.kind not in KINDS]
    bad += [b.id for b in all_blocks() if b.kind in ("pytest", "python") and b.lang != "python"]
    bad += [b.id for b in all_blocks() if b.kind in ("serve", "shell") and b.lang != "sh"]
    bad += [b.id for b in all_blocks() if b.marker == "not-run" and len(b.value) < 10]
    assert not bad


def test_checked_by_names_a_test_that_exists() -> None:
    for b in blocks("checked-by"):
        path, _, name = b.value.partition("::")
        assert re.search(rf"^def {name}\(", (REPO / path).read_text(), re.M), b.id


def test_snippet_includes_resolve() -> None:
    for page in (REPO / "docs").glob("*.md"):
        for match in map(SNIPPET.match, page.read_text().splitlines()):
            if match is None or match.group(1) == "CHANGELOG.md":
                continue  # CHANGELOG.md is written apart from the docs; test_site_builds checks it is shown
            assert (REPO / match.group(1)).exists(), (page.name, match.group(1))
            if match.group(2):
                assert f"--8<-- [start:{match.group(2)}]" in (REPO / match.group(1)).read_text()


# -- running them --------------------------------------------------------------------------------------

@pytest.mark.parametrize("block", params("pytest"))
def test_pytest_block_passes(block: Block, tmp_path: Path) -> None:
    run_pytest_block(block, tmp_path)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.serial  # a Spark session in a subprocess: with the Spark tier, alone after the workers (tests/spark)
@pytest.mark.parametrize("block", params("pytest", "spark"))
def test_spark_pytest_block_passes(block: Block, tmp_path: Path) -> None:
    from mockbroker.testing.spark import REQUIRE_ENV, spark_unavailable

    reason = spark_unavailable()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason} [{REQUIRE_ENV}=1]", pytrace=False)
        pytest.skip(reason)
    run_pytest_block(block, tmp_path, timeout=900)


def run_pytest_block(block: Block, tmp_path: Path, timeout: float = 300.0) -> None:
    (tmp_path / "test_block.py").write_text(block.text)
    proc = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                "test_block.py"], tmp_path, timeout)
    assert proc.returncode == 0 and " passed" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("block", params("python"))
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    (tmp_path / "block.py").write_text(block.text)
    proc = run([sys.executable, "block.py"], tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]


@pytest.mark.parametrize("block", params("serve"))
def test_serve_block_starts_a_broker_that_stops_cleanly(block: Block, tmp_path: Path) -> None:
    netns = netns_argv()
    cwd = sandbox(tmp_path)
    for command in commands(block.text):
        with open(tmp_path / "stderr.txt", "w+") as stderr:
            proc = subprocess.Popen([*netns, f"ip link set lo up && exec {command}"], cwd=cwd, env=child_env(),
                                    stdout=subprocess.PIPE, stderr=stderr, text=True)
            try:
                line = read_line_within(proc, WAIT)
                assert LISTENING in line, (command, line, (tmp_path / "stderr.txt").read_text())
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(WAIT) == 0, (command, (tmp_path / "stderr.txt").read_text())
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


def read_line_within(proc: subprocess.Popen[str], timeout: float) -> str:
    """The process's first stdout line, or '' if it exits or `timeout` passes first."""
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sel.select(timeout=0.5):
                return proc.stdout.readline()
            if proc.poll() is not None:
                return ""
    return ""


@pytest.mark.parametrize("block", params("shell", "broker"))
def test_shell_block_runs_against_a_broker(block: Block, tmp_path: Path) -> None:
    netns = netns_argv()
    script = f"""ip link set lo up
mockbroker --port 9092 > broker.out 2>&1 &
broker=$!
for _ in $(seq 600); do grep -q '{LISTENING}' broker.out && break; sleep 0.1; done
grep -q '{LISTENING}' broker.out || {{ cat broker.out; exit 98; }}
bash -e block.sh
status=$?
kill -TERM $broker && wait $broker || exit 99
exit $status
"""
    cwd = sandbox(tmp_path)
    (cwd / "block.sh").write_text(block.text)
    proc = subprocess.run([*netns, script], cwd=cwd, env=child_env(), capture_output=True, text=True,
                          timeout=WAIT * 3)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


# -- tables and synopses checked against the code ------------------------------------------------------

def option_names(parser: object) -> set[str]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    return {s for action in parser._actions for s in action.option_strings if s not in ("-h", "--help")}


def test_the_command_synopsis_names_every_flag() -> None:
    from mockbroker.cli import build_parser
    from mockbroker.healthcheck import build_parser as healthcheck_parser

    [synopsis] = [b for b in blocks_of(REPO / "docs" / "cli.md") if b.value.startswith("tests/test_docs.py")]
    serve, _, healthcheck = synopsis.text.partition("mockbroker healthcheck")
    assert set(re.findall(r"--[a-z][a-z-]*", serve)) == option_names(build_parser())
    assert set(re.findall(r"--[a-z][a-z-]*", healthcheck)) == option_names(healthcheck_parser())


def documented_endpoints() -> set[str]:
    text = (REPO / "docs" / "http-api.md").read_text()
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| `")]
    return {f"{m} {p}" for row in rows for m, p in re.findall(r"\b(GET|POST|DELETE) (/[\w./{}-]*)", row)}


def test_the_http_endpoint_table_is_the_apps_routes() -> None:
    import asyncio
    import json
    import urllib.request

    from mockbroker.http import ControlServer
    from mockbroker.http.openapi import openapi_document
    from mockbroker.server import MockBroker

    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        server = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(10)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=10) as answer:
                served = set(json.load(answer)["endpoints"])
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), broker._loop).result(10)
    described = {f"{m.upper()} {p}" for p, ops in openapi_document()["paths"].items() for m in ops}
    assert served == described | {"GET /openapi.json"}  # GET / lists what /openapi.json describes, and it
    assert documented_endpoints() == served


def test_the_api_table_is_the_registrys() -> None:
    spec = importlib.util.spec_from_file_location("api_table", REPO / "tools" / "api_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.KAFKA_KEYS.exists():
        pytest.skip("../shared/kafka-protocol is not beside the repository")
    page = (REPO / "docs" / "apis.md").read_text()
    assert module.START in page
    assert module.splice(page) == page, "docs/apis.md's API table is stale: run tools/api_table.py --write"


# -- the site ------------------------------------------------------------------------------------------

def test_site_builds(tmp_path: Path) -> None:
    """`mkdocs build --strict` (warnings are errors); the changelog page shows CHANGELOG.md when it exists."""
    mkdocs: list[str]
    if importlib.util.find_spec("mkdocs") is not None:
        mkdocs = [sys.executable, "-m", "mkdocs"]
    elif shutil.which("mkdocs"):
        mkdocs = [str(shutil.which("mkdocs"))]
    else:
        pytest.skip("mkdocs is not installed (it is in the test extra: pip install -e '.[test]')")
    proc = subprocess.run([*mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-5000:]
    index = (tmp_path / "site" / "index.html").read_text()
    assert "test_producer_writes_one_record" in index  # the README's first test, included
    changelog = REPO / "CHANGELOG.md"
    if changelog.exists():
        heading = next(line for line in changelog.read_text().splitlines() if line.startswith("#"))
        page = (tmp_path / "site" / "changelog" / "index.html").read_text()
        assert heading.lstrip("# ").strip().split()[0] in page
